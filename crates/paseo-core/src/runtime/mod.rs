//! The runtime: the one async owner of the engine (an actor), and the handle everything else
//! (the desktop shell, headless mode, the MCP server) uses.
//!
//! Every gesture is one typed [`cmd::Command`] in the actor's mailbox, so races such as "a
//! notice arrives while the parent is starting a turn" cannot happen. The actor decides (the
//! rules in [`policy`]), runs the engine operation, carries out its effects (durable writes,
//! session start/stop, turns; [`apply`]) and broadcasts events that carry enough for a window
//! to render from events alone, all in one step. Slow I/O (git, loading, waiting for
//! durability or for a process tree to die) is prepared or awaited by the handle, off the
//! actor.

mod actor;
mod api_error;
mod apply;
mod boot;
mod broadcast;
pub(crate) mod budget;
mod changes;
mod checkout;
mod cmd;
mod command;
mod create;
mod durable;
pub mod events;
mod gate;
mod handle;
mod hold;
mod internal;
mod lifecycle;
pub mod limits;
mod live;
#[cfg(test)]
mod notice_crash_tests;
mod persist;
pub mod policy;
mod preload;
mod removal;
mod searches;
mod sessions;
mod timeline;
mod wait;
pub mod window;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::EngineError;
use crate::model::tagged::tagged;
use crate::model::{AgentId, WorkspaceId};
use crate::providers::{McpAccess, ProviderError, ProviderRegistry};
use crate::store::timeline::TimelineError;
use crate::store::{StoreError, WriteError};
use crate::workspaces::worktree::WorktreeTarget;
use crate::workspaces::WorkspaceError;

pub use api_error::ApiError;
pub use changes::{AgentChanges, AgentDiff};
pub use checkout::CheckoutAgent;
pub use command::Alerts;
pub use events::{
    AgentSnapshot, AgentSummary, Event, FleetCounts, FleetSnapshot, TrackSnapshot,
    WorkspaceSnapshot,
};
pub use gate::{CHANGES_CONCURRENCY, CHANGES_WAIT};
pub use handle::{Prompted, RuntimeHandle};
pub use policy::Caller;
pub use preload::Preload;
pub use wait::WaitResult;

/// Largest prompt accepted (bytes).
pub const MAX_PROMPT_BYTES: usize = 1 << 20;
/// Largest title accepted (characters).
pub const MAX_TITLE_CHARS: usize = 200;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Timeline(#[from] TimelineError),
    #[error(transparent)]
    Changes(#[from] crate::workspaces::changes::ChangesError),
    /// config.json cannot be read or written (a setting the user changed through the API).
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("{}", with_field(field, message))]
    Invalid { field: String, message: String },
    /// The caller may not act on this agent ([`policy::authorize`]).
    #[error("{field}: {message}")]
    Forbidden { field: String, message: String },
    /// A limit of config.json `limits` refuses the call (SPEC 14); nothing was created.
    #[error("{0}")]
    Limit(String),
    #[error("the runtime has stopped")]
    Stopped,
    /// An error about one input of the request, named by its path; its code is the cause's.
    #[error("{field}: {source}")]
    At {
        field: String,
        #[source]
        source: Box<RuntimeError>,
    },
    /// A process tree did not exit within the close wait (the change itself is durable).
    #[error("{0}")]
    CloseTimeout(String),
    /// A request answered elsewhere (a host's backend, the hosts' manager, SPEC 17): its code,
    /// message and field as they came.
    #[error("{0}")]
    Api(ApiError),
}

impl RuntimeError {
    /// The input at fault, by its path (`workspace.source.target.newBranch`), when the error
    /// names one: a form points at that control instead of parsing the message.
    pub fn field(&self) -> Option<&str> {
        match self {
            RuntimeError::Invalid { field, .. } | RuntimeError::At { field, .. } => {
                Some(field.as_str())
            }
            RuntimeError::Workspace(e) => e.field(),
            RuntimeError::Api(e) => e.field.as_deref(),
            _ => None,
        }
        .filter(|f| !f.is_empty())
    }

    /// A stable code the command and MCP boundaries report with the message.
    pub fn code(&self) -> &'static str {
        match self {
            RuntimeError::Engine(e) => match e {
                EngineError::UnknownAgent(_) | EngineError::UnknownWorkspace(_) => "not_found",
                EngineError::Busy { .. } | EngineError::WorkspaceBusy { .. } => "busy",
                EngineError::Archived(_)
                | EngineError::WorkspaceArchived(_)
                | EngineError::RestoreParentArchived { .. }
                | EngineError::RestoreWorkspaceArchived { .. }
                | EngineError::NotArchived(_)
                | EngineError::NotReattachable { .. }
                | EngineError::Duplicate(_) => "conflict",
                EngineError::InvalidTransition { .. } => "invalid_state",
                _ => "invalid",
            },
            RuntimeError::Provider(ProviderError::Unavailable { .. }) => "unavailable",
            RuntimeError::Provider(ProviderError::Unknown(_)) => "invalid",
            RuntimeError::Provider(_) => "provider",
            RuntimeError::Workspace(WorkspaceError::GitMissing) => "unavailable",
            RuntimeError::Workspace(WorkspaceError::Git { .. } | WorkspaceError::Io(_)) => "io",
            RuntimeError::Workspace(_) => "invalid",
            RuntimeError::Timeline(TimelineError::Canceled) => "canceled",
            RuntimeError::Write(_) | RuntimeError::Store(_) | RuntimeError::Timeline(_) => "io",
            RuntimeError::Invalid { .. } => "invalid",
            RuntimeError::Forbidden { .. } => "forbidden",
            RuntimeError::Limit(_) => "limit",
            RuntimeError::Changes(e) => changes::code(e),
            RuntimeError::Config(_) => "config",
            RuntimeError::Stopped => "stopped",
            RuntimeError::At { source, .. } => source.code(),
            RuntimeError::CloseTimeout(_) => "timeout",
            RuntimeError::Api(e) => api_code(&e.code),
        }
    }

    /// This error, as one about the input at `field`.
    pub fn at(self, field: &str) -> Self {
        RuntimeError::At {
            field: field.to_string(),
            source: Box::new(self),
        }
    }

    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        RuntimeError::Invalid {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// An answer's code as one of the codes this build knows (they are the same build's on both
/// sides of a host connection; anything else reads as `error`).
fn api_code(code: &str) -> &'static str {
    const KNOWN: [&str; 25] = [
        "invalid",
        "not_found",
        "busy",
        "conflict",
        "invalid_state",
        "unavailable",
        "provider",
        "io",
        "canceled",
        "forbidden",
        "limit",
        "config",
        "stopped",
        "timeout",
        "disconnected",
        "ssh_missing",
        "ssh_host_key",
        "ssh_auth",
        "ssh",
        "not_installed",
        "version",
        "protocol",
        "arch",
        "install",
        "error",
    ];
    KNOWN
        .iter()
        .find(|k| **k == code)
        .copied()
        .unwrap_or("error")
}

fn with_field(field: &str, message: &str) -> String {
    if field.is_empty() {
        message.to_string()
    } else {
        format!("{field}: {message}")
    }
}

/// How the MCP server hands agents their access (implemented by the MCP module).
/// Also what takes the tokens it issued (and the user's) out of everything agents report
/// ([`crate::providers::redact`]).
pub trait AgentAccess: crate::providers::redact::Redact + Send + Sync {
    /// A fresh token for a new session of `agent` (the previous one stops working).
    fn issue(&self, agent: AgentId) -> Option<McpAccess>;
    /// The agent may not act any more (archived).
    fn revoke(&self, agent: AgentId);
    /// The server's URL, for display.
    fn url(&self) -> Option<String>;
}

/// Starting options.
pub struct RuntimeOptions {
    pub home: PathBuf,
    pub providers: ProviderRegistry,
    /// How long an interrupt may go unacknowledged before the process is stopped.
    pub cancel_timeout: Duration,
    /// Extra environment for every agent (tests use it to isolate CLIs).
    pub agent_env: BTreeMap<String, String>,
    /// Problems found before the runtime started (e.g. a bad config.json), shown like load
    /// problems.
    pub notices: Vec<String>,
    /// The bound of one agent's timeline on disk (config.json `storage.timelineMaxBytes`).
    pub timeline_max_bytes: u64,
    /// How many days the trash keeps what was left of a removed worktree (config.json
    /// `storage.trashDays`, SPEC 15); older entries are purged at start.
    pub trash_days: u32,
    /// config.json `sandbox` (SPEC 16): containment of agents and of the app's git in their
    /// trees, which the power rule compares too (SPEC 14).
    pub sandbox: crate::config::SandboxConfig,
    /// config.json `limits` (SPEC 14).
    pub limits: crate::config::Limits,
    /// config.json `budget` (SPEC 18): every new root agent's budget.
    pub budget: Option<crate::model::Budget>,
    /// How long a provider session may take to become ready (config.json
    /// `startTimeoutSecs`); past it the agent goes `error` and its process tree is stopped.
    pub start_timeout: Duration,
    /// The data root already being read ([`Preload`]): the start takes what it read instead of
    /// reading again. One for another data root is not used.
    pub preload: Option<Preload>,
}

impl RuntimeOptions {
    pub fn new(home: impl Into<PathBuf>, providers: ProviderRegistry) -> Self {
        RuntimeOptions {
            home: home.into(),
            providers,
            cancel_timeout: Duration::from_secs(5),
            agent_env: BTreeMap::new(),
            notices: Vec::new(),
            timeline_max_bytes: crate::store::timeline::DEFAULT_MAX_BYTES,
            trash_days: crate::config::DEFAULT_TRASH_DAYS,
            sandbox: crate::config::SandboxConfig::default(),
            limits: crate::config::Limits::default(),
            budget: None,
            start_timeout: crate::config::DEFAULT_START_TIMEOUT,
            preload: None,
        }
    }
}

/// Where a new agent works; on the wire `{"kind": "existing" | "current" | "directory" |
/// "worktree", …}` (the API's create request).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum WorkspaceTarget {
    /// An existing workspace, optionally in a subdirectory of it.
    Existing(ExistingWorkspace),
    /// The calling agent's workspace, in `cwd` (default: the caller's cwd).
    Current(CurrentWorkspace),
    /// A new workspace for a directory (SPEC 3's `create` with a `directory` source). With
    /// `reuse`, the unarchived workspace already open on that directory (not a worktree) takes
    /// the agent instead, and a new one only when there is none: one request, whatever the
    /// client, wherever the request runs (the window's new-agent form asks this way).
    Directory(DirectoryWorkspace),
    /// A new git worktree of the repository containing `repo` (default: the caller's cwd).
    Worktree(WorktreeWorkspace),
}

// Read kind first, so an error in its fields has its path (`workspace.target.newBranch`).
tagged!(WorkspaceTarget {
    "existing" => Existing(ExistingWorkspace),
    "current" => Current(CurrentWorkspace),
    "directory" => Directory(DirectoryWorkspace),
    "worktree" => Worktree(WorktreeWorkspace),
});

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExistingWorkspace {
    /// `workspaceId` on the wire, the name the errors about it use.
    #[serde(rename = "workspaceId")]
    pub id: WorkspaceId,
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CurrentWorkspace {
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DirectoryWorkspace {
    pub path: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reuse: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorktreeWorkspace {
    #[serde(default)]
    pub repo: Option<String>,
    pub target: WorktreeTarget,
}

impl WorkspaceTarget {
    /// The workspace `id`, where it is (its cwd).
    pub fn existing(id: WorkspaceId) -> Self {
        WorkspaceTarget::Existing(ExistingWorkspace { id, cwd: None })
    }

    /// A new workspace for the directory `path`.
    pub fn directory(path: impl Into<String>) -> Self {
        WorkspaceTarget::Directory(DirectoryWorkspace {
            path: path.into(),
            reuse: false,
        })
    }

    /// A new worktree of the repository containing `repo` (default: the caller's cwd).
    pub fn worktree(repo: Option<String>, target: WorktreeTarget) -> Self {
        WorkspaceTarget::Worktree(WorktreeWorkspace { repo, target })
    }
}

/// A request to create an agent (UI or MCP, already mapped from their shapes); what it leaves
/// out [`policy::resolve_create`] decides.
#[derive(Clone, Debug)]
pub struct CreateAgent {
    /// Who asks; an agent caller becomes the new agent's creator.
    pub caller: Caller,
    pub provider: String,
    pub title: Option<String>,
    pub model: Option<String>,
    pub mode: Option<String>,
    pub initial_prompt: Option<String>,
    pub workspace: WorkspaceTarget,
    /// A subagent of the calling agent (else a detached root agent).
    pub subagent: bool,
    /// Whether the calling agent hears when the first turn ends (default: yes).
    pub notify_on_finish: Option<bool>,
    pub auto_archive: bool,
    /// Run it outside the sandbox (SPEC 16). The user's choice; an agent caller asking for it
    /// is held (SPEC 14).
    pub unconfined: bool,
    pub labels: BTreeMap<String, String>,
    /// Names the request (e.g. an MCP call id) for a worktree it creates.
    pub request: Option<String>,
    /// Its own budget (SPEC 18); from an agent, at most what the caller's tree has left.
    pub budget: Option<crate::model::Budget>,
}

impl CreateAgent {
    pub fn new(provider: &str, workspace: WorkspaceTarget) -> Self {
        CreateAgent {
            caller: Caller::User,
            provider: provider.to_string(),
            title: None,
            model: None,
            mode: None,
            initial_prompt: None,
            workspace,
            subagent: false,
            notify_on_finish: None,
            auto_archive: false,
            unconfined: false,
            labels: BTreeMap::new(),
            request: None,
            budget: None,
        }
    }
}

/// Loads the data root (quarantining what cannot be read, normalizing what a crash left),
/// then starts the actor: its handle and its task. Notices wait until
/// [`RuntimeHandle::deliver_pending`]. Clients start it as a `server::Runtime`, whose door
/// also reaches the hosts.
pub(crate) async fn start(
    opts: RuntimeOptions,
    access: Option<Arc<dyn AgentAccess>>,
) -> Result<(RuntimeHandle, tokio::task::JoinHandle<()>), RuntimeError> {
    boot::start(opts, access).await
}

/// Runs blocking I/O off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, RuntimeError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|_| RuntimeError::Stopped)
}

#[cfg(test)]
pub(crate) mod tests;

/// [`release_freed_memory`] once two seconds pass without another call, not at once: a core
/// busy trimming the heap is one the first answers after a start wait for, and a window taking
/// its cards in pages (megabytes of JSON each at 100,000 agents, freed in the middle of the
/// heap) asks again and again; its last page is followed by one trim.
pub(crate) fn release_freed_memory_later() {
    use std::sync::atomic::{AtomicU64, Ordering};
    static ASKED: AtomicU64 = AtomicU64::new(0);
    let asked = ASKED.fetch_add(1, Ordering::Relaxed) + 1;
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        if ASKED.load(Ordering::Relaxed) == asked {
            let _ = tokio::task::spawn_blocking(release_freed_memory).await;
        }
    });
}

/// Caps glibc's malloc at two arenas for the rest of the process; called first thing, before
/// any other thread starts. By default a thread that finds the arenas busy gets one of its own,
/// up to eight per core, and the load's reading threads each leave their records in theirs, with
/// the parse scratch freed between them: at 100,000 records two arenas hold the same fleet in
/// ≈ 3 MB less (the window app's side 4–8 MiB less), and the load is no slower
/// (docs/benchmarks.md).
pub fn limit_heap_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets one of glibc's own tunables, under its lock.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Gives the heap pages freed after a load back to the system. glibc returns a freed chunk only
/// when it sits at the top of a heap (or was its own mapping); reading records on several
/// threads leaves their buffers, paths and parse scratch freed in the middle of the arenas, kept
/// as resident memory for good (13 MB after loading 100,000 records). `malloc_trim` releases
/// every whole free page of every arena (~15 ms at 100,000 records: run it off the start's path).
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas, under their locks.
    unsafe {
        libc::malloc_trim(0);
    }
}
