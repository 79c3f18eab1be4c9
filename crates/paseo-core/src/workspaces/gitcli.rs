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
/// Variables that would point git at another repository, index or object store, or give it
/// settings of their own (the guard's are given through `GIT_CONFIG_COUNT`).
const INHERITED_REPO_VARS: [&str; 9] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
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
    /// Runs with the guard's `-c` options (`gitcli/guard.rs`); only the guard's own config
    /// read goes without, which runs nothing of the repository.
    guarded: bool,
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
            guarded: true,
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
            guarded: false,
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
        let out = self.output_once()?;
        // bubblewrap's own failure (it says "bwrap: …"), not git's: a folder it was to hide went
        // away while the box was being made (another data root's tests end, say). Once more,
        // with a box made anew.
        if !out.success && self.boxed && out.stderr.starts_with("bwrap: ") {
            tracing::debug!(error = %out.stderr.trim(), "the git box could not be made; again");
            return self.output_once();
        }
        Ok(out)
    }

    fn output_once(&self) -> Result<Output, GitError> {
        let program = self.program_name();
        let mut args: Vec<OsString> = Vec::new();
        let guard_env = match self.repo.as_ref().filter(|_| self.guarded) {
            Some(repo) => guard::env(&guard::overrides(repo, self.hooks && self.boxed)),
            None => Vec::new(),
        };
        args.extend(self.pre.iter().cloned());
        args.extend(self.args.iter().cloned());
        let plan = self
            .repo
            .as_ref()
            .filter(|_| self.boxed)
            .and_then(|repo| crate::sandbox::app_git_plan(repo, &self.writes, &siblings(repo)));
        let mut c = match &plan {
            Some(plan) => {
                // git finds its folder by `-C` (relative to the app's own folder, as unboxed),
                // and says in its own words when it is missing.
                let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
                let boxed = plan.command(Path::new(&self.program), &args, &here);
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
        c.envs(guard_env.iter().map(|(k, v)| (k, v)));
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
            .stderr(Stdio::piped());
        // Its own session and so its own process group: a timeout also stops the hooks and
        // filters it started, and none of them has a terminal to type into.
        // SAFETY: setsid(2) is async-signal-safe and allocates nothing.
        unsafe {
            c.pre_exec(crate::sandbox::new_session);
        }
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

/// The folders in the data root that hold the worktrees the app made of `dir`'s repository
/// (`worktrees/<repo hash>/`), which the app-git box must see: a worktree whose folder git
/// cannot see counts as gone, and git forgets it at the next prune (`git gc` runs one too).
fn siblings(dir: &Path) -> Vec<PathBuf> {
    let Some(main) = crate::sandbox::common_root(&crate::sandbox::git_dirs(dir)) else {
        return Vec::new();
    };
    let hash = repo_hash(&main);
    crate::sandbox::app_git_data_roots()
        .into_iter()
        .map(|root| crate::store::Layout::new(&root).worktrees_dir().join(&hash))
        .filter(|group| group.is_dir())
        .collect()
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

/// Waits for `child` to exit, until `deadline`, or until its output overflowed. Its exit is
/// seen the moment it happens (a thread waits on it), so a 3 ms git is not made to look like
/// 8 ms by a polling pause; the deadline and the overflow are checked every few milliseconds.
fn wait(child: &mut Child, deadline: Instant, overflow: &AtomicBool) -> Waited {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    // The waiter owns a second handle on the process through its pid: std's Child cannot be
    // shared, so it reaps by waitpid itself and reports the status.
    std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: waitpid on our own child's pid, writing into a local.
        let r = unsafe { libc::waitpid(pid as i32, &mut status, 0) };
        let _ = tx.send((r, status));
    });
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(Duration::from_millis(5))) {
            Ok((r, status)) if r > 0 => {
                if overflow.load(Ordering::SeqCst) {
                    return Waited::Overflow;
                }
                return Waited::Exited(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
            }
            Ok(_) => return Waited::Failed(std::io::Error::last_os_error().to_string()),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Waited::Failed("its waiter stopped".into())
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let over = overflow.load(Ordering::SeqCst);
        if over || Instant::now() >= deadline {
            kill_pgid(pid);
            // The waiter reaps it now that it was killed.
            let _ = rx.recv_timeout(Duration::from_secs(5));
            return if over {
                Waited::Overflow
            } else {
                Waited::TimedOut
            };
        }
    }
}

/// SIGKILL to the process group `pid` leads (the child leads its own: setsid).
fn kill_pgid(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

mod facts;
pub use facts::*;

#[cfg(test)]
mod tests;
