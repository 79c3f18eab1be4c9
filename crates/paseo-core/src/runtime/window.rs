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
//!
//! Every fleet a window shows (this machine's, each host's) reaches it the same way: a snapshot
//! that says the number of the last event it reflects (`seq`), then the events numbered after it
//! on one channel ([`EVENT`], [`Numbered`]), so the page has one way to catch up (`ui/sync.js`).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::actor::Actor;
use super::command::Command;
pub use super::command::WindowQuery;
use super::{AgentSnapshot, Event, RuntimeError, RuntimeHandle};
use crate::engine::usage::UsageRollups;
use crate::engine::{AgentState, Engine};
use crate::model::{
    AgentId, AttentionReason, Bucket, ChangeCounts, LastRun, PermissionRequest, Power, Status,
    Tally, Usage, WorkspaceId,
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
    /// What a person calls it when that is not its title as it is
    /// ([`crate::model::name_beyond_title`]): the page names it by this, else by its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub provider: &'a str,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<AgentId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<&'a WorkspaceId>,
    pub cwd: &'a str,
    pub bucket: Bucket,
    /// The word its rows show and their look ([`crate::model::attention`]): the page never
    /// words a status itself.
    pub status_word: Cow<'a, str>,
    pub look: &'a str,
    pub power: Power,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requires_attention: bool,
    /// It needs the user (a pending permission or an unseen error), by the one status rule
    /// ([`crate::model::needs_you`]): what "Archive finished" leaves alone for it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub needs_you: bool,
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
    /// The budget over its tree, what it used and what is left (SPEC 18): the header's
    /// "N of M tokens", current with every change of the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_budget: Option<crate::model::TreeBudget>,
    /// A root agent's subagents rolled up: the words its row says and the buckets they show
    /// (the workspace home's filter and status sort read these, never the subagents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagents: Option<crate::model::Subagents>,
    /// The schedule a run was started by (SPEC 20: its tab and row say so).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<&'a str>,
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
            name: crate::model::name_beyond_title(r),
            provider: &r.provider,
            status: r.last_status,
            parent_agent_id: engine.existing_parent(a),
            workspace_id: r.workspace_id.as_ref(),
            cwd: &r.cwd,
            bucket: a.bucket(),
            status_word: crate::model::status_word(
                r,
                a.bucket(),
                a.pending_permission.as_deref(),
                a.queue_place(),
            ),
            look: crate::model::look(r, a.bucket()),
            power: engine.power_of(a),
            requires_attention: r.requires_attention,
            needs_you: a.needs_you(),
            attention_reason: r.attention_reason,
            created_at: r.created_at.millis(),
            updated_at: r.updated_at.millis(),
            last_activity_at: r.last_activity_at.map(|t| t.millis()),
            pending_permission: a.pending_permission.as_deref(),
            waiting_for_slot: a.waiting_for_slot(),
            queue_place: a.queue_place(),
            changes: a.changes.as_deref().copied(),
            usage: &r.usage,
            tree_usage: rollups.tree(r.id),
            last_run: r.last_run.as_deref(),
            turn_count: r.turn_count,
            unconfined: !engine.contained(a),
            tree_budget: engine.tree_budget(r.id),
            subagents: super::events::subagents_of(engine, a),
            schedule: r.labels.get(crate::model::schedule::SCHEDULE_LABEL),
        }
    }

    /// The card of an event's snapshot: the same fields, so a window holds one shape.
    pub fn of_snapshot(s: &'a AgentSnapshot) -> AgentCard<'a> {
        let r = &s.record;
        AgentCard {
            id: r.id,
            title: &r.title,
            name: s.name.clone(),
            provider: &r.provider,
            status: s.status,
            parent_agent_id: s.parent_agent_id,
            workspace_id: r.workspace_id.as_ref(),
            cwd: &r.cwd,
            bucket: s.bucket,
            status_word: Cow::Borrowed(&s.status_word),
            look: &s.look,
            power: s.power,
            requires_attention: r.requires_attention,
            needs_you: s.needs_you,
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
            tree_budget: s.tree_budget.clone(),
            subagents: s.subagents.clone(),
            schedule: r.labels.get(crate::model::schedule::SCHEDULE_LABEL),
        }
    }
}

/// A parent's track as a window holds it: its members' ids, oldest first, and its counts when a
/// member is running, queued, needing you or failed. Any other's are all 0 but its size: the
/// answer has those once per size ([`quiet_counts`]), so tens of thousands of quiet tracks do not
/// cost the page an object each.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowTrack {
    pub parent_agent_id: AgentId,
    pub members: Vec<AgentId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Tally>,
}

/// The most cards one page carries, whatever a window asks.
pub const PAGE_MAX: usize = 20_000;

/// Unarchived agents, oldest first, that `keep` accepts.
fn agents_where(e: &Engine, keep: impl Fn(&AgentState) -> bool) -> Vec<&AgentState> {
    let mut agents = keyed(e, |_, a| keep(a));
    agents.sort_unstable_by_key(|(k, _)| *k);
    agents.into_iter().map(|(_, a)| a).collect()
}

/// The unarchived agents `keep` accepts (given each one's [`key`] and state), with their keys:
/// taken once per agent, so a sort compares keys at hand instead of reaching through two boxes
/// per comparison (a cache miss each, at 100,000 agents most of a page's time).
fn keyed(
    e: &Engine,
    keep: impl Fn((i64, AgentId), &AgentState) -> bool,
) -> Vec<((i64, AgentId), &AgentState)> {
    e.agents()
        .filter(|a| !a.record.is_archived())
        .map(|a| (key(a), a))
        .filter(|&(k, a)| keep(k, a))
        .collect()
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
    let mut agents = keyed(e, |k, _| after.is_none_or(|after| k > after));
    // Only the page is sorted: the `limit` oldest are picked out first, in linear time (a
    // window's pages at 100,000 agents sorted everything after each one again).
    let more = agents.len() > limit;
    if more {
        agents.select_nth_unstable_by_key(limit - 1, |(k, _)| *k);
        agents.truncate(limit);
    }
    agents.sort_unstable_by_key(|(k, _)| *k);
    let next = more.then(|| agents[limit - 1].0);
    (agents.into_iter().map(|(_, a)| a).collect(), next)
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
            // A member "Archive finished" would leave makes a track's counts its own too.
            let busy = c.running > 0
                || c.queued > 0
                || c.needs_you > 0
                || c.failed > 0
                || c.finished != Some(c.total);
            Some(WindowTrack {
                parent_agent_id: p,
                members,
                counts: busy.then_some(c),
            })
        })
        .collect()
}

/// The counts of a quiet track (nothing running, queued, needing you or failed, every member
/// finished) of each size
/// `tracks` has, and of an empty one (a track that empties), as [size, counts] pairs: the page
/// renders a quiet track's line from these, as the core words it.
fn quiet_counts(tracks: &[WindowTrack]) -> Vec<(usize, Tally)> {
    // Quiet: every member finished, as "Archive finished" counts them.
    let quiet = |total| Tally {
        total,
        finished: Some(total),
        ..Tally::default()
    };
    let mut sizes = BTreeMap::from([(0, quiet(0))]);
    for t in tracks.iter().filter(|t| t.counts.is_none()) {
        sizes
            .entry(t.members.len())
            .or_insert_with(|| quiet(t.members.len()));
    }
    sizes.into_iter().collect()
}

/// The workspace of the unarchived agent active last among open workspaces (the page's rule for
/// a window with none selected, `ui/layout.js`).
fn latest_workspace(e: &Engine) -> Option<&WorkspaceId> {
    let open = |w: &WorkspaceId| e.workspace(w).is_some_and(|w| !w.is_archived());
    let mut latest: Option<(i64, &WorkspaceId)> = None;
    for a in e.agents().filter(|a| !a.record.is_archived()) {
        let Some(w) = a.record.workspace_id.as_ref() else {
            continue;
        };
        let at = a
            .record
            .last_activity_at
            .unwrap_or(a.record.updated_at)
            .millis();
        // The registry is looked up only for an agent later than the latest so far: once per
        // agent, its string comparisons were most of a first screen's time at 100,000 agents.
        if latest.is_none_or(|(t, _)| at > t) && open(w) {
            latest = Some((at, w));
        }
    }
    latest.map(|(_, w)| w)
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
struct FleetAnswer<'a> {
    /// The number of the last event it reflects: the window applies the events after it.
    seq: u64,
    /// Whether `agents` is every card (else the page asks for the rest in pages).
    whole: bool,
    quiet_counts: Vec<(usize, Tally)>,
    #[serde(flatten)]
    fleet: super::FleetSnapshot<Vec<AgentCard<'a>>, Vec<WindowTrack>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Page<'a> {
    agents: Vec<AgentCard<'a>>,
    tracks: Vec<WindowTrack>,
    quiet_counts: Vec<(usize, Tally)>,
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
        let quiet_counts = quiet_counts(&tracks);
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
                    quiet_counts,
                    next,
                },
            ),
            None => serde_json::to_writer(
                &mut out,
                &FleetAnswer {
                    seq: self.out.seq(),
                    whole,
                    quiet_counts,
                    fleet: self.fleet_snapshot(list, tracks),
                },
            ),
        };
        written.map_err(|e| encode(e.to_string()))?;
        super::release_freed_memory_later();
        Ok(String::from_utf8(out).map_err(|e| encode(e.to_string()))?)
    }
}

/// An event as a window gets it: an agent's change as its card ([`AgentCard`], the shape of the
/// snapshot's and the pages' cards), every other event as it is. The event itself keeps the
/// whole snapshot: other clients read it back whole (`api/response_tests.rs`).
#[derive(Clone, Copy)]
pub struct WindowEvent<'a>(pub &'a Event);

impl Serialize for WindowEvent<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let (kind, agent) = match self.0 {
            Event::AgentUpdated { agent } => ("agentUpdated", agent),
            Event::AgentArchived { agent } => ("agentArchived", agent),
            other => return other.serialize(s),
        };
        let mut m = s.serialize_struct("Event", 2)?;
        m.serialize_field("type", kind)?;
        m.serialize_field("agent", &AgentCard::of_snapshot(agent))?;
        m.end()
    }
}

/// The one channel every window hears the fleets' events on, this machine's and the hosts'.
pub const EVENT: &str = "paseo://event";

/// One message on [`EVENT`]: an event numbered as its source numbers them (`host`: a host's; none:
/// this machine's), or the news that the events up to `seq` were lost on the way to the windows
/// (`missed`: they fell behind), after which a window takes that source's snapshot again.
///
/// ```text
/// {"seq":42,"event":{"type":"agentUpdated","agent":{…card…}}}
/// {"host":"box","seq":7,"event":{…}}
/// {"seq":90,"missed":12}
/// ```
#[derive(Clone, Copy, Serialize)]
pub struct Numbered<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<&'a str>,
    pub seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<WindowEvent<'a>>,
    #[serde(skip_serializing_if = "is_zero")]
    pub missed: u64,
}

impl<'a> Numbered<'a> {
    /// Event number `seq` of `host` (none: this machine).
    pub fn event(host: Option<&'a str>, seq: u64, event: &'a Event) -> Self {
        Numbered {
            host,
            seq,
            event: Some(WindowEvent(event)),
            missed: 0,
        }
    }

    /// This machine's `missed` events up to `seq` never reached the windows.
    pub fn missed(seq: u64, missed: u64) -> Self {
        Numbered {
            host: None,
            seq,
            event: None,
            missed,
        }
    }
}

impl RuntimeHandle {
    /// What a window renders from, as JSON text: the fleet with the cards `query` asks for
    /// ([`AgentCard`]); `get` has an agent's whole snapshot.
    pub(crate) async fn window_snapshot(&self, query: WindowQuery) -> Result<String, RuntimeError> {
        self.ask(|r| Command::WindowSnapshot(query, r)).await
    }
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
