//! The runtime: the one async owner of the engine (an actor), and the handle everything else
//! (the desktop shell, headless mode, the MCP server) uses.
//!
//! Every change goes through the actor's mailbox, so races such as "a notice arrives while the
//! parent is starting a turn" cannot happen. The actor runs an engine operation, then carries
//! out its effects (durable writes, session start/stop, turns) and broadcasts events that carry
//! enough for a window to render from events alone. Slow I/O (git, loading, waiting for
//! durability or for a process tree to die) happens outside the actor.

mod actor;
pub mod events;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, oneshot};

use crate::engine::{Engine, EngineError, ListFilter, NewAgent};
use crate::model::{
    AgentConfig, AgentId, Status, TimelineItem, Timestamp, TurnOrigin, WorkspaceId, WorkspaceKind,
    PARENT_LABEL,
};
use crate::providers::{McpAccess, ProviderError, ProviderInfo, ProviderRegistry};
use crate::store::timeline::TimelineError;
use crate::store::{Layout, StoreError, WriteError, Writer};
use crate::workspaces::worktree::WorktreeTarget;
use crate::workspaces::{self, WorkspaceError};

pub use events::{
    AgentSnapshot, Event, FleetCounts, FleetSnapshot, TrackSnapshot, WorkspaceSnapshot,
};

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
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    #[error("the runtime has stopped")]
    Stopped,
}

impl RuntimeError {
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
            RuntimeError::Write(_) | RuntimeError::Store(_) | RuntimeError::Timeline(_) => "io",
            RuntimeError::Invalid { .. } => "invalid",
            RuntimeError::Stopped => "stopped",
        }
    }

    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        RuntimeError::Invalid {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// How the MCP server hands agents their access (implemented by the MCP module).
pub trait AgentAccess: Send + Sync {
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
        }
    }
}

/// Where a new agent works.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkspaceTarget {
    /// An existing workspace, optionally in a subdirectory of it.
    Existing {
        id: WorkspaceId,
        cwd: Option<String>,
    },
    /// A new workspace for a directory.
    Directory { path: String },
    /// A new git worktree.
    Worktree {
        repo: String,
        target: WorktreeTarget,
    },
}

/// A request to create an agent (UI or MCP, already mapped from their shapes).
#[derive(Clone, Debug)]
pub struct CreateAgent {
    pub provider: String,
    pub title: Option<String>,
    pub model: Option<String>,
    pub mode: Option<String>,
    pub initial_prompt: Option<String>,
    pub workspace: WorkspaceTarget,
    pub parent: Option<AgentId>,
    pub created_by: Option<AgentId>,
    pub notify: Option<AgentId>,
    pub auto_archive: bool,
    pub labels: BTreeMap<String, String>,
    /// Names the request (e.g. an MCP call id) for a worktree it creates.
    pub request: Option<String>,
}

impl CreateAgent {
    pub fn new(provider: &str, workspace: WorkspaceTarget) -> Self {
        CreateAgent {
            provider: provider.to_string(),
            title: None,
            model: None,
            mode: None,
            initial_prompt: None,
            workspace,
            parent: None,
            created_by: None,
            notify: None,
            auto_archive: false,
            labels: BTreeMap::new(),
            request: None,
        }
    }
}

/// What `wait` returns.
#[derive(Clone, Debug)]
pub struct WaitResult {
    pub agent: AgentSnapshot,
    pub timed_out: bool,
}

type Job = Box<dyn FnOnce(&mut actor::Actor) + Send>;

/// The clonable handle to the runtime.
#[derive(Clone)]
pub struct RuntimeHandle {
    tx: mpsc::UnboundedSender<actor::Msg>,
    events: broadcast::Sender<Event>,
    writer: Arc<Writer>,
    providers: ProviderRegistry,
    layout: Layout,
}

/// A started runtime: the handle plus the actor's task.
pub struct Runtime {
    pub handle: RuntimeHandle,
    task: tokio::task::JoinHandle<()>,
}

impl Runtime {
    /// Loads the data root (quarantining what cannot be read, normalizing what a crash left),
    /// then starts the actor. Notices wait until [`RuntimeHandle::deliver_pending`].
    pub async fn start(
        opts: RuntimeOptions,
        access: Option<Arc<dyn AgentAccess>>,
    ) -> Result<Runtime, RuntimeError> {
        let (handle, task) = actor::start(opts, access).await?;
        Ok(Runtime { handle, task })
    }

    pub fn handle(&self) -> RuntimeHandle {
        self.handle.clone()
    }

    /// Stops every agent cleanly (statuses persisted) and waits for the actor to finish.
    pub async fn shutdown(self) {
        self.handle.shutdown().await;
        let _ = self.task.await;
    }
}

fn check_prompt(field: &str, p: &str) -> Result<(), RuntimeError> {
    if p.trim().is_empty() {
        return Err(RuntimeError::invalid(field, "the prompt is empty"));
    }
    if p.len() > MAX_PROMPT_BYTES {
        return Err(RuntimeError::invalid(
            field,
            format!(
                "the prompt is {} bytes; the limit is {MAX_PROMPT_BYTES}",
                p.len()
            ),
        ));
    }
    Ok(())
}

/// The store must be able to name the agent's record folder after its cwd (SPEC 15).
fn check_cwd(layout: &Layout, cwd: &str) -> Result<(), RuntimeError> {
    crate::store::paths::check_record_dir(layout, cwd).map_err(|m| RuntimeError::invalid("cwd", m))
}

fn default_title(provider: &str, prompt: Option<&str>) -> String {
    if let Some(p) = prompt {
        let line = p
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        if !line.is_empty() {
            let mut t: String = line.chars().take(60).collect();
            if line.chars().count() > 60 {
                t.push('…');
            }
            return t;
        }
    }
    format!("{provider} agent")
}

impl RuntimeHandle {
    /// Runs `f` on the actor and returns its result; the engine's outcome is carried out after.
    pub(crate) async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut actor::Actor) -> T + Send + 'static,
    ) -> Result<T, RuntimeError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |a| {
            let _ = tx.send(f(a));
        });
        self.tx
            .send(actor::Msg::Job(job))
            .map_err(|_| RuntimeError::Stopped)?;
        rx.await.map_err(|_| RuntimeError::Stopped)
    }

    /// Runs a read-only query on the engine.
    pub async fn query<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Engine) -> T + Send + 'static,
    ) -> Result<T, RuntimeError> {
        self.call(move |a| f(&a.engine)).await
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn providers(&self) -> Vec<ProviderInfo> {
        self.providers.infos()
    }

    pub async fn snapshot(&self) -> Result<FleetSnapshot, RuntimeError> {
        self.call(|a| a.snapshot()).await
    }

    pub async fn counts(&self) -> Result<FleetCounts, RuntimeError> {
        self.query(FleetCounts::of).await
    }

    pub async fn get(&self, id: AgentId) -> Result<AgentSnapshot, RuntimeError> {
        self.query(move |e| {
            e.agent(id)
                .map(|a| AgentSnapshot::of(e, a))
                .ok_or(EngineError::UnknownAgent(id))
        })
        .await?
        .map_err(Into::into)
    }

    /// Agents matching `filter`, oldest first, at most `limit`, with the total count.
    pub async fn list(
        &self,
        filter: ListFilter,
        limit: usize,
    ) -> Result<(Vec<AgentSnapshot>, usize), RuntimeError> {
        self.query(move |e| {
            let all = e.list(&filter);
            let total = all.len();
            let v = all
                .into_iter()
                .take(limit)
                .map(|a| AgentSnapshot::of(e, a))
                .collect();
            (v, total)
        })
        .await
    }

    /// Archived agents, most recently archived first.
    pub async fn archived(&self, limit: usize) -> Result<Vec<AgentSnapshot>, RuntimeError> {
        self.query(move |e| {
            let mut v: Vec<_> = e.agents().filter(|a| a.record.is_archived()).collect();
            v.sort_by_key(|a| std::cmp::Reverse((a.record.archived_at, a.record.created_at)));
            v.into_iter()
                .take(limit)
                .map(|a| AgentSnapshot::of(e, a))
                .collect()
        })
        .await
    }

    /// Creates an agent. Git and file-system checks run here, off the actor; the engine then
    /// records it and its session starts in the background (the first prompt runs when ready).
    pub async fn create(&self, req: CreateAgent) -> Result<AgentSnapshot, RuntimeError> {
        let provider = self.providers.resolve(&req.provider)?;
        let info = provider.info();
        if let Some(p) = &req.initial_prompt {
            check_prompt("initialPrompt", p)?;
        }
        if let Some(t) = &req.title {
            if t.chars().count() > MAX_TITLE_CHARS {
                return Err(RuntimeError::invalid(
                    "title",
                    format!("longer than {MAX_TITLE_CHARS} characters"),
                ));
            }
        }
        for (k, v) in &req.labels {
            if k.is_empty() || k.len() > 200 || v.len() > 2_000 {
                return Err(RuntimeError::invalid(
                    &format!("labels.{k}"),
                    "label keys must be 1–200 bytes and values at most 2,000",
                ));
            }
            if k == PARENT_LABEL {
                return Err(RuntimeError::invalid(
                    &format!("labels.{k}"),
                    "the parent label is set by relationship, not by labels",
                ));
            }
        }
        let layout = self.layout.clone();
        let (workspace_id, cwd, created_ws) = match req.workspace.clone() {
            WorkspaceTarget::Existing { id, cwd } => {
                let ws = self
                    .query({
                        let id = id.clone();
                        move |e| e.workspace(&id).cloned()
                    })
                    .await?
                    .ok_or_else(|| EngineError::UnknownWorkspace(id.clone()))?;
                if ws.is_archived() {
                    return Err(EngineError::WorkspaceArchived(id).into());
                }
                let cwd = match cwd {
                    None => ws.cwd.clone(),
                    Some(c) => {
                        let ws2 = ws.clone();
                        blocking(move || workspaces::cwd_inside("workspace.cwd", &c, &ws2))
                            .await??
                            .display()
                            .to_string()
                    }
                };
                (id, cwd, None)
            }
            WorkspaceTarget::Directory { path } => {
                let (dir, repo) = blocking(move || {
                    let dir = workspaces::existing_dir("workspace.source.path", &path)?;
                    let repo = workspaces::repo_info(&dir);
                    Ok::<_, WorkspaceError>((dir, repo))
                })
                .await??;
                check_cwd(&layout, &dir.display().to_string())?;
                let ws = self
                    .call(move |a| a.register_directory(&dir, repo, false))
                    .await?;
                (ws.workspace_id.clone(), ws.cwd.clone(), None)
            }
            WorkspaceTarget::Worktree { repo, target } => {
                let ws = self
                    .create_worktree_inner(
                        "workspace.source",
                        repo,
                        target,
                        req.created_by,
                        req.request.clone(),
                    )
                    .await?;
                let id = ws.record.workspace_id.clone();
                (id.clone(), ws.record.cwd.clone(), Some(id))
            }
        };
        check_cwd(&layout, &cwd)?;
        let title = match req.title.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => t.to_string(),
            _ => default_title(&req.provider, req.initial_prompt.as_deref()),
        };
        let new = NewAgent {
            id: AgentId::new(),
            provider: req.provider.clone(),
            reads_prompts: info.reads_prompts,
            cwd,
            workspace_id,
            title,
            config: AgentConfig {
                model: req.model.filter(|m| !m.trim().is_empty()),
                mode: req.mode.filter(|m| !m.trim().is_empty()),
                ..Default::default()
            },
            labels: req.labels,
            parent: req.parent,
            created_by: req.created_by,
            initial_prompt: req.initial_prompt,
            notify: req.notify,
            auto_archive: req.auto_archive,
            created_workspace_id: created_ws,
        };
        // Answers only once the record is durable: an agent whose record cannot be written is
        // refused here, not lost at the next start.
        let (snap, durable) = self.call(move |a| a.create(new)).await??;
        durable.wait(&self.writer).await?;
        Ok(snap)
    }

    /// Registers a workspace for a directory the user picked (an unarchived workspace for the
    /// same directory is reused).
    pub async fn add_workspace(&self, path: String) -> Result<WorkspaceSnapshot, RuntimeError> {
        let (dir, repo) = blocking(move || {
            let dir = workspaces::existing_dir("path", &path)?;
            let repo = workspaces::repo_info(&dir);
            Ok::<_, WorkspaceError>((dir, repo))
        })
        .await??;
        let ws = self
            .call(move |a| a.register_directory(&dir, repo, true))
            .await?;
        self.query(move |e| WorkspaceSnapshot::of(e, &ws)).await
    }

    /// Creates a git worktree workspace (the `create_worktree` tool).
    pub async fn create_worktree(
        &self,
        repo: String,
        target: WorktreeTarget,
        created_by: Option<AgentId>,
        request: Option<String>,
    ) -> Result<WorkspaceSnapshot, RuntimeError> {
        self.create_worktree_inner("", repo, target, created_by, request)
            .await
    }

    async fn create_worktree_inner(
        &self,
        field: &str,
        repo: String,
        target: WorktreeTarget,
        created_by: Option<AgentId>,
        request: Option<String>,
    ) -> Result<WorkspaceSnapshot, RuntimeError> {
        let layout = self.layout.clone();
        let field = field.to_string();
        let created =
            blocking(move || crate::workspaces::worktree::create(&layout, &field, &repo, &target))
                .await??;
        self.call(move |a| a.register_worktree(&created, created_by, request))
            .await
    }

    /// Archives a workspace: refused (`busy`) while live agents work in it unless
    /// `even_if_running`, which archives (and stops) them too. A worktree is then removed with
    /// git once their processes are gone, never losing work (SPEC 15): what is left in it is
    /// committed on its branch first, and if that fails the worktree is kept, the workspace
    /// comes back and a notice says why.
    pub async fn archive_workspace(
        &self,
        id: WorkspaceId,
        even_if_running: bool,
    ) -> Result<Vec<AgentId>, RuntimeError> {
        let (archived, wait) = self
            .call(move |a| a.archive_workspace(&id, even_if_running))
            .await??;
        wait.wait(&self.writer).await?;
        Ok(archived)
    }

    /// Sends a prompt; returns the agent as it is right after (running, or initializing while
    /// its session resumes).
    pub async fn prompt(
        &self,
        id: AgentId,
        text: String,
        origin: TurnOrigin,
        notify: Option<AgentId>,
    ) -> Result<AgentSnapshot, RuntimeError> {
        check_prompt("prompt", &text)?;
        self.call(move |a| a.prompt(id, text, origin, notify))
            .await?
    }

    /// Interrupts the current turn and waits (bounded) until it has ended; returns the status.
    pub async fn cancel(&self, id: AgentId) -> Result<Status, RuntimeError> {
        let mut rx = self.events.subscribe();
        let running = self.call(move |a| a.cancel(id)).await??;
        if !running {
            return Ok(self.get(id).await?.status);
        }
        let limit = Duration::from_secs(30);
        let w = self
            .wait_on(id, limit, &mut rx, |s| s.status != Status::Running)
            .await?;
        Ok(w.agent.status)
    }

    /// Archives the agent and its cascade; resolves once every archived record is durable and
    /// their process trees are gone.
    pub async fn archive(&self, id: AgentId) -> Result<Vec<AgentId>, RuntimeError> {
        let (ids, wait) = self.call(move |a| a.archive(id)).await??;
        wait.wait(&self.writer).await?;
        Ok(ids)
    }

    /// "Archive finished": every child of `parent` that is not running, as one batch.
    pub async fn archive_finished(&self, parent: AgentId) -> Result<Vec<AgentId>, RuntimeError> {
        let (ids, wait) = self.call(move |a| a.archive_finished(parent)).await??;
        wait.wait(&self.writer).await?;
        Ok(ids)
    }

    pub async fn detach(&self, id: AgentId) -> Result<AgentSnapshot, RuntimeError> {
        self.call(move |a| a.detach(id)).await?
    }

    /// Restores the batch `id` was archived in (closed, links intact). Archived workspaces the
    /// batch lives in come back first: a removed worktree is re-added from its kept branch,
    /// whose last commit is the snapshot of what was left in it (SPEC 15).
    pub async fn restore(&self, id: AgentId, as_root: bool) -> Result<Vec<AgentId>, RuntimeError> {
        let archived_ws = self.query(move |e| e.restore_workspaces(id)).await??;
        for w in archived_ws {
            let layout = self.layout.clone();
            let rec = w.clone();
            blocking(move || match rec.kind {
                WorkspaceKind::Worktree => crate::workspaces::worktree::readd(
                    &layout,
                    rec.repo.as_deref().unwrap_or_default(),
                    &rec.cwd,
                    rec.branch.as_deref().unwrap_or_default(),
                ),
                _ => workspaces::existing_dir("workspace.cwd", &rec.cwd).map(|_| ()),
            })
            .await??;
            let wid = w.workspace_id.clone();
            self.call(move |a| a.unarchive_workspace(&wid)).await??;
        }
        let (ids, wait) = self.call(move |a| a.restore(id, as_root)).await??;
        wait.wait(&self.writer).await?;
        Ok(ids)
    }

    pub async fn answer_permission(
        &self,
        id: AgentId,
        request_id: String,
        allow: bool,
    ) -> Result<(), RuntimeError> {
        self.call(move |a| a.answer_permission(id, &request_id, allow))
            .await?
    }

    /// The user opened the agent: clears its attention.
    pub async fn mark_seen(&self, id: AgentId) -> Result<(), RuntimeError> {
        self.call(move |a| a.mark_seen(id)).await?
    }

    /// Stops the agent's process (it stays resumable).
    pub async fn stop(&self, id: AgentId) -> Result<(), RuntimeError> {
        let wait = self.call(move |a| a.stop(id)).await??;
        wait.wait(&self.writer).await?;
        Ok(())
    }

    /// Timeline items with `seq < before` (0 = the newest), at most `limit`, oldest first.
    pub async fn timeline(
        &self,
        id: AgentId,
        before: u64,
        limit: usize,
    ) -> Result<Vec<TimelineItem>, RuntimeError> {
        let limit = limit.clamp(1, 5_000);
        let r = self
            .call(move |a| a.timeline_page(id, before, limit))
            .await??;
        match r {
            actor::Page::Ready(items) => Ok(items),
            actor::Page::Disk(rx) => rx
                .await
                .map_err(|_| RuntimeError::Stopped)?
                .map_err(Into::into),
        }
    }

    /// Waits until the agent is neither initializing nor running, or needs a permission; at most
    /// `timeout`.
    pub async fn wait(&self, id: AgentId, timeout: Duration) -> Result<WaitResult, RuntimeError> {
        let mut rx = self.events.subscribe();
        self.wait_on(id, timeout, &mut rx, |s| {
            !s.status.is_active() || s.pending_permission.is_some()
        })
        .await
    }

    async fn wait_on(
        &self,
        id: AgentId,
        timeout: Duration,
        rx: &mut broadcast::Receiver<Event>,
        done: impl Fn(&AgentSnapshot) -> bool,
    ) -> Result<WaitResult, RuntimeError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut snap = self.get(id).await?;
        loop {
            if done(&snap) || snap.record.is_archived() {
                return Ok(WaitResult {
                    agent: snap,
                    timed_out: false,
                });
            }
            tokio::select! {
                ev = rx.recv() => match ev {
                    Ok(Event::AgentUpdated { agent } | Event::AgentArchived { agent }) if agent.id() == id => {
                        snap = *agent;
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => snap = self.get(id).await?,
                    Err(broadcast::error::RecvError::Closed) => return Err(RuntimeError::Stopped),
                },
                _ = tokio::time::sleep_until(deadline) => {
                    let snap = self.get(id).await?;
                    let finished = done(&snap);
                    return Ok(WaitResult { agent: snap, timed_out: !finished });
                }
            }
        }
    }

    /// Lets queued finish notices run (call once the MCP server is up).
    pub async fn deliver_pending(&self) -> Result<(), RuntimeError> {
        self.call(|a| a.deliver_pending()).await
    }

    /// Closes every session (statuses persisted), flushes everything, stops the actor.
    pub async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(actor::Msg::Shutdown(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    /// Waits until every queued record write is durable.
    pub async fn flush(&self) {
        self.writer.flush().await;
    }

    pub fn now(&self) -> Timestamp {
        Timestamp::now()
    }
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
