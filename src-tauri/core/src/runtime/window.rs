//! What a window keeps of the fleet (issue 19): per agent only what its lists, tabs, tracks and
//! headers render — the listing's idea ([`super::AgentSummary`]) plus the live state those show —
//! never its system prompt, config, labels or resume state (a window asks `get_agent` for those
//! when its pane shows them). The snapshot is serialized straight from the engine: with 100,000
//! agents no full snapshot of each exists in between, only the JSON text the window reads.
//!
//! The text is shaped for what the page's JavaScript heap keeps of it. Every string a page parses
//! is its own copy, so the few values many cards repeat (a provider, a status, a workspace, a
//! cwd…) are sent once, in `strings`, and a card names them by their place there; an agent's
//! parent and a track's agents are the places of their cards in `agents` (an id only for a parent
//! that is not among them, an archived one); instants are epoch milliseconds, numbers the page
//! holds without a string. `ui/backend.js` (`fleetSnapshot`) puts the strings and ids back.

use std::collections::{BTreeSet, HashMap};

use serde::{Serialize, Serializer};

use super::actor::Actor;
use super::cmd::Command;
use super::{RuntimeError, RuntimeHandle};
use crate::engine::usage::UsageRollups;
use crate::engine::{AgentState, Engine, FxHashMap, TrackCounts};
use crate::model::{AgentId, ChangeCounts, LastRun, PermissionRequest, Usage};
use crate::store::StoreError;

/// One agent in a window's fleet: who it is, where, its state by the one status rule, and what
/// its rows show (power, changes, usage). Fields the UI reads off `fleet.agents` and nothing
/// else; `ui/store.js` (`CARD`) cuts an event's full snapshot down to the same fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard<'a> {
    pub id: AgentId,
    pub title: &'a str,
    /// These name an entry of the snapshot's `strings`.
    pub provider: u32,
    pub status: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<AgentRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<u32>,
    pub cwd: u32,
    pub bucket: u32,
    pub power: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requires_attention: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attention_reason: Option<u32>,
    /// Epoch milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity_at: Option<i64>,
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

/// Another agent, by the place of its card in the snapshot's `agents`, or by id when it has none.
#[derive(Serialize)]
#[serde(untagged)]
pub enum AgentRef {
    Card(u32),
    Id(AgentId),
}

fn is_empty_usage(u: &&Usage) -> bool {
    u.is_empty()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The unarchived agents, oldest first, with the shared strings and each card's place.
struct Fleet<'a> {
    engine: &'a Engine,
    usage: UsageRollups,
    agents: Vec<&'a AgentState>,
    place: FxHashMap<AgentId, u32>,
    strings: Vec<&'a str>,
    string_place: HashMap<&'a str, u32>,
}

impl<'a> Fleet<'a> {
    fn new(engine: &'a Engine) -> Fleet<'a> {
        let mut agents: Vec<&AgentState> = engine
            .agents()
            .filter(|a| !a.record.is_archived())
            .collect();
        agents.sort_unstable_by_key(|a| (a.record.created_at, a.record.id));
        let mut fleet = Fleet {
            engine,
            usage: engine.usage_rollups(),
            place: FxHashMap::default(),
            strings: Vec::new(),
            string_place: HashMap::new(),
            agents: Vec::new(),
        };
        fleet.place.reserve(agents.len());
        for (i, a) in agents.iter().enumerate() {
            fleet.place.insert(a.record.id, i as u32);
            let r = &a.record;
            let shared = [
                r.provider.as_str(),
                r.last_status.as_str(),
                r.workspace_id.as_ref().map_or("", |w| w.as_str()),
                r.cwd.as_str(),
                a.bucket().as_str(),
                engine.power_of(a).as_str(),
                r.attention_reason.map_or("", |x| x.as_str()),
            ];
            for s in shared {
                if !fleet.string_place.contains_key(s) {
                    fleet.string_place.insert(s, fleet.strings.len() as u32);
                    fleet.strings.push(s);
                }
            }
        }
        fleet.agents = agents;
        fleet
    }

    fn string(&self, s: &str) -> u32 {
        // Every string a card names was listed by `new`.
        self.string_place.get(s).copied().unwrap_or(0)
    }

    fn agent(&self, id: AgentId) -> AgentRef {
        match self.place.get(&id) {
            Some(i) => AgentRef::Card(*i),
            None => AgentRef::Id(id),
        }
    }

    fn card(&self, a: &'a AgentState) -> AgentCard<'a> {
        let (e, r) = (self.engine, &a.record);
        AgentCard {
            id: r.id,
            title: &r.title,
            provider: self.string(&r.provider),
            status: self.string(r.last_status.as_str()),
            parent_agent_id: e.existing_parent(a).map(|p| self.agent(p)),
            workspace_id: r.workspace_id.as_ref().map(|w| self.string(w.as_str())),
            cwd: self.string(&r.cwd),
            bucket: self.string(a.bucket().as_str()),
            power: self.string(e.power_of(a).as_str()),
            requires_attention: r.requires_attention,
            attention_reason: r.attention_reason.map(|x| self.string(x.as_str())),
            created_at: r.created_at.millis(),
            updated_at: r.updated_at.millis(),
            last_activity_at: r.last_activity_at.map(|t| t.millis()),
            pending_permission: a.pending_permission.as_deref(),
            waiting_for_slot: a.waiting_for_slot,
            changes: a.changes.as_deref().copied(),
            usage: &r.usage,
            tree_usage: self.usage.tree(r.id),
            last_run: r.last_run.as_deref(),
            turn_count: r.turn_count,
        }
    }
}

/// The cards, written one at a time as they are serialized.
struct Cards<'f, 'a>(&'f Fleet<'a>);

impl Serialize for Cards<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.agents.iter().map(|a| self.0.card(a)))
    }
}

/// A parent's track, naming agents by their cards' places.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Track {
    parent_agent_id: AgentRef,
    members: Vec<AgentRef>,
    counts: TrackCounts,
}

/// The tracks of every parent of an unarchived agent.
struct Tracks<'f, 'a>(&'f Fleet<'a>);

impl Serialize for Tracks<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (f, e) = (self.0, self.0.engine);
        let parents: BTreeSet<AgentId> = f
            .agents
            .iter()
            .filter_map(|a| e.existing_parent(a))
            .collect();
        s.collect_seq(parents.into_iter().map(|p| Track {
            parent_agent_id: f.agent(p),
            members: e.track(p).into_iter().map(|m| f.agent(m)).collect(),
            counts: e.track_counts(p),
        }))
    }
}

#[derive(Serialize)]
struct WindowSnapshot<'f, 'a> {
    strings: &'f [&'a str],
    #[serde(flatten)]
    fleet: super::FleetSnapshot<Cards<'f, 'a>, Tracks<'f, 'a>>,
}

impl Actor {
    /// The window's fleet snapshot as JSON text (`FleetSnapshot` with cards for agents).
    pub(super) fn window_snapshot(&self) -> Result<String, RuntimeError> {
        let fleet = Fleet::new(&self.engine);
        let snapshot = WindowSnapshot {
            strings: &fleet.strings,
            fleet: self.fleet_snapshot(Cards(&fleet), Tracks(&fleet)),
        };
        let encode = |message: String| StoreError::Encode {
            what: "the window's snapshot".into(),
            message,
        };
        // Sized for a typical card up front, so a big fleet's text is not copied while it grows.
        let mut out = Vec::with_capacity(4096 + fleet.agents.len() * 300);
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
