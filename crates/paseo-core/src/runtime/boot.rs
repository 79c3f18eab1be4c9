//! Starting the runtime: the data root loaded (what cannot be read quarantined, what a crash
//! left normalized, records without a workspace given one), what a killed app left running
//! stopped, the containment found, and the actor built and started with its handle.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::{broadcast, mpsc};

use super::actor::Actor;
use super::broadcast::Broadcast;
use super::gate::Gate;
use super::internal::Internal;
use super::persist::notice_order::received_at_load;
use super::persist::Persistence;
use super::sessions::{SessionOptions, Sessions};
use super::timeline::Tails;
use super::{AgentAccess, RuntimeError, RuntimeHandle, RuntimeOptions};
use crate::engine::Engine;
use crate::model::{AgentId, AgentRecord, ProjectRecord, Timestamp, WorkspaceId, WorkspaceRecord};
use crate::providers::groups::GroupRecorder;
use crate::store::timeline::{TimelineOptions, Timelines};
use crate::store::{self, Layout, LoadedRecord, Quarantined, Writer};
use crate::workspaces;
use rustc_hash::FxHashSet;

/// Loads the data root and starts the actor.
pub(crate) async fn start(
    mut opts: RuntimeOptions,
    access: Option<Arc<dyn AgentAccess>>,
) -> Result<(RuntimeHandle, tokio::task::JoinHandle<()>), RuntimeError> {
    let layout = Layout::new(&opts.home);
    // Found while the records load: its probe (a bubblewrap run) waits on a process, not on
    // them.
    let (sandbox, home) = (opts.sandbox.clone(), opts.home.clone());
    let containment =
        tokio::task::spawn_blocking(move || crate::sandbox::Containment::detect(&sandbox, &home));
    let (agents, registry, ((inboxes, inbox_q), (inboxes_aside, inbox_problems))) = match opts
        .preload
        .take()
        .filter(|p| p.home() == opts.home.as_path())
    {
        Some(preload) => preload.take().await?,
        None => super::preload::load_root(layout.clone()).await?,
    };
    // A step of the start benches/scroll.rs times (its launch breakdown).
    tracing::info!(
        records = agents.records.len(),
        cached = agents.cache.used,
        listings = agents.cache.listings,
        "records read"
    );
    let next_cache = agents.cache.next(agents.records.len());

    // What a killed app left running goes first, before any agent starts again (SPEC 11).
    let stopped = GroupRecorder::new(layout.run_dir()).stop_leftovers().await;
    let mut notices: Vec<String> = opts.notices.clone();
    let containment = containment.await.map_err(|_| RuntimeError::Stopped)?;
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
    let quarantined = unreadable(
        &agents,
        &registry,
        inbox_q,
        inboxes_aside,
        inbox_problems,
        &mut notices,
    );

    let adopted = adopt_workspaces(agents.records, registry.workspaces, registry.projects).await?;
    let Adopted {
        records,
        workspaces,
        projects,
        record_paths,
        fixed_ws,
        registry_changed,
    } = adopted;

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
    let timelines = Timelines::start_with(
        layout.clone(),
        TimelineOptions {
            max_bytes: opts.timeline_max_bytes,
            failures: Some(fail_tx),
        },
    );
    let mut actor = Actor {
        engine,
        sessions: Sessions::new(SessionOptions {
            env: opts.agent_env.clone(),
            cancel_timeout: opts.cancel_timeout,
            start_timeout: opts.start_timeout,
            sink_tx,
        }),
        persist: Persistence::new(layout.clone(), writer.clone(), record_paths, registry.extra),
        // Counts are counted once below, after the start's own changes: not again on the
        // first step (a walk over every agent, 100,000 at most, while the first requests wait).
        out: Broadcast::new(events.clone(), notices, quarantined),
        tails: Tails::new(timelines),
        layout: layout.clone(),
        providers: opts.providers.clone(),
        access,
        containment: Arc::new(containment),
        internal_tx,
        removals: Vec::new(),
        limits: opts.limits,
        budget: opts.budget,
        create_rate: Default::default(),
        checkouts: Default::default(),
        changes_gate: Gate::default(),
    };
    let mut repaired: Vec<AgentId> = actor.engine.take_changed_agents().into_iter().collect();
    repaired.extend(fixed_ws);
    repaired.sort_unstable();
    repaired.dedup();
    actor.persist.defer(repaired, registry_changed);
    actor.apply();
    actor.persist.forget_tickets();
    actor.out.set_counts(&actor.engine);

    // Old trash entries go off the hot path, once the fleet is loaded (SPEC 15).
    let (trash, days) = (layout.clone(), opts.trash_days);
    tokio::task::spawn_blocking(move || {
        let purged = crate::workspaces::trash::purge(&trash, days, std::time::SystemTime::now());
        if !purged.is_empty() {
            tracing::info!(entries = purged.len(), days, "trash purged");
        }
    });
    // The records cache off the start's path too, once the first screens are answered.
    super::preload::tend_cache_later(layout.clone(), next_cache, CACHE_AFTER);
    let hidden = crate::sandbox::hidden_roots(&layout.home, &opts.sandbox.hide);
    let gate = actor.changes_gate.clone();
    let handle = RuntimeHandle::new(tx, events, writer, opts.providers, layout, hidden, gate);
    let task = tokio::spawn(actor.run(rx, sink_rx, internal_rx));
    Ok((handle, task))
}

/// How long after a start the records cache is tended: past the window's first screen and
/// its pages of cards.
const CACHE_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// The records as load found them, each with a known workspace.
struct Adopted {
    /// Boxed as load read them (≈ 1 KB each): they move on to the engine without a copy.
    #[allow(clippy::vec_box)]
    records: Vec<Box<AgentRecord>>,
    workspaces: Vec<WorkspaceRecord>,
    projects: Vec<ProjectRecord>,
    /// Records loaded from another file than `Layout::record_path` names (rewritten there).
    record_paths: HashMap<AgentId, PathBuf>,
    /// Records given a workspace: written as load repairs.
    fixed_ws: Vec<AgentId>,
    /// Workspaces or projects were added: the registries are written as load repairs.
    registry_changed: bool,
}

/// Records without a known workspace (upstream data roots have none) get one per cwd (SPEC 1).
async fn adopt_workspaces(
    loaded_records: Vec<LoadedRecord>,
    workspaces: Vec<WorkspaceRecord>,
    projects: Vec<ProjectRecord>,
) -> Result<Adopted, RuntimeError> {
    let mut workspaces = workspaces;
    let mut projects = projects;
    let known: FxHashSet<WorkspaceId> = workspaces.iter().map(|w| w.workspace_id.clone()).collect();
    let mut records = Vec::with_capacity(loaded_records.len());
    let mut record_paths = HashMap::new();
    let mut by_cwd: HashMap<String, WorkspaceId> = HashMap::new();
    let mut fixed_ws = Vec::new();
    let mut registry_changed = false;
    for loaded in loaded_records {
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
    Ok(Adopted {
        records,
        workspaces,
        projects,
        record_paths,
        fixed_ws,
        registry_changed,
    })
}

/// What load could not read (moved aside) and the notices that say so, after `notices`.
fn unreadable(
    agents: &store::LoadedAgents,
    registry: &store::LoadedRegistry,
    inbox_q: Vec<Quarantined>,
    inboxes_aside: Vec<Quarantined>,
    inbox_problems: Vec<String>,
    notices: &mut Vec<String>,
) -> Vec<Quarantined> {
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
    quarantined
}
