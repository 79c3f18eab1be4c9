//! An archive's news to windows (SPEC 5): the tracks and workspace buckets it changes go out
//! with `AgentArchived`, once its record is durable, never before.

use super::actor::Actor;
use super::events::{Event, WorkspaceSnapshot};
use crate::model::{AgentId, WorkspaceId};

/// Track and workspace news of an archive, told once every archive in `waiting` is durable.
pub(super) struct HeldNews {
    pub(super) waiting: std::collections::HashSet<AgentId>,
    pub(super) workspaces: Vec<WorkspaceId>,
    pub(super) tracks: Vec<AgentId>,
}

impl Actor {
    /// `id`'s archive is durable (or superseded): the news held for it goes out once every
    /// archive it waited for is.
    pub(super) fn release_news(&mut self, id: AgentId) {
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
        if self.events.receiver_count() == 0 {
            return;
        }
        for (ws, tracks) in ready {
            self.tell_news(ws.iter(), tracks.iter());
        }
    }

    /// The workspaces' buckets and the tracks as they are now.
    pub(super) fn tell_news<'a>(
        &self,
        workspaces: impl Iterator<Item = &'a WorkspaceId>,
        tracks: impl Iterator<Item = &'a AgentId>,
    ) {
        for w in workspaces {
            if let Some(rec) = self.engine.workspace(w) {
                let snap = WorkspaceSnapshot::of(&self.engine, rec);
                let _ = self.events.send(Event::WorkspaceUpdated {
                    workspace: Box::new(snap),
                });
            }
        }
        for p in tracks {
            let _ = self.events.send(Event::TrackChanged {
                track: self.track(*p),
            });
        }
    }
}
