//! Workspace activity and the tracks (SPEC 6 and 7): the indexes kept incrementally as agents
//! change: each parent's unarchived children (its track), each agent's root ancestor, and what
//! each agent contributes to a workspace's bucket. An agent's own bucket is the model's status
//! rule; where it counts is decided here.

use std::collections::{HashMap, HashSet};

use super::{AgentState, Engine};
use crate::model::{AgentId, Alert, Bucket, FleetCounts, Tally, Timestamp, WorkspaceId};

impl FleetCounts {
    /// The fleet's counts, by the one status rule.
    pub fn of(engine: &Engine) -> FleetCounts {
        let mut c = FleetCounts::default();
        for a in engine.agents() {
            c.add(a.bucket(), a.record.is_archived());
        }
        c
    }
}

impl Engine {
    /// Whether `id` sits below `ancestor` in the parent chain (labels, archived or not).
    pub fn is_descendant(&self, id: AgentId, ancestor: AgentId) -> bool {
        let mut seen = HashSet::new();
        let mut cur = id;
        while let Some(p) = self.agents.get(&cur).and_then(|a| a.parent) {
            if p == ancestor {
                return true;
            }
            if !seen.insert(p) {
                return false;
            }
            cur = p;
        }
        false
    }

    /// The labelled parent if it exists and is not archived (the parent whose track it is in).
    pub fn unarchived_parent(&self, id: AgentId) -> Option<AgentId> {
        let a = self.agents.get(&id)?;
        let p = a.parent?;
        let pa = self.agents.get(&p)?;
        (p != id && !pa.record.is_archived()).then_some(p)
    }

    /// The parent an agent shows: its parent label's agent when that agent exists (archived or
    /// not). A label naming no agent makes it a root, here and in every snapshot.
    pub fn existing_parent(&self, a: &AgentState) -> Option<AgentId> {
        a.parent
            .filter(|p| *p != a.record.id && self.agents.contains_key(p))
    }

    /// A parent's track: its unarchived children, oldest first.
    pub fn track(&self, parent: AgentId) -> Vec<AgentId> {
        self.children
            .get(&parent)
            .map(|s| s.iter().map(|(_, id)| *id).collect())
            .unwrap_or_default()
    }

    /// Whether (and why) the agent alerts the user ([`crate::model::attention`]): whether it is
    /// a root agent is the parent it shows.
    pub fn alert_of(&self, a: &AgentState) -> Option<Alert> {
        crate::model::alert(
            a.record.is_archived(),
            self.existing_parent(a).is_none(),
            a.bucket(),
            a.needs_you(),
        )
    }

    pub fn track_counts(&self, parent: AgentId) -> Tally {
        let mut c = Tally::default();
        for id in self.track(parent) {
            if let Some(a) = self.agents.get(&id) {
                c.add(a.bucket());
            }
        }
        c.finished = Some(self.finished_in_track(parent));
        c
    }

    /// The workspace's bucket: the most urgent one any agent contributes.
    pub fn workspace_bucket(&self, ws: &WorkspaceId) -> Option<Bucket> {
        let counts = self.activity.get(ws)?;
        Bucket::ALL.into_iter().find(|b| counts[b.index()] > 0)
    }

    pub fn activity_counts(&self, ws: &WorkspaceId) -> [u32; Bucket::COUNT] {
        self.activity.get(ws).copied().unwrap_or_default()
    }

    /// The buckets computed from scratch, for tests to compare with the incremental ones.
    pub fn recompute_activity(&self) -> HashMap<WorkspaceId, [u32; Bucket::COUNT]> {
        let mut out: HashMap<WorkspaceId, [u32; Bucket::COUNT]> = HashMap::new();
        for id in self.agents.keys() {
            if let Some((ws, b)) = self.compute_contribution_slow(*id) {
                out.entry(ws).or_default()[b.index()] += 1;
            }
        }
        out
    }

    /// How many of the root agent `root`'s unarchived subagents are in each bucket (none: it
    /// has none, or it is not a root).
    pub fn subtree_counts(&self, root: AgentId) -> Option<&[u32; Bucket::COUNT]> {
        self.subtrees.get(&root)
    }

    /// The roll-ups computed from scratch, for tests to compare with the incremental ones.
    pub fn recompute_subtrees(&self) -> HashMap<AgentId, [u32; Bucket::COUNT]> {
        let mut out: HashMap<AgentId, [u32; Bucket::COUNT]> = HashMap::new();
        for (id, a) in &self.agents {
            if a.record.is_archived() || self.unarchived_parent(*id).is_none() {
                continue;
            }
            out.entry(self.compute_root(*id)).or_default()[a.bucket().index()] += 1;
        }
        out
    }

    /// The incremental roll-ups, without empty ones (comparable with `recompute_subtrees`).
    pub fn subtrees_snapshot(&self) -> HashMap<AgentId, [u32; Bucket::COUNT]> {
        self.subtrees
            .iter()
            .filter(|(_, c)| c.iter().any(|n| *n > 0))
            .map(|(k, v)| (*k, *v))
            .collect()
    }

    /// The incremental counts, without empty workspaces (comparable with `recompute_activity`).
    pub fn activity_snapshot(&self) -> HashMap<WorkspaceId, [u32; Bucket::COUNT]> {
        self.activity
            .iter()
            .filter(|(_, c)| c.iter().any(|n| *n > 0))
            .map(|(k, v)| (k.clone(), *v))
            .collect()
    }

    pub(super) fn index_child(&mut self, id: AgentId) {
        let a = &self.agents[&id];
        if a.record.is_archived() {
            return;
        }
        if let Some(p) = a.parent {
            if p != id && self.agents.contains_key(&p) {
                let key = (a.record.created_at, id);
                self.children.entry(p).or_default().insert(key);
                self.out.tracks.insert(p);
            }
        }
    }

    pub(super) fn unindex_child(&mut self, id: AgentId) {
        let a = &self.agents[&id];
        if let Some(p) = a.parent {
            let key = (a.record.created_at, id);
            let mut removed = false;
            if let Some(set) = self.children.get_mut(&p) {
                removed = set.remove(&key);
                if set.is_empty() {
                    self.children.remove(&p);
                }
            }
            if removed {
                self.out.tracks.insert(p);
                // The head of an archive or a detach: what it takes away may have run, so the
                // tracks above count again (below the head its parents are archived already).
                if self.unarchived_parent(id) == Some(p) {
                    self.mark_tracks_above(p);
                }
            }
        }
    }

    /// The top of the live parent chain, walking labels (cycle-safe).
    pub(super) fn compute_root(&self, id: AgentId) -> AgentId {
        let mut cur = id;
        let mut seen = HashSet::new();
        while let Some(p) = self.unarchived_parent(cur) {
            if !seen.insert(p) {
                break;
            }
            cur = p;
        }
        cur
    }

    /// The root through the parent's cached root (the parent's must be current).
    pub(super) fn root_from_parent(&self, id: AgentId) -> AgentId {
        match self.unarchived_parent(id) {
            Some(p) => self.agents.get(&p).map(|pa| pa.root).unwrap_or(p),
            None => id,
        }
    }

    /// Takes its root from its live parent's (the parent's must be current).
    pub(super) fn adopt_root(&mut self, id: AgentId) {
        let root = self.root_from_parent(id);
        self.uncount_in_subtree(id);
        if let Some(a) = self.agents.get_mut(&id) {
            a.root = root;
        }
    }

    /// After a detach: the detached agent is a root; its subtree's root changes with it.
    pub(super) fn reroot_subtree(&mut self, id: AgentId) {
        let root = self.compute_root(id);
        let mut stack = vec![id];
        let mut seen = HashSet::new();
        while let Some(cur) = stack.pop() {
            if !seen.insert(cur) {
                continue;
            }
            self.uncount_in_subtree(cur);
            if let Some(a) = self.agents.get_mut(&cur) {
                a.root = root;
            }
            self.refresh(cur);
            if let Some(kids) = self.children.get(&cur) {
                stack.extend(kids.iter().map(|(_, k)| *k));
            }
        }
    }

    /// What an agent contributes to workspace activity (SPEC 6), from its cached root.
    fn compute_contribution(&self, id: AgentId) -> Option<(WorkspaceId, Bucket)> {
        self.contribution_under(id, |a| a.root)
    }

    /// The same, walking the chain instead of trusting the cached root.
    fn compute_contribution_slow(&self, id: AgentId) -> Option<(WorkspaceId, Bucket)> {
        self.contribution_under(id, |_| self.compute_root(id))
    }

    /// Every unarchived agent counts in its tree's workspace: a root agent in its own with its
    /// own bucket, a subagent in its root's (`root_of` finds it) with what it shows there
    /// ([`crate::model::tree_bucket`]).
    fn contribution_under(
        &self,
        id: AgentId,
        root_of: impl FnOnce(&AgentState) -> AgentId,
    ) -> Option<(WorkspaceId, Bucket)> {
        let a = self.agents.get(&id)?;
        if a.record.is_archived() {
            return None;
        }
        if self.unarchived_parent(id).is_none() {
            return a.record.workspace_id.clone().map(|w| (w, a.bucket()));
        }
        let root = self.agents.get(&root_of(a))?;
        root.record
            .workspace_id
            .clone()
            .map(|w| (w, crate::model::tree_bucket(a.bucket(), false)))
    }

    /// Moves the agent's contribution from its old bucket to its new one, touching only the
    /// workspaces involved, and its count in its root's roll-up the same way.
    pub(super) fn refresh(&mut self, id: AgentId) {
        self.refresh_subtree(id);
        let new = self.compute_contribution(id);
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.contribution == new {
            return;
        }
        let old = std::mem::replace(&mut a.contribution, new.clone());
        if let Some((ws, b)) = old {
            let c = self.activity.entry(ws.clone()).or_default();
            c[b.index()] = c[b.index()].saturating_sub(1);
            self.out.workspaces.insert(ws);
        }
        if let Some((ws, b)) = new {
            self.activity.entry(ws.clone()).or_default()[b.index()] += 1;
            self.out.workspaces.insert(ws);
        }
    }

    /// A subagent counts in its root's roll-up with its own bucket; a root, an archived agent or
    /// one gone counts nowhere. A root whose roll-up changed is shown again (its card carries it).
    fn refresh_subtree(&mut self, id: AgentId) {
        let new = match self.agents.get(&id) {
            Some(a) if !a.record.is_archived() && self.unarchived_parent(id).is_some() => {
                Some(a.bucket())
            }
            _ => None,
        };
        if self.agents.get(&id).map(|a| a.in_subtree) == Some(new) {
            return;
        }
        self.uncount_in_subtree(id);
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        a.in_subtree = new;
        let root = a.root;
        if let Some(b) = new {
            self.subtrees.entry(root).or_default()[b.index()] += 1;
            self.rerender_one(root);
        }
    }

    /// Takes the agent out of its root's roll-up (before its root changes, or its bucket).
    pub(super) fn uncount_in_subtree(&mut self, id: AgentId) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        let (Some(b), root) = (a.in_subtree.take(), a.root) else {
            return;
        };
        if let Some(c) = self.subtrees.get_mut(&root) {
            c[b.index()] = c[b.index()].saturating_sub(1);
            if c.iter().all(|n| *n == 0) {
                self.subtrees.remove(&root);
            }
        }
        self.rerender_one(root);
    }
}

/// A parent's unarchived children, oldest first: a sorted vector. Most parents have a few
/// children; a B-tree's node holds eleven, so at 100,000 agents the sets were ≈ 10 MB, mostly
/// empty slots. A new child is the newest, so it goes at the end.
#[derive(Clone, Debug, Default)]
pub(super) struct Track(Vec<(Timestamp, AgentId)>);

impl Track {
    /// Adds `key`; false if it was there.
    pub(super) fn insert(&mut self, key: (Timestamp, AgentId)) -> bool {
        match self.0.binary_search(&key) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, key);
                true
            }
        }
    }

    /// Removes `key`; false if it was not there.
    pub(super) fn remove(&mut self, key: &(Timestamp, AgentId)) -> bool {
        match self.0.binary_search(key) {
            Ok(at) => {
                self.0.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(super) fn iter(&self) -> std::slice::Iter<'_, (Timestamp, AgentId)> {
        self.0.iter()
    }
}

impl Extend<(Timestamp, AgentId)> for Track {
    fn extend<I: IntoIterator<Item = (Timestamp, AgentId)>>(&mut self, keys: I) {
        self.0.extend(keys);
        self.0.sort_unstable();
        self.0.dedup();
    }
}

impl FromIterator<(Timestamp, AgentId)> for Track {
    fn from_iter<I: IntoIterator<Item = (Timestamp, AgentId)>>(keys: I) -> Track {
        let mut t = Track(keys.into_iter().collect());
        t.0.sort_unstable();
        t.0.dedup();
        t.0.shrink_to_fit();
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_track_stays_sorted_without_duplicates_however_it_is_filled() {
        let at = |ms: i64| Timestamp::from_millis(ms);
        let ids: Vec<AgentId> = (0..4).map(|_| AgentId::new()).collect();
        let mut t: Track = [(at(30), ids[2]), (at(10), ids[0]), (at(30), ids[2])]
            .into_iter()
            .collect();
        assert_eq!(t.iter().count(), 2);
        assert!(t.insert((at(20), ids[1])), "in the middle");
        assert!(t.insert((at(40), ids[3])), "at the end");
        assert!(!t.insert((at(20), ids[1])), "already there");
        t.extend([(at(5), ids[3]), (at(10), ids[0])]);
        let order: Vec<i64> = t.iter().map(|(ts, _)| ts.millis()).collect();
        assert_eq!(order, vec![5, 10, 20, 30, 40]);
        assert!(t.remove(&(at(20), ids[1])));
        assert!(!t.remove(&(at(20), ids[1])), "gone already");
        assert!(
            !t.remove(&(at(30), ids[0])),
            "another agent at that instant"
        );
        for key in t.iter().copied().collect::<Vec<_>>() {
            assert!(t.remove(&key));
        }
        assert!(t.is_empty());
    }
}
