//! What a window keeps of the fleet (docs/scale.md): per agent only what its lists, tabs, tracks
//! and headers render — the listing's idea ([`super::AgentSummary`]) plus the live state those show
//! — never its system prompt, config, labels or resume state (a window asks `get_agent` for those
//! when its pane shows them). The snapshot is serialized straight from the engine: with 100,000
//! agents no full snapshot of each exists in between, only the columns and the JSON text.
//!
//! The text is shaped for what the page's JavaScript heap keeps of it. Every string a page parses
//! is its own copy, so the few values many cards repeat (a provider, a status, a workspace, a
//! cwd…) are sent once, in `strings`, and a card names them by their place there; an agent's
//! parent and a track's agents are the places of their cards in `agents` (an id only for a parent
//! that is not among them, an archived one); instants are epoch milliseconds, numbers the page
//! holds without a string. And every object it parses is a cell of its heap that lingers after it
//! is read, so the cards come as columns — an array per field, the ids and titles each one string
//! — that `ui/cards.js` keeps as typed arrays and slices ([`Cards`]).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use serde::{Serialize, Serializer};

use super::actor::Actor;
use super::command::Command;
use super::{RuntimeError, RuntimeHandle};
use crate::engine::usage::UsageRollups;
use crate::engine::{AgentState, Engine};
use crate::model::{AgentId, ChangeCounts, LastRun, PermissionRequest, Tally, Usage};
use crate::store::StoreError;
use rustc_hash::FxHashMap;

/// What a few agents' rows show beyond the columns every agent has (a window's page keeps the
/// fleet in columns, `ui/cards.js`): sent only for an agent that has any of it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RareCard<'a> {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub requires_attention: bool,
    /// It needs the user (a pending permission or an unseen error), by the one status rule
    /// ([`crate::model::needs_you`]): what "Archive finished" leaves alone for it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub needs_you: bool,
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
    /// Outside the sandbox (SPEC 16, `Engine::contained`): rare unless the user turned
    /// containment off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unconfined: bool,
}

impl RareCard<'_> {
    fn is_empty(&self) -> bool {
        !self.requires_attention
            && !self.needs_you
            && self.pending_permission.is_none()
            && self.waiting_for_slot.is_none()
            && self.changes.is_none()
            && self.usage.is_empty()
            && self.tree_usage.is_empty()
            && self.last_run.is_none()
            && self.turn_count == 0
            && !self.unconfined
    }
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
    /// Borrowed from the records, but for the status words the model words from a place in line
    /// ("queued · 3rd").
    strings: Vec<Cow<'a, str>>,
    string_place: HashMap<Cow<'a, str>, u32>,
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
                crate::model::look(r, a.bucket()),
            ];
            let word = status_word(a);
            for s in shared.into_iter().map(Cow::Borrowed).chain([word]) {
                if !fleet.string_place.contains_key(&s) {
                    fleet
                        .string_place
                        .insert(s.clone(), fleet.strings.len() as u32);
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

    fn rare(&self, a: &'a AgentState) -> RareCard<'a> {
        let r = &a.record;
        RareCard {
            requires_attention: r.requires_attention,
            needs_you: a.needs_you(),
            pending_permission: a.pending_permission.as_deref(),
            waiting_for_slot: a.waiting_for_slot,
            queue_place: a.queue_place,
            changes: a.changes.as_deref().copied(),
            usage: &r.usage,
            tree_usage: self.usage.tree(r.id),
            last_run: r.last_run.as_deref(),
            turn_count: r.turn_count,
            unconfined: !self.engine.contained(a),
        }
    }

    /// A shared string's place + 1; 0 for none.
    fn shared(&self, s: Option<&str>) -> u32 {
        s.map_or(0, |s| self.string(s) + 1)
    }
}

/// The cards as columns, one entry per agent in each: the page builds its `Cards` from these
/// arrays without an object per agent (objects `JSON.parse` makes stay in the page's memory
/// long after they are read; docs/scale.md). `ids` holds the ids one after the
/// other (36 characters each), `titles` the titles, each ending where `titleEnds` says (in
/// UTF-16 units, as JavaScript counts); the shared fields name a place in `strings` plus one
/// (0: none); `parent` is the parent's place, -1 for none and -2 for one that is not among them
/// (its id in `parentIds`); `rare` pairs a place with what only some agents have.
struct Cards<'f, 'a>(&'f Fleet<'a>);

impl Serialize for Cards<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (f, e) = (self.0, self.0.engine);
        let n = f.agents.len();
        let mut ids = String::with_capacity(n * 36);
        let mut titles = String::new();
        let mut title_ends = Vec::with_capacity(n);
        let mut shared: [Vec<u32>; 9] = Default::default();
        let mut parent = Vec::with_capacity(n);
        let mut parent_ids = std::collections::BTreeMap::new();
        let (mut created, mut updated, mut active) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let mut rare = Vec::new();
        let mut end = 0usize;
        for (i, a) in f.agents.iter().enumerate() {
            let r = &a.record;
            use std::fmt::Write;
            let _ = write!(ids, "{}", r.id);
            titles.push_str(&r.title);
            end += r.title.encode_utf16().count();
            title_ends.push(end);
            let values = [
                Some(r.provider.as_str()),
                Some(r.last_status.as_str()),
                r.workspace_id.as_ref().map(|w| w.as_str()),
                Some(r.cwd.as_str()),
                Some(a.bucket().as_str()),
                Some(e.power_of(a).as_str()),
                r.attention_reason.map(|x| x.as_str()),
                Some(&*status_word(a)),
                Some(crate::model::look(r, a.bucket())),
            ];
            for (column, value) in shared.iter_mut().zip(values) {
                column.push(f.shared(value));
            }
            parent.push(match e.existing_parent(a).map(|p| f.agent(p)) {
                None => -1i64,
                Some(AgentRef::Card(place)) => i64::from(place),
                Some(AgentRef::Id(id)) => {
                    parent_ids.insert(i, id);
                    -2
                }
            });
            created.push(r.created_at.millis());
            updated.push(r.updated_at.millis());
            active.push(r.last_activity_at.map(|t| t.millis()));
            let extra = f.rare(a);
            if !extra.is_empty() {
                rare.push((i, extra));
            }
        }
        let [provider, status, workspace, cwd, bucket, power, attention, word, look] = shared;
        let mut m = s.serialize_map(Some(19))?;
        m.serialize_entry("count", &n)?;
        m.serialize_entry("ids", &ids)?;
        m.serialize_entry("titles", &titles)?;
        m.serialize_entry("titleEnds", &title_ends)?;
        m.serialize_entry("provider", &provider)?;
        m.serialize_entry("status", &status)?;
        m.serialize_entry("workspaceId", &workspace)?;
        m.serialize_entry("cwd", &cwd)?;
        m.serialize_entry("bucket", &bucket)?;
        m.serialize_entry("power", &power)?;
        m.serialize_entry("attentionReason", &attention)?;
        m.serialize_entry("statusWord", &word)?;
        m.serialize_entry("look", &look)?;
        m.serialize_entry("parent", &parent)?;
        m.serialize_entry("parentIds", &parent_ids)?;
        m.serialize_entry("createdAt", &created)?;
        m.serialize_entry("updatedAt", &updated)?;
        m.serialize_entry("lastActivityAt", &active)?;
        m.serialize_entry("rare", &rare)?;
        m.end()
    }
}

/// The tracks of every parent of an unarchived agent, as columns: `parents` (places in
/// `agents`, or ids), `members` one track after the other (each ending where `ends` says), and
/// `counts` as [track, counts] pairs for the tracks with a member running, queued, needing you or
/// failed, or with a member "Archive finished" would leave. Any other's are all 0 but its size
/// (and every member finished): `quiet` has them once per size, as [size, counts]
/// pairs (0 included, for a track that empties), so the window renders a quiet track's line as
/// the core words it without keeping an object per track.
struct Tracks<'f, 'a>(&'f Fleet<'a>);

impl Serialize for Tracks<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (f, e) = (self.0, self.0.engine);
        let parents: BTreeSet<AgentId> = f
            .agents
            .iter()
            .filter_map(|a| e.existing_parent(a))
            .collect();
        let mut places = Vec::with_capacity(parents.len());
        let mut members = Vec::new();
        let mut ends = Vec::with_capacity(parents.len());
        let mut counts = Vec::new();
        let empty = Tally {
            finished: Some(0),
            ..Tally::default()
        };
        let mut quiet = std::collections::BTreeMap::from([(0, empty)]);
        for (i, p) in parents.into_iter().enumerate() {
            places.push(f.agent(p));
            members.extend(e.track(p).into_iter().map(|m| f.agent(m)));
            ends.push(members.len());
            let c = e.track_counts(p);
            if c.running > 0
                || c.queued > 0
                || c.needs_you > 0
                || c.failed > 0
                || c.finished != Some(c.total)
            {
                counts.push((i, c));
            } else {
                quiet.entry(c.total).or_insert(c);
            }
        }
        let quiet: Vec<(usize, Tally)> = quiet.into_iter().collect();
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("parents", &places)?;
        m.serialize_entry("members", &members)?;
        m.serialize_entry("ends", &ends)?;
        m.serialize_entry("counts", &counts)?;
        m.serialize_entry("quiet", &quiet)?;
        m.end()
    }
}

/// The word the agent's rows show ([`crate::model::attention`]).
fn status_word(a: &AgentState) -> Cow<'static, str> {
    crate::model::status_word(
        &a.record,
        a.bucket(),
        a.pending_permission.as_deref(),
        a.queue_place,
    )
}

#[derive(Serialize)]
struct WindowSnapshot<'f, 'a> {
    strings: &'f [Cow<'a, str>],
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
        // Sized for a typical agent up front, so a big fleet's text is not copied while it grows.
        let mut out = Vec::with_capacity(4096 + fleet.agents.len() * 150);
        serde_json::to_writer(&mut out, &snapshot).map_err(|e| encode(e.to_string()))?;
        Ok(String::from_utf8(out).map_err(|e| encode(e.to_string()))?)
    }
}

impl RuntimeHandle {
    /// What a window renders from, as JSON text: the fleet with its agents' cards in columns
    /// ([`Cards`]); `get` has an agent's whole snapshot.
    pub async fn window_snapshot(&self) -> Result<String, RuntimeError> {
        self.ask(Command::WindowSnapshot).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::NewAgent;
    use crate::model::TurnOutcome;
    use crate::workspaces::directory_workspace_with;
    use serde_json::{json, Value};
    use std::path::Path;

    /// One agent's field from the columns: a shared string's, or a rare one's.
    fn field(snap: &Value, place: usize, key: &str) -> Value {
        let cards = &snap["cards"];
        if let Some(column) = cards[key].as_array() {
            let at = column[place].as_u64().unwrap_or(0) as usize;
            return if at == 0 {
                Value::Null
            } else {
                snap["strings"][at - 1].clone()
            };
        }
        let rare = cards["rare"].as_array().into_iter().flatten();
        rare.filter(|r| r[0] == place)
            .map(|r| r[1][key].clone())
            .next()
            .unwrap_or(Value::Null)
    }

    #[test]
    fn cards_carry_the_look_and_needs_you_and_quiet_tracks_their_counts_by_size() {
        let mut e = Engine::new();
        let now = crate::model::Timestamp::now();
        let (ws, project) = directory_workspace_with(Path::new("/src"), None, &[], now);
        let workspace = ws.workspace_id.clone();
        e.upsert_workspace(ws, project);
        let mut make = |parent: Option<AgentId>| {
            let id = e
                .create(NewAgent {
                    parent,
                    initial_prompt: Some("ls".into()),
                    ..NewAgent::new("shell", false, "/src", workspace.clone())
                })
                .unwrap();
            e.session_ready(id).unwrap();
            id
        };
        let (lead, other) = (make(None), make(None));
        let canceled = make(Some(lead));
        let failed = make(Some(lead));
        let quiet = make(Some(other));
        e.turn_ended(canceled, TurnOutcome::Canceled).unwrap();
        let failure = TurnOutcome::Failed {
            message: "boom".into(),
            detail: None,
        };
        e.turn_ended(failed, failure).unwrap();
        e.turn_ended(quiet, TurnOutcome::Completed).unwrap();
        e.mark_seen(quiet).unwrap();

        let fleet = Fleet::new(&e);
        let place = |id: AgentId| fleet.place[&id] as usize;
        let snap = json!({
            "strings": &fleet.strings,
            "cards": Cards(&fleet),
            "tracks": Tracks(&fleet),
        });
        assert_eq!(field(&snap, place(canceled), "look"), "canceled");
        assert_eq!(field(&snap, place(canceled), "bucket"), "done");
        assert_eq!(field(&snap, place(failed), "look"), "failed");
        assert_eq!(field(&snap, place(failed), "needsYou"), true);
        assert_eq!(field(&snap, place(canceled), "needsYou"), Value::Null);
        // The lead's track has a failed child: its counts are its own. The other's is quiet:
        // its line comes once for its size (and for an empty track).
        let tracks = &snap["tracks"];
        assert_eq!(tracks["counts"].as_array().unwrap().len(), 1);
        let quiet_line = |size: usize| {
            let pairs = tracks["quiet"].as_array().unwrap();
            let tally = pairs.iter().find(|p| p[0] == size).unwrap();
            let parts = tally[1]["line"].as_array().unwrap();
            parts
                .iter()
                .map(|p| p["text"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
                .join(" · ")
        };
        assert_eq!(quiet_line(1), "0 running · 0 need you · 1 total");
        assert_eq!(quiet_line(0), "0 running · 0 need you · 0 total");
        assert_eq!(tracks["quiet"].as_array().unwrap().len(), 2);
    }
}
