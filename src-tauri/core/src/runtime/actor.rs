//! The actor: owns the engine, the provider sessions, the writer and the timelines; executes
//! the engine's effects and broadcasts events.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::events::{
    AgentSnapshot, Event, FleetCounts, FleetSnapshot, TrackSnapshot, WorkspaceSnapshot,
};
use super::{AgentAccess, Job, RuntimeError, RuntimeHandle, RuntimeOptions};
use crate::engine::{Effect, Engine, NewAgent};
use crate::model::{
    AgentId, ItemKind, NewItem, ProjectRecord, TimelineItem, Timestamp, TurnOrigin, WorkspaceId,
    WorkspaceKind, WorkspaceRecord,
};
use crate::providers::{
    EventSink, ProviderError, ProviderEvent, ProviderRegistry, Session, SessionSpec, SinkMessage,
    TurnInput,
};
use crate::store::timeline::{PageReply, TimelineOptions, Timelines};
use crate::store::{self, Layout, Quarantined, Ticket, WriteError, Writer};
use crate::workspaces::{self, worktree::CreatedWorktree, RepoInfo};

/// In-memory timeline tail per agent: at most this many items…
const TAIL_ITEMS: usize = 2_000;
/// …and at most this many bytes of text.
const TAIL_BYTES: usize = 4 << 20;
/// How long a closing process tree may take before archive stops waiting for it.
const CLOSE_WAIT: Duration = Duration::from_secs(15);

pub(crate) enum Msg {
    Job(Job),
    Shutdown(oneshot::Sender<()>),
}

enum Internal {
    Started {
        agent: AgentId,
        generation: u64,
        result: Result<Box<dyn Session>, ProviderError>,
    },
    CancelTimeout {
        agent: AgentId,
        turn: u64,
    },
    /// A worktree could not be snapshotted or removed: it stays, and so does its workspace.
    WorktreeKept {
        workspace: WorkspaceId,
        show_on: Vec<AgentId>,
        message: String,
    },
    /// A file started failing to be written (SPEC 15).
    StoreFailed(store::StoreFailure),
}

/// Input for a session that is still starting.
enum Buffered {
    Send(TurnInput),
    Interrupt,
    Permission(String, bool),
}

struct Slot {
    generation: u64,
    session: Option<Box<dyn Session>>,
    buffered: Vec<Buffered>,
}

#[derive(Default)]
struct Tl {
    next_seq: u64,
    tail: VecDeque<TimelineItem>,
    tail_bytes: usize,
    pending: Vec<TimelineItem>,
}

/// What a caller waits for before reporting a change done: durable writes and dead processes.
#[derive(Default)]
pub(crate) struct Durable {
    tickets: Vec<Ticket>,
    closes: Vec<watch::Receiver<bool>>,
}

impl Durable {
    pub(crate) async fn wait(mut self, writer: &Writer) -> Result<(), WriteError> {
        writer.wait_all(&self.tickets).await?;
        let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
        for rx in self.closes.iter_mut() {
            let _ = tokio::time::timeout_at(deadline, rx.wait_for(|done| *done)).await;
        }
        Ok(())
    }
}

/// A timeline page: served from memory, or on its way from disk.
pub(crate) enum Page {
    Ready(Vec<TimelineItem>),
    Disk(PageReply),
}

pub(crate) struct Actor {
    pub(crate) engine: Engine,
    layout: Layout,
    writer: Arc<Writer>,
    timelines: Timelines,
    providers: ProviderRegistry,
    access: Option<Arc<dyn AgentAccess>>,
    opts_env: std::collections::BTreeMap<String, String>,
    cancel_timeout: Duration,
    slots: HashMap<AgentId, Slot>,
    /// Sessions closed while their start was still under way: closed on arrival.
    doomed: HashMap<(AgentId, u64), watch::Sender<bool>>,
    closing: HashMap<AgentId, watch::Receiver<bool>>,
    record_paths: HashMap<AgentId, PathBuf>,
    tl: HashMap<AgentId, Tl>,
    events: broadcast::Sender<Event>,
    sink_tx: mpsc::Sender<SinkMessage>,
    internal_tx: mpsc::UnboundedSender<Internal>,
    next_generation: u64,
    notices: Vec<String>,
    quarantined: Vec<Quarantined>,
    tickets: Vec<Ticket>,
    counts: FleetCounts,
    counts_dirty: bool,
}

/// Loads the data root and starts the actor.
pub(crate) async fn start(
    opts: RuntimeOptions,
    access: Option<Arc<dyn AgentAccess>>,
) -> Result<(RuntimeHandle, tokio::task::JoinHandle<()>), RuntimeError> {
    let layout = Layout::new(&opts.home);
    let l = layout.clone();
    let (agents, registry, (inboxes, inbox_q)) = tokio::task::spawn_blocking(move || {
        store::atomic::ensure_dir(&l.home).map_err(|e| store::StoreError::Read {
            path: l.home.display().to_string(),
            source: e,
        })?;
        let agents = store::load_agents(&l)?;
        let registry = store::load_registry(&l);
        let inboxes = store::load_inboxes(&l);
        Ok::<_, store::StoreError>((agents, registry, inboxes))
    })
    .await
    .map_err(|_| RuntimeError::Stopped)??;

    let mut notices: Vec<String> = opts.notices.clone();
    let mut quarantined = agents.quarantined.clone();
    quarantined.extend(registry.quarantined.iter().cloned());
    quarantined.extend(inbox_q);
    for q in &quarantined {
        notices.push(format!(
            "{} could not be read ({}); it was moved to {}",
            q.from, q.reason, q.to
        ));
    }
    notices.extend(agents.problems.iter().cloned());
    notices.extend(registry.problems.iter().cloned());

    // Records without a known workspace (upstream data roots have none) get one per cwd.
    let mut workspaces = registry.workspaces;
    let mut projects = registry.projects;
    let known: BTreeSet<WorkspaceId> = workspaces.iter().map(|w| w.workspace_id.clone()).collect();
    let mut records = Vec::with_capacity(agents.records.len());
    let mut record_paths = HashMap::new();
    let mut by_cwd: HashMap<String, WorkspaceId> = HashMap::new();
    let mut fixed_ws = Vec::new();
    let mut registry_changed = false;
    for (path, mut rec) in agents.records {
        let ok = rec.workspace_id.as_ref().is_some_and(|w| known.contains(w));
        if !ok {
            let wid = match by_cwd.get(&rec.cwd) {
                Some(w) => w.clone(),
                None => {
                    let cwd = rec.cwd.clone();
                    let existing = projects.clone();
                    let (ws, project) = tokio::task::spawn_blocking(move || {
                        let dir = Path::new(&cwd);
                        let repo = if dir.is_dir() {
                            workspaces::repo_info(dir)
                        } else {
                            None
                        };
                        workspaces::directory_workspace_with(dir, repo, &existing, Timestamp::now())
                    })
                    .await
                    .map_err(|_| RuntimeError::Stopped)?;
                    let mut ws = ws;
                    if let Some(old) = &rec.workspace_id {
                        // Keep the id the record names, so it stays valid.
                        ws.workspace_id = old.clone();
                    }
                    if let Some(p) = project {
                        projects.push(p);
                    }
                    by_cwd.insert(rec.cwd.clone(), ws.workspace_id.clone());
                    let id = ws.workspace_id.clone();
                    workspaces.push(ws);
                    registry_changed = true;
                    id
                }
            };
            if rec.workspace_id.as_ref() != Some(&wid) {
                rec.workspace_id = Some(wid);
                fixed_ws.push(rec.id);
            }
        }
        record_paths.insert(rec.id, path);
        records.push(rec);
    }

    let providers = opts.providers.clone();
    let mut engine = Engine::new();
    engine.set_provider_kinds(
        providers
            .infos()
            .into_iter()
            .map(|i| (i.id, i.kind))
            .collect(),
    );
    let reads = |p: &str| {
        providers
            .get(p)
            .map(|x| x.info().reads_prompts)
            .unwrap_or(true)
    };
    let report = engine.load(records, workspaces, projects, inboxes, &reads);
    for p in &report.problems {
        tracing::warn!("{p}");
    }
    tracing::info!(
        agents = report.agents,
        normalized = report.normalized.len(),
        quarantined = quarantined.len(),
        home = %layout.home.display(),
        "data root loaded"
    );

    let (events, _) = broadcast::channel(4096);
    let (tx, rx) = mpsc::unbounded_channel();
    let (sink_tx, sink_rx) = mpsc::channel(256);
    let (internal_tx, internal_rx) = mpsc::unbounded_channel();
    // Write failures reach the actor as internal messages (one per file that starts failing).
    let (fail_tx, mut fail_rx) = mpsc::unbounded_channel::<store::StoreFailure>();
    let forward = internal_tx.clone();
    tokio::spawn(async move {
        while let Some(f) = fail_rx.recv().await {
            if forward.send(Internal::StoreFailed(f)).is_err() {
                return;
            }
        }
    });
    let writer = Arc::new(Writer::with_failures(4, Some(fail_tx.clone())));
    let mut actor = Actor {
        engine,
        layout: layout.clone(),
        writer: writer.clone(),
        timelines: Timelines::start_with(
            layout.clone(),
            TimelineOptions {
                max_bytes: opts.timeline_max_bytes,
                failures: Some(fail_tx),
            },
        ),
        providers: opts.providers.clone(),
        access,
        opts_env: opts.agent_env.clone(),
        cancel_timeout: opts.cancel_timeout,
        slots: HashMap::new(),
        doomed: HashMap::new(),
        closing: HashMap::new(),
        record_paths,
        tl: HashMap::new(),
        events: events.clone(),
        sink_tx,
        internal_tx,
        next_generation: 0,
        notices,
        quarantined,
        tickets: Vec::new(),
        counts: FleetCounts::default(),
        counts_dirty: true,
    };
    // Persist what load repaired or registered.
    for id in fixed_ws {
        actor.persist_agent(id);
    }
    if registry_changed {
        actor.persist_registries(true, true);
    }
    actor.apply();
    actor.tickets.clear();
    actor.counts = FleetCounts::of(&actor.engine);

    let handle = RuntimeHandle {
        tx,
        events,
        writer,
        providers: opts.providers,
        layout,
    };
    let task = tokio::spawn(actor.run(rx, sink_rx, internal_rx));
    Ok((handle, task))
}

impl Actor {
    async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<Msg>,
        mut sink_rx: mpsc::Receiver<SinkMessage>,
        mut internal_rx: mpsc::UnboundedReceiver<Internal>,
    ) {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                Some(m) = internal_rx.recv() => {
                    self.on_internal(m);
                    self.apply();
                }
                msg = rx.recv() => match msg {
                    Some(Msg::Job(job)) => {
                        job(&mut self);
                        self.apply();
                        self.tickets.clear();
                    }
                    Some(Msg::Shutdown(reply)) => {
                        self.shutdown().await;
                        let _ = reply.send(());
                        return;
                    }
                    None => {
                        self.shutdown().await;
                        return;
                    }
                },
                Some(m) = sink_rx.recv() => {
                    self.on_provider(m);
                    self.apply();
                    self.tickets.clear();
                }
                _ = tick.tick() => self.publish_counts(),
            }
        }
    }

    async fn shutdown(&mut self) {
        tracing::info!("runtime shutting down");
        self.engine.shutdown();
        self.apply();
        let closes: Vec<_> = self.closing.values().cloned().collect();
        let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
        for mut rx in closes {
            let _ = tokio::time::timeout_at(deadline, rx.wait_for(|d| *d)).await;
        }
        self.writer.flush().await;
        self.timelines.flush().await;
        self.publish_counts();
        tracing::info!("runtime stopped; every agent's state is persisted");
    }

    // ------------------------------------------------------------------ effects

    /// Carries out everything the engine's last operations asked for, persists what changed and
    /// tells every window.
    pub(crate) fn apply(&mut self) {
        loop {
            let out = self.engine.take_outcome();
            if out.is_empty() {
                break;
            }
            for e in out.effects {
                self.execute(e);
            }
            for id in &out.agents {
                self.persist_agent(*id);
            }
            for id in &out.inboxes {
                let path = self.layout.inbox_path(*id);
                let t = match self.engine.inbox(*id) {
                    Some(q) if !q.is_empty() => {
                        let v: Vec<_> = q.iter().cloned().collect();
                        match store::encode_inbox(&v) {
                            Ok(b) => self.writer.submit(path, b),
                            Err(e) => {
                                tracing::error!(error = %e, "cannot encode inbox");
                                continue;
                            }
                        }
                    }
                    _ => self.writer.remove(path),
                };
                self.tickets.push(t);
            }
            self.persist_registries(out.workspaces_registry, out.projects_registry);
            for id in &out.agents {
                if let Some(a) = self.engine.agent(*id) {
                    let snap = Box::new(AgentSnapshot::of(&self.engine, a));
                    let ev = if a.record.is_archived() {
                        Event::AgentArchived { agent: snap }
                    } else {
                        Event::AgentUpdated { agent: snap }
                    };
                    let _ = self.events.send(ev);
                }
            }
            if !out.agents.is_empty() {
                self.counts_dirty = true;
            }
            for w in &out.workspaces {
                if let Some(rec) = self.engine.workspace(w) {
                    let snap = WorkspaceSnapshot::of(&self.engine, rec);
                    let _ = self.events.send(Event::WorkspaceUpdated {
                        workspace: Box::new(snap),
                    });
                }
            }
            for p in &out.tracks {
                let _ = self.events.send(Event::TrackChanged {
                    track: self.track(*p),
                });
            }
            for n in out.notices {
                tracing::warn!("{n}");
                let _ = self.events.send(Event::Notice {
                    level: "warning".into(),
                    message: n.clone(),
                });
                self.notices.push(n);
            }
        }
        self.flush_timeline_events();
    }

    fn publish_counts(&mut self) {
        if !self.counts_dirty {
            return;
        }
        self.counts_dirty = false;
        let c = FleetCounts::of(&self.engine);
        if c != self.counts {
            self.counts = c;
            let _ = self.events.send(Event::CountsChanged { counts: c });
        }
    }

    fn persist_agent(&mut self, id: AgentId) {
        let Some(a) = self.engine.agent(id) else {
            return;
        };
        let path = self
            .record_paths
            .entry(id)
            .or_insert_with(|| self.layout.record_path(&a.record.cwd, id))
            .clone();
        match store::encode_record(&a.record) {
            Ok(b) => {
                let t = self.writer.submit(path, b);
                self.tickets.push(t);
            }
            Err(e) => tracing::error!(%id, error = %e, "cannot encode record"),
        }
    }

    fn persist_registries(&mut self, workspaces: bool, projects: bool) {
        if workspaces {
            match store::encode_workspaces(self.engine.workspaces()) {
                Ok(b) => {
                    let t = self.writer.submit(self.layout.workspaces_path(), b);
                    self.tickets.push(t);
                }
                Err(e) => tracing::error!(error = %e, "cannot encode workspaces"),
            }
        }
        if projects {
            match store::encode_projects(self.engine.projects()) {
                Ok(b) => {
                    let t = self.writer.submit(self.layout.projects_path(), b);
                    self.tickets.push(t);
                }
                Err(e) => tracing::error!(error = %e, "cannot encode projects"),
            }
        }
    }

    fn execute(&mut self, e: Effect) {
        match e {
            Effect::StartSession { agent, resume } => self.start_session(agent, resume),
            Effect::SendTurn { agent, input } => self.with_session(agent, Buffered::Send(input)),
            Effect::Interrupt { agent, turn } => {
                self.with_session(agent, Buffered::Interrupt);
                let tx = self.internal_tx.clone();
                let d = self.cancel_timeout;
                tokio::spawn(async move {
                    tokio::time::sleep(d).await;
                    let _ = tx.send(Internal::CancelTimeout { agent, turn });
                });
            }
            Effect::CloseSession { agent } => self.close_session(agent),
            Effect::AnswerPermission {
                agent,
                request_id,
                allow,
            } => self.with_session(agent, Buffered::Permission(request_id, allow)),
            Effect::Timeline { agent, item } => self.push_item(agent, *item),
            Effect::ArchiveWorktree {
                workspace,
                requested_by,
            } => {
                tracing::info!(%workspace, %requested_by, "autoArchive: archiving the worktree it created");
                let cause = match self.engine.agent(requested_by) {
                    Some(a) if !a.record.title.trim().is_empty() => a.record.title.clone(),
                    _ => format!("agent {requested_by}"),
                };
                match self.engine.archive_workspace(&workspace, true) {
                    Ok(archived) => {
                        let mut show_on = vec![requested_by];
                        show_on.extend(archived.iter().filter(|a| **a != requested_by));
                        self.remove_worktree_later(&workspace, &archived, &cause, show_on)
                    }
                    Err(e) => self.notice(format!("could not archive worktree {workspace}: {e}")),
                }
            }
            Effect::RevokeAccess { agent } => self.revoke(agent),
        }
    }

    fn notice(&mut self, message: String) {
        tracing::warn!("{message}");
        let _ = self.events.send(Event::Notice {
            level: "warning".into(),
            message: message.clone(),
        });
        self.notices.push(message);
    }

    fn start_session(&mut self, agent: AgentId, resume: Option<String>) {
        let Some(a) = self.engine.agent(agent) else {
            return;
        };
        let provider_id = a.record.provider.clone();
        let cwd = PathBuf::from(&a.record.cwd);
        let config = a.record.config.clone();
        let provider = match self.providers.resolve(&provider_id) {
            Ok(p) => p,
            Err(e) => {
                let _ = self.engine.session_failed(agent, &e.to_string());
                return;
            }
        };
        if let Some(old) = self.slots.remove(&agent) {
            if let Some(s) = old.session {
                self.spawn_close(agent, s);
            }
        }
        self.next_generation += 1;
        let generation = self.next_generation;
        let spec = SessionSpec {
            agent_id: agent,
            provider: provider_id,
            cwd,
            config,
            resume,
            env: self.opts_env.clone(),
            mcp: self.access.as_ref().and_then(|x| x.issue(agent)),
        };
        self.slots.insert(
            agent,
            Slot {
                generation,
                session: None,
                buffered: Vec::new(),
            },
        );
        let sink = EventSink::new(agent, generation, self.sink_tx.clone());
        let tx = self.internal_tx.clone();
        let fut = provider.start(spec, sink);
        tokio::spawn(async move {
            let result = fut.await;
            let _ = tx.send(Internal::Started {
                agent,
                generation,
                result,
            });
        });
    }

    fn with_session(&mut self, agent: AgentId, b: Buffered) {
        let Some(slot) = self.slots.get_mut(&agent) else {
            tracing::warn!(%agent, "no session for a turn effect; ignored");
            return;
        };
        let Some(s) = slot.session.as_mut() else {
            slot.buffered.push(b);
            return;
        };
        let r = match b {
            Buffered::Send(input) => s.send(input),
            Buffered::Interrupt => s.interrupt(),
            Buffered::Permission(id, allow) => s.respond_permission(&id, allow),
        };
        if let Err(e) = r {
            tracing::warn!(%agent, error = %e, "session refused input");
            if let Some(slot) = self.slots.remove(&agent) {
                if let Some(s) = slot.session {
                    self.spawn_close(agent, s);
                }
            }
            let _ = self.engine.session_exited(agent, &e.to_string());
        }
    }

    fn close_session(&mut self, agent: AgentId) {
        let Some(slot) = self.slots.remove(&agent) else {
            return;
        };
        self.revoke(agent);
        match slot.session {
            Some(s) => self.spawn_close(agent, s),
            None => {
                let (tx, rx) = watch::channel(false);
                self.doomed.insert((agent, slot.generation), tx);
                self.closing.insert(agent, rx);
            }
        }
    }

    /// An agent's MCP token works only while it has a runtime (SPEC 14): closing or losing the
    /// session ends it; the next start issues a new one.
    fn revoke(&self, agent: AgentId) {
        if let Some(a) = &self.access {
            a.revoke(agent);
        }
    }

    fn spawn_close(&mut self, agent: AgentId, s: Box<dyn Session>) {
        self.revoke(agent);
        let (tx, rx) = watch::channel(false);
        self.closing.insert(agent, rx);
        tokio::spawn(async move {
            s.close().await;
            let _ = tx.send(true);
        });
    }

    /// Removes an archived worktree workspace's directory once its agents' processes are gone,
    /// snapshotting what is left in it first (SPEC 15). `cause` names what was archived (for
    /// the snapshot commit's message); `show_on` are the agents whose timelines show a failure.
    /// A worktree that cannot be snapshotted or removed is kept, its workspace comes back
    /// unarchived (so it stays visible and archiving it again retries), and the failure shows
    /// on those timelines and as a notice.
    fn remove_worktree_later(
        &mut self,
        ws: &WorkspaceId,
        archived: &[AgentId],
        cause: &str,
        show_on: Vec<AgentId>,
    ) {
        let Some(rec) = self.engine.workspace(ws).cloned() else {
            return;
        };
        if rec.kind != WorkspaceKind::Worktree {
            return;
        }
        let closes: Vec<_> = archived
            .iter()
            .filter_map(|id| self.closing.get(id).cloned())
            .collect();
        let layout = self.layout.clone();
        let tx = self.internal_tx.clone();
        let message = workspaces::worktree::snapshot_message(Path::new(&rec.cwd), cause);
        tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
            for mut rx in closes {
                let _ = tokio::time::timeout_at(deadline, rx.wait_for(|d| *d)).await;
            }
            let repo = rec.repo.clone().unwrap_or_default();
            let cwd = rec.cwd.clone();
            let branch = rec.branch.clone();
            let r = tokio::task::spawn_blocking(move || {
                workspaces::worktree::snapshot_and_remove(
                    &layout,
                    &repo,
                    &cwd,
                    branch.as_deref(),
                    &message,
                )
            })
            .await;
            let failure = match r {
                Ok(Ok(snapshot)) => {
                    tracing::info!(workspace = %rec.workspace_id, path = %rec.cwd, ?snapshot, "worktree removed");
                    return;
                }
                Ok(Err(e)) => e.to_string(),
                Err(e) => format!("the removal stopped: {e}"),
            };
            let _ = tx.send(Internal::WorktreeKept {
                workspace: rec.workspace_id.clone(),
                show_on,
                message: format!(
                    "The worktree {} was kept with everything in it: {failure}. Its workspace \
                     stays open; archive it again to retry.",
                    rec.cwd
                ),
            });
        });
    }

    // ------------------------------------------------------------------ timeline

    fn tl_state(&mut self, agent: AgentId) -> &mut Tl {
        let timelines = &self.timelines;
        self.tl.entry(agent).or_insert_with(|| Tl {
            next_seq: timelines.recover(agent) + 1,
            ..Default::default()
        })
    }

    pub(crate) fn push_item(&mut self, agent: AgentId, item: NewItem) {
        let turn = self
            .engine
            .agent(agent)
            .map(|a| a.record.turn_count)
            .unwrap_or(0);
        let now = Timestamp::now();
        let tl = self.tl_state(agent);
        let it = item.numbered(tl.next_seq, turn, now);
        tl.next_seq += 1;
        tl.tail_bytes += it.text.len();
        tl.tail.push_back(it.clone());
        while tl.tail.len() > TAIL_ITEMS || (tl.tail_bytes > TAIL_BYTES && tl.tail.len() > 1) {
            if let Some(old) = tl.tail.pop_front() {
                tl.tail_bytes -= old.text.len();
            }
        }
        tl.pending.push(it);
    }

    fn flush_timeline_events(&mut self) {
        for (agent, tl) in self.tl.iter_mut() {
            if tl.pending.is_empty() {
                continue;
            }
            let items = std::mem::take(&mut tl.pending);
            self.timelines.append(*agent, &items);
            let _ = self.events.send(Event::TimelineItems {
                agent_id: *agent,
                items,
            });
        }
    }

    pub(crate) fn timeline_page(
        &mut self,
        agent: AgentId,
        before: u64,
        limit: usize,
    ) -> Result<Page, RuntimeError> {
        if self.engine.agent(agent).is_none() {
            return Err(crate::engine::EngineError::UnknownAgent(agent).into());
        }
        self.flush_timeline_events();
        let tl = self.tl_state(agent);
        let end = if before == 0 {
            tl.next_seq
        } else {
            before.min(tl.next_seq)
        };
        let start = end.saturating_sub(limit as u64).max(1);
        let first = tl.tail.front().map(|i| i.seq).unwrap_or(tl.next_seq);
        if start >= first {
            let items = tl
                .tail
                .iter()
                .filter(|i| i.seq >= start && i.seq < end)
                .cloned()
                .collect();
            return Ok(Page::Ready(items));
        }
        Ok(Page::Disk(self.timelines.page_rx(agent, end, limit)?))
    }

    // ------------------------------------------------------------------ provider events

    fn on_internal(&mut self, m: Internal) {
        match m {
            Internal::StoreFailed(f) => {
                let mut message = f.message;
                if let Some(agent) = f.agent {
                    // The agent goes error with the reason and its process stops.
                    let _ = self.engine.storage_failed(agent, &message);
                    if let Some(a) = self.engine.agent(agent) {
                        message = format!("{}: {message}", a.record.title);
                    }
                }
                self.notice(message);
            }
            Internal::Started {
                agent,
                generation,
                result,
            } => {
                let current = self
                    .slots
                    .get(&agent)
                    .is_some_and(|s| s.generation == generation);
                match (current, result) {
                    (true, Ok(mut session)) => {
                        let slot = self.slots.get_mut(&agent).expect("current slot");
                        let buffered = std::mem::take(&mut slot.buffered);
                        let mut failed = None;
                        for b in buffered {
                            let r = match b {
                                Buffered::Send(i) => session.send(i),
                                Buffered::Interrupt => session.interrupt(),
                                Buffered::Permission(id, allow) => {
                                    session.respond_permission(&id, allow)
                                }
                            };
                            if let Err(e) = r {
                                failed = Some(e);
                                break;
                            }
                        }
                        if let Some(e) = failed {
                            self.slots.remove(&agent);
                            self.spawn_close(agent, session);
                            let _ = self.engine.session_exited(agent, &e.to_string());
                        } else if let Some(slot) = self.slots.get_mut(&agent) {
                            slot.session = Some(session);
                        }
                    }
                    (true, Err(e)) => {
                        self.slots.remove(&agent);
                        self.revoke(agent);
                        tracing::warn!(%agent, error = %e, "session failed to start");
                        let _ = self.engine.session_failed(agent, &e.to_string());
                    }
                    (false, Ok(session)) => {
                        // Closed (or replaced) while starting: stop it now.
                        let doomed = self.doomed.remove(&(agent, generation));
                        tokio::spawn(async move {
                            session.close().await;
                            if let Some(tx) = doomed {
                                let _ = tx.send(true);
                            }
                        });
                    }
                    (false, Err(_)) => {
                        if let Some(tx) = self.doomed.remove(&(agent, generation)) {
                            let _ = tx.send(true);
                        }
                    }
                }
            }
            Internal::CancelTimeout { agent, turn } => {
                let still = self
                    .engine
                    .agent(agent)
                    .is_some_and(|a| a.cancel_requested && a.record.turn_count == turn);
                if still {
                    tracing::warn!(%agent, "interrupt not acknowledged in time; stopping the process");
                    if let Err(e) = self.engine.cancel_timed_out(agent, turn) {
                        tracing::warn!(%agent, error = %e, "cancel timeout");
                    }
                }
            }
            Internal::WorktreeKept {
                workspace,
                show_on,
                message,
            } => {
                if let Err(e) = self.engine.unarchive_workspace(&workspace) {
                    tracing::warn!(%workspace, error = %e, "kept worktree's workspace not unarchived");
                }
                for agent in show_on {
                    self.push_item(agent, NewItem::new(ItemKind::Error, message.clone()));
                }
                self.notice(message);
            }
        }
    }

    fn on_provider(&mut self, m: SinkMessage) {
        let agent = m.agent_id;
        let current = self
            .slots
            .get(&agent)
            .is_some_and(|s| s.generation == m.generation);
        if !current {
            return; // a session we already closed or replaced
        }
        let r = match m.event {
            ProviderEvent::Ready => self.engine.session_ready(agent),
            ProviderEvent::SessionId(s) => self.engine.session_id(agent, s),
            ProviderEvent::Items(items) => {
                for it in items {
                    self.push_item(agent, it);
                }
                Ok(())
            }
            ProviderEvent::LastMessage(t) => self.engine.last_message(agent, t),
            ProviderEvent::TurnEnded(o) => self.engine.turn_ended(agent, o),
            ProviderEvent::Permission(p) => self.engine.permission_requested(agent, p),
            ProviderEvent::PermissionResolved { request_id } => {
                self.engine.permission_resolved(agent, &request_id)
            }
            ProviderEvent::McpStatus { server, status } => {
                if server == "paseo"
                    && matches!(status.as_str(), "failed" | "cancelled" | "needs-auth")
                {
                    tracing::warn!(%agent, %status, "the agent could not connect to the paseo MCP server");
                    self.push_item(
                        agent,
                        NewItem::new(
                            ItemKind::System,
                            format!("The paseo MCP server is {status} for this agent: it cannot create or manage agents."),
                        ),
                    );
                }
                if server == "paseo" {
                    self.engine.mcp_status(agent, status)
                } else {
                    Ok(())
                }
            }
            ProviderEvent::Exited { message } => {
                if let Some(slot) = self.slots.remove(&agent) {
                    if let Some(s) = slot.session {
                        self.spawn_close(agent, s);
                    }
                }
                self.engine.session_exited(agent, &message)
            }
        };
        if let Err(e) = r {
            tracing::warn!(%agent, error = %e, "provider event not applicable");
        }
    }

    // ------------------------------------------------------------------ operations

    fn durable(&mut self, ids: &[AgentId]) -> Durable {
        Durable {
            tickets: std::mem::take(&mut self.tickets),
            closes: ids
                .iter()
                .filter_map(|id| self.closing.get(id).cloned())
                .collect(),
        }
    }

    fn snap(&self, id: AgentId) -> Result<AgentSnapshot, RuntimeError> {
        self.engine
            .agent(id)
            .map(|a| AgentSnapshot::of(&self.engine, a))
            .ok_or_else(|| crate::engine::EngineError::UnknownAgent(id).into())
    }

    fn track(&self, parent: AgentId) -> TrackSnapshot {
        TrackSnapshot {
            parent_agent_id: parent,
            members: self.engine.track(parent),
            counts: self.engine.track_counts(parent),
        }
    }

    pub(crate) fn snapshot(&mut self) -> FleetSnapshot {
        let e = &self.engine;
        let mut agents: Vec<AgentSnapshot> = e
            .agents()
            .filter(|a| !a.record.is_archived())
            .map(|a| AgentSnapshot::of(e, a))
            .collect();
        agents.sort_by_key(|a| (a.record.created_at, a.record.id));
        let parents: BTreeSet<AgentId> = agents.iter().filter_map(|a| a.parent_agent_id).collect();
        FleetSnapshot {
            home: self.layout.home.display().to_string(),
            workspaces: e
                .workspaces()
                .filter(|w| !w.is_archived())
                .map(|w| WorkspaceSnapshot::of(e, w))
                .collect(),
            projects: e.projects().cloned().collect(),
            tracks: parents.into_iter().map(|p| self.track(p)).collect(),
            providers: self.providers.infos(),
            counts: FleetCounts::of(e),
            notices: self.notices.clone(),
            quarantined: self.quarantined.clone(),
            mcp_url: self.access.as_ref().and_then(|a| a.url()),
            agents,
        }
    }

    pub(crate) fn create(
        &mut self,
        new: NewAgent,
    ) -> Result<(AgentSnapshot, Durable), RuntimeError> {
        let id = self.engine.create(new)?;
        self.apply();
        Ok((self.snap(id)?, self.durable(&[])))
    }

    pub(crate) fn register_directory(
        &mut self,
        dir: &Path,
        repo: Option<RepoInfo>,
        reuse: bool,
    ) -> WorkspaceRecord {
        let cwd = dir.display().to_string();
        if reuse {
            if let Some(w) = self
                .engine
                .workspaces()
                .find(|w| !w.is_archived() && w.cwd == cwd && w.kind != WorkspaceKind::Worktree)
            {
                return w.clone();
            }
        }
        let projects: Vec<ProjectRecord> = self.engine.projects().cloned().collect();
        let (ws, project) =
            workspaces::directory_workspace_with(dir, repo, &projects, Timestamp::now());
        self.engine.upsert_workspace(ws.clone(), project);
        self.apply();
        ws
    }

    pub(crate) fn register_worktree(
        &mut self,
        created: &CreatedWorktree,
        created_by: Option<AgentId>,
        request: Option<String>,
    ) -> WorkspaceSnapshot {
        let projects: Vec<ProjectRecord> = self.engine.projects().cloned().collect();
        let (ws, project) = workspaces::worktree_workspace(
            created,
            &projects,
            created_by,
            request,
            Timestamp::now(),
        );
        self.engine.upsert_workspace(ws.clone(), project);
        self.apply();
        WorkspaceSnapshot::of(&self.engine, &ws)
    }

    pub(crate) fn archive_workspace(
        &mut self,
        id: &WorkspaceId,
        even_if_running: bool,
    ) -> Result<(Vec<AgentId>, Durable), RuntimeError> {
        let archived = self.engine.archive_workspace(id, even_if_running)?;
        self.apply();
        let cause = self
            .engine
            .workspace(id)
            .map(|w| format!("workspace {}", w.display_name))
            .unwrap_or_default();
        self.remove_worktree_later(id, &archived, &cause, archived.clone());
        let d = self.durable(&archived);
        Ok((archived, d))
    }

    pub(crate) fn prompt(
        &mut self,
        id: AgentId,
        text: String,
        origin: TurnOrigin,
        notify: Option<AgentId>,
    ) -> Result<AgentSnapshot, RuntimeError> {
        self.engine.prompt(id, text, origin, notify)?;
        self.apply();
        self.snap(id)
    }

    pub(crate) fn cancel(&mut self, id: AgentId) -> Result<bool, RuntimeError> {
        let r = self.engine.cancel(id)?;
        self.apply();
        Ok(r)
    }

    pub(crate) fn archive(&mut self, id: AgentId) -> Result<(Vec<AgentId>, Durable), RuntimeError> {
        let ids = self.engine.archive(id)?;
        self.apply();
        let d = self.durable(&ids);
        Ok((ids, d))
    }

    pub(crate) fn archive_finished(
        &mut self,
        parent: AgentId,
    ) -> Result<(Vec<AgentId>, Durable), RuntimeError> {
        if self.engine.agent(parent).is_none() {
            return Err(crate::engine::EngineError::UnknownAgent(parent).into());
        }
        let kids = self.engine.finished_children(parent);
        let ids = self.engine.archive_many(&kids)?;
        self.apply();
        let d = self.durable(&ids);
        Ok((ids, d))
    }

    pub(crate) fn detach(&mut self, id: AgentId) -> Result<AgentSnapshot, RuntimeError> {
        self.engine.detach(id)?;
        self.apply();
        self.snap(id)
    }

    pub(crate) fn restore(
        &mut self,
        id: AgentId,
        as_root: bool,
    ) -> Result<(Vec<AgentId>, Durable), RuntimeError> {
        let ids = self.engine.restore(id, as_root)?;
        self.apply();
        Ok((ids, self.durable(&[])))
    }

    pub(crate) fn unarchive_workspace(&mut self, ws: &WorkspaceId) -> Result<(), RuntimeError> {
        self.engine.unarchive_workspace(ws)?;
        self.apply();
        Ok(())
    }

    pub(crate) fn answer_permission(
        &mut self,
        id: AgentId,
        request_id: &str,
        allow: bool,
    ) -> Result<(), RuntimeError> {
        self.engine.answer_permission(id, request_id, allow)?;
        self.apply();
        Ok(())
    }

    pub(crate) fn mark_seen(&mut self, id: AgentId) -> Result<(), RuntimeError> {
        self.engine.mark_seen(id)?;
        self.apply();
        Ok(())
    }

    pub(crate) fn stop(&mut self, id: AgentId) -> Result<Durable, RuntimeError> {
        self.engine.close(id)?;
        self.apply();
        Ok(self.durable(&[id]))
    }

    pub(crate) fn deliver_pending(&mut self) {
        self.engine.deliver_pending();
        self.apply();
    }
}
