//! What an archive gesture would touch, asked before the gesture (SPEC 5): the confirm dialog
//! of every client words this plan, and "Archive finished" archives exactly its heads.

use std::collections::HashSet;

use super::{AgentState, Engine, EngineError};
use crate::model::{AgentId, ArchiveHead, ArchivePlan, KeptChild, Unfinished};

impl Engine {
    /// Archiving `id` (a tab's close or a track row's ×): it, with what it takes along.
    pub fn archive_plan(&self, id: AgentId) -> Result<ArchivePlan, EngineError> {
        let a = self.agent(id).ok_or(EngineError::UnknownAgent(id))?;
        Ok(ArchivePlan {
            heads: vec![self.head(a)],
            kept: Vec::new(),
        })
    }

    /// The track's "Archive finished" on `parent`. SPEC 5 words the bulk gesture as "every
    /// child that is not running"; a user reads "finished" as done with, so two more stay: a
    /// child that needs them (a pending permission or held start, an unseen failure: archiving
    /// it would hide what asks for them) and a child with anything still running below it (the
    /// cascade would stop work the gesture says it leaves alone). The dialog names what goes
    /// and what stays, and why.
    pub fn finished_plan(&self, parent: AgentId) -> Result<ArchivePlan, EngineError> {
        self.agent(parent)
            .ok_or(EngineError::UnknownAgent(parent))?;
        let mut plan = ArchivePlan::default();
        for kid in self.track(parent) {
            let Some(a) = self.agent(kid) else { continue };
            match self.unfinished(a) {
                Some(why) => plan.kept.push(KeptChild {
                    id: kid,
                    title: a.record.title.clone(),
                    provider: a.record.provider.to_string(),
                    why,
                }),
                None => plan.heads.push(self.head(a)),
            }
        }
        Ok(plan)
    }

    /// How many of `parent`'s track "Archive finished" would archive now (its button's count).
    pub fn finished_in_track(&self, parent: AgentId) -> usize {
        self.track(parent)
            .into_iter()
            .filter_map(|kid| self.agent(kid))
            .filter(|a| self.unfinished(a).is_none())
            .count()
    }

    /// Why "Archive finished" leaves `a`, if it does; what runs below is looked at last, and
    /// only as far as the first running agent.
    fn unfinished(&self, a: &AgentState) -> Option<Unfinished> {
        let own = Unfinished::of(a.status(), a.needs_you(), false);
        if own.is_some() {
            return own;
        }
        let runs_below = self.descendants_until(a.record.id, |id| self.is_active(id));
        runs_below.then_some(Unfinished::SubagentRunning)
    }

    /// An agent that starts or stops running changes the "Archive finished" count of every
    /// track above it (a member with a subagent running is not finished): they are told too.
    pub(super) fn tell_ancestors_activity(&mut self, id: AgentId) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        let active = a.status().is_active() && !a.record.is_archived();
        if a.counted_active != active {
            a.counted_active = active;
            self.mark_tracks_above(id);
        }
    }

    /// What runs below `id` changed: the tracks above it count their finished members again.
    /// The walk stops at a running ancestor: every member above it has that one running below
    /// it whatever happened here, so a chain of starting agents costs one step each.
    pub(super) fn mark_tracks_above(&mut self, id: AgentId) {
        let mut seen = HashSet::from([id]);
        let mut cur = id;
        while let Some(p) = self.unarchived_parent(cur) {
            if !seen.insert(p) {
                break;
            }
            self.out.tracks.insert(p);
            if self.agents.get(&p).is_some_and(|a| a.status().is_active()) {
                break;
            }
            cur = p;
        }
    }

    fn head(&self, a: &AgentState) -> ArchiveHead {
        let below = self.descendants(a.record.id);
        ArchiveHead {
            id: a.record.id,
            title: a.record.title.clone(),
            provider: a.record.provider.to_string(),
            running: a.status().is_active(),
            word: crate::model::status_word(
                &a.record,
                a.bucket(),
                a.pending_permission.as_deref(),
                a.queue_place(),
            )
            .into_owned(),
            subagents: below.len(),
            running_subagents: below.iter().filter(|d| self.is_active(**d)).count(),
        }
    }

    fn is_active(&self, id: AgentId) -> bool {
        self.agent(id).is_some_and(|a| a.status().is_active())
    }

    /// Every unarchived agent below `id`, through the tracks.
    fn descendants(&self, id: AgentId) -> Vec<AgentId> {
        let mut out = Vec::new();
        self.descendants_until(id, |d| {
            out.push(d);
            false
        });
        out
    }

    /// Walks the unarchived agents below `id` until `stop` says so; whether it did. Iterative:
    /// no depth limit, no cycle followed.
    fn descendants_until(&self, id: AgentId, mut stop: impl FnMut(AgentId) -> bool) -> bool {
        let mut seen = HashSet::from([id]);
        let mut stack = vec![id];
        while let Some(cur) = stack.pop() {
            for c in self.track(cur) {
                if seen.insert(c) {
                    if stop(c) {
                        return true;
                    }
                    stack.push(c);
                }
            }
        }
        false
    }
}
