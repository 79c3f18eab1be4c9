//! Load (SPEC 1): the fleet built from what the store read, and the repairs a crash or a bad
//! file needs: duplicate ids, self and cyclic parent links, cascades an archive left half done,
//! statuses that cannot be true after a restart, and finish notices that armed turns still owe.

use super::fxhash::{FxHashMap, FxHashSet};
use super::{set_error, AgentState, Engine, LoadReport, SessionState, INTERRUPTED};
use crate::model::{
    AgentId, AgentRecord, AttentionReason, Notice, NotifyArm, ProjectRecord, Status,
    WorkspaceRecord, PARENT_LABEL,
};

impl Engine {
    /// Builds the fleet from what the store loaded. Repairs what a crash or a bad file left:
    /// duplicate ids (the newest `updatedAt` wins), self and cyclic parent links (cut),
    /// unarchived children of archived parents (archived with the parent's batch), agents left
    /// `running` (→ `error`, "interrupted by shutdown", notifying an armed parent) or
    /// `initializing`/`idle` (→ `closed`: no process survives a restart).
    pub fn load(
        &mut self,
        records: Vec<AgentRecord>,
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
        // Grown once: rehashing a map of large entries over and over costs more than the parse.
        self.agents.reserve(records.len());
        for rec in records {
            let id = rec.id;
            if let Some(existing) = self.agents.get(&id) {
                report.duplicates.push(id);
                repairs.add("were stored twice (the copy updated last was kept)", id);
                if existing.record.updated_at >= rec.updated_at {
                    continue;
                }
            }
            let reads = reads_prompts(&rec.provider);
            self.agents.insert(
                id,
                Box::new(AgentState::new(rec, SessionState::None, None, reads)),
            );
        }
        report.agents = self.agents.len();
        self.index_usage();

        let mut order: Vec<_> = self
            .agents
            .values()
            .map(|a| (a.record.created_at, a.record.id))
            .collect();
        order.sort_unstable();
        let ids: Vec<AgentId> = order.into_iter().map(|(_, id)| id).collect();
        self.cut_parent_cycles(&ids, &mut report, &mut repairs);
        self.finish_cascades(&ids, &mut repairs);
        report.problems.extend(repairs.lines());
        let owed = self.normalize_statuses(&ids, &mut report);
        self.build_indexes(&ids);
        self.load_inboxes(inboxes);
        for (child, arm) in owed {
            self.send_notice(child, arm, "failed", Some(INTERRUPTED.to_string()));
        }
        self.out.notices.extend(report.problems.iter().cloned());
        report
    }

    /// Cuts self-links and cycles of parent links (deterministically, at the oldest member of a
    /// cycle) and reports parent labels that are no agent id. `ids` is oldest first.
    fn cut_parent_cycles(
        &mut self,
        ids: &[AgentId],
        report: &mut LoadReport,
        repairs: &mut Repairs,
    ) {
        let mut state: FxHashMap<AgentId, u8> = FxHashMap::default(); // 1 = on path, 2 = done
        state.reserve(ids.len());
        for &start in ids {
            if state.contains_key(&start) {
                continue;
            }
            let mut path = Vec::new();
            let mut cur = Some(start);
            while let Some(c) = cur {
                match state.get(&c) {
                    Some(2) => break,
                    Some(1) => {
                        // A cycle: cut the link of its oldest member.
                        let pos = path.iter().position(|x| *x == c).unwrap_or(0);
                        let cyc = &path[pos..];
                        let victim = *cyc
                            .iter()
                            .min_by_key(|id| (self.agents[*id].record.created_at, **id))
                            .unwrap_or(&c);
                        self.cut_parent_link(victim);
                        repairs.add(
                            "were part of a cycle of parent links (their parent link was removed)",
                            victim,
                        );
                        break;
                    }
                    _ => {}
                }
                state.insert(c, 1);
                path.push(c);
                cur = self.agents[&c]
                    .parent
                    .filter(|p| self.agents.contains_key(p));
                if cur == Some(c) {
                    self.cut_parent_link(c);
                    repairs.add("named themselves as their parent (link removed)", c);
                    cur = None;
                }
            }
            for p in path {
                state.insert(p, 2);
            }
        }
        // Labels naming no loaded agent (a quarantined parent, upstream data) stay in the record
        // (restoring the parent's record brings the link back) but the agent is a root until
        // then, in the engine and in every snapshot alike. One line for all of them.
        let mut dangling = Vec::new();
        for id in ids {
            if let Some(label) = self.agents[id].record.labels.get(PARENT_LABEL) {
                match label.parse::<AgentId>() {
                    Err(_) => repairs.add(
                        "have a parent label that is no agent id (treated as root agents)",
                        *id,
                    ),
                    Ok(p) if !self.agents.contains_key(&p) => dangling.push(*id),
                    Ok(_) => {}
                }
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
    fn finish_cascades(&mut self, ids: &[AgentId], repairs: &mut Repairs) {
        let mut kids: FxHashMap<AgentId, Vec<AgentId>> = FxHashMap::default();
        for id in ids {
            if let Some(p) = self.agents[id].parent {
                if p != *id && self.agents.contains_key(&p) {
                    kids.entry(p).or_default().push(*id);
                }
            }
        }
        let mut stack: Vec<AgentId> = ids
            .iter()
            .copied()
            .filter(|id| self.agents[id].record.is_archived())
            .collect();
        let mut visited = FxHashSet::default();
        while let Some(cur) = stack.pop() {
            if !visited.insert(cur) {
                continue;
            }
            let (at, batch) = {
                let r = &self.agents[&cur].record;
                (r.archived_at, r.archive_batch_id.clone())
            };
            for k in kids.get(&cur).cloned().unwrap_or_default() {
                let a = self.agents.get_mut(&k).expect("indexed id");
                if !a.record.is_archived() {
                    a.record.archived_at = at;
                    a.record.archive_batch_id = batch.clone();
                    repairs.add(
                        "were left unarchived under an archived parent (archived with it)",
                        k,
                    );
                    self.out.agents.insert(k);
                }
                stack.push(k);
            }
        }
    }

    /// Nothing runs after a restart: running → error ("interrupted by shutdown"), initializing
    /// and idle → closed; a permission request died with its process. Returns the notices armed
    /// turns still owe (their turn was pending or running when the app died).
    fn normalize_statuses(
        &mut self,
        ids: &[AgentId],
        report: &mut LoadReport,
    ) -> Vec<(AgentId, NotifyArm)> {
        let now = self.now();
        let mut owed = Vec::new();
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
                    r.last_status = Status::Closed;
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
            if r.requires_attention && r.attention_reason == Some(AttentionReason::Permission) {
                // The request died with the process; what is left is an interrupted turn.
                r.attention_reason = Some(AttentionReason::Error);
                self.out.agents.insert(*id);
            }
            // Archived agents' arms are dropped with them.
            if let Some(arm) = r.notify_arm.take() {
                if !archived {
                    owed.push((*id, arm));
                }
                self.out.agents.insert(*id);
            }
        }
        owed
    }

    /// Tracks, archive batches, roots and bucket contributions, for the repaired fleet.
    fn build_indexes(&mut self, ids: &[AgentId]) {
        for id in ids {
            self.index_child(*id);
            if let Some(b) = self.agents[id].record.archive_batch_id.clone() {
                if self.agents[id].record.is_archived() {
                    self.batches.entry(b).or_default().push(*id);
                }
            }
        }
        for batch in self.batches.values_mut() {
            let agents = &self.agents;
            batch.sort_by_key(|id| (agents[id].record.archived_at, agents[id].record.created_at));
        }
        // Roots, memoized: each chain is walked once (deep chains stay linear).
        let mut known: FxHashMap<AgentId, AgentId> = FxHashMap::default();
        known.reserve(ids.len());
        for id in ids {
            let mut path = Vec::new();
            let mut cur = *id;
            let root = loop {
                if let Some(r) = known.get(&cur) {
                    break *r;
                }
                path.push(cur);
                // Cycles were cut above; the length bound only guards against a bug there.
                match self.live_parent(cur) {
                    Some(p) if path.len() <= self.agents.len() => cur = p,
                    _ => break cur,
                }
            };
            for p in path {
                known.insert(p, root);
                if let Some(a) = self.agents.get_mut(&p) {
                    a.root = root;
                }
            }
        }
        for id in ids {
            self.refresh(*id);
        }
    }

    /// The durable inboxes; those of unknown or archived agents are dropped (and rewritten).
    fn load_inboxes(&mut self, inboxes: Vec<(AgentId, Vec<Notice>)>) {
        for (parent, notices) in inboxes {
            match self.agents.get(&parent) {
                Some(p) if !p.record.is_archived() => {
                    let q = self.inbox.entry(parent).or_default();
                    for n in notices {
                        if !q.iter().any(|x| x.id == n.id) {
                            q.push_back(n);
                        }
                    }
                }
                _ => {
                    self.out.inboxes.insert(parent);
                }
            }
        }
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
