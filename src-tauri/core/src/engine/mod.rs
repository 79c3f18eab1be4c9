//! The lifecycle engine: the fleet's state and every rule of SPEC 1–7 that is not I/O.
//!
//! Pure and deterministic: an operation takes the current state and changes it, recording what
//! changed ([`Outcome`]: agents, inboxes, workspaces and tracks to persist and re-render) and the
//! [`Effect`]s the runtime must carry out (start or close a session, send a turn, interrupt,
//! remove a worktree). Nothing here touches files, processes or clocks other than through
//! [`Engine::set_clock`], so every rule is testable without I/O.
//!
//! Indexes are kept incrementally: children by parent (the tracks), each agent's root ancestor,
//! and each workspace's activity bucket counts. [`Engine::recompute_activity`] computes the buckets
//! from scratch for tests to compare against.

pub mod fxhash;
pub mod notice;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use serde::Serialize;

use crate::model::{
    AgentConfig, AgentId, AgentRecord, AttentionReason, BatchId, Bucket, ItemKind, NewItem,
    NotifyArm, Persistence, ProjectId, ProjectRecord, Status, Timestamp, WorkspaceId,
    WorkspaceRecord, PARENT_LABEL,
};
use crate::providers::{PermissionRequest, TurnInput, TurnOutcome};

pub use fxhash::{FxHashMap, FxHashSet};
pub use notice::Notice;

/// The message a record left running by a crash carries after load.
pub const INTERRUPTED: &str = "interrupted by shutdown";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("unknown agent {0}")]
    UnknownAgent(AgentId),
    #[error("agent {0} is archived")]
    Archived(AgentId),
    #[error("unknown workspace {0}")]
    UnknownWorkspace(WorkspaceId),
    #[error("workspace {0} is archived")]
    WorkspaceArchived(WorkspaceId),
    #[error("agent {id} is {status}: wait for its turn to end (or cancel it) before prompting")]
    Busy { id: AgentId, status: &'static str },
    #[error("invalid transition for agent {id}: {from} → {to}")]
    InvalidTransition {
        id: AgentId,
        from: &'static str,
        to: &'static str,
    },
    #[error("agent {0} has no parent to detach from")]
    NotASubagent(AgentId),
    #[error("agent {0} is not archived")]
    NotArchived(AgentId),
    #[error("cannot restore: the parent {parent} of {child} is archived; restore the parent first, or restore {child} as a root agent")]
    RestoreParentArchived { child: AgentId, parent: AgentId },
    #[error("cannot restore: the workspace {workspace} of agent {agent} is archived")]
    RestoreWorkspaceArchived {
        agent: AgentId,
        workspace: WorkspaceId,
    },
    #[error("workspace {workspace} has {live} live agent(s); confirm to archive it and stop them")]
    WorkspaceBusy { workspace: WorkspaceId, live: usize },
    #[error("agent {0} has no pending permission request {1:?}")]
    NoSuchPermission(AgentId, String),
    #[error("duplicate agent id {0}")]
    Duplicate(AgentId),
    #[error("{0}")]
    Invalid(String),
}

/// What started the current turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnOrigin {
    User,
    Agent(AgentId),
    Notice(String),
}

/// Where a session stands, as far as the engine knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SessionState {
    /// No process: a new prompt starts (or resumes) one.
    #[default]
    None,
    /// A start was requested; `Ready` has not arrived yet.
    Starting,
    /// Ready for turns.
    Live,
}

/// Input waiting for the session to become ready.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    pub input: TurnInput,
    pub origin: TurnOrigin,
    /// The finish notice this turn owes, if armed.
    pub arm: Option<NotifyArm>,
}

/// One agent as the engine holds it: the durable record plus what only lives while the app runs.
#[derive(Clone, Debug)]
pub struct AgentState {
    pub record: AgentRecord,
    pub session: SessionState,
    pub pending_permission: Option<PermissionRequest>,
    pub queued: Option<Queued>,
    pub turn_origin: Option<TurnOrigin>,
    pub cancel_requested: bool,
    pub mcp_status: Option<String>,
    /// Whether its provider reads prompts (and so takes finish notices as turn input).
    pub reads_prompts: bool,
    /// The parent label, parsed once (kept in step with `record.labels`).
    pub parent: Option<AgentId>,
    /// The top of its live parent chain (itself for a root agent).
    root: AgentId,
    /// The bucket it contributes, and where (SPEC 6).
    contribution: Option<(WorkspaceId, Bucket)>,
}

impl AgentState {
    pub fn status(&self) -> Status {
        self.record.last_status
    }
    pub fn root(&self) -> AgentId {
        self.root
    }
    pub fn contribution(&self) -> Option<&(WorkspaceId, Bucket)> {
        self.contribution.as_ref()
    }
}

/// What the runtime must do after an operation.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    StartSession {
        agent: AgentId,
        resume: Option<String>,
    },
    SendTurn {
        agent: AgentId,
        input: TurnInput,
    },
    Interrupt {
        agent: AgentId,
        turn: u64,
    },
    CloseSession {
        agent: AgentId,
    },
    AnswerPermission {
        agent: AgentId,
        request_id: String,
        allow: bool,
    },
    Timeline {
        agent: AgentId,
        item: Box<NewItem>,
    },
    /// Remove the worktree of this workspace with git and archive it (autoArchive, SPEC 5).
    ArchiveWorktree {
        workspace: WorkspaceId,
        requested_by: AgentId,
    },
    /// Drop the agent's MCP token (archived: it may not act any more).
    RevokeAccess {
        agent: AgentId,
    },
}

/// What an operation changed and what must happen next.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Agents whose record or live state changed: persist and re-render.
    pub agents: FxHashSet<AgentId>,
    /// Agents whose inbox changed: persist it.
    pub inboxes: FxHashSet<AgentId>,
    /// Workspaces whose bucket or record changed.
    pub workspaces: FxHashSet<WorkspaceId>,
    pub workspaces_registry: bool,
    pub projects_registry: bool,
    /// Parents whose track (membership or a member's state) changed.
    pub tracks: FxHashSet<AgentId>,
    pub effects: Vec<Effect>,
    /// Human-readable problems found (load repairs, refused notices): log and show in the UI.
    pub notices: Vec<String>,
}

impl Outcome {
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
            && self.inboxes.is_empty()
            && self.workspaces.is_empty()
            && !self.workspaces_registry
            && !self.projects_registry
            && self.tracks.is_empty()
            && self.effects.is_empty()
            && self.notices.is_empty()
    }
}

/// Counts shown in a track header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackCounts {
    pub running: usize,
    pub needs_you: usize,
    pub total: usize,
}

/// A new agent, already validated at the boundary (paths resolved, provider available).
#[derive(Clone, Debug)]
pub struct NewAgent {
    pub id: AgentId,
    pub provider: String,
    pub reads_prompts: bool,
    pub cwd: String,
    pub workspace_id: WorkspaceId,
    pub title: String,
    pub config: AgentConfig,
    pub labels: BTreeMap<String, String>,
    /// The parent (relationship `subagent`).
    pub parent: Option<AgentId>,
    /// The agent whose request created this one (subagent or detached).
    pub created_by: Option<AgentId>,
    pub initial_prompt: Option<String>,
    /// Who the first turn notifies when it ends.
    pub notify: Option<AgentId>,
    pub auto_archive: bool,
    pub created_workspace_id: Option<WorkspaceId>,
}

/// Filter for [`Engine::list`].
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    pub include_archived: bool,
    pub parent: Option<AgentId>,
    pub workspace: Option<WorkspaceId>,
    pub statuses: Option<Vec<Status>>,
}

/// What [`Engine::load`] found and repaired.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    pub agents: usize,
    pub normalized: Vec<AgentId>,
    pub problems: Vec<String>,
    /// Duplicate records that lost to a newer one with the same id.
    pub duplicates: Vec<AgentId>,
}

#[derive(Default)]
pub struct Engine {
    agents: FxHashMap<AgentId, AgentState>,
    /// Unarchived children of each agent, oldest first.
    children: FxHashMap<AgentId, BTreeSet<(Timestamp, AgentId)>>,
    workspaces: BTreeMap<WorkspaceId, WorkspaceRecord>,
    projects: BTreeMap<ProjectId, ProjectRecord>,
    /// Per workspace, how many agents contribute each bucket.
    activity: FxHashMap<WorkspaceId, [u32; 5]>,
    inbox: FxHashMap<AgentId, VecDeque<Notice>>,
    /// Archived agents by the batch they were archived in.
    batches: FxHashMap<BatchId, Vec<AgentId>>,
    out: Outcome,
    fixed_now: Option<Timestamp>,
    /// Set while the app quits: no notice wakes a parent then.
    shutting_down: bool,
    /// Set by `load` until `deliver_pending`: notices queue but wake nobody before the runtime
    /// (and the MCP server agents talk to) is ready.
    delivery_paused: bool,
}

impl Engine {
    pub fn new() -> Self {
        Self::default()
    }

    /// Freezes the clock (tests); `None` returns to the wall clock.
    pub fn set_clock(&mut self, now: Option<Timestamp>) {
        self.fixed_now = now;
    }

    fn now(&self) -> Timestamp {
        self.fixed_now.unwrap_or_else(Timestamp::now)
    }

    /// Hands over everything the last operations changed.
    pub fn take_outcome(&mut self) -> Outcome {
        std::mem::take(&mut self.out)
    }

    // ------------------------------------------------------------------ queries

    pub fn agent(&self, id: AgentId) -> Option<&AgentState> {
        self.agents.get(&id)
    }

    pub fn agents(&self) -> impl Iterator<Item = &AgentState> {
        self.agents.values()
    }

    pub fn agent_count(&self) -> usize {
        self.agents.len()
    }

    pub fn workspace(&self, id: &WorkspaceId) -> Option<&WorkspaceRecord> {
        self.workspaces.get(id)
    }

    pub fn workspaces(&self) -> impl Iterator<Item = &WorkspaceRecord> {
        self.workspaces.values()
    }

    pub fn project(&self, id: &ProjectId) -> Option<&ProjectRecord> {
        self.projects.get(id)
    }

    pub fn projects(&self) -> impl Iterator<Item = &ProjectRecord> {
        self.projects.values()
    }

    pub fn inbox(&self, id: AgentId) -> Option<&VecDeque<Notice>> {
        self.inbox.get(&id)
    }

    pub fn inboxes(&self) -> impl Iterator<Item = (&AgentId, &VecDeque<Notice>)> {
        self.inbox.iter()
    }

    /// The live parent: the labelled parent if it exists and is not archived.
    pub fn live_parent(&self, id: AgentId) -> Option<AgentId> {
        let a = self.agents.get(&id)?;
        let p = a.parent?;
        let pa = self.agents.get(&p)?;
        (p != id && !pa.record.is_archived()).then_some(p)
    }

    /// A parent's track: its unarchived children, oldest first.
    pub fn track(&self, parent: AgentId) -> Vec<AgentId> {
        self.children
            .get(&parent)
            .map(|s| s.iter().map(|(_, id)| *id).collect())
            .unwrap_or_default()
    }

    pub fn track_counts(&self, parent: AgentId) -> TrackCounts {
        let mut c = TrackCounts::default();
        for id in self.track(parent) {
            if let Some(a) = self.agents.get(&id) {
                c.total += 1;
                if a.status().is_active() {
                    c.running += 1;
                }
                if needs_you(a) {
                    c.needs_you += 1;
                }
            }
        }
        c
    }

    /// The workspace's bucket: the most urgent one any agent contributes.
    pub fn workspace_bucket(&self, ws: &WorkspaceId) -> Option<Bucket> {
        let counts = self.activity.get(ws)?;
        Bucket::ALL.into_iter().find(|b| counts[b.index()] > 0)
    }

    pub fn activity_counts(&self, ws: &WorkspaceId) -> [u32; 5] {
        self.activity.get(ws).copied().unwrap_or_default()
    }

    /// The buckets computed from scratch, for tests to compare with the incremental ones.
    pub fn recompute_activity(&self) -> HashMap<WorkspaceId, [u32; 5]> {
        let mut out: HashMap<WorkspaceId, [u32; 5]> = HashMap::new();
        for id in self.agents.keys() {
            if let Some((ws, b)) = self.compute_contribution_slow(*id) {
                out.entry(ws).or_default()[b.index()] += 1;
            }
        }
        out
    }

    /// The incremental counts, without empty workspaces (comparable with `recompute_activity`).
    pub fn activity_snapshot(&self) -> HashMap<WorkspaceId, [u32; 5]> {
        self.activity
            .iter()
            .filter(|(_, c)| c.iter().any(|n| *n > 0))
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    }

    /// Whether `target` is `caller` itself, one of its descendants, or an agent it created (the
    /// MCP authorization rule for mutations).
    pub fn may_mutate(&self, caller: AgentId, target: AgentId) -> bool {
        if caller == target {
            return true;
        }
        let Some(t) = self.agents.get(&target) else {
            return false;
        };
        if t.record.created_by == Some(caller) {
            return true;
        }
        self.is_descendant(target, caller)
    }

    /// Whether `id` sits below `ancestor` in the parent chain (labels, archived or not).
    pub fn is_descendant(&self, id: AgentId, ancestor: AgentId) -> bool {
        let mut seen = HashSet::new();
        let mut cur = id;
        while let Some(p) = self.agents.get(&cur).and_then(|a| a.parent) {
            if p == ancestor {
                return true;
            }
            if !seen.insert(p) {
                return false;
            }
            cur = p;
        }
        false
    }

    pub fn list(&self, filter: &ListFilter) -> Vec<&AgentState> {
        let mut v: Vec<&AgentState> = self
            .agents
            .values()
            .filter(|a| filter.include_archived || !a.record.is_archived())
            .filter(|a| filter.parent.is_none_or(|p| a.parent == Some(p)))
            .filter(|a| {
                filter
                    .workspace
                    .as_ref()
                    .is_none_or(|w| a.record.workspace_id.as_ref() == Some(w))
            })
            .filter(|a| {
                filter
                    .statuses
                    .as_ref()
                    .is_none_or(|s| s.contains(&a.status()))
            })
            .collect();
        v.sort_by_key(|a| (a.record.created_at, a.record.id));
        v
    }

    /// The agents archived in one batch, in archive order.
    pub fn batch(&self, batch: &BatchId) -> &[AgentId] {
        self.batches.get(batch).map(|v| v.as_slice()).unwrap_or(&[])
    }

    // ------------------------------------------------------------------ load

    /// Builds the fleet from what the store loaded. Repairs what a crash or a bad file left:
    /// duplicate ids (the newest `updatedAt` wins), self and cyclic parent links (cut),
    /// unarchived children of archived parents (archived with the parent's batch), agents left
    /// `running` (→ `error`, "interrupted by shutdown", notifying an armed parent) or
    /// `initializing`/`idle` (→ `closed`: no process survives a restart).
    pub fn load(
        &mut self,
        records: Vec<AgentRecord>,
        workspaces: Vec<WorkspaceRecord>,
        projects: Vec<ProjectRecord>,
        inboxes: Vec<(AgentId, Vec<Notice>)>,
        reads_prompts: &dyn Fn(&str) -> bool,
    ) -> LoadReport {
        self.delivery_paused = true;
        let mut report = LoadReport::default();
        for p in projects {
            self.projects.insert(p.project_id.clone(), p);
        }
        for w in workspaces {
            self.workspaces.insert(w.workspace_id.clone(), w);
        }
        for rec in records {
            let id = rec.id;
            if let Some(existing) = self.agents.get(&id) {
                report.duplicates.push(id);
                report.problems.push(format!(
                    "agent {id} is stored twice; kept the copy updated at {}",
                    existing.record.updated_at.max(rec.updated_at)
                ));
                if existing.record.updated_at >= rec.updated_at {
                    continue;
                }
            }
            let reads = reads_prompts(&rec.provider);
            let parent = rec.parent_agent_id();
            self.agents.insert(
                id,
                AgentState {
                    record: rec,
                    session: SessionState::None,
                    pending_permission: None,
                    queued: None,
                    turn_origin: None,
                    cancel_requested: false,
                    mcp_status: None,
                    reads_prompts: reads,
                    parent,
                    root: id,
                    contribution: None,
                },
            );
        }
        report.agents = self.agents.len();

        // Parent links: cut self-links and cycles (deterministically, at the oldest member).
        let mut ids: Vec<AgentId> = self.agents.keys().copied().collect();
        ids.sort_by_key(|id| (self.agents[id].record.created_at, *id));
        let mut state: HashMap<AgentId, u8> = HashMap::new(); // 1 = on path, 2 = done
        for &start in &ids {
            if state.contains_key(&start) {
                continue;
            }
            let mut path = Vec::new();
            let mut cur = Some(start);
            while let Some(c) = cur {
                match state.get(&c) {
                    Some(2) => break,
                    Some(1) => {
                        // A cycle: cut the link of its oldest member.
                        let pos = path.iter().position(|x| *x == c).unwrap_or(0);
                        let cyc = &path[pos..];
                        let victim = *cyc
                            .iter()
                            .min_by_key(|id| (self.agents[*id].record.created_at, **id))
                            .unwrap_or(&c);
                        if let Some(a) = self.agents.get_mut(&victim) {
                            a.record.labels.remove(PARENT_LABEL);
                            a.parent = None;
                        }
                        report.problems.push(format!(
                            "agent {victim} was part of a cycle of parent links; its parent link was removed"
                        ));
                        self.out.agents.insert(victim);
                        break;
                    }
                    _ => {}
                }
                state.insert(c, 1);
                path.push(c);
                cur = self.agents[&c]
                    .record
                    .parent_agent_id()
                    .filter(|p| self.agents.contains_key(p));
                if cur == Some(c) {
                    if let Some(a) = self.agents.get_mut(&c) {
                        a.record.labels.remove(PARENT_LABEL);
                        a.parent = None;
                    }
                    report.problems.push(format!(
                        "agent {c} named itself as its parent; link removed"
                    ));
                    self.out.agents.insert(c);
                    cur = None;
                }
            }
            for p in path {
                state.insert(p, 2);
            }
        }
        for id in &ids {
            if let Some(label) = self.agents[id].record.labels.get(PARENT_LABEL) {
                if label.parse::<AgentId>().is_err() {
                    report.problems.push(format!(
                        "agent {id} has an invalid parent label {label:?}; treated as a root agent"
                    ));
                }
            }
        }

        // Finish cascades a crash interrupted: unarchived descendants of archived agents are
        // archived with the nearest archived ancestor's batch (one pass, top down).
        let mut kids: HashMap<AgentId, Vec<AgentId>> = HashMap::new();
        for id in &ids {
            if let Some(p) = self.agents[id].parent {
                if p != *id && self.agents.contains_key(&p) {
                    kids.entry(p).or_default().push(*id);
                }
            }
        }
        let mut stack: Vec<AgentId> = ids
            .iter()
            .copied()
            .filter(|id| self.agents[id].record.is_archived())
            .collect();
        let mut visited = HashSet::new();
        while let Some(cur) = stack.pop() {
            if !visited.insert(cur) {
                continue;
            }
            let (at, batch) = {
                let r = &self.agents[&cur].record;
                (r.archived_at, r.archive_batch_id.clone())
            };
            for k in kids.get(&cur).cloned().unwrap_or_default() {
                let a = self.agents.get_mut(&k).expect("indexed id");
                if !a.record.is_archived() {
                    a.record.archived_at = at;
                    a.record.archive_batch_id = batch.clone();
                    report.problems.push(format!(
                        "agent {k} was left unarchived under archived parent {cur}; archived it with its parent"
                    ));
                    self.out.agents.insert(k);
                }
                stack.push(k);
            }
        }

        // Normalize statuses: nothing runs after a restart.
        let now = self.now();
        let mut armed_failures = Vec::new();
        for id in &ids {
            let a = self.agents.get_mut(id).expect("listed id");
            let r = &mut a.record;
            let archived = r.is_archived();
            match r.last_status {
                Status::Running if !archived => {
                    r.last_status = Status::Error;
                    r.last_error = Some(INTERRUPTED.to_string());
                    r.requires_attention = true;
                    r.attention_reason = Some(AttentionReason::Error);
                    r.attention_timestamp = Some(now);
                    r.updated_at = now;
                    report.normalized.push(*id);
                    self.out.agents.insert(*id);
                }
                Status::Running | Status::Initializing | Status::Idle => {
                    r.last_status = Status::Closed;
                    r.updated_at = now;
                    if archived {
                        r.requires_attention = false;
                        r.attention_reason = None;
                    }
                    report.normalized.push(*id);
                    self.out.agents.insert(*id);
                }
                Status::Error | Status::Closed => {}
            }
            if r.requires_attention && r.attention_reason == Some(AttentionReason::Permission) {
                // The request died with the process; what is left is an interrupted turn.
                r.attention_reason = Some(AttentionReason::Error);
                self.out.agents.insert(*id);
            }
            // An arm outlives only a turn that was pending or running when the app died: it
            // owes its notice now (archived agents' arms are dropped with them).
            if let Some(arm) = r.notify_arm.take() {
                if !archived {
                    armed_failures.push((*id, arm));
                }
                self.out.agents.insert(*id);
            }
        }

        // Indexes.
        for id in &ids {
            self.index_child(*id);
            if let Some(b) = self.agents[id].record.archive_batch_id.clone() {
                if self.agents[id].record.is_archived() {
                    self.batches.entry(b).or_default().push(*id);
                }
            }
        }
        for batch in self.batches.values_mut() {
            let agents = &self.agents;
            batch.sort_by_key(|id| (agents[id].record.archived_at, agents[id].record.created_at));
        }
        // Roots, memoized: each chain is walked once (deep chains stay linear).
        let mut known: HashMap<AgentId, AgentId> = HashMap::new();
        for id in &ids {
            let mut path = Vec::new();
            let mut cur = *id;
            let root = loop {
                if let Some(r) = known.get(&cur) {
                    break *r;
                }
                path.push(cur);
                // Cycles were cut above; the length bound only guards against a bug there.
                match self.live_parent(cur) {
                    Some(p) if path.len() <= self.agents.len() => cur = p,
                    _ => break cur,
                }
            };
            for p in path {
                known.insert(p, root);
                if let Some(a) = self.agents.get_mut(&p) {
                    a.root = root;
                }
            }
        }
        for id in &ids {
            self.refresh(*id);
        }

        for (parent, notices) in inboxes {
            match self.agents.get(&parent) {
                Some(p) if !p.record.is_archived() => {
                    let q = self.inbox.entry(parent).or_default();
                    for n in notices {
                        if !q.iter().any(|x| x.id == n.id) {
                            q.push_back(n);
                        }
                    }
                }
                _ => {
                    self.out.inboxes.insert(parent);
                }
            }
        }
        for (child, arm) in armed_failures {
            self.send_notice(child, arm, "failed", Some(INTERRUPTED.to_string()));
        }
        self.out.notices.extend(report.problems.iter().cloned());
        report
    }

    /// Wakes every unarchived agent that has notices waiting (after load, or when allowed again).
    pub fn deliver_pending(&mut self) {
        self.delivery_paused = false;
        let mut parents: Vec<AgentId> = self
            .inbox
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(id, _)| *id)
            .collect();
        parents.sort();
        for p in parents {
            self.try_deliver(p);
        }
    }

    // ------------------------------------------------------------------ workspaces

    /// Adds or replaces a workspace (and its project).
    pub fn upsert_workspace(&mut self, ws: WorkspaceRecord, project: Option<ProjectRecord>) {
        if let Some(p) = project {
            self.projects.insert(p.project_id.clone(), p);
            self.out.projects_registry = true;
        }
        self.out.workspaces.insert(ws.workspace_id.clone());
        self.workspaces.insert(ws.workspace_id.clone(), ws);
        self.out.workspaces_registry = true;
    }

    /// Archives a workspace: refused while live agents work in it unless `confirmed`; then every
    /// unarchived agent in it is archived (one batch, with cascades) and the record is hidden.
    pub fn archive_workspace(
        &mut self,
        ws: &WorkspaceId,
        confirmed: bool,
    ) -> Result<Vec<AgentId>, EngineError> {
        let rec = self
            .workspaces
            .get(ws)
            .ok_or_else(|| EngineError::UnknownWorkspace(ws.clone()))?;
        if rec.is_archived() {
            return Ok(Vec::new());
        }
        let members: Vec<AgentId> = self
            .list(&ListFilter {
                workspace: Some(ws.clone()),
                ..Default::default()
            })
            .into_iter()
            .map(|a| a.record.id)
            .collect();
        let live = members
            .iter()
            .filter(|id| self.agents[id].status().is_active())
            .count();
        if live > 0 && !confirmed {
            return Err(EngineError::WorkspaceBusy {
                workspace: ws.clone(),
                live,
            });
        }
        let batch = BatchId::new();
        let mut archived = Vec::new();
        for id in members {
            archived.extend(self.archive_into(id, &batch));
        }
        let now = self.now();
        if let Some(w) = self.workspaces.get_mut(ws) {
            w.archived_at = Some(now);
            w.updated_at = now;
        }
        self.out.workspaces.insert(ws.clone());
        self.out.workspaces_registry = true;
        Ok(archived)
    }

    // ------------------------------------------------------------------ create

    pub fn create(&mut self, new: NewAgent) -> Result<AgentId, EngineError> {
        if self.agents.contains_key(&new.id) {
            return Err(EngineError::Duplicate(new.id));
        }
        match self.workspaces.get(&new.workspace_id) {
            None => return Err(EngineError::UnknownWorkspace(new.workspace_id)),
            Some(w) if w.is_archived() => {
                return Err(EngineError::WorkspaceArchived(new.workspace_id))
            }
            _ => {}
        }
        for other in [new.parent, new.created_by, new.notify]
            .into_iter()
            .flatten()
        {
            match self.agents.get(&other) {
                None => return Err(EngineError::UnknownAgent(other)),
                Some(a) if a.record.is_archived() => return Err(EngineError::Archived(other)),
                _ => {}
            }
        }
        let now = self.now();
        let mut labels = new.labels;
        labels.remove(PARENT_LABEL);
        let mut record = AgentRecord {
            id: new.id,
            provider: new.provider,
            cwd: new.cwd,
            workspace_id: Some(new.workspace_id),
            title: new.title,
            labels,
            last_status: Status::Initializing,
            created_at: now,
            updated_at: now,
            last_activity_at: Some(now),
            last_user_message_at: None,
            config: new.config,
            persistence: None,
            requires_attention: false,
            attention_reason: None,
            attention_timestamp: None,
            last_error: None,
            archived_at: None,
            auto_archive: new.auto_archive,
            notify_on_finish: new.notify.is_some(),
            created_by: new.created_by,
            archive_batch_id: None,
            created_workspace_id: new.created_workspace_id,
            notify_arm: None,
            last_message: None,
            turn_count: 0,
            auto_archive_done: false,
            extra: Default::default(),
        };
        record.set_parent(new.parent);
        let id = record.id;
        let queued = new.initial_prompt.map(|p| Queued {
            input: TurnInput::Prompt(p),
            origin: match new.created_by {
                Some(c) => TurnOrigin::Agent(c),
                None => TurnOrigin::User,
            },
            arm: new.notify.map(NotifyArm::new),
        });
        if let Some(q) = &queued {
            record.notify_arm = q.arm.clone();
        }
        self.agents.insert(
            id,
            AgentState {
                record,
                session: SessionState::Starting,
                pending_permission: None,
                queued,
                turn_origin: None,
                cancel_requested: false,
                mcp_status: None,
                reads_prompts: new.reads_prompts,
                parent: new.parent,
                root: id,
                contribution: None,
            },
        );
        self.index_child(id);
        let root = self.root_from_parent(id);
        if let Some(a) = self.agents.get_mut(&id) {
            a.root = root;
        }
        self.touch(id);
        self.out.effects.push(Effect::StartSession {
            agent: id,
            resume: None,
        });
        Ok(id)
    }

    // ------------------------------------------------------------------ sessions

    /// The provider session is ready: initializing → idle, then whatever was waiting runs.
    pub fn session_ready(&mut self, id: AgentId) -> Result<(), EngineError> {
        let a = self.live_mut(id)?;
        a.session = SessionState::Live;
        match a.record.last_status {
            Status::Initializing => {
                a.record.last_status = Status::Idle;
                self.touch(id);
            }
            // A late or repeated ready changes nothing else.
            Status::Idle | Status::Running | Status::Error | Status::Closed => {}
        }
        self.after_idle_boundary(id);
        Ok(())
    }

    /// The session could not start: initializing → error, the waiting input is dropped.
    pub fn session_failed(&mut self, id: AgentId, message: &str) -> Result<(), EngineError> {
        let now = self.now();
        let a = self.live_mut(id)?;
        a.session = SessionState::None;
        let queued = a.queued.take();
        let arm = a.record.notify_arm.take();
        set_error(&mut a.record, message, now);
        self.touch(id);
        self.timeline(id, NewItem::new(ItemKind::Error, message.to_string()));
        if let (Some(arm), Some(_)) = (arm, queued) {
            self.send_notice(id, arm, "failed", Some(message.to_string()));
        }
        Ok(())
    }

    /// The provider's session id became known: stored for resume.
    pub fn session_id(&mut self, id: AgentId, session_id: String) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        let p = a
            .record
            .persistence
            .get_or_insert_with(Persistence::default);
        if p.session_id.as_deref() != Some(session_id.as_str()) {
            p.session_id = Some(session_id);
            self.touch(id);
        }
        Ok(())
    }

    pub fn mcp_status(&mut self, id: AgentId, status: String) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        a.mcp_status = Some(status);
        self.out.agents.insert(id);
        Ok(())
    }

    pub fn last_message(&mut self, id: AgentId, text: String) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        a.record.last_message = Some(text);
        // Not worth a write of its own: it is persisted with the turn's end.
        Ok(())
    }

    /// The session's process died. Mid-turn → error (turn failed); between turns → error
    /// (reported, never a silent idle); after we closed it → nothing.
    pub fn session_exited(&mut self, id: AgentId, message: &str) -> Result<(), EngineError> {
        let now = self.now();
        let a = self.get_mut(id)?;
        if a.record.is_archived() || a.record.last_status == Status::Closed {
            a.session = SessionState::None;
            return Ok(());
        }
        a.session = SessionState::None;
        a.pending_permission = None;
        a.cancel_requested = false;
        a.turn_origin = None;
        let was = a.record.last_status;
        let queued = a.queued.take();
        let arm = a.record.notify_arm.take();
        let msg = format!("the agent process exited: {message}");
        // A turn that just failed already carries its message (providers report the failed
        // turn, then the exit): keep it and only note that the process is gone.
        if was != Status::Error || queued.is_some() {
            set_error(&mut a.record, &msg, now);
        }
        self.touch(id);
        self.timeline(id, NewItem::new(ItemKind::Error, msg.clone()));
        if let Some(arm) = arm {
            self.send_notice(id, arm, "failed", Some(msg));
        }
        self.after_terminal_turn(id, was == Status::Running);
        Ok(())
    }

    // ------------------------------------------------------------------ turns

    /// Sends a prompt. Idle or error with a live session → a turn starts now; closed (or no
    /// process) → the session is resumed and the prompt runs once it is ready. Busy agents
    /// refuse: a prompt never interrupts a running turn.
    pub fn prompt(
        &mut self,
        id: AgentId,
        text: String,
        origin: TurnOrigin,
        notify: Option<AgentId>,
    ) -> Result<(), EngineError> {
        if let Some(n) = notify {
            match self.agents.get(&n) {
                None => return Err(EngineError::UnknownAgent(n)),
                Some(a) if a.record.is_archived() => return Err(EngineError::Archived(n)),
                _ => {}
            }
        }
        let now = self.now();
        let a = self.live_mut(id)?;
        let status = a.record.last_status;
        if status == Status::Running || a.queued.is_some() || status == Status::Initializing {
            return Err(EngineError::Busy {
                id,
                status: status.as_str(),
            });
        }
        if matches!(origin, TurnOrigin::User | TurnOrigin::Agent(_)) {
            a.record.last_user_message_at = Some(now);
        }
        clear_attention_unless_permission(&mut a.record);
        let q = Queued {
            input: TurnInput::Prompt(text),
            origin,
            arm: notify.map(NotifyArm::new),
        };
        self.begin(id, q);
        Ok(())
    }

    /// Starts `q` now if the session is live and idle, else queues it and (re)starts the session.
    fn begin(&mut self, id: AgentId, q: Queued) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.session == SessionState::Live
            && matches!(a.record.last_status, Status::Idle | Status::Error)
        {
            self.start_turn(id, q);
            return;
        }
        a.record.notify_arm = q.arm.clone();
        a.queued = Some(q);
        if a.session == SessionState::None {
            a.session = SessionState::Starting;
            a.record.last_status = Status::Initializing;
            a.record.last_error = None;
            let resume = a
                .record
                .persistence
                .as_ref()
                .and_then(|p| p.session_id.clone());
            self.out
                .effects
                .push(Effect::StartSession { agent: id, resume });
        }
        self.touch(id);
    }

    fn start_turn(&mut self, id: AgentId, q: Queued) {
        let now = self.now();
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        a.record.turn_count += 1;
        let turn = a.record.turn_count;
        a.record.last_status = Status::Running;
        a.record.last_error = None;
        a.record.last_message = None;
        a.record.last_activity_at = Some(now);
        a.cancel_requested = false;
        a.record.notify_arm = q.arm.clone().map(|arm| NotifyArm { turn, ..arm });
        a.turn_origin = Some(q.origin.clone());
        let item = match &q.input {
            TurnInput::Prompt(p) => NewItem::new(ItemKind::User, p.clone()),
            TurnInput::Notice(n) => NewItem::new(ItemKind::System, n.clone()),
        };
        self.touch(id);
        self.timeline(id, item);
        self.out.effects.push(Effect::SendTurn {
            agent: id,
            input: q.input,
        });
    }

    /// A turn ended as the provider reports it.
    pub fn turn_ended(&mut self, id: AgentId, outcome: TurnOutcome) -> Result<(), EngineError> {
        let now = self.now();
        let a = self.get_mut(id)?;
        if a.record.last_status != Status::Running {
            return Err(EngineError::InvalidTransition {
                id,
                from: a.record.last_status.as_str(),
                to: match outcome {
                    TurnOutcome::Failed { .. } => "error",
                    _ => "idle",
                },
            });
        }
        a.pending_permission = None;
        a.cancel_requested = false;
        a.turn_origin = None;
        a.record.last_activity_at = Some(now);
        a.record.updated_at = now;
        let (outcome_name, error) = match &outcome {
            TurnOutcome::Completed => ("completed", None),
            TurnOutcome::Canceled => ("canceled", None),
            TurnOutcome::Failed { message } => ("failed", Some(message.clone())),
        };
        match &outcome {
            TurnOutcome::Failed { message } => {
                set_error(&mut a.record, message, now);
            }
            TurnOutcome::Completed | TurnOutcome::Canceled => {
                a.record.last_status = Status::Idle;
                a.record.requires_attention = true;
                a.record.attention_reason = Some(AttentionReason::Finished);
                a.record.attention_timestamp = Some(now);
            }
        }
        let arm = a.record.notify_arm.take();
        self.touch(id);
        if let TurnOutcome::Failed { message } = &outcome {
            self.timeline(id, NewItem::new(ItemKind::Error, message.clone()));
        } else if outcome == TurnOutcome::Canceled {
            self.timeline(id, NewItem::new(ItemKind::System, "Turn canceled"));
        }
        if let Some(arm) = arm {
            self.send_notice(id, arm, outcome_name, error);
        }
        self.after_terminal_turn(id, true);
        Ok(())
    }

    /// The user (or an authorized agent) asks to stop the current turn. The status changes only
    /// when the provider acknowledges (`turn_ended(Canceled)`) or [`Engine::cancel_timed_out`].
    /// Returns whether a turn was running.
    pub fn cancel(&mut self, id: AgentId) -> Result<bool, EngineError> {
        let a = self.live_mut(id)?;
        match a.record.last_status {
            Status::Running => {
                a.cancel_requested = true;
                let turn = a.record.turn_count;
                self.out.effects.push(Effect::Interrupt { agent: id, turn });
                self.out.agents.insert(id);
                Ok(true)
            }
            Status::Initializing if a.queued.is_some() => {
                // Nothing runs yet: the waiting input is dropped, the session still comes up.
                a.queued = None;
                let arm = a.record.notify_arm.take();
                self.touch(id);
                if let Some(arm) = arm {
                    self.send_notice(id, arm, "canceled", None);
                }
                Ok(false)
            }
            _ => Ok(false),
        }
    }

    /// The provider did not acknowledge an interrupt in time: the runtime stopped the process;
    /// the turn counts as canceled.
    pub fn cancel_timed_out(&mut self, id: AgentId, turn: u64) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        if a.record.last_status != Status::Running || a.record.turn_count != turn {
            return Ok(()); // it ended meanwhile
        }
        a.session = SessionState::None;
        self.out.effects.push(Effect::CloseSession { agent: id });
        self.turn_ended(id, TurnOutcome::Canceled)
    }

    /// A pending permission: the agent stays running and needs the user (`permission`). An armed
    /// turn reports it to its parent now (one notice per armed turn).
    pub fn permission_requested(
        &mut self,
        id: AgentId,
        req: PermissionRequest,
    ) -> Result<(), EngineError> {
        let now = self.now();
        let a = self.get_mut(id)?;
        if a.record.last_status != Status::Running {
            return Err(EngineError::InvalidTransition {
                id,
                from: a.record.last_status.as_str(),
                to: "permission",
            });
        }
        let text = format!("Permission requested: {}", req.tool_name);
        let mut item = NewItem::new(ItemKind::Permission, text);
        item.call_id = Some(req.request_id.clone());
        item.tool_name = Some(req.tool_name.clone());
        item.input = Some(req.input.clone());
        a.pending_permission = Some(req.clone());
        a.record.requires_attention = true;
        a.record.attention_reason = Some(AttentionReason::Permission);
        a.record.attention_timestamp = Some(now);
        let arm = a.record.notify_arm.take();
        self.touch(id);
        self.timeline(id, item);
        if let Some(arm) = arm {
            self.send_notice(
                id,
                arm,
                "needs_permission",
                Some(format!("waiting for permission to use {}", req.tool_name)),
            );
        }
        Ok(())
    }

    /// Answers the pending permission request.
    pub fn answer_permission(
        &mut self,
        id: AgentId,
        request_id: &str,
        allow: bool,
    ) -> Result<(), EngineError> {
        let a = self.live_mut(id)?;
        match &a.pending_permission {
            Some(p) if p.request_id == request_id => {}
            _ => return Err(EngineError::NoSuchPermission(id, request_id.to_string())),
        }
        let tool = a
            .pending_permission
            .take()
            .map(|p| p.tool_name)
            .unwrap_or_default();
        clear_attention(&mut a.record);
        self.touch(id);
        let mut item = NewItem::new(
            ItemKind::Permission,
            format!("{} {tool}", if allow { "Allowed" } else { "Denied" }),
        );
        item.call_id = Some(request_id.to_string());
        self.timeline(id, item);
        self.out.effects.push(Effect::AnswerPermission {
            agent: id,
            request_id: request_id.to_string(),
            allow,
        });
        Ok(())
    }

    /// The provider withdrew a permission request (e.g. the turn was interrupted).
    pub fn permission_resolved(
        &mut self,
        id: AgentId,
        request_id: &str,
    ) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        if a.pending_permission
            .as_ref()
            .is_some_and(|p| p.request_id == request_id)
        {
            a.pending_permission = None;
            if a.record.attention_reason == Some(AttentionReason::Permission) {
                clear_attention(&mut a.record);
            }
            self.touch(id);
        }
        Ok(())
    }

    /// The user opened the agent: its attention is seen (a pending permission stays).
    pub fn mark_seen(&mut self, id: AgentId) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        if a.record.requires_attention
            && a.record.attention_reason != Some(AttentionReason::Permission)
        {
            clear_attention(&mut a.record);
            self.touch(id);
        }
        Ok(())
    }

    /// Stops the agent's session (explicit stop or app quit): any → closed. A running armed turn
    /// counts as canceled and notifies its parent (delivered later, never lost).
    pub fn close(&mut self, id: AgentId) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        if a.record.is_archived() {
            return Ok(());
        }
        let was = a.record.last_status;
        let had_session = a.session != SessionState::None;
        a.session = SessionState::None;
        a.pending_permission = None;
        a.cancel_requested = false;
        a.turn_origin = None;
        let queued = a.queued.take();
        if a.record.attention_reason == Some(AttentionReason::Permission) {
            clear_attention(&mut a.record);
        }
        // An error stays visible (and in its bucket) after its process is closed.
        if was != Status::Error {
            a.record.last_status = Status::Closed;
        }
        let arm = if was == Status::Running || queued.is_some() {
            a.record.notify_arm.take()
        } else {
            None
        };
        if was != Status::Closed {
            self.touch(id);
        }
        if had_session {
            self.out.effects.push(Effect::CloseSession { agent: id });
        }
        if let Some(arm) = arm {
            self.send_notice(id, arm, "canceled", Some("the agent was stopped".into()));
        }
        Ok(())
    }

    /// App quit: every session closes; notices queue but wake nobody.
    pub fn shutdown(&mut self) {
        self.shutting_down = true;
        let mut ids: Vec<AgentId> = self
            .agents
            .values()
            .filter(|a| !a.record.is_archived())
            .filter(|a| {
                a.session != SessionState::None
                    || matches!(a.status(), Status::Idle)
                    || a.status().is_active()
            })
            .map(|a| a.record.id)
            .collect();
        ids.sort();
        for id in ids {
            let _ = self.close(id);
        }
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    // ------------------------------------------------------------------ relationships

    /// Removes the parent label only: nothing stops, moves or restarts.
    pub fn detach(&mut self, id: AgentId) -> Result<AgentId, EngineError> {
        let a = self.live_mut(id)?;
        let Some(parent) = a.parent else {
            return Err(EngineError::NotASubagent(id));
        };
        self.unindex_child(id);
        if let Some(a) = self.agents.get_mut(&id) {
            a.record.labels.remove(PARENT_LABEL);
            a.parent = None;
        }
        self.touch(id);
        self.out.tracks.insert(parent);
        self.reroot_subtree(id);
        Ok(parent)
    }

    // ------------------------------------------------------------------ archive

    /// Archives `id` and, recursively, every unarchived agent whose parent label names an
    /// archived one (SPEC 5), as one batch. Idempotent: an archived agent yields an empty list.
    /// Returns the agents archived, the gesture's target first.
    pub fn archive(&mut self, id: AgentId) -> Result<Vec<AgentId>, EngineError> {
        let a = self.get_mut(id)?;
        if a.record.is_archived() {
            return Ok(Vec::new());
        }
        let batch = BatchId::new();
        Ok(self.archive_into(id, &batch))
    }

    /// Archives several agents as one batch (the track's "Archive finished").
    pub fn archive_many(&mut self, ids: &[AgentId]) -> Result<Vec<AgentId>, EngineError> {
        for id in ids {
            self.get_mut(*id)?;
        }
        let batch = BatchId::new();
        let mut out = Vec::new();
        for id in ids {
            out.extend(self.archive_into(*id, &batch));
        }
        Ok(out)
    }

    /// The children of `parent` that are not running (the "Archive finished" set).
    pub fn finished_children(&self, parent: AgentId) -> Vec<AgentId> {
        self.track(parent)
            .into_iter()
            .filter(|c| !self.agents[c].status().is_active())
            .collect()
    }

    fn archive_into(&mut self, id: AgentId, batch: &BatchId) -> Vec<AgentId> {
        let now = self.now();
        let mut archived = Vec::new();
        let mut stack = vec![id];
        let mut seen = HashSet::new();
        while let Some(cur) = stack.pop() {
            if !seen.insert(cur) {
                continue;
            }
            let Some(a) = self.agents.get_mut(&cur) else {
                continue;
            };
            if a.record.is_archived() {
                continue;
            }
            // (1) session state is already in the record (session ids are stored as they come).
            // (2) archivedAt, status away from running/initializing, attention cleared.
            let was = a.record.last_status;
            a.record.archived_at = Some(now);
            a.record.updated_at = now;
            a.record.archive_batch_id = Some(batch.clone());
            // The runtime is closed: any → closed.
            a.record.last_status = Status::Closed;
            clear_attention(&mut a.record);
            a.pending_permission = None;
            a.cancel_requested = false;
            a.turn_origin = None;
            let queued = a.queued.take();
            let had_session = a.session != SessionState::None;
            a.session = SessionState::None;
            let arm = a
                .record
                .notify_arm
                .take()
                .filter(|_| was == Status::Running || queued.is_some());
            archived.push(cur);
            self.batches.entry(batch.clone()).or_default().push(cur);
            // (3) every window hears of it through the outcome.
            self.touch(cur);
            if let Some(p) = self.agents[&cur].parent {
                self.out.tracks.insert(p);
            }
            self.unindex_child(cur);
            self.refresh(cur);
            if self.inbox.remove(&cur).is_some() {
                self.out.inboxes.insert(cur);
            }
            // (4) close the runtime (the whole process tree).
            if had_session {
                self.out.effects.push(Effect::CloseSession { agent: cur });
            }
            self.out.effects.push(Effect::RevokeAccess { agent: cur });
            // A turn armed for someone outside this archive tells them it was archived.
            if let Some(arm) = arm {
                self.send_notice(cur, arm, "archived", None);
            }
            // (5) cascade.
            if let Some(kids) = self.children.get(&cur) {
                stack.extend(kids.iter().rev().map(|(_, k)| *k));
            }
        }
        archived
    }

    /// The agents a restore of `id` brings back (its archive batch).
    pub fn restore_batch(&self, id: AgentId) -> Result<Vec<AgentId>, EngineError> {
        let a = self.agents.get(&id).ok_or(EngineError::UnknownAgent(id))?;
        if !a.record.is_archived() {
            return Err(EngineError::NotArchived(id));
        }
        Ok(match &a.record.archive_batch_id {
            Some(b) => self.batches.get(b).cloned().unwrap_or_else(|| vec![id]),
            None => vec![id],
        })
    }

    /// The archived workspaces a restore of `id` needs back first.
    pub fn restore_workspaces(&self, id: AgentId) -> Result<Vec<WorkspaceRecord>, EngineError> {
        let mut out: Vec<WorkspaceRecord> = Vec::new();
        for m in self.restore_batch(id)? {
            if let Some(w) = self.agents[&m]
                .record
                .workspace_id
                .as_ref()
                .and_then(|w| self.workspaces.get(w))
            {
                if w.is_archived() && !out.iter().any(|x| x.workspace_id == w.workspace_id) {
                    out.push(w.clone());
                }
            }
        }
        Ok(out)
    }

    /// Brings an archived workspace back (its directory exists again).
    pub fn unarchive_workspace(&mut self, ws: &WorkspaceId) -> Result<(), EngineError> {
        let now = self.now();
        let w = self
            .workspaces
            .get_mut(ws)
            .ok_or_else(|| EngineError::UnknownWorkspace(ws.clone()))?;
        if w.archived_at.take().is_some() {
            w.updated_at = now;
            self.out.workspaces.insert(ws.clone());
            self.out.workspaces_registry = true;
        }
        Ok(())
    }

    /// Restores the batch `id` was archived in: the agents come back closed, links intact.
    /// When a restored agent's parent (outside the batch) is still archived, the restore is
    /// refused, unless `as_root` asks to restore those agents as root agents (detached).
    pub fn restore(&mut self, id: AgentId, as_root: bool) -> Result<Vec<AgentId>, EngineError> {
        let members = self.restore_batch(id)?;
        let in_batch: HashSet<AgentId> = members.iter().copied().collect();
        let mut detach = Vec::new();
        for m in &members {
            let st = &self.agents[m];
            let r = &st.record;
            if let Some(ws) = &r.workspace_id {
                if self.workspaces.get(ws).is_some_and(|w| w.is_archived()) {
                    return Err(EngineError::RestoreWorkspaceArchived {
                        agent: *m,
                        workspace: ws.clone(),
                    });
                }
            }
            if let Some(p) = st.parent {
                if !in_batch.contains(&p)
                    && self
                        .agents
                        .get(&p)
                        .is_some_and(|pa| pa.record.is_archived())
                {
                    if as_root {
                        detach.push(*m);
                    } else {
                        return Err(EngineError::RestoreParentArchived {
                            child: *m,
                            parent: p,
                        });
                    }
                }
            }
        }
        let now = self.now();
        if let Some(b) = self.agents[&id].record.archive_batch_id.clone() {
            self.batches.remove(&b);
        }
        for m in &members {
            let a = self.agents.get_mut(m).expect("batch member");
            a.record.archived_at = None;
            a.record.archive_batch_id = None;
            a.record.updated_at = now;
            a.record.last_status = Status::Closed;
            if detach.contains(m) {
                a.record.labels.remove(PARENT_LABEL);
                a.parent = None;
            }
            self.touch(*m);
        }
        for m in &members {
            self.index_child(*m);
            if let Some(p) = self.agents[m].parent {
                self.out.tracks.insert(p);
            }
        }
        // Members are in archive order (parents before their children), so each one's parent
        // already has its root.
        for m in &members {
            let root = self.root_from_parent(*m);
            if let Some(a) = self.agents.get_mut(m) {
                a.root = root;
            }
            self.refresh(*m);
        }
        Ok(members)
    }

    // ------------------------------------------------------------------ notices

    /// Enqueues the notice an armed turn owes its target, then tries to deliver it.
    fn send_notice(
        &mut self,
        child: AgentId,
        arm: NotifyArm,
        outcome: &str,
        error: Option<String>,
    ) {
        let now = self.now();
        let target = arm.target_agent_id;
        let Some(c) = self.agents.get(&child) else {
            return;
        };
        let notice = Notice::new(
            &arm.id,
            child,
            &c.record.title,
            outcome,
            error,
            c.record.last_message.as_deref(),
            now,
        );
        let Some(t) = self.agents.get(&target) else {
            self.out.notices.push(format!(
                "finish notice of {child} dropped: its target {target} no longer exists"
            ));
            return;
        };
        if t.record.is_archived() {
            return; // dropped: notices to archived agents are dropped by design
        }
        if !t.reads_prompts {
            // A shell agent cannot read: the notice is only recorded in its timeline.
            self.timeline(target, NewItem::new(ItemKind::System, notice.summary()));
            return;
        }
        let q = self.inbox.entry(target).or_default();
        if q.iter().any(|n| n.id == notice.id) {
            return;
        }
        q.push_back(notice);
        self.out.inboxes.insert(target);
        self.try_deliver(target);
    }

    /// Delivers the next notice if `id` is at an idle boundary (idle or error, nothing waiting);
    /// resumes a closed agent first. Never interrupts a running turn.
    fn try_deliver(&mut self, id: AgentId) {
        if self.shutting_down || self.delivery_paused {
            return;
        }
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.record.is_archived() || a.queued.is_some() {
            return;
        }
        if !matches!(
            a.record.last_status,
            Status::Idle | Status::Error | Status::Closed
        ) {
            return;
        }
        if self.inbox.get(&id).is_none_or(|q| q.is_empty()) {
            return;
        }
        match a.session {
            SessionState::Live => {}
            SessionState::Starting => return, // delivered once it is ready
            SessionState::None => {
                // Resume it first; the notice stays in the durable inbox until its turn starts,
                // so a crash meanwhile loses nothing.
                a.session = SessionState::Starting;
                a.record.last_status = Status::Initializing;
                let resume = a
                    .record
                    .persistence
                    .as_ref()
                    .and_then(|p| p.session_id.clone());
                self.out
                    .effects
                    .push(Effect::StartSession { agent: id, resume });
                self.touch(id);
                return;
            }
        }
        let Some(notice) = self.inbox.get_mut(&id).and_then(|q| q.pop_front()) else {
            return;
        };
        if self.inbox.get(&id).is_some_and(|q| q.is_empty()) {
            self.inbox.remove(&id);
        }
        self.out.inboxes.insert(id);
        let q = Queued {
            input: TurnInput::Notice(notice.wrapped()),
            origin: TurnOrigin::Notice(notice.id.clone()),
            arm: None,
        };
        self.start_turn(id, q);
    }

    /// What happens at an idle boundary: waiting input runs first, then notices.
    fn after_idle_boundary(&mut self, id: AgentId) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.session == SessionState::Live
            && matches!(a.record.last_status, Status::Idle | Status::Error)
        {
            if let Some(q) = a.queued.take() {
                self.start_turn(id, q);
                return;
            }
        }
        self.try_deliver(id);
    }

    /// After a turn's terminal event: autoArchive (once), else the idle boundary.
    fn after_terminal_turn(&mut self, id: AgentId, was_turn: bool) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if was_turn && a.record.auto_archive && !a.record.auto_archive_done {
            a.record.auto_archive_done = true;
            let ws = a.record.created_workspace_id.clone();
            let _ = self.archive(id);
            if let Some(ws) = ws {
                self.out.effects.push(Effect::ArchiveWorktree {
                    workspace: ws,
                    requested_by: id,
                });
            }
            return;
        }
        self.after_idle_boundary(id);
    }

    // ------------------------------------------------------------------ indexes

    fn get_mut(&mut self, id: AgentId) -> Result<&mut AgentState, EngineError> {
        self.agents
            .get_mut(&id)
            .ok_or(EngineError::UnknownAgent(id))
    }

    /// An unarchived agent.
    fn live_mut(&mut self, id: AgentId) -> Result<&mut AgentState, EngineError> {
        let a = self
            .agents
            .get_mut(&id)
            .ok_or(EngineError::UnknownAgent(id))?;
        if a.record.is_archived() {
            return Err(EngineError::Archived(id));
        }
        Ok(a)
    }

    /// Marks an agent changed: updatedAt, persist, re-render, its track, its bucket.
    fn touch(&mut self, id: AgentId) {
        let now = self.now();
        if let Some(a) = self.agents.get_mut(&id) {
            a.record.updated_at = now;
        }
        self.out.agents.insert(id);
        if let Some(p) = self.live_parent(id) {
            self.out.tracks.insert(p);
        }
        self.refresh(id);
    }

    fn timeline(&mut self, id: AgentId, item: NewItem) {
        self.out.effects.push(Effect::Timeline {
            agent: id,
            item: Box::new(item),
        });
    }

    fn index_child(&mut self, id: AgentId) {
        let a = &self.agents[&id];
        if a.record.is_archived() {
            return;
        }
        if let Some(p) = a.parent {
            if p != id && self.agents.contains_key(&p) {
                let key = (a.record.created_at, id);
                self.children.entry(p).or_default().insert(key);
                self.out.tracks.insert(p);
            }
        }
    }

    fn unindex_child(&mut self, id: AgentId) {
        let a = &self.agents[&id];
        if let Some(p) = a.parent {
            let key = (a.record.created_at, id);
            if let Some(set) = self.children.get_mut(&p) {
                if set.remove(&key) {
                    self.out.tracks.insert(p);
                }
                if set.is_empty() {
                    self.children.remove(&p);
                }
            }
        }
    }

    /// The top of the live parent chain, walking labels (cycle-safe).
    fn compute_root(&self, id: AgentId) -> AgentId {
        let mut cur = id;
        let mut seen = HashSet::new();
        while let Some(p) = self.live_parent(cur) {
            if !seen.insert(p) {
                break;
            }
            cur = p;
        }
        cur
    }

    /// The root through the parent's cached root (the parent's must be current).
    fn root_from_parent(&self, id: AgentId) -> AgentId {
        match self.live_parent(id) {
            Some(p) => self.agents.get(&p).map(|pa| pa.root).unwrap_or(p),
            None => id,
        }
    }

    /// After a detach: the detached agent is a root; its subtree's root changes with it.
    fn reroot_subtree(&mut self, id: AgentId) {
        let root = self.compute_root(id);
        let mut stack = vec![id];
        let mut seen = HashSet::new();
        while let Some(cur) = stack.pop() {
            if !seen.insert(cur) {
                continue;
            }
            if let Some(a) = self.agents.get_mut(&cur) {
                a.root = root;
            }
            self.refresh(cur);
            if let Some(kids) = self.children.get(&cur) {
                stack.extend(kids.iter().map(|(_, k)| *k));
            }
        }
    }

    /// What an agent contributes to workspace activity (SPEC 6), from its cached root.
    fn compute_contribution(&self, id: AgentId) -> Option<(WorkspaceId, Bucket)> {
        let a = self.agents.get(&id)?;
        if a.record.is_archived() {
            return None;
        }
        if a.root == id || self.live_parent(id).is_none() {
            return a.record.workspace_id.clone().map(|w| (w, bucket_of(a)));
        }
        if a.status().is_active() {
            let root = self.agents.get(&a.root)?;
            return root
                .record
                .workspace_id
                .clone()
                .map(|w| (w, Bucket::Running));
        }
        None
    }

    /// The same, walking the chain instead of trusting the cached root.
    fn compute_contribution_slow(&self, id: AgentId) -> Option<(WorkspaceId, Bucket)> {
        let a = self.agents.get(&id)?;
        if a.record.is_archived() {
            return None;
        }
        if self.live_parent(id).is_none() {
            return a.record.workspace_id.clone().map(|w| (w, bucket_of(a)));
        }
        if a.status().is_active() {
            let root = self.agents.get(&self.compute_root(id))?;
            return root
                .record
                .workspace_id
                .clone()
                .map(|w| (w, Bucket::Running));
        }
        None
    }

    /// Moves the agent's contribution from its old bucket to its new one, touching only the
    /// workspaces involved.
    fn refresh(&mut self, id: AgentId) {
        let new = self.compute_contribution(id);
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.contribution == new {
            return;
        }
        let old = std::mem::replace(&mut a.contribution, new.clone());
        if let Some((ws, b)) = old {
            let c = self.activity.entry(ws.clone()).or_default();
            c[b.index()] = c[b.index()].saturating_sub(1);
            self.out.workspaces.insert(ws);
        }
        if let Some((ws, b)) = new {
            self.activity.entry(ws.clone()).or_default()[b.index()] += 1;
            self.out.workspaces.insert(ws);
        }
    }
}

/// The bucket of an agent that contributes its own state (a root agent).
pub fn bucket_of(a: &AgentState) -> Bucket {
    let r = &a.record;
    if r.requires_attention && r.attention_reason == Some(AttentionReason::Permission) {
        Bucket::NeedsInput
    } else if r.last_status == Status::Error {
        Bucket::Failed
    } else if r.last_status.is_active() {
        Bucket::Running
    } else if r.requires_attention {
        Bucket::Attention
    } else {
        Bucket::Done
    }
}

/// A track member that needs the user: a pending permission or an error.
pub fn needs_you(a: &AgentState) -> bool {
    a.pending_permission.is_some()
        || (a.record.requires_attention
            && a.record.attention_reason == Some(AttentionReason::Permission))
        || a.status() == Status::Error
}

fn set_error(r: &mut AgentRecord, message: &str, now: Timestamp) {
    r.last_status = Status::Error;
    r.last_error = Some(message.to_string());
    r.requires_attention = true;
    r.attention_reason = Some(AttentionReason::Error);
    r.attention_timestamp = Some(now);
}

fn clear_attention(r: &mut AgentRecord) {
    r.requires_attention = false;
    r.attention_reason = None;
    r.attention_timestamp = None;
}

fn clear_attention_unless_permission(r: &mut AgentRecord) {
    if r.attention_reason != Some(AttentionReason::Permission) {
        clear_attention(r);
    }
}

#[cfg(test)]
mod tests;
