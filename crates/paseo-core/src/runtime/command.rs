//! The actor's mailbox: one typed command per operation, each with its typed reply. A command
//! is decided and applied in one actor step ([`super::cmd`]); whatever it needed from disk or
//! git the handle prepared before sending it ([`Prepared`]).
//!
//! Reads are named queries ([`Command::GetAgent`], [`Command::ListAgents`], …); changes are one
//! command per gesture ([`Command::CreateAgent`] checks the caller, applies the defaults,
//! registers a new workspace, creates the agent and queues its first prompt).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::checkout::{CheckoutAgent, HoldRequest};
use super::durable::Durable;
use super::events::{AgentSnapshot, FleetCounts, FleetSnapshot, WorkspaceSnapshot};
use super::policy::{Caller, CreatePlan, ReachCheck};
use super::timeline::Page;
use super::{CreateAgent, RuntimeError, WorkspaceTarget};
use crate::engine::{ListFilter, RestoreScope};
use crate::model::{AgentId, ArchivePlan, TurnOrigin, WorkspaceId, WorkspaceRecord};
use crate::providers::ProviderInfo;
use crate::workspaces::worktree::{CreatedWorktree, WorktreeTarget};
use crate::workspaces::RepoInfo;

/// The fleet's counts and the agents that may need the user, from one consistent view.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Alerts {
    pub counts: FleetCounts,
    /// The agents that alert the user (`model::attention`): their tray entries and notifications.
    pub agents: Vec<AgentSnapshot>,
    /// Files of the data root that cannot be written right now (a full disk): the app itself
    /// needs the user (SPEC 15).
    pub storage: Option<String>,
}

/// Where a command's answer goes.
pub(crate) type Reply<T> = oneshot::Sender<Result<T, RuntimeError>>;

/// What the handle found on disk for a new agent before asking the actor.
pub(crate) enum Prepared {
    /// An existing workspace: nothing (or only a cwd) to check.
    Existing { cwd: Option<PathBuf> },
    /// A directory to register as a new workspace (with `reuse`, unless one is open on it).
    Directory {
        dir: PathBuf,
        repo: Option<RepoInfo>,
        reuse: bool,
    },
    /// A git worktree made for this agent.
    Worktree(Box<CreatedWorktree>),
}

/// A worktree the handle made for a create, to remove again if the create is refused.
pub(crate) struct MadeWorktree {
    created: Box<CreatedWorktree>,
    new_branch: bool,
}

impl Prepared {
    /// The new agent's cwd as the create will record it, given the cwd of the existing
    /// workspace it works in at its root (if it does).
    pub(crate) fn cwd(&self, workspace_cwd: Option<&str>) -> Option<String> {
        match self {
            Prepared::Existing { cwd: Some(c) } => Some(c.display().to_string()),
            Prepared::Existing { cwd: None } => workspace_cwd.map(str::to_string),
            Prepared::Directory { dir, .. } => Some(dir.display().to_string()),
            Prepared::Worktree(w) => Some(w.path.display().to_string()),
        }
    }

    pub(crate) fn made_worktree(&self, req: &CreateAgent) -> Option<MadeWorktree> {
        let Prepared::Worktree(c) = self else {
            return None;
        };
        let new_branch = matches!(
            &req.workspace,
            WorkspaceTarget::Worktree(w) if matches!(w.target, WorktreeTarget::BranchOff(_))
        );
        Some(MadeWorktree {
            created: c.clone(),
            new_branch,
        })
    }
}

impl MadeWorktree {
    pub(crate) fn new(created: Box<CreatedWorktree>, new_branch: bool) -> MadeWorktree {
        MadeWorktree {
            created,
            new_branch,
        }
    }

    /// Nothing ran in it: it goes, with the branch it made (blocking: git).
    pub(crate) fn discard(self, layout: &crate::store::Layout) {
        let path = self.created.path.display().to_string();
        match crate::workspaces::worktree::discard(layout, &self.created, self.new_branch) {
            Ok(()) => tracing::info!(%path, "worktree of a refused create removed"),
            Err(e) => tracing::warn!(%path, error = %e, "worktree of a refused create kept"),
        }
    }
}

/// Whom a prompt goes to, whose turn it is and who hears when it ends.
pub(crate) struct Target {
    pub id: AgentId,
    pub origin: TurnOrigin,
    pub notify: Option<AgentId>,
}

pub(crate) enum Command {
    // ------------------------------------------------------------ reads
    Snapshot(Reply<FleetSnapshot>),
    /// The window's snapshot or a page of its cards, as JSON text (runtime/window.rs).
    WindowSnapshot(WindowQuery, Reply<String>),
    /// The window's snapshot and the number of the last event it reflects, in one step.
    SyncSnapshot(Reply<(u64, String)>),
    /// A receiver of the events after the returned number, subscribed in one step.
    Subscribe(Reply<(tokio::sync::broadcast::Receiver<super::events::Event>, u64)>),
    Counts(Reply<FleetCounts>),
    /// Counts plus the agents that may need the user, from one consistent view (the tray).
    Alerts(Reply<Alerts>),
    GetAgent {
        id: AgentId,
        reply: Reply<AgentSnapshot>,
    },
    /// Count again what the agent changed (after the user committed, merged or discarded).
    CountChanges {
        id: AgentId,
        reply: Reply<()>,
    },
    /// Where an agent works: its cwd and its workspace (the Changes view compares there).
    Workplace {
        id: AgentId,
        reply: Reply<(String, Option<crate::model::WorkspaceRecord>)>,
    },
    /// Agents matching the filter (unknown parent or workspace ids refused), with the total.
    ListAgents {
        filter: ListFilter,
        limit: usize,
        reply: Reply<(Vec<AgentSnapshot>, usize)>,
    },
    /// One page of the archived agents, most recently archived first, with their total.
    Archived {
        offset: usize,
        limit: usize,
        reply: Reply<(Vec<AgentSnapshot>, usize)>,
    },
    TimelinePage {
        id: AgentId,
        before: u64,
        limit: usize,
        reply: Reply<Page>,
    },
    /// Writes the agent's timeline items so far to its file (for a search of the file): the
    /// answer is a receiver that fires once they are written.
    FlushTimeline {
        id: AgentId,
        reply: Reply<tokio::sync::oneshot::Receiver<()>>,
    },
    /// The defaults a create's disk and git checks depend on.
    PlanCreate {
        req: Box<CreateAgent>,
        reply: Reply<CreatePlan>,
    },
    /// Whether an agent may create now (SPEC 14 limits), asked before any slow or lasting
    /// work; counts nothing. `creates_agent`: the depth limit applies too (not to worktrees).
    CheckLimits {
        caller: AgentId,
        creates_agent: bool,
        reply: Reply<()>,
    },
    /// The archived workspaces a restore brings back (their directories are re-added first).
    RestoreWorkspaces {
        id: AgentId,
        scope: RestoreScope,
        reply: Reply<Vec<WorkspaceRecord>>,
    },
    // ------------------------------------------------------------ changes
    CreateAgent {
        req: Box<CreateAgent>,
        info: Box<ProviderInfo>,
        prepared: Prepared,
        /// Where the new agent's cwd stands against its agent caller's (SPEC 14).
        reach: Option<Box<ReachCheck>>,
        reply: Reply<(AgentSnapshot, Durable)>,
    },
    AddWorkspace {
        dir: PathBuf,
        repo: Option<RepoInfo>,
        reply: Reply<WorkspaceSnapshot>,
    },
    RegisterWorktree {
        created: Box<CreatedWorktree>,
        created_by: Option<AgentId>,
        request: Option<String>,
        reply: Reply<WorkspaceSnapshot>,
    },
    ArchiveWorkspace {
        id: WorkspaceId,
        even_if_running: bool,
        reply: Reply<(Vec<AgentId>, Durable)>,
    },
    Prompt {
        caller: Caller,
        id: AgentId,
        text: String,
        origin: TurnOrigin,
        notify: Option<AgentId>,
        /// Where the prompted agent's cwd stands against its agent caller's (SPEC 14).
        reach: Option<Box<ReachCheck>>,
        reply: Reply<AgentSnapshot>,
    },
    /// Answers whether a turn was running (and is now being interrupted).
    Cancel {
        caller: Caller,
        id: AgentId,
        reply: Reply<bool>,
    },
    Archive {
        caller: Caller,
        id: AgentId,
        reply: Reply<(Vec<AgentId>, Durable)>,
    },
    ArchiveFinished {
        parent: AgentId,
        reply: Reply<(Vec<AgentId>, Durable)>,
    },
    /// What archiving `id` (or, with `finished`, "Archive finished" on it) would touch.
    ArchivePlan {
        id: AgentId,
        finished: bool,
        reply: Reply<ArchivePlan>,
    },
    Detach {
        id: AgentId,
        reply: Reply<AgentSnapshot>,
    },
    RenameWorkspace {
        id: WorkspaceId,
        name: Option<String>,
        reply: Reply<WorkspaceSnapshot>,
    },
    /// Puts a detached agent back under its creator if that narrows power; `check` only asks.
    Reattach {
        id: AgentId,
        parent: AgentId,
        reach: Box<ReachCheck>,
        check: bool,
        reply: Reply<()>,
    },
    /// Unarchives workspaces whose directories are back (a restore that stopped part way).
    UnarchiveWorkspaces {
        workspaces: Vec<WorkspaceId>,
        reply: Reply<()>,
    },
    /// Unarchives the workspaces whose directories are back, then restores the batch.
    Restore {
        id: AgentId,
        as_root: bool,
        scope: RestoreScope,
        workspaces: Vec<WorkspaceId>,
        reply: Reply<(Vec<AgentId>, Durable)>,
    },
    AnswerPermission {
        id: AgentId,
        request_id: String,
        allow: bool,
        reply: Reply<()>,
    },
    MarkSeen {
        id: AgentId,
        reply: Reply<()>,
    },
    SetBudget {
        id: AgentId,
        budget: Option<crate::model::Budget>,
        reply: Reply<super::events::AgentSnapshot>,
    },
    Wake {
        id: AgentId,
        reply: Reply<bool>,
    },
    Stop {
        id: AgentId,
        reply: Reply<Durable>,
    },
    /// The live agents working in a checkout (the Changes view says who an action stops).
    AgentsIn {
        dir: PathBuf,
        reply: Reply<Vec<CheckoutAgent>>,
    },
    /// Stops the agents in a checkout and keeps agents from starting there (SPEC 15).
    HoldCheckouts {
        req: HoldRequest,
        reply: Reply<(Vec<AgentId>, Durable, u64)>,
    },
    ReleaseCheckouts {
        token: u64,
    },
    /// What a window shows: `agent`'s pane, or none (the window closed, or shows no agent).
    Shown {
        window: String,
        agent: Option<AgentId>,
    },
    DeliverPending(Reply<()>),
    /// Submits what is held back (load repairs), so a flush that follows covers it.
    WriteDeferred(Reply<()>),
    /// Appends items to a timeline as a provider would (tests fill timelines fast with it).
    #[cfg(test)]
    PushItems {
        id: AgentId,
        items: Vec<crate::model::NewItem>,
        reply: Reply<()>,
    },
    /// Closes every session, flushes, and ends the actor.
    Shutdown(oneshot::Sender<()>),
}

/// Which cards a window asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum WindowQuery {
    /// The fleet with every card (a resync).
    Whole,
    /// The fleet with the cards its first screen shows: every agent of `workspace_id` (or, when
    /// that is not an open workspace, of the one with the latest activity, the page's own
    /// choice then), and `agent_ids` (its tabs) with their ancestors and children. Both come
    /// from the window's saved layout: what names nothing here is passed over (the page drops
    /// such tabs itself).
    #[serde(rename_all = "camelCase")]
    First {
        #[serde(default)]
        workspace_id: Option<String>,
        #[serde(default)]
        agent_ids: Vec<String>,
    },
    /// Up to `limit` cards created after `after` ([created ms, id]; none: from the oldest), with
    /// the tracks of their parents, and the key to ask after next (null at the end).
    #[serde(rename_all = "camelCase")]
    After {
        #[serde(default)]
        after: Option<(i64, AgentId)>,
        limit: usize,
    },
}
