//! What every window and client hears: events, the fleet's counts when they change, notices,
//! and an archive's news (SPEC 5): the tracks and workspace buckets an archive changes go out
//! with `AgentArchived`, once its record is durable, never before.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::broadcast;

use super::events::{AgentSnapshot, Event, FleetCounts, TrackSnapshot, WorkspaceSnapshot};
use crate::engine::{AgentState, Engine};
use crate::model::{AgentId, WorkspaceId};
use crate::store::Quarantined;

/// Track and workspace news of an archive, told once every archive in `waiting` is durable.
struct HeldNews {
    waiting: HashSet<AgentId>,
    workspaces: Vec<WorkspaceId>,
    tracks: Vec<AgentId>,
}

pub(super) struct Broadcast {
    events: broadcast::Sender<Event>,
    /// How many events were sent so far: the number of the last one. A subscriber that joined
    /// in an actor step knows the number of every event it receives after (SPEC 17: a host's
    /// client resynchronises from a snapshot without missing or doubling one).
    sent: AtomicU64,
    counts: FleetCounts,
    counts_dirty: bool,
    /// What load found and what went wrong since, for every snapshot.
    notices: Vec<String>,
    quarantined: Vec<Quarantined>,
    /// Track and workspace news waiting for archives to be durable (SPEC 5).
    held_news: Vec<HeldNews>,
}

/// A track as it is now.
pub(super) fn track(engine: &Engine, parent: AgentId) -> TrackSnapshot {
    TrackSnapshot {
        parent_agent_id: parent,
        members: engine.track(parent),
        counts: engine.track_counts(parent),
    }
}

impl Broadcast {
    pub(super) fn new(
        events: broadcast::Sender<Event>,
        notices: Vec<String>,
        quarantined: Vec<Quarantined>,
    ) -> Broadcast {
        Broadcast {
            events,
            sent: AtomicU64::new(0),
            counts: FleetCounts::default(),
            counts_dirty: false,
            notices,
            quarantined,
            held_news: Vec::new(),
        }
    }

    /// Whether anybody hears: at start, before any window or client subscribed, events are
    /// not built at all.
    pub(super) fn listening(&self) -> bool {
        self.events.receiver_count() > 0
    }

    pub(super) fn send(&self, event: Event) {
        self.sent.fetch_add(1, Ordering::Relaxed);
        let _ = self.events.send(event);
    }

    /// The number of the last event sent: a snapshot taken in this step reflects every event
    /// up to it and none after.
    pub(super) fn seq(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// A receiver of every event after [`Self::seq`], in order.
    pub(super) fn subscribe(&self) -> (broadcast::Receiver<Event>, u64) {
        (self.events.subscribe(), self.seq())
    }

    pub(super) fn notice(&mut self, message: String) {
        tracing::warn!("{message}");
        self.send(Event::Notice {
            level: "warning".into(),
            message: message.clone(),
        });
        self.notices.push(message);
    }

    pub(super) fn notices(&self) -> &[String] {
        &self.notices
    }

    pub(super) fn quarantined(&self) -> &[Quarantined] {
        &self.quarantined
    }

    pub(super) fn agent_updated(&self, engine: &Engine, a: &AgentState) {
        let agent = Box::new(AgentSnapshot::of(engine, a));
        self.send(Event::AgentUpdated { agent });
    }

    // ------------------------------------------------------------ counts

    /// The counts as they are now, without telling anyone (at start).
    pub(super) fn set_counts(&mut self, engine: &Engine) {
        self.counts = FleetCounts::of(engine);
    }

    /// Agents changed: the counts are checked at the next tick.
    pub(super) fn counts_may_change(&mut self) {
        self.counts_dirty = true;
    }

    pub(super) fn publish_counts(&mut self, engine: &Engine) {
        if !self.counts_dirty {
            return;
        }
        self.counts_dirty = false;
        let c = FleetCounts::of(engine);
        if c != self.counts {
            self.counts = c;
            self.send(Event::CountsChanged { counts: c });
        }
    }

    // ------------------------------------------------------------ an archive's news

    /// `a`'s archive is durable: every window hears of it now.
    pub(super) fn agent_archived(&mut self, engine: &Engine, a: &AgentState) {
        let snap = Box::new(AgentSnapshot::of(engine, a));
        self.send(Event::AgentArchived { agent: snap });
        self.counts_dirty = true;
    }

    /// A track or bucket that drops an archived agent is news of the archive: it goes out
    /// with the archives in `waiting`, once their records are durable.
    pub(super) fn hold_news(
        &mut self,
        waiting: HashSet<AgentId>,
        workspaces: Vec<WorkspaceId>,
        tracks: Vec<AgentId>,
    ) {
        self.held_news.push(HeldNews {
            waiting,
            workspaces,
            tracks,
        });
    }

    /// News of what no pending archive touched goes out now; later news of what one touched
    /// would show it too early: it goes out with that archive's (current then).
    pub(super) fn tell_unheld<'a>(
        &self,
        engine: &Engine,
        workspaces: impl Iterator<Item = &'a WorkspaceId>,
        tracks: impl Iterator<Item = &'a AgentId>,
    ) {
        let pending = |n: &HeldNews| !n.waiting.is_empty();
        let ws: Vec<_> = workspaces
            .filter(|w| {
                !self
                    .held_news
                    .iter()
                    .any(|n| pending(n) && n.workspaces.contains(w))
            })
            .collect();
        let tracks: Vec<_> = tracks
            .filter(|p| {
                !self
                    .held_news
                    .iter()
                    .any(|n| pending(n) && n.tracks.contains(p))
            })
            .collect();
        self.tell_news(engine, ws.into_iter(), tracks.into_iter());
    }

    /// `id`'s archive is durable (or superseded): the news held for it goes out once every
    /// archive it waited for is.
    pub(super) fn release_news(&mut self, engine: &Engine, id: AgentId) {
        let mut ready = Vec::new();
        self.held_news.retain_mut(|n| {
            n.waiting.remove(&id);
            if n.waiting.is_empty() {
                ready.push((
                    std::mem::take(&mut n.workspaces),
                    std::mem::take(&mut n.tracks),
                ));
            }
            !n.waiting.is_empty()
        });
        if !self.listening() {
            return;
        }
        for (ws, tracks) in ready {
            self.tell_news(engine, ws.iter(), tracks.iter());
        }
    }

    /// The workspaces' buckets and the tracks as they are now.
    fn tell_news<'a>(
        &self,
        engine: &Engine,
        workspaces: impl Iterator<Item = &'a WorkspaceId>,
        tracks: impl Iterator<Item = &'a AgentId>,
    ) {
        for w in workspaces {
            if let Some(rec) = engine.workspace(w) {
                let snap = WorkspaceSnapshot::of(engine, rec);
                self.send(Event::WorkspaceUpdated {
                    workspace: Box::new(snap),
                });
            }
        }
        for p in tracks {
            self.send(Event::TrackChanged {
                track: track(engine, *p),
            });
        }
    }
}
