//! What the runtime tells every window: snapshots and events that carry enough to render from.

use serde::{Deserialize, Serialize};

use crate::engine::usage::UsageRollups;
use crate::engine::{AgentState, Engine};
pub use crate::model::FleetCounts;
use crate::model::{
    AgentId, AgentRecord, Alert, Bucket, PermissionRequest, Power, ProjectRecord, Status, Tally,
    TimelineItem, Usage, WorkspaceRecord,
};
use crate::providers::ProviderInfo;
use crate::store::Quarantined;

/// One agent as the UI and the MCP tools see it: the record's fields plus the live state.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSnapshot {
    #[serde(flatten)]
    pub record: AgentRecord,
    /// What a person calls it when that is not its title as it is
    /// ([`crate::model::name_beyond_title`]: an untitled agent's "shell 9edbfba6").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
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
    /// Its own status bucket, by the one status rule ([`crate::model::status`]): what its tab,
    /// track row and tray entry show. Nobody downstream recomputes it.
    pub bucket: Bucket,
    /// Whether it needs the user (a pending permission or an unseen error), by the same rule.
    pub needs_you: bool,
    /// The word its tab, track row and header show ("starting", "queued · 3rd", "needs you:
    /// approve start"…), by [`crate::model::attention`]; the window renders it as it is.
    pub status_word: String,
    /// What its glyph and colour show: its bucket, or "canceled" (an unseen canceled turn), by
    /// [`crate::model::look`]; the window renders it as it is.
    pub look: String,
    /// Whether (and why) it alerts the user: its tray entry and desktop notification, by
    /// [`crate::model::attention`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alert: Option<Alert>,
    /// `full` (acts without asking) or `asks` (SPEC 14), by the one power rule.
    pub power: Power,
    /// It runs outside the sandbox (SPEC 16): the user chose so for it or its provider, or
    /// turned containment off; by the one rule, `Engine::contained`. What its header and track
    /// row say beside the power.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unconfined: bool,
    /// While its start waits for a live slot: the `maxLiveAgents` limit it waits behind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for_slot: Option<usize>,
    /// Its place in that queue, 1 for the next to start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_place: Option<usize>,
    /// What it changed on disk (files, +, −), as last counted; absent until counted or when
    /// its cwd is not in a git repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<crate::model::ChangeCounts>,
    /// Its usage plus its descendants', archived ones included (its own is the record's
    /// `usage`).
    #[serde(default, skip_serializing_if = "Usage::is_empty")]
    pub tree_usage: Usage,
    /// The budget over its tree (SPEC 18): whose, the cap, what that tree used and what is
    /// left; absent when no budget applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_budget: Option<crate::model::TreeBudget>,
    /// A root agent's subagents rolled up, as its row says them (none: no subagents, or not a
    /// root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<crate::model::Subagents>,
    /// Its system prompt and last message are in its record file, not in this snapshot (an agent
    /// loaded at rest; `get_agent` reads them back). Unchanged since: a window that has them
    /// from `get_agent` keeps them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_rest: bool,
}

/// A root agent's roll-up of its subagents (the engine keeps the counts).
pub(crate) fn subagents_of(engine: &Engine, a: &AgentState) -> Option<crate::model::Subagents> {
    if engine.existing_parent(a).is_some() {
        return None;
    }
    engine
        .subtree_counts(a.record.id)
        .and_then(crate::model::Subagents::of)
}

impl AgentSnapshot {
    pub fn of(engine: &Engine, a: &AgentState) -> AgentSnapshot {
        AgentSnapshot {
            tree_usage: engine.tree_usage(a.record.id),
            ..AgentSnapshot::of_without_usage(engine, a)
        }
    }

    fn of_without_usage(engine: &Engine, a: &AgentState) -> AgentSnapshot {
        AgentSnapshot {
            record: AgentRecord::clone(&a.record),
            name: crate::model::name_beyond_title(&a.record),
            parent_agent_id: engine.existing_parent(a),
            status: a.record.last_status,
            pending_permission: a.pending_permission.as_deref().cloned(),
            mcp_status: a.mcp_status().map(String::from),
            reads_prompts: a.reads_prompts,
            cancel_requested: a.cancel_requested,
            queued_notices: engine.inbox(a.record.id).map(|q| q.len()).unwrap_or(0),
            bucket: a.bucket(),
            needs_you: a.needs_you(),
            status_word: crate::model::status_word(
                &a.record,
                a.bucket(),
                a.pending_permission.as_deref(),
                a.queue_place(),
            )
            .into_owned(),
            look: crate::model::look(&a.record, a.bucket()).into(),
            alert: engine.alert_of(a),
            power: engine.power_of(a),
            unconfined: !engine.contained(a),
            waiting_for_slot: a.waiting_for_slot(),
            queue_place: a.queue_place(),
            changes: a.changes.as_deref().copied(),
            tree_usage: Usage::default(),
            tree_budget: engine.tree_budget(a.record.id),
            subagents: subagents_of(engine, a),
            at_rest: a.record.has_parts_on_disk(),
        }
    }

    /// The snapshot with its tree's usage taken from roll-ups computed once for many snapshots.
    pub fn with_rollups(engine: &Engine, a: &AgentState, r: &UsageRollups) -> AgentSnapshot {
        AgentSnapshot {
            tree_usage: r.tree(a.record.id),
            ..AgentSnapshot::of_without_usage(engine, a)
        }
    }
    pub fn id(&self) -> AgentId {
        self.record.id
    }
}

/// One agent in a listing (`list_agents`): who it is, where, and its state; not its config,
/// system prompt or resume state (`get_agent` has the whole snapshot). Small enough that a
/// 10,000-agent listing stays under 5 MB whatever its titles, folders and labels: nothing in it
/// twice (the parent's label is `parentAgentId`) and a flag only when it is set.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSummary {
    pub id: AgentId,
    pub title: String,
    pub provider: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<AgentId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<crate::model::WorkspaceId>,
    /// Empty (left out) in a listing whose `cwds` names its workspace's folder.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub cwd: String,
    #[serde(skip_serializing_if = "crate::model::Labels::is_empty")]
    pub labels: crate::model::Labels,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requires_attention: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attention_reason: Option<crate::model::AttentionReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attention_timestamp: Option<crate::model::Timestamp>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub needs_you: bool,
    pub created_at: crate::model::Timestamp,
    pub updated_at: crate::model::Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity_at: Option<crate::model::Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<crate::model::Timestamp>,
}

impl From<AgentSnapshot> for AgentSummary {
    fn from(s: AgentSnapshot) -> Self {
        let mut r = s.record;
        r.labels.remove(crate::model::PARENT_LABEL);
        AgentSummary {
            id: r.id,
            title: r.title,
            provider: r.provider.into(),
            status: s.status,
            parent_agent_id: s.parent_agent_id,
            workspace_id: r.workspace_id,
            cwd: r.cwd.into(),
            labels: r.labels,
            requires_attention: r.requires_attention,
            attention_reason: r.attention_reason,
            attention_timestamp: r.attention_timestamp,
            needs_you: s.needs_you,
            created_at: r.created_at,
            updated_at: r.updated_at,
            last_activity_at: r.last_activity_at,
            archived_at: r.archived_at,
        }
    }
}

/// A workspace with its live activity.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceSnapshot {
    #[serde(flatten)]
    pub record: WorkspaceRecord,
    /// The most urgent bucket any agent contributes (none when nothing is in it).
    pub bucket: Option<Bucket>,
    /// How many agents contribute each bucket, in `Bucket::ALL` order.
    pub counts: [u32; Bucket::COUNT],
    /// The same agents by their rows' words, and the line the sidebar and the workspace home
    /// show: every agent of its trees, by [`crate::model::tree_bucket`].
    pub tally: crate::model::Tally,
    /// The usage of all its agents, archived ones included.
    #[serde(default, skip_serializing_if = "Usage::is_empty")]
    pub usage: Usage,
}

impl WorkspaceSnapshot {
    pub fn of(engine: &Engine, w: &WorkspaceRecord) -> WorkspaceSnapshot {
        let counts = engine.activity_counts(&w.workspace_id);
        let mut tally = crate::model::Tally::default();
        for b in Bucket::ALL {
            tally.add_n(b, counts[b.index()] as usize);
        }
        WorkspaceSnapshot {
            record: w.clone(),
            bucket: engine.workspace_bucket(&w.workspace_id),
            counts,
            tally,
            usage: engine.workspace_usage(&w.workspace_id),
        }
    }
}

/// A parent's track.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrackSnapshot {
    pub parent_agent_id: AgentId,
    /// Unarchived children, oldest first.
    pub members: Vec<AgentId>,
    pub counts: Tally,
}

/// Everything a window needs at start; events keep it current afterwards. In process the agents
/// are full snapshots; a window gets cards, and tracks naming them, instead ([`super::window`]).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetSnapshot<A = Vec<AgentSnapshot>, T = Vec<TrackSnapshot>> {
    pub home: String,
    pub agents: A,
    pub workspaces: Vec<WorkspaceSnapshot>,
    pub projects: Vec<ProjectRecord>,
    pub tracks: T,
    pub providers: Vec<ProviderInfo>,
    pub counts: FleetCounts,
    /// Problems found at load (quarantined files, repaired records) to show the user.
    pub notices: Vec<String>,
    pub quarantined: Vec<Quarantined>,
    pub mcp_url: Option<String>,
    /// Whether agents are contained here, by what, or why not (SPEC 16): the status bar says
    /// it when containment is off or unavailable.
    pub containment: crate::sandbox::ContainmentInfo,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
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
    /// An idle agent was closed to make room for a waiting start (SPEC 14 `maxLiveAgents`):
    /// news for the status bar, worded once here; its timeline says the same.
    #[serde(rename_all = "camelCase")]
    ClosedForRoom { agent_id: AgentId, message: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::NewAgent;
    use crate::model::{PermissionRequest, TurnOrigin};
    use crate::workspaces::directory_workspace_with;
    use std::path::Path;

    #[test]
    fn snapshots_and_counts_carry_the_status_rule() {
        let mut e = Engine::new();
        let now = crate::model::Timestamp::now();
        let (ws, project) = directory_workspace_with(Path::new("/src"), None, &[], now);
        let workspace_id = ws.workspace_id.clone();
        e.upsert_workspace(ws, project);
        let id = e
            .create(NewAgent {
                initial_prompt: Some("ls".into()),
                ..NewAgent::new("shell", false, "/src", workspace_id)
            })
            .unwrap();
        e.session_ready(id).unwrap();
        e.permission_requested(
            id,
            PermissionRequest {
                request_id: "r".into(),
                kind: crate::model::PermissionKind::Tool,
                tool_name: "Bash".into(),
                input: serde_json::json!({}),
                description: None,
                call_id: None,
            },
        )
        .unwrap();
        let json = serde_json::to_value(AgentSnapshot::of(&e, e.agent(id).unwrap())).unwrap();
        assert_eq!(json["bucket"], "needs_input");
        assert_eq!(json["needsYou"], true);
        assert_eq!(json["statusWord"], "needs you");
        assert_eq!(json["alert"], "permission");
        let c = FleetCounts::of(&e);
        assert_eq!(c.line(), "0 running · 1 needs you · 1 total");

        e.answer_permission(id, "r", true).unwrap();
        e.turn_ended(id, crate::model::TurnOutcome::Completed)
            .unwrap();
        let json = serde_json::to_value(AgentSnapshot::of(&e, e.agent(id).unwrap())).unwrap();
        assert_eq!(json["bucket"], "attention");
        assert_eq!(json["needsYou"], false);
        assert_eq!(json["statusWord"], "finished");
        assert_eq!(json["alert"], "finished");
        let c = FleetCounts::of(&e);
        assert_eq!(c.line(), "0 running · 0 need you · 1 total");
        e.prompt(id, "again".into(), TurnOrigin::User, None)
            .unwrap();
        assert_eq!(
            AgentSnapshot::of(&e, e.agent(id).unwrap()).bucket,
            Bucket::Running
        );
    }
}
