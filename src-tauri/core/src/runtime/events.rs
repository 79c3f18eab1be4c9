//! What the runtime tells every window: snapshots and events that carry enough to render from.

use serde::Serialize;

use crate::engine::{AgentState, Engine, TrackCounts};
use crate::model::{
    AgentId, AgentRecord, AttentionReason, Bucket, ProjectRecord, Status, TimelineItem,
    WorkspaceRecord,
};
use crate::providers::{PermissionRequest, ProviderInfo};
use crate::store::Quarantined;

/// One agent as the UI and the MCP tools see it: the record's fields plus the live state.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSnapshot {
    #[serde(flatten)]
    pub record: AgentRecord,
    pub parent_agent_id: Option<AgentId>,
    /// The live status (the record's `lastStatus`).
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_permission: Option<PermissionRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_status: Option<String>,
    pub reads_prompts: bool,
    pub cancel_requested: bool,
    /// Finish notices waiting for this agent.
    pub queued_notices: usize,
}

impl AgentSnapshot {
    pub fn of(engine: &Engine, a: &AgentState) -> AgentSnapshot {
        AgentSnapshot {
            record: a.record.clone(),
            parent_agent_id: a.record.parent_agent_id(),
            status: a.record.last_status,
            pending_permission: a.pending_permission.clone(),
            mcp_status: a.mcp_status.clone(),
            reads_prompts: a.reads_prompts,
            cancel_requested: a.cancel_requested,
            queued_notices: engine.inbox(a.record.id).map(|q| q.len()).unwrap_or(0),
        }
    }
    pub fn id(&self) -> AgentId {
        self.record.id
    }
}

/// A workspace with its live activity.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceSnapshot {
    #[serde(flatten)]
    pub record: WorkspaceRecord,
    /// The most urgent bucket any agent contributes (none when nothing is in it).
    pub bucket: Option<Bucket>,
    /// How many agents contribute each bucket, in `Bucket::ALL` order.
    pub counts: [u32; 5],
}

impl WorkspaceSnapshot {
    pub fn of(engine: &Engine, w: &WorkspaceRecord) -> WorkspaceSnapshot {
        WorkspaceSnapshot {
            record: w.clone(),
            bucket: engine.workspace_bucket(&w.workspace_id),
            counts: engine.activity_counts(&w.workspace_id),
        }
    }
}

/// A parent's track.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackSnapshot {
    pub parent_agent_id: AgentId,
    /// Unarchived children, oldest first.
    pub members: Vec<AgentId>,
    pub counts: TrackCounts,
}

/// Fleet-wide counts for the tray and the status line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetCounts {
    /// Unarchived agents.
    pub agents: usize,
    /// Initializing or running.
    pub running: usize,
    /// A pending permission, or an error the user has not seen yet.
    pub needs_you: usize,
    /// In the error state (seen or not).
    pub failed: usize,
    /// Finished turns the user has not seen yet.
    pub finished_unseen: usize,
    pub archived: usize,
}

impl FleetCounts {
    pub fn of(engine: &Engine) -> FleetCounts {
        let mut c = FleetCounts::default();
        for a in engine.agents() {
            if a.record.is_archived() {
                c.archived += 1;
                continue;
            }
            c.agents += 1;
            if a.status().is_active() {
                c.running += 1;
            }
            let reason = a
                .record
                .attention_reason
                .filter(|_| a.record.requires_attention);
            if a.pending_permission.is_some() || reason == Some(AttentionReason::Error) {
                c.needs_you += 1;
            }
            if reason == Some(AttentionReason::Finished) {
                c.finished_unseen += 1;
            }
            if a.status() == Status::Error {
                c.failed += 1;
            }
        }
        c
    }
}

/// Everything a window needs at start; events keep it current afterwards.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetSnapshot {
    pub home: String,
    pub agents: Vec<AgentSnapshot>,
    pub workspaces: Vec<WorkspaceSnapshot>,
    pub projects: Vec<ProjectRecord>,
    pub tracks: Vec<TrackSnapshot>,
    pub providers: Vec<ProviderInfo>,
    pub counts: FleetCounts,
    /// Problems found at load (quarantined files, repaired records) to show the user.
    pub notices: Vec<String>,
    pub quarantined: Vec<Quarantined>,
    pub mcp_url: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Event {
    /// An agent changed (created, status, attention, labels…). Archived agents come as
    /// `AgentArchived` instead.
    #[serde(rename_all = "camelCase")]
    AgentUpdated { agent: Box<AgentSnapshot> },
    /// An agent left every active list (archived); its tab closes in every window.
    #[serde(rename_all = "camelCase")]
    AgentArchived { agent: Box<AgentSnapshot> },
    /// New timeline items of one agent, batched.
    #[serde(rename_all = "camelCase")]
    TimelineItems {
        agent_id: AgentId,
        items: Vec<TimelineItem>,
    },
    #[serde(rename_all = "camelCase")]
    WorkspaceUpdated { workspace: Box<WorkspaceSnapshot> },
    #[serde(rename_all = "camelCase")]
    TrackChanged { track: TrackSnapshot },
    #[serde(rename_all = "camelCase")]
    CountsChanged { counts: FleetCounts },
    /// Something the user should know (a quarantined file, a worktree that could not be removed).
    #[serde(rename_all = "camelCase")]
    Notice { level: String, message: String },
}
