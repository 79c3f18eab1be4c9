//! Load (SPEC 1): the fleet built from what the store read, and the repairs a crash or a bad
//! file needs: duplicate ids, self and cyclic parent links, cascades an archive left half done,
//! statuses that cannot be true after a restart, and finish notices that armed turns still owe.

use super::{set_error, step, AgentState, Engine, LoadReport, Queued, SessionState, INTERRUPTED};
use crate::model::NoticeOutcome;
use crate::model::{
    AgentId, AgentRecord, AttentionReason, BatchId, Bucket, Notice, NotifyArm, ProjectRecord,
    Status, Timestamp, WorkspaceId, WorkspaceRecord, PARENT_LABEL,
};
use rustc_hash::FxHashMap;

impl Engine {
    /// Builds the fleet from what the store loaded. Repairs what a crash or a bad file left:
    /// duplicate ids (the newest `updatedAt` wins), self and cyclic parent links (cut),
    /// unarchived children of archived parents (archived with the parent's batch), agents left
    /// `running` (→ `error`, "interrupted by shutdown", notifying an armed parent) or
    /// `initializing`/`idle` (→ `closed`: no process survives a restart; a prompt that was
    /// waiting for its session waits again, [`Engine::deliver_pending`] starts it).
    pub fn load<R: Into<Box<AgentRecord>>>(
        &mut self,
        records: impl IntoIterator<Item = R>,
        workspaces: Vec<WorkspaceRecord>,
        projects: Vec<ProjectRecord>,
        inboxes: Vec<(AgentId, Vec<Notice>)>,
        reads_prompts: &dyn Fn(&str) -> bool,
    ) -> LoadReport {
        self.delivery_paused = true;
        let mut report = LoadReport::default();
        let mut repairs = Repairs::default();
        for p in projects {
            self.projects.insert(p.project_id.clone(), p);
        }
        for w in workspaces {
            self.workspaces.insert(w.workspace_id.clone(), w);
        }
        let records = records.into_iter();
        // Grown once: rehashing a map of large entries over and over costs more than the parse.
        self.agents.reserve(records.size_hint().0);
        // What later passes need of each record is taken while the record is at hand: every
        // lookup in a map of 100,000 boxed agents afterwards is a few cache misses.
        let mut order = Vec::with_capacity(records.size_hint().0);
        let mut last_provider: Option<(String, bool)> = None;
        let mut batches: FxHashMap<BatchId, ()> = FxHashMap::default();
        for rec in records {
            let mut rec: Box<AgentRecord> = rec.into();
            self.share_ids(&mut rec, &mut batches);
            let id = rec.id;
            if let Some(existing) = self.agents.get(&id) {
                report.duplicates.push(id);
                repairs.add("were stored twice (the copy updated last was kept)", id);
                if existing.record.updated_at >= rec.updated_at {
                    continue;
                }
            }
            // Records of one provider come in runs: asked once per run.
            let reads = match &last_provider {
                Some((p, reads)) if *p == rec.provider => *reads,
                _ => {
                    let reads = reads_prompts(&rec.provider);
                    last_provider = Some((rec.provider.to_string(), reads));
                    reads
                }
            };
            if !rec.usage.is_empty() {
                self.usage.agents.insert(id);
            }
            let a = Box::new(AgentState::new(rec, SessionState::None, None, reads));
            order.push(Entry::of(&a));
            self.agents.insert(id, a);
        }
        report.agents = self.agents.len();
        if !report.duplicates.is_empty() {
            // A replaced copy left its own entry (and maybe usage) behind: taken again from
            // what was kept.
            order = self.agents.values().map(|a| Entry::of(a)).collect();
            self.index_usage();
        }
        order.sort_unstable_by_key(|e| (e.created, e.id));
        let ids: Vec<AgentId> = order.iter().map(|e| e.id).collect();
        let mut tree = Tree::new(&order);
        self.cut_parent_cycles(&ids, &mut tree, &mut report, &mut repairs);
        self.finish_cascades(&ids, &mut tree, &mut repairs);
        report.problems.extend(repairs.lines());
        let (owed, facts) = self.normalize_statuses(&ids, &mut report);
        self.build_indexes(&ids, &tree, facts);
        self.index_budget_spent();
        self.index_tree_usage();
        self.load_inboxes(inboxes);
        for (child, arm) in owed {
            self.send_notice(
                child,
                arm,
                NoticeOutcome::Failed,
                Some(INTERRUPTED.to_string()),
            );
        }
        self.delivered_at_load = Default::default();
        self.out.notices.extend(report.problems.iter().cloned());
        report
    }

    /// Points `rec`'s workspace and archive batch ids at the one copy the engine keeps of each
    /// (ids are shared strings): every record read holds its own copy otherwise, ≈ 9 MB at
    /// 100,000 agents in 20 workspaces with half of them archived (docs/scale.md).
    fn share_ids(&self, rec: &mut AgentRecord, batches: &mut FxHashMap<BatchId, ()>) {
        let one_copy = |w: &mut WorkspaceId| {
            if let Some((kept, _)) = self.workspaces.get_key_value(w) {
                *w = kept.clone();
            }
        };
        if let Some(w) = rec.workspace_id.as_mut() {
            one_copy(w);
        }
        if let Some(w) = rec.created_workspace_id.as_mut() {
            one_copy(w);
        }
        if let Some(b) = rec.archive_batch_id.as_mut() {
            match batches.get_key_value(b) {
                Some((kept, _)) => *b = kept.clone(),
                None => {
                    batches.insert(b.clone(), ());
                }
            }
        }
    }

    /// Cuts self-links and cycles of parent links (deterministically, at the oldest member of a
    /// cycle) and reports parent labels that are no agent id. `ids` is oldest first.
    fn cut_parent_cycles(
        &mut self,
        ids: &[AgentId],
        tree: &mut Tree,
        report: &mut LoadReport,
        repairs: &mut Repairs,
    ) {
        const NEW: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; ids.len()];
        let mut path = Vec::new();
        for start in 0..ids.len() {
            if state[start] != NEW {
                continue;
            }
            path.clear();
            let mut cur = Some(start);
            while let Some(c) = cur {
                match state[c] {
                    DONE => break,
                    ON_PATH => {
                        // A cycle: cut the link of its oldest member (ids are oldest first).
                        let pos = path.iter().position(|x| *x == c).unwrap_or(0);
                        let victim = path[pos..].iter().copied().min().unwrap_or(c);
                        self.cut_parent_link(ids[victim]);
                        tree.cut(victim);
                        repairs.add(
                            "were part of a cycle of parent links (their parent link was removed)",
                            ids[victim],
                        );
                        break;
                    }
                    _ => {}
                }
                state[c] = ON_PATH;
                path.push(c);
                cur = tree.parent_of(c);
                if cur == Some(c) {
                    self.cut_parent_link(ids[c]);
                    tree.cut(c);
                    repairs.add("named themselves as their parent (link removed)", ids[c]);
                    cur = None;
                }
            }
            for &p in &path {
                state[p] = DONE;
            }
        }
        // Labels naming no loaded agent (a quarantined parent, upstream data) stay in the record
        // (restoring the parent's record brings the link back) but the agent is a root until
        // then, in the engine and in every snapshot alike. One line for all of them.
        let mut dangling = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            match tree.label[i] {
                // A parsed label that is no loaded agent.
                Label::Parsed if tree.parent[i] == NONE => dangling.push(*id),
                Label::Unparsed => repairs.add(
                    "have a parent label that is no agent id (treated as root agents)",
                    *id,
                ),
                Label::Parsed | Label::None => {}
            }
        }
        if !dangling.is_empty() {
            let first: Vec<String> = dangling.iter().take(3).map(|id| id.to_string()).collect();
            report.problems.push(format!(
                "{} agent(s) name a parent that does not exist (e.g. {}); shown as root agents",
                dangling.len(),
                first.join(", ")
            ));
        }
    }

    fn cut_parent_link(&mut self, id: AgentId) {
        if let Some(a) = self.agents.get_mut(&id) {
            a.clear_parent();
        }
        self.out.agents.insert(id);
    }

    /// Finishes cascades a crash interrupted: unarchived descendants of archived agents are
    /// archived with the nearest archived ancestor's batch (one pass, top down).
    fn finish_cascades(&mut self, ids: &[AgentId], tree: &mut Tree, repairs: &mut Repairs) {
        let kids = tree.children();
        let mut stack: Vec<usize> = (0..ids.len()).filter(|&i| tree.archived[i]).collect();
        let mut visited = vec![false; ids.len()];
        while let Some(cur) = stack.pop() {
            if std::mem::replace(&mut visited[cur], true) {
                continue;
            }
            let mut stamp = None;
            for &k in kids.of(cur) {
                if !tree.archived[k] {
                    let (at, batch) = stamp.get_or_insert_with(|| {
                        let r = &self.agents[&ids[cur]].record;
                        (r.archived_at, r.archive_batch_id.clone())
                    });
                    if let Some(a) = self.agents.get_mut(&ids[k]) {
                        a.record.archived_at = *at;
                        a.record.archive_batch_id = batch.clone();
                    }
                    tree.archived[k] = true;
                    repairs.add(
                        "were left unarchived under an archived parent (archived with it)",
                        ids[k],
                    );
                    self.out.agents.insert(ids[k]);
                }
                stack.push(k);
            }
        }
    }

    /// Nothing runs after a restart: running → error ("interrupted by shutdown"), initializing
    /// and idle → closed; a permission request died with its process, a held turn's did not (it
    /// never ran). Returns the notices armed turns still owe (their turn was pending or running
    /// when the app died; a held turn owes its own only when it ends), and what each
    /// agent contributes to the indexes, taken in the same lookup (the repairs are done: this
    /// is final).
    fn normalize_statuses(
        &mut self,
        ids: &[AgentId],
        report: &mut LoadReport,
    ) -> (Vec<(AgentId, NotifyArm)>, Vec<Facts>) {
        let now = self.now();
        let mut owed = Vec::new();
        let mut facts = Vec::with_capacity(ids.len());
        for id in ids {
            let a = self.agents.get_mut(id).expect("listed id");
            let r = &mut a.record;
            let archived = r.is_archived();
            match r.last_status {
                Status::Running if !archived => {
                    set_error(r, INTERRUPTED, now);
                    r.updated_at = now;
                    report.normalized.push(*id);
                    self.out.agents.insert(*id);
                }
                Status::Running | Status::Initializing | Status::Idle => {
                    step(r, Status::Closed);
                    r.updated_at = now;
                    if archived {
                        r.requires_attention = false;
                        r.attention_reason = None;
                    }
                    report.normalized.push(*id);
                    self.out.agents.insert(*id);
                }
                Status::Error | Status::Closed => {}
            }
            let held = r.held_turn.is_some() && !archived;
            if held {
                // A held turn never ran, so no restart interrupted it (SPEC 4, 14): it is still
                // held, its request asks for the user's answer and its arm stays owed until it
                // ends. (Records an earlier version loaded carry `error` attention with no
                // error for it: asked again.)
                if r.last_status != Status::Error
                    && r.attention_reason != Some(AttentionReason::Permission)
                {
                    r.requires_attention = true;
                    r.attention_reason = Some(AttentionReason::Permission);
                    r.attention_timestamp.get_or_insert(now);
                    self.out.agents.insert(*id);
                }
            } else if r.requires_attention
                && r.attention_reason == Some(AttentionReason::Permission)
            {
                // The request died with the process; what is left is an interrupted turn.
                r.attention_reason = Some(AttentionReason::Error);
                self.out.agents.insert(*id);
            }
            // A prompt that waited for its session never ran (SPEC 15): it waits again, its
            // session started once deliveries resume, and its arm is owed when it ends.
            let waits = r.waiting_prompt.is_some() && !archived;
            if archived && r.waiting_prompt.take().is_some() {
                self.out.agents.insert(*id);
            }
            // Archived agents' arms are dropped with them; a held or waiting turn's is not due
            // yet.
            let arm = if held || waits {
                None
            } else {
                r.take_notify_arm()
            };
            if let Some(arm) = arm {
                if !archived {
                    owed.push((*id, arm));
                }
                self.out.agents.insert(*id);
            }
            if let Some(w) = a.record.waiting_prompt.as_deref().filter(|_| waits) {
                let (input, origin) = w.turn();
                let arm = a.record.notify_arm.as_deref().cloned();
                a.queued = Some(Box::new(Queued { input, origin, arm }));
                self.waiting_at_load.push(*id);
            }
            facts.push(Facts {
                batch: if archived {
                    a.record.archive_batch_id.clone()
                } else {
                    None
                },
                archived_at: a.record.archived_at,
                workspace: a.record.workspace_id.clone(),
                bucket: a.bucket(),
            });
        }
        (owed, facts)
    }

    /// Tracks, archive batches, roots, bucket contributions and roots' roll-ups, for the
    /// repaired fleet, built
    /// in bulk (the same indexes `index_child`, `adopt_root` and `refresh` keep one agent at a
    /// time later).
    fn build_indexes(&mut self, ids: &[AgentId], tree: &Tree, facts: Vec<Facts>) {
        // A live parent: one that exists and is not archived; an archived agent has no track.
        let unarchived_parent =
            |i: usize| tree.parent_of(i).filter(|&p| !tree.archived[p] && p != i);
        let mut tracks: Vec<Vec<(Timestamp, AgentId)>> = vec![Vec::new(); ids.len()];
        let mut batches: FxHashMap<BatchId, Vec<usize>> = FxHashMap::default();
        for (i, id) in ids.iter().enumerate() {
            if let Some(p) = tree.parent_of(i).filter(|&p| p != i && !tree.archived[i]) {
                // Oldest first already: ids are.
                tracks[p].push((tree.created[i], *id));
            }
            if let Some(b) = &facts[i].batch {
                batches.entry(b.clone()).or_default().push(i);
            }
        }
        for (b, mut members) in batches {
            members.sort_by_key(|&i| (facts[i].archived_at, tree.created[i]));
            self.batches
                .entry(b)
                .or_default()
                .extend(members.into_iter().map(|i| ids[i]));
        }
        for (p, members) in tracks.into_iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            match self.children.get_mut(&ids[p]) {
                Some(set) => set.extend(members),
                // Built in one go from the sorted members.
                None => {
                    self.children.insert(ids[p], members.into_iter().collect());
                }
            }
            self.out.tracks.insert(ids[p]);
        }
        // Roots, memoized: each chain is walked once (deep chains stay linear).
        let mut root = vec![NONE; ids.len()];
        let mut path = Vec::new();
        for i in 0..ids.len() {
            path.clear();
            let mut cur = i;
            let top = loop {
                if root[cur] != NONE {
                    break root[cur] as usize;
                }
                path.push(cur);
                // Cycles were cut above; the length bound only guards against a bug there.
                match unarchived_parent(cur) {
                    Some(p) if path.len() <= ids.len() => cur = p,
                    _ => break cur,
                }
            };
            for &p in &path {
                root[p] = top as u32;
            }
        }
        // Each agent's contribution to workspace activity (SPEC 6), as `refresh` computes it.
        for (i, id) in ids.iter().enumerate() {
            let top = root[i] as usize;
            let f = &facts[i];
            let contribution = if tree.archived[i] {
                None
            } else if unarchived_parent(i).is_none() {
                f.workspace.clone().map(|w| (w, f.bucket))
            } else {
                facts[top]
                    .workspace
                    .clone()
                    .map(|w| (w, crate::model::tree_bucket(f.bucket, false)))
            };
            if let Some((ws, b)) = &contribution {
                match self.activity.get_mut(ws) {
                    Some(c) => c[b.index()] += 1,
                    None => {
                        let mut c = [0; Bucket::COUNT];
                        c[b.index()] = 1;
                        self.activity.insert(ws.clone(), c);
                        self.out.workspaces.insert(ws.clone());
                    }
                }
            }
            // A subagent's own bucket in its root's roll-up, as `refresh_subtree` counts it.
            let in_subtree =
                (!tree.archived[i] && unarchived_parent(i).is_some()).then_some(f.bucket);
            if let Some(b) = in_subtree {
                self.subtrees.entry(ids[top]).or_default()[b.index()] += 1;
            }
            if let Some(a) = self.agents.get_mut(id) {
                a.root = ids[top];
                a.contribution = contribution;
                a.in_subtree = in_subtree;
            }
        }
    }

    /// The durable inboxes; those of unknown or archived agents are dropped (and rewritten).
    fn load_inboxes(&mut self, inboxes: Vec<(AgentId, Vec<Notice>)>) {
        for (parent, notices) in inboxes {
            match self.agents.get(&parent) {
                Some(p) if !p.record.is_archived() => {
                    let q = self.inbox.entry(parent).or_default();
                    for n in notices {
                        if self.delivered_at_load.contains(&n.id) {
                            // Received before a crash kept its removal from the inbox (SPEC 4).
                            self.out.inboxes.insert(parent);
                        } else if !q.iter().any(|x| x.id == n.id) {
                            q.push_back(n);
                        }
                    }
                    if q.is_empty() {
                        self.inbox.remove(&parent);
                    }
                }
                _ => {
                    self.out.inboxes.insert(parent);
                }
            }
        }
    }
}

/// No agent (an index that is not one).
const NONE: u32 = u32::MAX;

/// The loaded fleet as dense arrays over its agents, oldest first: each one's parent (an index,
/// when its label names a loaded agent) and whether it is archived. The repair passes walk
/// these instead of looking agents up by id at every step.
struct Tree {
    parent: Vec<u32>,
    archived: Vec<bool>,
    created: Vec<Timestamp>,
    label: Vec<Label>,
}

/// An agent's parent label, as loaded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Label {
    None,
    /// An agent id (which may name no loaded agent).
    Parsed,
    /// Not an agent id.
    Unparsed,
}

/// What an agent contributes to the indexes, taken in one lookup.
struct Facts {
    batch: Option<BatchId>,
    archived_at: Option<Timestamp>,
    workspace: Option<WorkspaceId>,
    bucket: Bucket,
}

/// What the tree needs of one record, taken while the record is at hand (a lookup in the map
/// of boxed agents later is a few cache misses, 100,000 times).
struct Entry {
    created: Timestamp,
    id: AgentId,
    parent: Option<AgentId>,
    archived: bool,
    label: Label,
}

impl Entry {
    fn of(a: &AgentState) -> Entry {
        let (r, parent) = (&a.record, a.parent);
        Entry {
            created: r.created_at,
            id: r.id,
            parent,
            archived: r.is_archived(),
            label: if parent.is_some() {
                Label::Parsed
            } else if r.labels.contains_key(PARENT_LABEL) {
                Label::Unparsed
            } else {
                Label::None
            },
        }
    }
}

impl Tree {
    /// The tree of `order` (oldest first).
    fn new(order: &[Entry]) -> Tree {
        let index: FxHashMap<AgentId, u32> = order
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id, i as u32))
            .collect();
        let parent = order
            .iter()
            .map(|e| {
                e.parent
                    .and_then(|p| index.get(&p).copied())
                    .unwrap_or(NONE)
            })
            .collect();
        Tree {
            parent,
            archived: order.iter().map(|e| e.archived).collect(),
            created: order.iter().map(|e| e.created).collect(),
            label: order.iter().map(|e| e.label).collect(),
        }
    }

    /// A parent link removed (with its label).
    fn cut(&mut self, i: usize) {
        self.parent[i] = NONE;
        self.label[i] = Label::None;
    }

    fn parent_of(&self, i: usize) -> Option<usize> {
        (self.parent[i] != NONE).then_some(self.parent[i] as usize)
    }

    /// Each agent's children (not itself), oldest first.
    fn children(&self) -> Children {
        let n = self.parent.len();
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            if let Some(p) = self.parent_of(i).filter(|&p| p != i) {
                start[p + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut kids = vec![0usize; start[n] as usize];
        for i in 0..n {
            if let Some(p) = self.parent_of(i).filter(|&p| p != i) {
                kids[fill[p] as usize] = i;
                fill[p] += 1;
            }
        }
        Children { start, kids }
    }
}

/// Children lists of a [`Tree`], one after another.
struct Children {
    start: Vec<u32>,
    kids: Vec<usize>,
}

impl Children {
    fn of(&self, i: usize) -> &[usize] {
        &self.kids[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Load repairs of one kind, counted: each kind is reported in one line with its count and the
/// first few ids, never one line per record (a large data root can hold thousands).
#[derive(Default)]
struct Repairs(std::collections::BTreeMap<&'static str, (usize, Vec<AgentId>)>);

impl Repairs {
    const SHOWN: usize = 3;

    fn add(&mut self, what: &'static str, id: AgentId) {
        let e = self.0.entry(what).or_default();
        e.0 += 1;
        if e.1.len() < Self::SHOWN {
            e.1.push(id);
        }
    }

    fn lines(self) -> impl Iterator<Item = String> {
        self.0.into_iter().map(|(what, (n, ids))| {
            let shown: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
            let more = if n > ids.len() { ", …" } else { "" };
            format!("{n} agent(s) {what}: {}{more}", shown.join(", "))
        })
    }
}
