//! What a window keeps of the fleet (issue 19): per agent only what its lists, tabs, tracks and
//! headers render — the listing's idea ([`super::AgentSummary`]) plus the live state those show —
//! never its system prompt, config, labels or resume state (a window asks `get_agent` for those
//! when its pane shows them). The snapshot is serialized straight from the engine: with 100,000
//! agents no full snapshot of each exists in between, only the JSON text the window reads.

use std::collections::BTreeSet;

use serde::{Serialize, Serializer};

use super::actor::Actor;
use super::cmd::Command;
use super::{RuntimeError, RuntimeHandle};
use crate::engine::usage::UsageRollups;
use crate::engine::{AgentState, Engine};
use crate::model::{
    AgentId, AttentionReason, Bucket, ChangeCounts, LastRun, PermissionRequest, Power, Status,
    Timestamp, Usage, WorkspaceId,
};
use crate::store::StoreError;

/// One agent in a window's fleet: who it is, where, its state by the one status rule, and what
/// its rows show (power, changes, usage). Fields the UI reads off `fleet.agents` and nothing
/// else; `ui/store.js` (`CARD`) cuts an event's full snapshot down to the same fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard<'a> {
    pub id: AgentId,
    pub title: &'a str,
    pub provider: &'a str,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<AgentId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<&'a WorkspaceId>,
    pub cwd: &'a str,
    pub bucket: Bucket,
    pub power: Power,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requires_attention: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attention_reason: Option<AttentionReason>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_permission: Option<&'a PermissionRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for_slot: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<ChangeCounts>,
    #[serde(skip_serializing_if = "is_empty_usage")]
    pub usage: &'a Usage,
    #[serde(skip_serializing_if = "Usage::is_empty")]
    pub tree_usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_run: Option<&'a LastRun>,
    /// Turns started: the pane reloads its Changes view when a turn ends.
    #[serde(skip_serializing_if = "is_zero")]
    pub turn_count: u64,
}

fn is_empty_usage(u: &&Usage) -> bool {
    u.is_empty()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl<'a> AgentCard<'a> {
    pub fn of(engine: &'a Engine, a: &'a AgentState, usage: &UsageRollups) -> AgentCard<'a> {
        let r = &a.record;
        AgentCard {
            id: r.id,
            title: &r.title,
            provider: &r.provider,
            status: r.last_status,
            parent_agent_id: engine.existing_parent(a),
            workspace_id: r.workspace_id.as_ref(),
            cwd: &r.cwd,
            bucket: a.bucket(),
            power: engine.power_of(a),
            requires_attention: r.requires_attention,
            attention_reason: r.attention_reason,
            created_at: r.created_at,
            updated_at: r.updated_at,
            last_activity_at: r.last_activity_at,
            pending_permission: a.pending_permission.as_deref(),
            waiting_for_slot: a.waiting_for_slot,
            changes: a.changes,
            usage: &r.usage,
            tree_usage: usage.tree(r.id),
            last_run: r.last_run.as_deref(),
            turn_count: r.turn_count,
        }
    }
}

/// The unarchived agents as cards, oldest first, written one at a time as they are serialized.
pub struct Cards<'a> {
    engine: &'a Engine,
    usage: UsageRollups,
    agents: Vec<&'a AgentState>,
}

impl Serialize for Cards<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.agents
                .iter()
                .map(|a| AgentCard::of(self.engine, a, &self.usage)),
        )
    }
}

impl Actor {
    /// The window's fleet snapshot as JSON text (`FleetSnapshot` with cards for agents).
    pub(super) fn window_snapshot(&self) -> Result<String, RuntimeError> {
        let e = &self.engine;
        let mut agents: Vec<&AgentState> = e.agents().filter(|a| !a.record.is_archived()).collect();
        agents.sort_unstable_by_key(|a| (a.record.created_at, a.record.id));
        let parents: BTreeSet<AgentId> =
            agents.iter().filter_map(|a| e.existing_parent(a)).collect();
        let n = agents.len();
        let snapshot = self.fleet_snapshot(
            Cards {
                engine: e,
                usage: e.usage_rollups(),
                agents,
            },
            parents,
        );
        let encode = |message: String| StoreError::Encode {
            what: "the window's snapshot".into(),
            message,
        };
        // Sized for a typical card up front, so a big fleet's text is not copied while it grows.
        let mut out = Vec::with_capacity(4096 + n * 400);
        serde_json::to_writer(&mut out, &snapshot).map_err(|e| encode(e.to_string()))?;
        Ok(String::from_utf8(out).map_err(|e| encode(e.to_string()))?)
    }
}

impl RuntimeHandle {
    /// What a window renders from, as JSON text: the fleet with a compact card per agent
    /// ([`AgentCard`]); `get` has an agent's whole snapshot.
    pub async fn window_snapshot(&self) -> Result<String, RuntimeError> {
        self.ask(Command::WindowSnapshot).await
    }
}
