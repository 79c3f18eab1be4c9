//! The lifecycle engine: the fleet's state and every rule of SPEC 1–7 that is not I/O.
//!
//! Pure and deterministic: an operation takes the current state and changes it, recording what
//! changed ([`Outcome`]: agents, inboxes, workspaces and tracks to persist and re-render) and the
//! [`Effect`]s the runtime must carry out (start or close a session, send a turn, interrupt,
//! remove a worktree). Nothing here touches files, processes or clocks other than through
//! [`Engine::set_clock`], so every rule is testable without I/O. This file holds the state ([`Engine`], [`AgentState`]), every type the engine's operations
//! take or return ([`Outcome`], [`Effect`], [`EngineError`], [`NewAgent`], …) and the read-only
//! queries. The operations live in one file per SPEC section, each an `impl Engine` block:
//! - `load.rs`: SPEC 1, building the fleet from disk and repairing what a crash left;
//! - `create.rs`: SPEC 3, creating agents, registering workspaces, detaching and its undo;
//! - `session.rs`: SPEC 2, provider sessions coming up, dying, closing, and app shutdown;
//! - `turn.rs`: SPEC 2, prompts, turns, cancel and attention;
//! - `permission.rs`: SPEC 2 and 9, permission requests and their answers;
//! - `hold.rs`: SPEC 14, turns held until the user allows them;
//! - `archive.rs`: SPEC 5, archive with cascade, autoArchive, restore, workspace archive;
//! - `notice.rs`: SPEC 4, finish notices queued and delivered at idle boundaries;
//! - `activity.rs`: SPEC 6 and 7, the indexes (children, roots, bucket contributions) and the
//!   parent chain;
//! - `usage.rs`: turn usage (what SPEC 18's budgets count), its roll-ups per tree and workspace.
//! - `budget.rs`: budgets (SPEC 18): what a budget tree used, and turns held at its cap.
//!
//! Indexes are kept incrementally. [`Engine::recompute_activity`] computes the buckets from
//! scratch for tests to compare against. The status rule itself is [`crate::model::status`].

mod activity;
mod archive;
mod budget;
pub use archive::RestoreScope;
mod create;
mod hold;
mod load;
mod notice;
mod outcome;
mod pending;
mod permission;
mod plan;
mod session;
mod trust;
mod turn;
pub mod usage;

use std::collections::{BTreeMap, VecDeque};

use crate::model::{
    AgentConfig, AgentId, AgentRecord, AttentionReason, BatchId, Bucket, NewItem, Notice,
    NotifyArm, PermissionRequest, ProjectId, ProjectRecord, ProviderTrust, Status, Timestamp,
    TurnInput, TurnOrigin, WaitingPrompt, WorkspaceId, WorkspaceRecord, PARENT_LABEL,
};

pub use hold::DENIED;
pub use outcome::{NoticeOrder, Outcome};
use rustc_hash::{FxHashMap, FxHashSet};

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
    #[error("cannot put {id} back under {parent}: {why}")]
    NotReattachable {
        id: AgentId,
        parent: AgentId,
        why: String,
    },
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
    /// A child's budget larger than what its caller's tree has left (SPEC 18).
    #[error("{field}: {message}")]
    BudgetTooLarge {
        field: &'static str,
        message: String,
    },
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
/// What only a live agent has (a permission request, queued input) is boxed: of 100,000 agents
/// a few are live, and each state is held apart, sized to itself (docs/scale.md).
#[derive(Clone, Debug)]
pub struct AgentState {
    /// Boxed: it comes boxed from the load's parse and is never copied on its way in, and the
    /// engine's map of agents stays small.
    pub record: Box<AgentRecord>,
    pub session: SessionState,
    pub pending_permission: Option<Box<PermissionRequest>>,
    pub queued: Option<Box<Queued>>,
    pub cancel_requested: bool,
    /// Whether its provider reads prompts (and so takes finish notices as turn input).
    pub reads_prompts: bool,
    /// The parent label, parsed once (kept in step with `record.labels`).
    pub parent: Option<AgentId>,
    /// What the runtime said about its session or its wait for a slot; absent for nearly all.
    notes: Option<Box<session::RuntimeNotes>>,
    /// What it changed on disk, as last counted by the runtime (never stored).
    pub changes: Option<Box<crate::model::ChangeCounts>>,
    /// The top of its unarchived parent chain (itself for a root agent).
    root: AgentId,
    /// The bucket it contributes, and where (SPEC 6).
    contribution: Option<(WorkspaceId, Bucket)>,
    /// A subagent's own bucket, counted in the roll-up of `root` (`Engine::subtrees`): whoever
    /// changes `root` takes it out first ([`Engine::uncount_in_subtree`]).
    in_subtree: Option<Bucket>,
    /// Whether the tracks above it last heard it running or starting: their "Archive
    /// finished" counts depend on it (SPEC 5), not only its parent's.
    counted_active: bool,
}

impl AgentState {
    /// An agent as it enters the engine (created or loaded): its own root until indexed.
    fn new(
        record: Box<AgentRecord>,
        session: SessionState,
        queued: Option<Queued>,
        reads_prompts: bool,
    ) -> AgentState {
        let mut record = record;
        if let Some(q) = &queued {
            record.waiting_prompt = WaitingPrompt::of(&q.input, &q.origin).map(Box::new);
        }
        AgentState {
            parent: record.parent_agent_id(),
            root: record.id,
            pending_permission: held_request(&record),
            record,
            session,
            queued: queued.map(Box::new),
            cancel_requested: false,
            reads_prompts,
            notes: None,
            changes: None,
            contribution: None,
            in_subtree: None,
            counted_active: false,
        }
    }

    pub fn status(&self) -> Status {
        self.record.last_status
    }
    /// Its own status bucket ([`crate::model::status`]).
    pub fn bucket(&self) -> Bucket {
        match crate::model::bucket(&self.record, self.pending_permission.is_some()) {
            Bucket::Running if self.is_queued() => Bucket::Queued,
            b => b,
        }
    }
    /// Its start waits for a live slot (SPEC 14): created, not running.
    pub fn is_queued(&self) -> bool {
        self.waiting_for_slot().is_some() && self.record.last_status == Status::Initializing
    }
    /// Whether it needs the user ([`crate::model::status`]).
    pub fn needs_you(&self) -> bool {
        crate::model::needs_you(&self.record, self.pending_permission.is_some())
    }
    pub fn root(&self) -> AgentId {
        self.root
    }
    pub fn contribution(&self) -> Option<&(WorkspaceId, Bucket)> {
        self.contribution.as_ref()
    }

    /// Removes the parent link (label and parsed copy alike).
    fn clear_parent(&mut self) {
        self.record.labels.remove(PARENT_LABEL);
        self.parent = None;
    }

    /// Forgets everything that lived with its session (the process is gone or going): returns
    /// the input that was waiting for it.
    fn end_session(&mut self) -> Option<Queued> {
        self.session = SessionState::None;
        // A held turn outlives the process: it never ran in it.
        self.pending_permission = held_request(&self.record);
        self.cancel_requested = false;
        self.take_waiting()
    }

    /// Queues `q` for the session; a prompt is kept in the record too (SPEC 15), so it
    /// outlives a quit or a crash.
    fn wait(&mut self, q: Queued) {
        self.record.waiting_prompt = WaitingPrompt::of(&q.input, &q.origin).map(Box::new);
        self.queued = Some(Box::new(q));
    }

    /// Takes the input waiting for the session (it runs now, or it ends unrun).
    fn take_waiting(&mut self) -> Option<Queued> {
        self.record.waiting_prompt = None;
        self.queued.take().map(|q| *q)
    }
}

/// The permission request of the record's held turn (SPEC 14), if it has one.
fn held_request(r: &AgentRecord) -> Option<Box<PermissionRequest>> {
    r.held_turn
        .as_ref()
        .map(|h| Box::new(h.request(&r.provider, &r.config, &r.cwd)))
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
    /// Runs outside the sandbox (SPEC 16): the user's choice.
    pub unconfined: bool,
}

impl NewAgent {
    /// A root agent with a fresh id, no title, labels or first prompt, that notifies nobody.
    pub fn new(
        provider: impl Into<String>,
        reads_prompts: bool,
        cwd: impl Into<String>,
        workspace_id: WorkspaceId,
    ) -> NewAgent {
        NewAgent {
            id: AgentId::new(),
            provider: provider.into(),
            reads_prompts,
            cwd: cwd.into(),
            workspace_id,
            title: String::new(),
            config: AgentConfig::default(),
            labels: BTreeMap::new(),
            parent: None,
            created_by: None,
            initial_prompt: None,
            notify: None,
            auto_archive: false,
            created_workspace_id: None,
            unconfined: false,
        }
    }
}

/// Filter for [`Engine::list`].
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    pub include_archived: bool,
    pub parent: Option<AgentId>,
    pub workspace: Option<WorkspaceId>,
    pub statuses: Option<Vec<Status>>,
    /// Only agents with every one of these labels (key and value), e.g. a schedule's runs
    /// (`schedule: nightly`, SPEC 20).
    pub labels: BTreeMap<String, String>,
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
    agents: FxHashMap<AgentId, Box<AgentState>>,
    /// Unarchived children of each agent, oldest first.
    children: FxHashMap<AgentId, activity::Track>,
    workspaces: BTreeMap<WorkspaceId, WorkspaceRecord>,
    projects: BTreeMap<ProjectId, ProjectRecord>,
    /// Per workspace, how many agents contribute each bucket.
    activity: FxHashMap<WorkspaceId, [u32; Bucket::COUNT]>,
    /// Per root agent, how many of its unarchived subagents are in each bucket (their own): its
    /// row's roll-up ([`crate::model::Subagents`]).
    subtrees: FxHashMap<AgentId, [u32; Bucket::COUNT]>,
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
    /// What the power rule reads of each configured provider, by id: its kind and its
    /// configured launch (SPEC 14), and whether it is unconfined (SPEC 16).
    providers: BTreeMap<String, ProviderTrust>,
    /// config.json `sandbox.enabled`: whether agents are contained at all (SPEC 16).
    sandbox_enabled: bool,
    usage: usage::UsageIndex,
    budget_pass: budget::BudgetPasses,
    /// Ids of notices the parents' timelines show as received, read before `load` (SPEC 4).
    delivered_at_load: FxHashSet<String>,
    /// Agents whose prompt waited for a session when the app stopped (SPEC 15): their sessions
    /// start when deliveries resume after load.
    waiting_at_load: Vec<AgentId>,
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

    /// Takes only the agents whose records changed (to write them later), leaving the rest of
    /// the outcome in place.
    pub fn take_changed_agents(&mut self) -> FxHashSet<AgentId> {
        std::mem::take(&mut self.out.agents)
    }

    pub fn agent(&self, id: AgentId) -> Option<&AgentState> {
        self.agents.get(&id).map(|a| &**a)
    }

    pub fn agents(&self) -> impl Iterator<Item = &AgentState> {
        self.agents.values().map(|a| &**a)
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

    /// The first `limit` agents the filter matches, oldest first, and how many match.
    pub fn list(&self, filter: &ListFilter, limit: usize) -> (Vec<&AgentState>, usize) {
        // Each with its sort key, read once: comparing through the boxes of 100,000 agents is a
        // few cache misses per comparison.
        let mut v: Vec<((Timestamp, AgentId), &AgentState)> = self
            .agents()
            .filter(|a| filter.include_archived || !a.record.is_archived())
            .filter(|a| filter.parent.is_none_or(|p| a.parent == Some(p)))
            .filter(|a| {
                (filter.workspace.iter()).all(|w| a.record.workspace_id.as_ref() == Some(w))
            })
            .filter(|a| (filter.statuses.iter()).all(|s| s.contains(&a.status())))
            .filter(|a| {
                (filter.labels.iter()).all(|(k, v)| a.record.labels.get(k) == Some(v.as_str()))
            })
            .map(|a| ((a.record.created_at, a.record.id), a))
            .collect();
        let total = v.len();
        // Only the page is sorted: the first answer of a start with 100,000 agents asks for one.
        if limit < total {
            v.select_nth_unstable_by_key(limit, |x| x.0);
            v.truncate(limit);
        }
        v.sort_unstable_by_key(|x| x.0);
        (v.into_iter().map(|(_, a)| a).collect(), total)
    }

    /// The agents archived in one batch, in archive order.
    pub fn batch(&self, batch: &BatchId) -> &[AgentId] {
        self.batches.get(batch).map(|v| v.as_slice()).unwrap_or(&[])
    }

    fn get_mut(&mut self, id: AgentId) -> Result<&mut AgentState, EngineError> {
        self.agents
            .get_mut(&id)
            .map(|a| &mut **a)
            .ok_or(EngineError::UnknownAgent(id))
    }

    /// An unarchived agent.
    fn unarchived(&self, id: AgentId) -> Result<&AgentState, EngineError> {
        let a = self.agents.get(&id).ok_or(EngineError::UnknownAgent(id))?;
        if a.record.is_archived() {
            return Err(EngineError::Archived(id));
        }
        Ok(a)
    }

    /// An unarchived agent, to change.
    fn unarchived_mut(&mut self, id: AgentId) -> Result<&mut AgentState, EngineError> {
        let a = self
            .agents
            .get_mut(&id)
            .ok_or(EngineError::UnknownAgent(id))?;
        if a.record.is_archived() {
            return Err(EngineError::Archived(id));
        }
        Ok(a)
    }

    /// A running agent, for an event only a running turn may have, which takes it to `to`
    /// (`running` itself for one that keeps the turn going, e.g. a permission request).
    fn running_mut(&mut self, id: AgentId, to: Status) -> Result<&mut AgentState, EngineError> {
        let a = self.get_mut(id)?;
        let from = a.record.last_status;
        if from != Status::Running || !from.can_go(to) {
            return Err(EngineError::InvalidTransition {
                id,
                from: from.as_str(),
                to: to.as_str(),
            });
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
        if let Some(p) = self.unarchived_parent(id) {
            self.out.tracks.insert(p);
        }
        self.tell_ancestors_activity(id);
        self.refresh(id);
    }

    fn timeline(&mut self, id: AgentId, item: NewItem) {
        self.out.effects.push(Effect::Timeline {
            agent: id,
            item: Box::new(item),
        });
    }
}

/// Attention required for `reason`, since `now` (SPEC 2).
fn require_attention(r: &mut AgentRecord, reason: AttentionReason, now: Timestamp) {
    r.requires_attention = true;
    r.attention_reason = Some(reason);
    r.attention_timestamp = Some(now);
}

/// Moves an agent to `to`: every status change of the engine is a step of SPEC 2's table
/// ([`Status::can_go`]). Checked in every build the tests run; a release build still records
/// the step (the record must say what happened, e.g. that a process died), never a stale status.
fn step(r: &mut AgentRecord, to: Status) {
    debug_assert!(
        r.last_status.can_go(to),
        "agent {}: {} → {} is not in SPEC 2's table",
        r.id,
        r.last_status.as_str(),
        to.as_str()
    );
    r.last_status = to;
}

/// Entering `error`: the message is kept and the user's attention required.
fn set_error(r: &mut AgentRecord, message: &str, now: Timestamp) {
    step(r, Status::Error);
    r.last_error = Some(message.to_string());
    require_attention(r, AttentionReason::Error, now);
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
