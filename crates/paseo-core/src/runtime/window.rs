//! What a window keeps of the fleet: per agent a card ([`AgentCard`]) — what its lists, tabs,
//! tracks and headers render — never its system prompt, config, labels or resume state (a window
//! asks `get_agent` for those when its pane shows them). The card is the one shape an agent has
//! on the wire to a window: in the snapshot, in the pages after it and in `AgentUpdated`.
//!
//! A window's start is the time to its first screen (SPEC 7): the first answer carries the
//! fleet's workspaces and true counts but only the cards that screen shows ([`WindowQuery::First`]:
//! the selected workspace's agents and the open tabs'), and the page fetches the other cards
//! afterwards in pages ([`WindowQuery::After`]), oldest first, keyed by (created, id) so agents
//! created or archived in between neither shift nor repeat a page.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::actor::Actor;
use super::cmd::Command;
use super::{AgentSnapshot, RuntimeError, RuntimeHandle};
use crate::engine::usage::UsageRollups;
use crate::engine::{AgentState, Engine, TrackCounts};
use crate::model::{
    AgentId, AttentionReason, Bucket, ChangeCounts, LastRun, PermissionRequest, Power, Status,
    Usage, WorkspaceId,
};
use crate::store::StoreError;

/// One agent as a window holds it. Absent, false and zero fields are left out; instants are
/// epoch milliseconds (a number the page keeps without a string). Add a field here and the
/// page has it everywhere (`ui/store.js` keeps cards as sent).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard<'a> {
    pub id: AgentId,
    #[serde(skip_serializing_if = "str::is_empty")]
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
    pub created_at: i64,
    pub updated_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_permission: Option<&'a PermissionRequest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for_slot: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_place: Option<usize>,
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
    /// Outside the sandbox (SPEC 16, `Engine::contained`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unconfined: bool,
}

fn is_empty_usage(u: &&Usage) -> bool {
    u.is_empty()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl<'a> AgentCard<'a> {
    /// The card of an agent the engine holds.
    pub fn of(engine: &Engine, a: &'a AgentState, rollups: &UsageRollups) -> AgentCard<'a> {
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
            created_at: r.created_at.millis(),
            updated_at: r.updated_at.millis(),
            last_activity_at: r.last_activity_at.map(|t| t.millis()),
            pending_permission: a.pending_permission.as_deref(),
            waiting_for_slot: a.waiting_for_slot,
            queue_place: a.queue_place,
            changes: a.changes.as_deref().copied(),
            usage: &r.usage,
            tree_usage: rollups.tree(r.id),
            last_run: r.last_run.as_deref(),
            turn_count: r.turn_count,
            unconfined: !engine.contained(a),
        }
    }

    /// The card of an event's snapshot: the same fields, so a window holds one shape.
    pub fn of_snapshot(s: &'a AgentSnapshot) -> AgentCard<'a> {
        let r = &s.record;
        AgentCard {
            id: r.id,
            title: &r.title,
            provider: &r.provider,
            status: s.status,
            parent_agent_id: s.parent_agent_id,
            workspace_id: r.workspace_id.as_ref(),
            cwd: &r.cwd,
            bucket: s.bucket,
            power: s.power,
            requires_attention: r.requires_attention,
            attention_reason: r.attention_reason,
            created_at: r.created_at.millis(),
            updated_at: r.updated_at.millis(),
            last_activity_at: r.last_activity_at.map(|t| t.millis()),
            pending_permission: s.pending_permission.as_ref(),
            waiting_for_slot: s.waiting_for_slot,
            queue_place: s.queue_place,
            changes: s.changes,
            usage: &r.usage,
            tree_usage: s.tree_usage.clone(),
            last_run: r.last_run.as_deref(),
            turn_count: r.turn_count,
            unconfined: s.unconfined,
        }
    }
}

/// A parent's track as a window holds it: its members' ids, oldest first, and its counts when a
/// member is running, queued, needing you or failed (any other's are 0 but its size, a line the
/// window words itself).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowTrack {
    pub parent_agent_id: AgentId,
    pub members: Vec<AgentId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<TrackCounts>,
}

/// Which cards a window asks for.
#[derive(Clone, Debug, Deserialize)]
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

/// The most cards one page carries, whatever a window asks.
pub const PAGE_MAX: usize = 20_000;

/// Unarchived agents, oldest first, that `keep` accepts.
fn agents_where(e: &Engine, keep: impl Fn(&AgentState) -> bool) -> Vec<&AgentState> {
    let mut agents: Vec<&AgentState> = e
        .agents()
        .filter(|a| !a.record.is_archived() && keep(a))
        .collect();
    agents.sort_unstable_by_key(|a| (a.record.created_at.millis(), a.record.id));
    agents
}

fn key(a: &AgentState) -> (i64, AgentId) {
    (a.record.created_at.millis(), a.record.id)
}

/// Up to `limit` (at most [`PAGE_MAX`]) unarchived agents after `after`, oldest first, and the
/// key of the last one when more follow.
fn page(
    e: &Engine,
    after: Option<(i64, AgentId)>,
    limit: usize,
) -> (Vec<&AgentState>, Option<(i64, AgentId)>) {
    let limit = limit.clamp(1, PAGE_MAX);
    let mut agents = agents_where(e, |a| after.is_none_or(|k| key(a) > k));
    let next = (agents.len() > limit).then(|| key(agents[limit - 1]));
    agents.truncate(limit);
    (agents, next)
}

/// The tracks of those of `agents` that are parents.
fn tracks_of(e: &Engine, agents: &[&AgentState]) -> Vec<WindowTrack> {
    let parents: BTreeSet<AgentId> = agents.iter().map(|a| a.record.id).collect();
    parents
        .into_iter()
        .filter_map(|p| {
            let members = e.track(p);
            if members.is_empty() {
                return None;
            }
            let c = e.track_counts(p);
            let busy = c.running > 0 || c.queued > 0 || c.needs_you > 0 || c.failed > 0;
            Some(WindowTrack {
                parent_agent_id: p,
                members,
                counts: busy.then_some(c),
            })
        })
        .collect()
}

/// The workspace of the unarchived agent active last among open workspaces (the page's rule for
/// a window with none selected, `ui/layout.js`).
fn latest_workspace(e: &Engine) -> Option<&WorkspaceId> {
    let open = |w: &WorkspaceId| e.workspace(w).is_some_and(|w| !w.is_archived());
    e.agents()
        .filter(|a| !a.record.is_archived())
        .filter_map(|a| {
            let w = a.record.workspace_id.as_ref().filter(|w| open(w))?;
            let at = a.record.last_activity_at.unwrap_or(a.record.updated_at);
            Some((at.millis(), w))
        })
        .max_by_key(|(at, _)| *at)
        .map(|(_, w)| w)
}

/// The agents a window's first screen shows (see [`WindowQuery::First`]).
fn first_screen<'a>(
    e: &'a Engine,
    workspace: Option<&str>,
    tabs: &[String],
) -> Vec<&'a AgentState> {
    let open = |w: &WorkspaceId| e.workspace(w).is_some_and(|w| !w.is_archived());
    let selected = workspace.and_then(|w| w.parse::<WorkspaceId>().ok());
    let mut shown: Vec<&WorkspaceId> = selected.iter().filter(|w| open(w)).collect();
    if shown.is_empty() {
        shown.extend(latest_workspace(e));
    }
    let mut ids: BTreeSet<AgentId> = BTreeSet::new();
    for id in tabs.iter().filter_map(|t| t.parse::<AgentId>().ok()) {
        let Some(mut a) = e.agent(id) else { continue };
        ids.extend(e.track(id));
        // Its ancestors: the tab groups and the pane's header name the tree it is in.
        while ids.insert(a.record.id) {
            match e.existing_parent(a).and_then(|p| e.agent(p)) {
                Some(p) => a = p,
                None => break,
            }
        }
    }
    agents_where(e, |a| {
        ids.contains(&a.record.id)
            || a.record
                .workspace_id
                .as_ref()
                .is_some_and(|w| shown.contains(&w))
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WindowSnapshot<'a> {
    /// Whether `agents` is every card (else the page asks for the rest in pages).
    whole: bool,
    #[serde(flatten)]
    fleet: super::FleetSnapshot<Vec<AgentCard<'a>>, Vec<WindowTrack>>,
}

#[derive(Serialize)]
struct Page<'a> {
    agents: Vec<AgentCard<'a>>,
    tracks: Vec<WindowTrack>,
    next: Option<(i64, AgentId)>,
}

impl Actor {
    /// What a window asked for, as JSON text.
    pub(super) fn window_snapshot(&self, query: WindowQuery) -> Result<String, RuntimeError> {
        let e = &self.engine;
        let rollups = e.usage_rollups();
        let encode = |message: String| StoreError::Encode {
            what: "the window's snapshot".into(),
            message,
        };
        let (agents, whole, page) = match query {
            WindowQuery::Whole => (agents_where(e, |_| true), true, None),
            WindowQuery::First {
                workspace_id,
                agent_ids,
            } => (
                first_screen(e, workspace_id.as_deref(), &agent_ids),
                false,
                None,
            ),
            WindowQuery::After { after, limit } => {
                let (agents, next) = page(e, after, limit);
                (agents, false, Some(next))
            }
        };
        let tracks = tracks_of(e, &agents);
        let list: Vec<AgentCard> = agents
            .iter()
            .map(|a| AgentCard::of(e, a, &rollups))
            .collect();
        // Sized for a typical card up front, so a big fleet's text is not copied while it grows.
        let mut out = Vec::with_capacity(4096 + list.len() * 300);
        let written = match page {
            Some(next) => serde_json::to_writer(
                &mut out,
                &Page {
                    agents: list,
                    tracks,
                    next,
                },
            ),
            None => serde_json::to_writer(
                &mut out,
                &WindowSnapshot {
                    whole,
                    fleet: self.fleet_snapshot(list, tracks),
                },
            ),
        };
        written.map_err(|e| encode(e.to_string()))?;
        Ok(String::from_utf8(out).map_err(|e| encode(e.to_string()))?)
    }
}

impl RuntimeHandle {
    /// What a window renders from, as JSON text: the fleet with the cards `query` asks for
    /// ([`AgentCard`]); `get` has an agent's whole snapshot.
    pub async fn window_snapshot(&self, query: WindowQuery) -> Result<String, RuntimeError> {
        self.ask(|r| Command::WindowSnapshot(query, r)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::NewAgent;
    use crate::workspaces::directory_workspace_with;
    use std::path::Path;

    fn workspace(e: &mut Engine, dir: &str) -> WorkspaceId {
        let now = crate::model::Timestamp::now();
        let (ws, project) = directory_workspace_with(Path::new(dir), None, &[], now);
        let id = ws.workspace_id.clone();
        e.upsert_workspace(ws, project);
        id
    }

    fn agent(e: &mut Engine, ws: &WorkspaceId, dir: &str, parent: Option<AgentId>) -> AgentId {
        e.create(NewAgent {
            parent,
            created_by: parent,
            ..NewAgent::new("shell", false, dir, ws.clone())
        })
        .unwrap()
    }

    fn ids(agents: &[&AgentState]) -> BTreeSet<AgentId> {
        agents.iter().map(|a| a.record.id).collect()
    }

    #[test]
    fn a_window_first_screen_is_its_workspace_and_its_tabs_with_their_family() {
        let mut e = Engine::new();
        let (a, b) = (workspace(&mut e, "/a"), workspace(&mut e, "/b"));
        let in_a: Vec<AgentId> = (0..3).map(|_| agent(&mut e, &a, "/a", None)).collect();
        // b's agents are active last, by a clear millisecond.
        std::thread::sleep(std::time::Duration::from_millis(5));
        let lead = agent(&mut e, &b, "/b", None);
        let kid = agent(&mut e, &b, "/b", Some(lead));
        let grandkid = agent(&mut e, &b, "/b", Some(kid));
        let other = agent(&mut e, &b, "/b", None);
        // Workspace a selected, a tab of the middle of b's tree open (and a junk tab).
        let tabs = [kid.to_string(), "not an id".into()];
        let got = ids(&first_screen(&e, Some(a.as_str()), &tabs));
        let mut want: BTreeSet<AgentId> = in_a.iter().copied().collect();
        want.extend([lead, kid, grandkid]);
        assert_eq!(got, want);
        assert!(!got.contains(&other));
        // No workspace selected (or one that is gone): the one active last, b.
        for selected in [None, Some("gone"), Some("")] {
            let got = ids(&first_screen(&e, selected, &[]));
            assert_eq!(
                got,
                BTreeSet::from([lead, kid, grandkid, other]),
                "{selected:?}"
            );
        }
        // Its tracks come with it.
        let shown = first_screen(&e, Some(b.as_str()), &[]);
        let tracks = tracks_of(&e, &shown);
        let parents: Vec<AgentId> = tracks.iter().map(|t| t.parent_agent_id).collect();
        assert_eq!(parents.len(), 2);
        assert!(parents.contains(&lead) && parents.contains(&kid));
    }

    #[test]
    fn window_pages_hold_every_card_once_oldest_first_and_follow_changes_between_them() {
        let mut e = Engine::new();
        let ws = workspace(&mut e, "/w");
        for _ in 0..10 {
            agent(&mut e, &ws, "/w", None);
        }
        let (first, next) = page(&e, None, 4);
        assert_eq!(first.len(), 4);
        let mut seen: Vec<AgentId> = first.iter().map(|a| a.record.id).collect();
        // Between pages: one more agent (created last, so it comes in a later page) and one
        // of the next page's archived (it never comes).
        std::thread::sleep(std::time::Duration::from_millis(5));
        let late = agent(&mut e, &ws, "/w", None);
        let (peek, _) = page(&e, next, 4);
        let archived = peek[0].record.id;
        e.archive(archived).unwrap();
        let mut after = next;
        while let Some(key) = after {
            let (agents, next) = page(&e, Some(key), 4);
            assert!(agents.iter().all(|a| super::key(a) > key));
            seen.extend(agents.iter().map(|a| a.record.id));
            after = next;
        }
        let all: Vec<AgentId> = agents_where(&e, |_| true)
            .iter()
            .map(|a| a.record.id)
            .collect();
        assert_eq!(seen, all, "every card once, oldest first");
        assert!(seen.contains(&late) && !seen.contains(&archived));
        // A page asks for at least one card, at most PAGE_MAX.
        assert_eq!(page(&e, None, 0).0.len(), 1);
    }
}
