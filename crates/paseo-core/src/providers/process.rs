//! Process handling shared by every provider: spawning an agent process in its own process
//! group with a clean environment, and owning it until the whole group is stopped and reaped
//! (the group primitives are in `pgroup`, re-exported here). What happens to a process's output is in `output` (one process per turn) and
//! `stdio` (a long-lived process spoken to in JSON lines).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::groups::GroupRecorder;
pub use super::pgroup::{group_alive, group_members, signal_group, terminate_group, TERM_GRACE};
use super::{McpAccess, ProviderError};
use crate::model::AgentId;

mod boxed;
pub use boxed::Layer;

/// How long an interrupted turn gets after SIGINT before it is terminated.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// Inherited variables that make a CLI believe it runs nested inside another agent session
/// (or that belong to the session that launched the app). Checked against the strings the
/// pinned Claude Code and Codex binaries read.
const SCRUBBED_VARS: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_CHILD_NOTES_DIR",
    "CLAUDE_AGENT_SDK_VERSION",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_THREAD_ID",
    "CODEX_SESSION_ID",
    "CODEX_CI",
    "CODEX_INTERNAL_ORIGINATOR_OVERRIDE",
    "PASEO_AGENT_ID",
    "PASEO_MCP_URL",
    "PASEO_MCP_TOKEN",
];
const SCRUBBED_PREFIXES: &[&str] = &["CLAUDE_CODE_SESSION_", "CODEX_NETWORK_PROXY_"];

fn scrubbed(name: &str) -> bool {
    SCRUBBED_VARS.contains(&name) || SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// What a contained agent's environment never holds (SPEC 16b): the addresses of the user's
/// session (its sockets are hidden from the box too) and the user's token-like variables,
/// but for the keys its own provider needs ([`AgentEnv::keep`]) and whatever the provider's
/// `env` in config.json sets.
const SESSION_VARS: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "XDG_SESSION_COOKIE",
    "SESSION_MANAGER",
    "DOCKER_HOST",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "KUBECONFIG",
];

/// A variable that holds a credential by its name: `*_TOKEN`, `*_SECRET`, `*_PASSWORD`,
/// `*_API_KEY`, `AWS_*`, `AZURE_*`, … (and `GH_TOKEN`, `GITHUB_TOKEN`, `NPM_TOKEN` among them).
fn secret_like(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    ["AWS_", "AZURE_", "GOOGLE_", "GCLOUD_", "VAULT_"]
        .iter()
        .any(|p| n.starts_with(p))
        || [
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "API_KEY",
            "APIKEY",
            "ACCESS_KEY",
            "PRIVATE_KEY",
            "CREDENTIALS",
        ]
        .iter()
        .any(|w| n.ends_with(w) || n.contains(&format!("{w}_")))
}

/// The environment changes for one agent process: scrub inherited session variables, then the
/// provider's configured `env`, then the session's own `env`, then the Paseo variables.
#[derive(Clone, Debug, Default)]
pub struct AgentEnv {
    pub set: BTreeMap<String, String>,
    /// Whose processes these are, and where their groups are recorded while they run.
    pub groups: Option<(AgentId, GroupRecorder)>,
    /// The box its processes run in (SPEC 16); `None`: unconfined.
    pub sandbox: Option<std::sync::Arc<crate::sandbox::Plan>>,
    /// Credentials of the user's environment its provider needs (`ANTHROPIC_API_KEY` for
    /// Claude Code): kept when the box drops the others.
    pub keep: &'static [&'static str],
}

impl AgentEnv {
    pub fn new(
        agent_id: AgentId,
        provider_env: &BTreeMap<String, String>,
        session_env: &BTreeMap<String, String>,
        mcp: Option<&McpAccess>,
    ) -> Self {
        let mut set = provider_env.clone();
        set.extend(session_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        set.insert("PASEO_AGENT_ID".into(), agent_id.to_string());
        if let Some(mcp) = mcp {
            set.insert("PASEO_MCP_URL".into(), mcp.url.clone());
            set.insert("PASEO_MCP_TOKEN".into(), mcp.token.clone());
        }
        AgentEnv {
            set,
            groups: None,
            sandbox: None,
            keep: &[],
        }
    }

    /// Whether an inherited variable stays out of the agent's process.
    fn dropped(&self, name: &str) -> bool {
        scrubbed(name)
            || (self.sandbox.is_some()
                && !self.keep.contains(&name)
                && (SESSION_VARS.contains(&name) || secret_like(name)))
    }

    /// The value a variable will have in the agent's process.
    pub fn get(&self, name: &str) -> Option<String> {
        if let Some(v) = self.set.get(name) {
            return Some(v.clone());
        }
        if self.dropped(name) {
            return None;
        }
        std::env::var(name).ok()
    }

    fn apply(&self, cmd: &mut Command) {
        for (name, _) in std::env::vars_os() {
            match name.to_str() {
                Some(name) if self.dropped(name) => {
                    cmd.env_remove(name);
                }
                // A name that is not UTF-8 cannot be told apart: a box keeps none.
                None if self.sandbox.is_some() => {
                    cmd.env_remove(&name);
                }
                _ => {}
            }
        }
        cmd.envs(&self.set);
    }
}

/// What to launch.
pub struct Launch<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a AgentEnv,
    pub stdin: bool,
}

/// A spawned agent process: its pipes and a handle that tracks its exit.
pub struct Spawned {
    pub proc: Proc,
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Finds a program the way `execvp` will: a path with a slash must exist, a bare name must be
/// on PATH (the agent's PATH, which the provider's env may change).
pub fn find_program(program: &str, env: &AgentEnv) -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if program.is_empty() {
        return Err("the command is empty".into());
    }
    if program.contains('/') {
        let p = Path::new(program);
        return if executable(p) {
            Ok(p.to_path_buf())
        } else if p.exists() {
            Err(format!("{program} is not an executable file"))
        } else {
            Err(format!("{program} does not exist"))
        };
    }
    let path = env.get("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!("`{program}` was not found on PATH"))
}

/// Finds the program of an argv (see [`find_program`]); an empty argv has none.
pub fn find_argv0(argv: &[String], env: &AgentEnv) -> Result<std::path::PathBuf, String> {
    find_program(argv.first().map_or("", String::as_str), env)
}

/// Spawns a process in a new process group, so the whole tree it starts can be stopped at once.
pub fn spawn(launch: Launch<'_>) -> Result<Spawned, ProviderError> {
    let Some(program) = launch.argv.first() else {
        return Err(ProviderError::Invalid("the command is empty".into()));
    };
    let what = || format!("`{program}`");
    check_dir(launch.cwd)?;
    let resolved = find_program(program, launch.env).map_err(|reason| ProviderError::Spawn {
        what: what(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, reason),
    })?;
    let mut cmd = match &launch.env.sandbox {
        // The one place agent processes start: a contained agent's process only ever starts
        // inside its box (SPEC 16).
        Some(plan) => {
            let args: Vec<std::ffi::OsString> = launch.argv[1..].iter().map(Into::into).collect();
            let boxed = plan.command(&resolved, &args, launch.cwd);
            Command::from(boxed.std_command().map_err(|source| ProviderError::Spawn {
                what: format!("{} in its sandbox", what()),
                source,
            })?)
        }
        None => {
            let mut c = Command::new(resolved);
            c.args(&launch.argv[1..]);
            c
        }
    };
    // Its own session, so its own process group (the app stops the group as a whole) and no
    // controlling terminal: nothing in it can push keystrokes into the terminal the app was
    // started from (TIOCSTI, SPEC 16b).
    // SAFETY: setsid(2) is async-signal-safe and allocates nothing.
    unsafe {
        cmd.pre_exec(crate::sandbox::new_session);
    }
    cmd.current_dir(launch.cwd)
        .stdin(if launch.stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    launch.env.apply(&mut cmd);
    let mut child = cmd.spawn().map_err(|source| ProviderError::Spawn {
        what: what(),
        source,
    })?;
    let (Some(pid), Some(stdout), Some(stderr)) =
        (child.id(), child.stdout.take(), child.stderr.take())
    else {
        return Err(ProviderError::Protocol(format!(
            "{} started without its pipes",
            what()
        )));
    };
    let stdin = child.stdin.take();
    let pgid = pid as i32;
    if let Some((agent, g)) = &launch.env.groups {
        g.record(*agent, pgid);
    }
    Ok(Spawned {
        proc: Proc::watch(child, pgid, launch.env.groups.clone()),
        stdin,
        stdout,
        stderr,
    })
}

/// A running process group whose leader we spawned. A task owns the `Child` and reaps it; the
/// exit status is published through a watch channel. Dropping a `Proc` without `terminate`
/// kills the group, so no agent outlives a lost session.
pub struct Proc {
    pgid: i32,
    exit: watch::Receiver<Option<ExitStatus>>,
    armed: bool,
    recorded: Option<(AgentId, GroupRecorder)>,
}

impl Proc {
    fn watch(mut child: Child, pgid: i32, recorded: Option<(AgentId, GroupRecorder)>) -> Proc {
        let (tx, rx) = watch::channel(None);
        let forget = recorded.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            // Members left behind keep the record, for `terminate` or the next start.
            if let Some((agent, g)) = forget.filter(|_| !group_alive(pgid)) {
                g.forget(agent, pgid);
            }
            match status {
                Ok(s) => {
                    let _ = tx.send(Some(s));
                }
                Err(e) => {
                    tracing::warn!(pgid, "waiting for agent process failed: {e}");
                    let _ = tx.send(Some(std::os::unix::process::ExitStatusExt::from_raw(
                        0x7f00,
                    )));
                }
            }
        });
        Proc {
            pgid,
            exit: rx,
            armed: true,
            recorded,
        }
    }

    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// A receiver that yields the exit status once the leader is reaped.
    pub fn exit_watch(&self) -> watch::Receiver<Option<ExitStatus>> {
        self.exit.clone()
    }

    /// Waits until the leader has exited and been reaped.
    pub async fn wait(&self) -> ExitStatus {
        let mut rx = self.exit.clone();
        let result = match rx.wait_for(|s| s.is_some()).await {
            Ok(s) => *s,
            Err(_) => None,
        };
        result.unwrap_or_else(|| std::os::unix::process::ExitStatusExt::from_raw(0x7f00))
    }

    pub fn signal(&self, sig: i32) {
        signal_group(self.pgid, sig);
    }

    /// Stops the whole group: SIGTERM, up to `grace` for everything in it to exit, SIGKILL,
    /// and resolves once the leader is reaped and nothing of the group is left alive.
    pub async fn terminate(mut self, grace: Duration) -> ExitStatus {
        self.armed = false;
        terminate_group(self.pgid, grace, Some(self.exit.clone())).await;
        if let Some((agent, g)) = &self.recorded {
            g.forget(*agent, self.pgid);
        }
        self.wait().await
    }

    /// Gives up ownership without killing (the leader has been reaped; stray members of the
    /// group are the caller's business).
    pub fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.armed {
            signal_group(self.pgid, libc::SIGKILL);
        }
    }
}

/// "exited with code 3" / "was killed by signal 9 (SIGKILL)".
pub fn describe_exit(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        format!("exited with code {code}")
    } else if let Some(sig) = status.signal() {
        format!("was killed by signal {sig} ({})", signal_name(sig))
    } else {
        "exited".to_string()
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// An agent runs in an existing directory; say which one is missing rather than fail to spawn.
pub fn check_dir(cwd: &Path) -> Result<(), ProviderError> {
    if cwd.is_dir() {
        return Ok(());
    }
    Err(ProviderError::Invalid(format!(
        "the working directory {} does not exist",
        cwd.display()
    )))
}

/// Waits at most `within` for a session task to finish, then stops it. Used on close: a task
/// may be blocked on a full sink that the caller of close drains, and it has nothing left to
/// report after a close anyway.
pub async fn join_or_abort(mut task: JoinHandle<()>, within: Duration) {
    if tokio::time::timeout(within, &mut task).await.is_err() {
        task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubbing_covers_nested_session_variables() {
        for v in [
            "CLAUDECODE",
            "CLAUDE_CODE_ENTRYPOINT",
            "CLAUDE_CODE_SSE_PORT",
            "CLAUDE_CODE_SESSION_ID",
            "CODEX_THREAD_ID",
            "CODEX_SANDBOX",
        ] {
            assert!(scrubbed(v), "{v}");
        }
        assert!(!scrubbed("PATH"));
        assert!(!scrubbed("ANTHROPIC_BASE_URL"));
    }
}
