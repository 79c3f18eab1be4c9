//! Containment (SPEC 16): every agent process tree, and every git command the app runs in a
//! tree an agent can write, runs boxed to its work.
//!
//! A [`Plan`] says what one boxed process may do: write only its own trees (the agent's cwd,
//! its repository's git directories, a private temp directory, its CLI's own state), read
//! everything else except the hidden paths (the app's data root, the user's secrets), and
//! reach the network or not. [`Engine`] is what enforces it: bubblewrap (a mount namespace in
//! which the whole file system is read-only and the hidden paths are empty) where user
//! namespaces work, else Landlock (the kernel refuses writes outside the trees and reads of the
//! hidden paths). [`Containment`] is the engine found at start plus the user's settings; it
//! makes plans. The two places processes start (`providers::process::spawn` for agents,
//! `workspaces::gitcli::Cmd::output` for git) apply a plan, so no path can forget it.

mod bwrap;
mod git;
mod landlock;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

use serde::Serialize;

use crate::config::{EngineChoice, SandboxConfig};

pub use git::{app_git_data_roots, app_git_plan, common_root, git_dirs};

/// What enforces containment on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// bubblewrap at this path.
    Bwrap(PathBuf),
    /// Landlock at this ABI version (user namespaces unavailable).
    Landlock(u32),
}

impl Engine {
    pub fn name(&self) -> &'static str {
        match self {
            Engine::Bwrap(_) => "bubblewrap",
            Engine::Landlock(_) => "landlock",
        }
    }
}

/// Why no engine works, or that the user turned containment off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Containment {
    /// Agents run boxed by this engine.
    On {
        engine: Engine,
        settings: Arc<Settings>,
    },
    /// The user turned containment off (`sandbox.enabled: false`): every agent is unconfined.
    Off,
    /// Containment is wanted but nothing here can enforce it: contained agents do not start,
    /// and say this.
    Unavailable { reason: String },
}

/// The user's settings every plan shares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The data root: hidden from every boxed process.
    pub data_root: PathBuf,
    /// `sandbox.hide`, with `~/` expanded.
    pub hide: Vec<PathBuf>,
    pub network: bool,
}

/// What the window and the log say about containment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainmentInfo {
    /// `on`, `off` or `unavailable`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<&'static str>,
    /// What a user reads: which engine, or why none, and how to fix it.
    pub message: String,
}

/// What stays open with `engine` on this kernel, in the user's words (SPEC 16b: the status bar
/// says exactly what stays open), or nothing.
fn gaps(engine: &Engine) -> String {
    let scoped = landlock_abi().is_some_and(|abi| abi >= 6);
    let mut open: Vec<&str> = Vec::new();
    match engine {
        Engine::Bwrap(_) => {
            if !scoped {
                open.push(
                    "abstract Unix sockets (an X11 display, some D-Bus buses) and signals to \
                     your processes stay reachable: this kernel has no Landlock scopes (Linux \
                     6.12)",
                );
            }
        }
        Engine::Landlock(abi) => {
            open.push(
                "an agent can write its repository's git config and hooks, which your own git \
                 would run: review them before running git there",
            );
            open.push("/tmp is read-only to agents (tools must use $TMPDIR)");
            open.push("no Unix socket can be opened in a box");
            if !scoped {
                open.push(
                    "abstract Unix sockets and signals to your processes stay reachable (no \
                     Landlock scopes before Linux 6.12)",
                );
            }
            if *abi < 4 {
                open.push("the network cannot be turned off");
            } else {
                open.push("with the network off, UDP still goes out");
            }
        }
    }
    if open.is_empty() {
        String::new()
    } else {
        format!("; what stays open here: {}", open.join("; "))
    }
}

/// How a user makes containment work, for the messages that say it does not.
pub const HOW_TO_FIX: &str = "install bubblewrap (sudo apt install bubblewrap) and allow \
     unprivileged user namespaces, or turn containment off with \"sandbox\": {\"enabled\": \
     false} in config.json (agents then run with your whole reach)";

impl Containment {
    /// Finds what works here for a data root and the user's settings. Probing starts a process
    /// (bubblewrap running `true`), so the answer is kept for the life of the process: what
    /// the machine allows does not change while the app runs.
    pub fn detect(config: &SandboxConfig, data_root: &Path) -> Containment {
        if !config.enabled {
            return Containment::Off;
        }
        let settings = Arc::new(Settings {
            data_root: canonical(data_root),
            hide: hides(&config.hide),
            network: config.network,
        });
        match probe(config.engine) {
            Ok(engine) => Containment::On { engine, settings },
            Err(reason) => Containment::Unavailable { reason },
        }
    }

    pub fn info(&self) -> ContainmentInfo {
        match self {
            Containment::On { engine, .. } => ContainmentInfo {
                state: "on",
                engine: Some(engine.name()),
                message: format!("agents are contained ({}){}", engine.name(), gaps(engine)),
            },
            Containment::Off => ContainmentInfo {
                state: "off",
                engine: None,
                message: "containment is off (sandbox.enabled is false in config.json): agents \
                          run with your whole reach"
                    .into(),
            },
            Containment::Unavailable { reason } => ContainmentInfo {
                state: "unavailable",
                engine: None,
                message: format!(
                    "containment is unavailable ({reason}): contained agents cannot start; \
                     {HOW_TO_FIX}"
                ),
            },
        }
    }

    /// Containment by a given engine, whatever the probe found: tests run both engines here.
    pub fn with_engine(engine: Engine, config: &SandboxConfig, data_root: &Path) -> Containment {
        Containment::On {
            engine,
            settings: Arc::new(Settings {
                data_root: canonical(data_root),
                hide: hides(&config.hide),
                network: config.network,
            }),
        }
    }

    /// The engine the probe finds here for `choice`, if any.
    pub fn probe(choice: EngineChoice) -> Result<Engine, String> {
        probe(choice)
    }

    /// Whether an agent with these choices runs boxed.
    pub fn contains(&self, unconfined: bool) -> bool {
        !unconfined && !matches!(self, Containment::Off)
    }

    /// The plan of an agent working in `cwd` (`None`: it runs unconfined, by the user's
    /// choice). `Err` says why a contained agent cannot start here.
    pub fn agent_plan(
        &self,
        cwd: &Path,
        private_tmp: &Path,
        unconfined: bool,
    ) -> Result<Option<Plan>, String> {
        if !self.contains(unconfined) {
            return Ok(None);
        }
        let (engine, settings) = match self {
            Containment::On { engine, settings } => (engine, settings),
            Containment::Unavailable { reason } => {
                return Err(format!(
                    "containment is unavailable ({reason}), so this agent cannot start: \
                     {HOW_TO_FIX}, or make this agent unconfined"
                ))
            }
            Containment::Off => return Ok(None),
        };
        if !settings.network && matches!(engine, Engine::Landlock(abi) if *abi < 4) {
            return Err(format!(
                "\"sandbox\": {{\"network\": false}} cannot be enforced here: this kernel's \
                 Landlock ({}) has no network rules (ABI 4, Linux 6.7); allow unprivileged user \
                 namespaces so bubblewrap boxes agents, or turn the network back on",
                engine.name()
            ));
        }
        let mut plan = Plan::new(engine.clone(), settings.clone());
        let cwd = canonical(cwd);
        plan.write(&cwd);
        // Its repository's git directories, as git's own records say (never a `.git` file the
        // agent wrote alone, see `git_dirs`), and never a hidden path: a worktree the app made
        // in the data root is the one place there it may write.
        let worktrees = settings.data_root.join("worktrees");
        for d in git_dirs(&cwd) {
            let hidden = plan
                .hidden()
                .iter()
                .any(|h| d.starts_with(h) || h.starts_with(&d));
            if !hidden || d.starts_with(&worktrees) {
                plan.write(&d);
                protect_git_programs(&mut plan, &d);
            }
        }
        let bwrap = matches!(engine, Engine::Bwrap(_));
        if let Some(top) = cwd
            .ancestors()
            .find(|a| bwrap && a.join(".git").is_file())
            .map(|a| a.join(".git"))
        {
            // A linked worktree's `.git` file says where its git dir is, for the user's git too.
            plan.protect(&top);
        }
        plan.write(private_tmp);
        plan.tmp = Some(canonical(private_tmp));
        plan.cwd = Some(cwd);
        // Caches every tool shares (package managers, compilers): SPEC 16 lists ~/.cache.
        if let Some(home) = home() {
            plan.write_if_exists(&home.join(".cache"));
        }
        Ok(Some(plan))
    }
}

/// Keeps read-only, inside a git directory the box writes, what makes git run programs or
/// read more configuration (SPEC 16b): an agent commits (objects, refs, index, logs) but
/// never plants a hook, an fsmonitor, a filter or an `include` that the user's own git, an
/// IDE or a shell prompt would run later, outside any box. What is missing is made first
/// (empty), or the agent could create it.
///
/// Under Landlock this cannot be done: its rules only grant, and what they grant on a folder
/// holds for everything beneath it, so a work tree whose `.git` keeps read-only files could
/// take no new file at its top, and git could not make its own lock files. There the git
/// dirs stay writable whole, and the status bar and docs/security.md say so.
fn protect_git_programs(plan: &mut Plan, git_dir: &Path) {
    if matches!(plan.engine, Engine::Landlock(_)) {
        return;
    }
    for dir in ["hooks", "info"] {
        let d = git_dir.join(dir);
        if std::fs::symlink_metadata(&d).is_err() {
            if let Err(e) = std::fs::create_dir(&d) {
                tracing::debug!(dir = %d.display(), "cannot make an empty git folder: {e}");
            }
        }
        plan.protect(&d);
    }
    // `config` of a repository (a worktree's own git dir has none: made empty, git reads it
    // only with extensions.worktreeConfig, which the protected main config would have to set);
    // `config.worktree`, `commondir` and `gitdir` of a worktree's git dir.
    for file in ["config", "config.worktree", "commondir", "gitdir"] {
        let f = git_dir.join(file);
        let main_config = file == "config" && git_dir.join("objects").is_dir();
        if std::fs::symlink_metadata(&f).is_err() && (main_config || file == "config.worktree") {
            if let Err(e) = std::fs::write(&f, b"") {
                tracing::debug!(file = %f.display(), "cannot make an empty git file: {e}");
            }
        }
        if f.exists() {
            plan.protect(&f);
        }
    }
}

/// What one boxed process may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    engine: Engine,
    settings: Arc<Settings>,
    /// Trees it may write (and read, even inside a hidden path).
    writes: Vec<PathBuf>,
    /// Files or trees inside a hidden path it may read (e.g. its own MCP configuration file).
    reads: Vec<PathBuf>,
    /// Files or trees inside a write tree it may only read: a CLI's settings, which grant
    /// permissions and run hooks (SPEC 14: what an agent can write never widens a mode).
    protected: Vec<PathBuf>,
    /// The private temp folder (one of `writes`), given as `TMPDIR`.
    tmp: Option<PathBuf>,
    /// Where it starts.
    cwd: Option<PathBuf>,
    /// Hidden besides the settings' (app git hides every data root of the process).
    extra_hidden: Vec<PathBuf>,
}

impl Plan {
    fn new(engine: Engine, settings: Arc<Settings>) -> Plan {
        Plan {
            engine,
            settings,
            writes: Vec::new(),
            reads: Vec::new(),
            protected: Vec::new(),
            tmp: None,
            cwd: None,
            extra_hidden: Vec::new(),
        }
    }

    /// `TMPDIR` pointing at its private temp folder. `/tmp` itself stays readable (and not
    /// writable): programs that honour `TMPDIR` (mktemp, node, Python, Rust) write there.
    fn tmp_env(&self) -> Vec<(String, String)> {
        self.tmp
            .iter()
            .map(|t| ("TMPDIR".to_string(), t.to_string_lossy().into_owned()))
            .collect()
    }

    /// What it cannot read: the data root(s) and the user's secrets.
    fn hidden(&self) -> Vec<PathBuf> {
        let mut h = vec![self.settings.data_root.clone()];
        h.extend(self.settings.hide.iter().cloned());
        for x in &self.extra_hidden {
            if !h.contains(x) {
                h.push(x.clone());
            }
        }
        h
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Its private temp folder (the box's `/tmp`), if it has one.
    pub fn private_tmp(&self) -> Option<&Path> {
        self.tmp.as_deref()
    }

    /// The data root it hides (where the app keeps what it makes for the box).
    pub fn data_root(&self) -> &Path {
        &self.settings.data_root
    }

    /// Lets it write `path` (a tree or a file), which must exist.
    pub fn write(&mut self, path: &Path) {
        let p = canonical(path);
        if !self.writes.contains(&p) {
            self.writes.push(p);
        }
    }

    /// [`Plan::write`] when `path` exists; state folders a CLI has not made yet are made by
    /// the caller first, or stay read-only.
    pub fn write_if_exists(&mut self, path: &Path) {
        if path.exists() {
            self.write(path);
        }
    }

    /// Keeps `path` read-only inside a write tree. It must exist to be kept so (bubblewrap binds
    /// it read-only): the caller makes an empty one first, or an agent could create it.
    pub fn protect(&mut self, path: &Path) {
        let p = canonical(path);
        if !self.protected.contains(&p) {
            self.protected.push(p);
        }
    }

    /// Lets it read `path` even inside a hidden path.
    pub fn read(&mut self, path: &Path) {
        let p = canonical(path);
        if !self.reads.contains(&p) {
            self.reads.push(p);
        }
    }

    pub fn writes(&self) -> &[PathBuf] {
        &self.writes
    }

    /// Whether `path` is in a tree it may write.
    pub fn may_write(&self, path: &Path) -> bool {
        let p = canonical(path);
        self.writes.iter().any(|w| p.starts_with(w))
    }

    /// The program and arguments that run `program args…` boxed by this plan, with the
    /// environment it needs on top of the caller's (`TMPDIR`). For Landlock the program is
    /// unchanged and [`Plan::landlock`] gives what the child applies before it executes.
    pub fn command(&self, program: &Path, args: &[std::ffi::OsString], cwd: &Path) -> Boxed {
        match &self.engine {
            Engine::Bwrap(bwrap) => bwrap::command(self, bwrap, program, args, cwd),
            Engine::Landlock(_) => Boxed {
                program: program.to_path_buf(),
                args: args.to_vec(),
                env: self.tmp_env(),
                landlock: Some(landlock::Rules::for_plan(self)),
            },
        }
    }
}

/// A command line after boxing.
pub struct Boxed {
    pub program: PathBuf,
    pub args: Vec<std::ffi::OsString>,
    pub env: Vec<(String, String)>,
    /// Landlock rules the child restricts itself with between fork and exec.
    pub landlock: Option<landlock::Rules>,
}

impl Boxed {
    /// The command to spawn (program, arguments, the box's environment and, for Landlock,
    /// what the child applies before it executes). The caller adds its cwd, environment and
    /// pipes. An error in preparing the rules fails the spawn: a contained process never runs
    /// unboxed.
    pub fn std_command(&self) -> std::io::Result<std::process::Command> {
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(&self.args);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(rules) = &self.landlock {
            let restrict = rules.prepare()?;
            // SAFETY: the closure makes only syscalls (capabilities, no_new_privs,
            // landlock_restrict_self on a duplicate of a descriptor opened before the fork, a
            // seccomp filter) and allocates nothing.
            unsafe {
                cmd.pre_exec(restrict);
            }
        }
        Ok(cmd)
    }
}

/// Run between fork and exec (`pre_exec`): the child leads a new session, and so a new process
/// group of its own, with no controlling terminal (no TIOCSTI into the app's terminal).
pub fn new_session() -> std::io::Result<()> {
    // SAFETY: setsid(2) takes no arguments and touches no memory.
    if unsafe { libc::setsid() } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The home directory, for `~/` paths and CLI state.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// What no contained process reads, and no agent reaches through its cwd tree (SPEC 14, 16):
/// the data root, then the `sandbox.hide` paths (`~/` is the user's home; one that cannot be
/// resolved is left out), canonical where they exist.
pub fn hidden_roots(data_root: &Path, hide: &[String]) -> Vec<PathBuf> {
    std::iter::once(canonical(data_root))
        .chain(hides(hide))
        .collect()
}

/// Everything hidden from a box: the user's `hide` list, and what a session reaches the user
/// through (SPEC 16b): the runtime folder (the D-Bus session bus, the systemd user manager,
/// ssh- and gpg-agent, Wayland, audio), the container engines' sockets, and the agent CLIs'
/// logins (each provider shows its own to its own agents only).
fn hides(hide: &[String]) -> Vec<PathBuf> {
    let mut out = expand_hide(hide);
    let mut add = |p: PathBuf| {
        let p = canonical(&p);
        if p.is_absolute() && p != Path::new("/") && !out.contains(&p) {
            out.push(p);
        }
    };
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        add(PathBuf::from(run));
    }
    // SAFETY: getuid(2) cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    add(PathBuf::from(format!("/run/user/{uid}")));
    // The user's ssh-agent wherever it listens (its folder: the agent makes a fresh socket
    // there each login).
    if let Some(sock) = std::env::var_os("SSH_AUTH_SOCK").filter(|v| !v.is_empty()) {
        let sock = PathBuf::from(sock);
        if let Some(dir) = sock
            .parent()
            .filter(|d| d.components().count() > 2 && home().as_deref() != Some(*d))
        {
            add(dir.to_path_buf());
        } else {
            add(sock);
        }
    }
    for sock in ["/run/docker.sock", "/var/run/docker.sock", "/run/podman"] {
        if Path::new(sock).exists() {
            add(PathBuf::from(sock));
        }
    }
    for (var, default, file) in [
        ("CLAUDE_CONFIG_DIR", ".claude", ".credentials.json"),
        ("CODEX_HOME", ".codex", "auth.json"),
    ] {
        match std::env::var_os(var).filter(|v| !v.is_empty()) {
            Some(dir) => add(PathBuf::from(dir).join(file)),
            None => {
                if let Some(h) = home() {
                    add(h.join(default).join(file));
                }
            }
        }
    }
    out
}

fn expand_hide(hide: &[String]) -> Vec<PathBuf> {
    let home = home();
    hide.iter()
        .filter_map(|h| match h.strip_prefix("~/") {
            Some(rest) => home.as_ref().map(|home| home.join(rest)),
            None => Some(PathBuf::from(h)),
        })
        .map(|p| canonical(&p))
        .collect()
}

/// The path with symlinks resolved when it exists, so a link cannot point a rule elsewhere;
/// as given otherwise.
pub fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

static LANDLOCK: OnceLock<Result<u32, String>> = OnceLock::new();

/// The Landlock ABI this kernel speaks, if any (asked once).
fn landlock_abi() -> Option<u32> {
    LANDLOCK.get_or_init(landlock::probe).clone().ok()
}

/// The engine `choice` allows that works here. Probing starts a process, so what each engine
/// answered is kept for the life of the process.
fn probe(choice: EngineChoice) -> Result<Engine, String> {
    static BWRAP: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let bwrap = || BWRAP.get_or_init(bwrap::probe).clone().map(Engine::Bwrap);
    let landlock = || {
        LANDLOCK
            .get_or_init(landlock::probe)
            .clone()
            .map(Engine::Landlock)
    };
    match choice {
        EngineChoice::Bubblewrap => bwrap(),
        EngineChoice::Landlock => landlock(),
        EngineChoice::Auto => bwrap().or_else(|b| landlock().map_err(|l| format!("{b}; {l}"))),
    }
}

/// The containment app-run git uses (SPEC 16: git in agent trees runs boxed too). Set by each
/// runtime at start; several runtimes in one process (tests) each add their data root, which
/// every boxed git then hides.
static APP_GIT: RwLock<Option<AppGit>> = RwLock::new(None);

#[derive(Clone, Debug)]
struct AppGit {
    engine: Engine,
    settings: Arc<Settings>,
    data_roots: Vec<PathBuf>,
}

/// Set once a runtime found containment wanted but impossible: no repository hook runs then,
/// not even for a commit the user asked for (it could not be confined).
static APP_GIT_UNAVAILABLE: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Whether a repository's hooks may run for a git command the user asked for: where that
/// command is boxed, or where the user turned containment off.
pub fn app_git_may_run_hooks() -> bool {
    let boxed = APP_GIT.read().unwrap_or_else(|e| e.into_inner()).is_some();
    boxed || !APP_GIT_UNAVAILABLE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Makes app-run git boxed under `containment` (nothing when it is off or unavailable: git then
/// runs with hooks, fsmonitor and the repository's own filters off, see `git.rs`).
pub fn install_app_git(containment: &Containment) {
    let (engine, settings) = match containment {
        Containment::On { engine, settings } => (engine, settings),
        Containment::Unavailable { .. } => {
            APP_GIT_UNAVAILABLE.store(true, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        Containment::Off => return,
    };
    let mut slot = APP_GIT.write().unwrap_or_else(|e| e.into_inner());
    match slot.as_mut() {
        Some(g) => {
            if !g.data_roots.contains(&settings.data_root) {
                g.data_roots.push(settings.data_root.clone());
            }
        }
        None => {
            *slot = Some(AppGit {
                engine: engine.clone(),
                settings: settings.clone(),
                data_roots: vec![settings.data_root.clone()],
            })
        }
    }
}

#[cfg(test)]
mod tests;
