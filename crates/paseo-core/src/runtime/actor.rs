//! The actor: owns the engine, the provider sessions, the writer and the timelines. Its loop
//! takes one command, provider event or internal message at a time; [`super::apply`] carries
//! out what the engine decided and broadcasts events.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, watch};

use super::apply::CLOSE_WAIT;
use super::cmd::Command;
use super::events::{Event, FleetCounts};
use super::notice_order::received_at_load;
use super::persist::Deferred;
use super::timeline::Tl;
use super::{AgentAccess, RuntimeError, RuntimeHandle, RuntimeOptions};
use crate::engine::Engine;
use crate::model::{AgentId, ItemKind, NewItem, Timestamp, WorkspaceId};
use crate::providers::groups::GroupRecorder;
use crate::providers::{
    ProviderError, ProviderEvent, ProviderRegistry, Session, SinkMessage, TurnInput,
};
use crate::store::timeline::{TimelineOptions, Timelines};
use crate::store::{self, Layout, Quarantined, Ticket, Writer};
use crate::workspaces;
use rustc_hash::FxHashSet;

pub(super) enum Internal {
    Started {
        agent: AgentId,
        generation: u64,
        result: Result<Box<dyn Session>, ProviderError>,
    },
    CancelTimeout {
        agent: AgentId,
        turn: u64,
    },
    /// A session start's bound passed: if it is still not ready, it failed.
    StartTimeout {
        agent: AgentId,
        generation: u64,
    },
    /// A worktree could not be snapshotted or removed: it stays, and so does its workspace.
    WorktreeKept {
        workspace: WorkspaceId,
        show_on: Vec<AgentId>,
        message: String,
    },
    /// A file started failing to be written (SPEC 15).
    StoreFailed(store::StoreFailure),
    /// What an agent changed on disk, counted off the actor.
    Counted {
        agent: AgentId,
        counts: Option<crate::model::ChangeCounts>,
    },
    /// An archived agent's record is durable: announce the archive.
    ArchiveDurable {
        agent: AgentId,
    },
}

/// Input for a session that is still starting.
pub(super) enum Buffered {
    Send(TurnInput),
    Interrupt,
    Permission(String, bool),
}

pub(super) struct Slot {
    pub(super) generation: u64,
    pub(super) session: Option<Box<dyn Session>>,
    pub(super) buffered: Vec<Buffered>,
}

pub(crate) struct Actor {
    pub(super) engine: Engine,
    pub(super) layout: Layout,
    pub(super) writer: Arc<Writer>,
    pub(super) timelines: Timelines,
    pub(super) providers: ProviderRegistry,
    pub(super) access: Option<Arc<dyn AgentAccess>>,
    pub(super) opts_env: std::collections::BTreeMap<String, String>,
    pub(super) cancel_timeout: Duration,
    pub(super) start_timeout: Duration,
    pub(super) slots: HashMap<AgentId, Slot>,
    /// Sessions closed while their start was still under way: closed on arrival.
    pub(super) doomed: HashMap<(AgentId, u64), watch::Sender<bool>>,
    pub(super) closing: HashMap<AgentId, watch::Receiver<bool>>,
    /// Archives waiting for their record to be durable before they are announced; the flag
    /// turns true once the event went out.
    pub(super) announcing: HashMap<AgentId, (watch::Sender<bool>, watch::Receiver<bool>)>,
    /// Worktrees to remove once the effects of the current `apply` have run.
    pub(super) removals: Vec<super::removal::Pending>,
    /// Track and workspace news waiting for archives to be durable (SPEC 5).
    pub(super) held_news: Vec<super::news::HeldNews>,
    /// Records loaded from another file than `Layout::record_path` names (rewritten there).
    pub(super) record_paths: HashMap<AgentId, PathBuf>,
    pub(super) tl: HashMap<AgentId, Tl>,
    pub(super) events: broadcast::Sender<Event>,
    pub(super) sink_tx: mpsc::Sender<SinkMessage>,
    pub(super) internal_tx: mpsc::UnboundedSender<Internal>,
    pub(super) next_generation: u64,
    pub(super) notices: Vec<String>,
    pub(super) quarantined: Vec<Quarantined>,
    /// Top-level keys of the registries this version does not know: written back unchanged.
    pub(super) registry_extra: store::RegistryExtra,
    pub(super) tickets: Vec<Ticket>,
    pub(super) counts: FleetCounts,
    pub(super) counts_dirty: bool,
    /// config.json `limits` (SPEC 14).
    pub(super) limits: crate::config::Limits,
    pub(super) create_rate: super::limits::CreateRate,
    /// Starts waiting for a live slot, oldest first (the resume id each asked for).
    pub(super) waiting: std::collections::VecDeque<(AgentId, Option<String>)>,
    /// The agent each window shows (by window label): never closed to make room ([`super::live`]).
    pub(super) shown: HashMap<String, AgentId>,
    /// Checkouts a Changes action works in: no agent starts a process there meanwhile.
    pub(super) checkouts: super::checkout::Holds,
    /// What load repaired or registered, written once the app answers (see [`Deferred`]).
    pub(super) deferred: Option<Deferred>,
    /// What boxes agents here (SPEC 16), found at start.
    pub(super) containment: Arc<crate::sandbox::Containment>,
    /// Bounds the git the app runs to read changes (shared with the handle).
    pub(super) changes_gate: super::changes::Gate,
}

/// Loads the data root and starts the actor.
pub(crate) async fn start(
    opts: RuntimeOptions,
    access: Option<Arc<dyn AgentAccess>>,
) -> Result<(RuntimeHandle, tokio::task::JoinHandle<()>), RuntimeError> {
    let layout = Layout::new(&opts.home);
    let l = layout.clone();
    let (agents, registry, ((inboxes, inbox_q), (inboxes_aside, inbox_problems))) =
        tokio::task::spawn_blocking(move || {
            store::atomic::ensure_dir(&l.home).map_err(|e| store::StoreError::Read {
                path: l.home.display().to_string(),
                source: e,
            })?;
            let agents = store::load_agents_at_rest(&l)?;
            let registry = store::load_registry(&l);
            let (inboxes, q) = store::load_inboxes(&l);
            // Which inboxes' agents were loaded: only those few ids are looked for.
            let owners: FxHashSet<AgentId> = inboxes.iter().map(|(id, _)| *id).collect();
            let ids = agents.records.iter().map(|r| r.record.id);
            let loaded: std::collections::HashSet<AgentId> =
                ids.filter(|id| owners.contains(id)).collect();
            let orphans = store::set_aside_orphan_inboxes(&l, inboxes, &loaded);
            Ok::<_, store::StoreError>((agents, registry, ((orphans.0, q), (orphans.1, orphans.2))))
        })
        .await
        .map_err(|_| RuntimeError::Stopped)??;

    // What a killed app left running goes first, before any agent starts again (SPEC 11).
    let stopped = GroupRecorder::new(layout.run_dir()).stop_leftovers().await;
    let mut notices: Vec<String> = opts.notices.clone();
    let (sandbox, home) = (opts.sandbox.clone(), opts.home.clone());
    let containment =
        tokio::task::spawn_blocking(move || crate::sandbox::Containment::detect(&sandbox, &home))
            .await
            .map_err(|_| RuntimeError::Stopped)?;
    let said = containment.info();
    match &containment {
        crate::sandbox::Containment::On { .. } => tracing::info!("{}", said.message),
        _ => {
            tracing::warn!("{}", said.message);
            notices.push(said.message.clone());
        }
    }
    crate::sandbox::install_app_git(&containment);
    if stopped > 0 {
        tracing::warn!(
            groups = stopped,
            "stopped agent processes left running when the app last stopped unexpectedly"
        );
        notices.push(format!(
            "Stopped {stopped} agent process group{} left running when the app last stopped \
             unexpectedly.",
            if stopped == 1 { "" } else { "s" }
        ));
    }
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
    for q in &inboxes_aside {
        notices.push(format!(
            "{} was set aside as {} ({}): put it back with the agent's record to restore its \
             notices",
            q.from, q.to, q.reason
        ));
    }
    notices.extend(inbox_problems);
    quarantined.extend(inboxes_aside);

    // Records without a known workspace (upstream data roots have none) get one per cwd.
    let mut workspaces = registry.workspaces;
    let mut projects = registry.projects;
    let known: FxHashSet<WorkspaceId> = workspaces.iter().map(|w| w.workspace_id.clone()).collect();
    let mut records = Vec::with_capacity(agents.records.len());
    let mut record_paths = HashMap::new();
    let mut by_cwd: HashMap<String, WorkspaceId> = HashMap::new();
    let mut fixed_ws = Vec::new();
    let mut registry_changed = false;
    for loaded in agents.records {
        let mut rec = loaded.record;
        // The registry's id, shared: one allocation per workspace, not one per record.
        let shared = rec.workspace_id.as_ref().and_then(|w| known.get(w));
        let ok = shared.is_some();
        if let Some(w) = shared {
            rec.workspace_id = Some(w.clone());
        }
        if !ok {
            let wid = match by_cwd.get(rec.cwd.as_str()) {
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
                    by_cwd.insert(rec.cwd.to_string(), ws.workspace_id.clone());
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
        record_paths.extend(loaded.stray_path.map(|path| (rec.id, path)));
        records.push(rec);
    }

    let providers = opts.providers.clone();
    let mut engine = Engine::new();
    // Asked once per provider, not per agent: a provider's info looks its program up on PATH.
    let infos = providers.infos();
    engine.set_providers(providers.trust(&infos), opts.sandbox.enabled);
    let reads_by_provider: HashMap<String, bool> =
        infos.into_iter().map(|i| (i.id, i.reads_prompts)).collect();
    let reads = |p: &str| reads_by_provider.get(p).copied().unwrap_or(true);
    engine.set_delivered_at_load(received_at_load(&layout, &records, &inboxes).await);
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
    super::release_freed_memory_later();

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
        start_timeout: opts.start_timeout,
        slots: HashMap::new(),
        doomed: HashMap::new(),
        closing: HashMap::new(),
        announcing: HashMap::new(),
        removals: Vec::new(),
        held_news: Vec::new(),
        record_paths,
        tl: HashMap::new(),
        events: events.clone(),
        sink_tx,
        internal_tx,
        next_generation: 0,
        notices,
        quarantined,
        registry_extra: registry.extra,
        tickets: Vec::new(),
        counts: FleetCounts::default(),
        // Counted once below, after the start's own changes: not again on the first step (a
        // walk over every agent, 100,000 at most, while the first requests wait).
        counts_dirty: false,
        limits: opts.limits,
        create_rate: Default::default(),
        waiting: Default::default(),
        shown: HashMap::new(),
        checkouts: Default::default(),
        deferred: None,
        containment: Arc::new(containment),
        changes_gate: super::changes::Gate::default(),
    };
    let mut repaired: Vec<AgentId> = actor.engine.take_changed_agents().into_iter().collect();
    repaired.extend(fixed_ws);
    repaired.sort_unstable();
    repaired.dedup();
    actor.deferred = Some(Deferred {
        total: repaired.len(),
        agents: repaired,
        registries: registry_changed,
        released: false,
    });
    actor.apply();
    actor.tickets.clear();
    actor.counts = FleetCounts::of(&actor.engine);

    // Old trash entries go off the hot path, once the fleet is loaded (SPEC 15).
    let (trash, days) = (layout.clone(), opts.trash_days);
    tokio::task::spawn_blocking(move || {
        let purged = crate::workspaces::trash::purge(&trash, days, std::time::SystemTime::now());
        if !purged.is_empty() {
            tracing::info!(entries = purged.len(), days, "trash purged");
        }
    });
    let hidden = crate::sandbox::hidden_roots(&layout.home, &opts.sandbox.hide);
    let gate = actor.changes_gate.clone();
    let handle = RuntimeHandle::new(tx, events, writer, opts.providers, layout, hidden, gate);
    let task = tokio::spawn(actor.run(rx, sink_rx, internal_rx));
    Ok((handle, task))
}

impl Actor {
    async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<Command>,
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
                    Some(Command::Shutdown(reply)) => {
                        self.shutdown().await;
                        let _ = reply.send(());
                        return;
                    }
                    Some(cmd) => {
                        self.dispatch(cmd);
                        self.apply();
                        self.tickets.clear();
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
                _ = tick.tick() => {
                    self.publish_counts();
                    self.write_deferred(false);
                }
            }
        }
    }

    async fn shutdown(&mut self) {
        tracing::info!("runtime shutting down");
        self.write_deferred(true);
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

    fn on_internal(&mut self, m: Internal) {
        match m {
            Internal::Counted { agent, counts } => self.engine.set_changes(agent, counts),
            Internal::ArchiveDurable { agent } => self.announce_archived(agent),
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
            Internal::StartTimeout { agent, generation } => self.start_timed_out(agent, generation),
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
            ProviderEvent::Usage(u) => self.engine.turn_usage(agent, &u),
            ProviderEvent::Run(r) => self.engine.last_run(agent, r),
            ProviderEvent::TurnEnded(o) => {
                self.count_changes(agent);
                self.engine.turn_ended(agent, o)
            }
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
}
