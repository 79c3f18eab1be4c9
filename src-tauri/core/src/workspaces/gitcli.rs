//! The one way the core runs the git CLI (and `gh`): a bounded child process, and the commit
//! routine shared by the snapshot before a worktree is removed (SPEC 15) and the Changes
//! feature's "Commit all".
//!
//! Every run is bounded in time and output, so a hook, a filter or a huge diff cannot hang or
//! flood the app: a run that overstays is killed with its whole process group (git's hooks and
//! filters included). Standard input is empty unless given, no prompt can open (no terminal, no
//! editor), and messages are in the C locale so they read the same everywhere.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// How long an ordinary git command may take.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(120);
/// How much standard output an ordinary command may print.
pub const MAX_OUTPUT: usize = 64 << 20;
/// How much of standard error is kept (the rest is dropped, the command still runs).
const MAX_STDERR: usize = 256 << 10;
/// Variables that would point git at another repository, index or object store.
const INHERITED_REPO_VARS: [&str; 7] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
];
/// Who commits when the repository's git config names nobody (SPEC 15).
pub const FALLBACK_NAME: &str = "Paseo";
pub const FALLBACK_EMAIL: &str = "paseo@localhost";

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum GitError {
    #[error("{program} is not installed (or not on PATH)")]
    Missing { program: String },
    /// The command ran and failed; `message` is its own error text.
    #[error("{program} {command} failed: {message}")]
    Failed {
        program: String,
        command: String,
        message: String,
    },
    #[error("{program} {command} did not finish within {secs} s and was stopped")]
    Timeout {
        program: String,
        command: String,
        secs: u64,
    },
    #[error("{program} {command} printed more than {limit} bytes and was stopped")]
    TooLarge {
        program: String,
        command: String,
        limit: usize,
    },
    /// Refused before running anything: the state does not allow it (e.g. a detached HEAD).
    #[error("{0}")]
    Refused(String),
    #[error("cannot run {program}: {message}")]
    Io { program: String, message: String },
}

/// What a finished command left.
#[derive(Debug)]
pub struct Output {
    pub success: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Output {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).trim_end().to_string()
    }
    /// Standard error, or standard output when git said nothing there (merge conflicts are
    /// reported on standard output).
    pub fn message(&self) -> String {
        let e = self.stderr.trim();
        if e.is_empty() {
            self.text().trim().to_string()
        } else {
            e.to_string()
        }
    }
}

mod guard;

/// A command line to run: `git -C <dir> …` by default, or any program (`gh`).
#[derive(Clone, Debug)]
pub struct Cmd {
    program: OsString,
    /// git's `-C` folder: where its guard and box are worked out.
    repo: Option<PathBuf>,
    /// What its box may write besides the repository (a private index, a new worktree).
    writes: Vec<PathBuf>,
    /// Runs in the app-git box (SPEC 16), when there is one.
    boxed: bool,
    /// The repository's hooks may run (a commit the user asked for): boxed with the
    /// repository's reach, never unboxed while containment is wanted (SPEC 16).
    hooks: bool,
    /// The working directory for programs other than git (git gets `-C`, which reports a
    /// missing directory in its own words).
    cwd: Option<PathBuf>,
    pre: Vec<OsString>,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    max_output: usize,
}

impl Cmd {
    /// `git -C dir`, with no prompts, the C locale and no editor.
    pub fn git(dir: &Path) -> Cmd {
        Cmd {
            program: "git".into(),
            repo: Some(dir.to_path_buf()),
            writes: Vec::new(),
            boxed: true,
            hooks: false,
            cwd: None,
            pre: vec!["-C".into(), dir.as_os_str().to_owned()],
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            timeout: GIT_TIMEOUT,
            max_output: MAX_OUTPUT,
        }
    }

    /// Another program, run in `dir`.
    pub fn program(program: impl AsRef<OsStr>, dir: &Path) -> Cmd {
        Cmd {
            program: program.as_ref().to_owned(),
            repo: None,
            boxed: false,
            cwd: Some(dir.to_path_buf()),
            pre: Vec::new(),
            ..Cmd::git(dir)
        }
    }

    /// Lets its box write `path` too (a private index's folder, a worktree being made).
    pub fn writes(mut self, path: impl Into<PathBuf>) -> Cmd {
        self.writes.push(path.into());
        self
    }

    /// Lets the repository's hooks run (see [`Cmd::hooks`] field): a commit the user asked for.
    pub fn with_hooks(mut self) -> Cmd {
        self.hooks = true;
        self
    }

    /// Runs outside the app-git box: a push needs the user's credentials and network, which
    /// the box hides. Hooks and the repository's own drivers stay off.
    pub fn unboxed(mut self) -> Cmd {
        self.boxed = false;
        self
    }

    /// A `-c name=value` for git (before the subcommand).
    pub fn config(mut self, kv: &str) -> Cmd {
        self.pre.push("-c".into());
        self.pre.push(kv.into());
        self
    }

    /// Paths after `--` are literal: `*`, `:(glob)` and friends mean nothing.
    pub fn literal_paths(self) -> Cmd {
        self.env("GIT_LITERAL_PATHSPECS", "1")
    }

    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Cmd {
        self.args.push(a.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Cmd {
        self.env
            .push((k.as_ref().to_owned(), v.as_ref().to_owned()));
        self
    }

    pub fn envs(mut self, vars: &[(String, String)]) -> Cmd {
        for (k, v) in vars {
            self.env.push((k.into(), v.into()));
        }
        self
    }

    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Cmd {
        self.stdin = Some(input.into());
        self
    }

    pub fn timeout(mut self, d: Duration) -> Cmd {
        self.timeout = d;
        self
    }

    pub fn max_output(mut self, n: usize) -> Cmd {
        self.max_output = n;
        self
    }

    fn program_name(&self) -> String {
        Path::new(&self.program)
            .file_name()
            .unwrap_or(self.program.as_os_str())
            .to_string_lossy()
            .into_owned()
    }

    /// The subcommand, for messages: `commit`, `worktree remove`, `pr create`.
    fn command_name(&self) -> String {
        let words: Vec<String> = self
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .filter(|a| !a.starts_with('-'))
            .take(2)
            .collect();
        match words.first().map(String::as_str) {
            Some("worktree" | "pr" | "auth" | "merge-base" | "symbolic-ref") => words.join(" "),
            Some(w) => w.to_string(),
            None => String::new(),
        }
    }

    /// The full argv (program first), for logs and for showing what would run.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(&self.program)
            .chain(&self.pre)
            .chain(&self.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// Runs to the end (or the limit); a non-zero exit is not an error here.
    pub fn output(&self) -> Result<Output, GitError> {
        let program = self.program_name();
        let mut args: Vec<OsString> = Vec::new();
        if let Some(repo) = &self.repo {
            args.extend(guard::flags(repo, self.hooks && self.boxed));
        }
        args.extend(self.pre.iter().cloned());
        args.extend(self.args.iter().cloned());
        let plan = self
            .repo
            .as_ref()
            .filter(|_| self.boxed)
            .and_then(|repo| crate::sandbox::app_git_plan(repo, &self.writes));
        let mut c = match &plan {
            Some(plan) => {
                // git finds its folder by `-C`, which says in its own words when it is missing.
                let boxed = plan.command(Path::new(&self.program), &args, Path::new("/"));
                boxed.std_command().map_err(|e| GitError::Io {
                    program: program.clone(),
                    message: format!("cannot box it (SPEC 16): {e}"),
                })?
            }
            None => {
                let mut c = Command::new(&self.program);
                c.args(&args);
                c
            }
        };
        // A repository named by the app's own environment (started from a git hook, say)
        // must not replace the one asked for.
        for v in INHERITED_REPO_VARS {
            c.env_remove(v);
        }
        c.env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_EDITOR", ":")
            .env("GH_PROMPT_DISABLED", "1")
            .env("LC_ALL", "C")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so a timeout also stops the hooks and filters it started.
            .process_group(0);
        if let Some(d) = &self.cwd {
            c.current_dir(d);
        }
        let mut child = c.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                GitError::Missing {
                    program: program.clone(),
                }
            } else {
                GitError::Io {
                    program: program.clone(),
                    message: e.to_string(),
                }
            }
        })?;
        let overflow = Arc::new(AtomicBool::new(false));
        let out = reader(child.stdout.take(), self.max_output, Some(overflow.clone()));
        let err = reader(child.stderr.take(), MAX_STDERR, None);
        if let (Some(input), Some(mut w)) = (self.stdin.clone(), child.stdin.take()) {
            // A writer thread: a child that never reads must not block us past the timeout.
            std::thread::spawn(move || {
                let _ = w.write_all(&input);
            });
        }
        let deadline = Instant::now() + self.timeout;
        let status = wait(&mut child, deadline, &overflow);
        // Something the command started in the background (a hook's daemon) may hold the pipes
        // open after it exited: wait for them no longer than the deadline (and a grace second).
        let grace = deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
        let stdout = out.recv_timeout(grace).unwrap_or_default();
        let stderr =
            String::from_utf8_lossy(&err.recv_timeout(grace).unwrap_or_default()).into_owned();
        let command = self.command_name();
        match status {
            Waited::Exited(success) => Ok(Output {
                success,
                stdout,
                stderr,
            }),
            Waited::TimedOut => Err(GitError::Timeout {
                program,
                command,
                secs: self.timeout.as_secs(),
            }),
            Waited::Overflow => Err(GitError::TooLarge {
                program,
                command,
                limit: self.max_output,
            }),
            Waited::Failed(message) => Err(GitError::Io { program, message }),
        }
    }

    /// Runs and requires success; returns standard output with trailing whitespace trimmed.
    pub fn run(&self) -> Result<String, GitError> {
        self.run_raw()
            .map(|b| String::from_utf8_lossy(&b).trim_end().to_string())
    }

    /// Runs and requires success; returns standard output as is.
    pub fn run_raw(&self) -> Result<Vec<u8>, GitError> {
        let o = self.output()?;
        if o.success {
            Ok(o.stdout)
        } else {
            Err(self.failed(&o))
        }
    }

    /// Runs; `None` when the command ran and failed (e.g. "no such ref").
    pub fn query(&self) -> Result<Option<String>, GitError> {
        let o = self.output()?;
        Ok(o.success.then(|| o.text()))
    }

    /// The error for a run that failed, with its own words.
    pub fn failed(&self, o: &Output) -> GitError {
        GitError::Failed {
            program: self.program_name(),
            command: self.command_name(),
            message: o.message(),
        }
    }
}

fn reader<R: Read + Send + 'static>(
    src: Option<R>,
    limit: usize,
    overflow: Option<Arc<AtomicBool>>,
) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(src) = src {
            read_into(src, &mut buf, limit, overflow.as_deref());
        }
        let _ = tx.send(buf);
    });
    rx
}

/// Reads `src` to its end into `buf`, keeping at most `limit` bytes. Past the limit it flags
/// `overflow` and stops (the caller kills the command) or, without a flag, drains and drops
/// the rest so the child never blocks on a full pipe.
fn read_into(mut src: impl Read, buf: &mut Vec<u8>, limit: usize, overflow: Option<&AtomicBool>) {
    let mut chunk = [0u8; 64 << 10];
    loop {
        match src.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) if buf.len() + n > limit => match overflow {
                Some(flag) => {
                    flag.store(true, Ordering::SeqCst);
                    break;
                }
                None => continue,
            },
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

enum Waited {
    Exited(bool),
    TimedOut,
    Overflow,
    Failed(String),
}

fn wait(child: &mut Child, deadline: Instant, overflow: &AtomicBool) -> Waited {
    let mut pause = Duration::from_micros(500);
    loop {
        match child.try_wait() {
            Ok(Some(s)) => {
                return if overflow.load(Ordering::SeqCst) {
                    Waited::Overflow
                } else {
                    Waited::Exited(s.success())
                };
            }
            Ok(None) => {}
            Err(e) => return Waited::Failed(e.to_string()),
        }
        let over = overflow.load(Ordering::SeqCst);
        if over || Instant::now() >= deadline {
            kill_group(child);
            return if over {
                Waited::Overflow
            } else {
                Waited::TimedOut
            };
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

fn kill_group(child: &mut Child) {
    // The child leads its own group (process_group(0)): its id is the group's.
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

// ---------------------------------------------------------------------- repository facts

/// The top of the working tree containing `dir`, or `None` outside a repository.
pub fn toplevel(dir: &Path) -> Result<Option<PathBuf>, GitError> {
    Ok(Cmd::git(dir)
        .args(["rev-parse", "--show-toplevel"])
        .query()?
        .map(PathBuf::from))
}

/// The branch HEAD is on (`None` when detached).
pub fn current_branch(dir: &Path) -> Result<Option<String>, GitError> {
    Ok(Cmd::git(dir)
        .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
        .query()?
        .filter(|s| !s.is_empty()))
}

/// The commit `rev` names, if it names one.
pub fn resolve(dir: &Path, rev: &str) -> Result<Option<String>, GitError> {
    if rev.starts_with('-') {
        return Ok(None);
    }
    Ok(Cmd::git(dir)
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("{rev}^{{commit}}"))
        .query()?
        .filter(|s| !s.is_empty()))
}

/// Whether the local branch `name` exists.
pub fn branch_exists(dir: &Path, name: &str) -> Result<bool, GitError> {
    Ok(resolve(dir, &format!("refs/heads/{name}"))?.is_some())
}

/// Where each branch is checked out: `(worktree path, branch)` for every worktree on a branch.
pub fn worktrees(dir: &Path) -> Result<Vec<(PathBuf, Option<String>)>, GitError> {
    let list = Cmd::git(dir)
        .args(["worktree", "list", "--porcelain", "-z"])
        .run_raw()?;
    let mut out = Vec::new();
    for field in list.split(|b| *b == 0) {
        let field = String::from_utf8_lossy(field);
        if let Some(p) = field.strip_prefix("worktree ") {
            out.push((PathBuf::from(p), None));
        } else if let Some(b) = field.strip_prefix("branch refs/heads/") {
            if let Some(last) = out.last_mut() {
                last.1 = Some(b.to_string());
            }
        }
    }
    Ok(out)
}

/// Where `branch` is checked out, if anywhere.
pub fn checked_out_at(dir: &Path, branch: &str) -> Result<Option<PathBuf>, GitError> {
    Ok(worktrees(dir)?
        .into_iter()
        .find(|(_, b)| b.as_deref() == Some(branch))
        .map(|(p, _)| p))
}

/// Environment that makes git commit as "Paseo" for each identity (author, committer) the
/// repository's config does not name. `user.useConfigOnly` stops git from guessing one from
/// the host name, so a configured identity is used and nothing else is made up.
pub fn identity_env(dir: &Path) -> Result<Vec<(String, String)>, GitError> {
    let mut env = Vec::new();
    for who in ["AUTHOR", "COMMITTER"] {
        let known = Cmd::git(dir)
            .config("user.useConfigOnly=true")
            .args(["var", &format!("GIT_{who}_IDENT")])
            .query()?
            .is_some();
        if !known {
            env.push((format!("GIT_{who}_NAME"), FALLBACK_NAME.to_string()));
            env.push((format!("GIT_{who}_EMAIL"), FALLBACK_EMAIL.to_string()));
        }
    }
    Ok(env)
}

// ---------------------------------------------------------------------- the commit routine

/// Whether a commit runs the repository's hooks and signing setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hooks {
    /// The snapshot before removal: no hook (`core.hooksPath=/dev/null` and `--no-verify`), no
    /// signing (`--no-gpg-sign`: a pinentry could wait forever, a missing key would fail it),
    /// no fsmonitor daemon. Nothing in the repository's config can block or stall it.
    Skip,
    /// A commit the user asked for: their hooks and signing apply, as in their own git.
    Run,
}

/// Commits everything in the working tree of `dir` (changes, deletions and untracked files
/// that are not ignored) as one commit on the branch HEAD is on. Returns the new commit, or
/// `None` when there was nothing to commit. Refuses a detached HEAD (the commit would belong
/// to no branch) and, when `branch` is given, a HEAD on any other branch.
pub fn commit_all(
    dir: &Path,
    message: &str,
    hooks: Hooks,
    branch: Option<&str>,
) -> Result<Option<String>, GitError> {
    match (current_branch(dir)?, branch) {
        (None, _) => {
            return Err(GitError::Refused(format!(
                "HEAD is detached in {}: a commit there would be on no branch",
                dir.display()
            )))
        }
        (Some(on), Some(want)) if on != want => {
            return Err(GitError::Refused(format!(
                "{} is on branch {on:?}, not on its own branch {want:?}",
                dir.display()
            )))
        }
        _ => {}
    }
    let base = |c: Cmd| match hooks {
        Hooks::Skip => c
            .config("core.hooksPath=/dev/null")
            .config("core.fsmonitor=false"),
        Hooks::Run => c.with_hooks(),
    };
    base(Cmd::git(dir)).args(["add", "--all"]).run()?;
    let staged = base(Cmd::git(dir))
        .args(["diff", "--cached", "--quiet", "--no-ext-diff"])
        .output()?;
    if staged.success {
        return Ok(None);
    }
    let mut commit = base(Cmd::git(dir))
        .envs(&identity_env(dir)?)
        .args(["commit", "--quiet", "--file=-"])
        .stdin(message.as_bytes().to_vec());
    if hooks == Hooks::Skip {
        commit = commit.args(["--no-verify", "--no-gpg-sign"]);
    }
    commit.run()?;
    Cmd::git(dir).args(["rev-parse", "HEAD"]).run().map(Some)
}

#[cfg(test)]
mod tests;
