//! Archive and restore (SPEC 5): archive is a soft delete that cascades through subagents as
//! one batch; restore brings the batch back, closed, links intact. autoArchive fires once on an
//! agent's first terminal turn event; a workspace archive takes its agents along.

use std::collections::HashSet;

use super::{clear_attention, step, Effect, Engine, EngineError, ListFilter, SessionState};
use crate::model::NoticeOutcome;
use crate::model::{AgentId, AttentionReason, BatchId, Status, WorkspaceId, WorkspaceRecord};
use rustc_hash::FxHashMap;

/// What a restore brings back (SPEC 5): the whole archive batch, or one member with the
/// members of its batch below it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RestoreScope {
    #[default]
    Batch,
    Member,
}

impl Engine {
    /// Archives `id` and, recursively, every unarchived agent whose parent label names an
    /// archived one (SPEC 5), as one batch. Idempotent: an archived agent yields an empty list.
    /// Returns the agents archived, the gesture's target first.
    pub fn archive(&mut self, id: AgentId) -> Result<Vec<AgentId>, EngineError> {
        let a = self.get_mut(id)?;
        if a.record.is_archived() {
            return Ok(Vec::new());
        }
        let batch = BatchId::new();
        Ok(self.archive_into(id, &batch))
    }

    /// Archives several agents as one batch (the track's "Archive finished").
    pub fn archive_many(&mut self, ids: &[AgentId]) -> Result<Vec<AgentId>, EngineError> {
        for id in ids {
            self.get_mut(*id)?;
        }
        let batch = BatchId::new();
        let mut out = Vec::new();
        for id in ids {
            out.extend(self.archive_into(*id, &batch));
        }
        Ok(out)
    }

    /// Archives `id` and its unarchived descendants into `batch`, top down (iteratively: no
    /// depth limit, no cycle followed).
    pub(super) fn archive_into(&mut self, id: AgentId, batch: &BatchId) -> Vec<AgentId> {
        let now = self.now();
        let mut archived = Vec::new();
        let mut stack = vec![id];
        let mut seen = HashSet::new();
        while let Some(cur) = stack.pop() {
            if !seen.insert(cur) {
                continue;
            }
            let Some(a) = self.agents.get_mut(&cur) else {
                continue;
            };
            if a.record.is_archived() {
                continue;
            }
            // (1) session state is already in the record (session ids are stored as they come).
            // (2) archivedAt, status away from running/initializing, attention cleared.
            let was = a.record.last_status;
            a.record.archived_at = Some(now);
            a.record.updated_at = now;
            a.record.archive_batch_id = Some(batch.clone());
            // The runtime is closed: any → closed.
            step(&mut a.record, Status::Closed);
            clear_attention(&mut a.record);
            let had_session = a.session != SessionState::None;
            // A held turn ends with the archive, never run: its caller hears "archived" like
            // any pending armed turn's (SPEC 4), and a restore brings nothing held back.
            let held = a.record.held_turn.take().is_some();
            let queued = a.end_session();
            let arm = a
                .record
                .take_notify_arm()
                .filter(|_| was == Status::Running || queued.is_some() || held);
            archived.push(cur);
            self.batches.entry(batch.clone()).or_default().push(cur);
            // (3) every window hears of it through the outcome.
            self.touch(cur);
            if let Some(p) = self.agents[&cur].parent {
                self.out.tracks.insert(p);
            }
            self.unindex_child(cur);
            self.refresh(cur);
            if self.inbox.remove(&cur).is_some() {
                self.out.inboxes.insert(cur);
            }
            // (4) close the runtime (the whole process tree).
            if had_session {
                self.out.effects.push(Effect::CloseSession { agent: cur });
            }
            self.out.effects.push(Effect::RevokeAccess { agent: cur });
            // A turn armed for someone outside this archive tells them it was archived.
            if let Some(arm) = arm {
                self.send_notice(cur, arm, NoticeOutcome::Archived, None);
            }
            // (5) cascade.
            if let Some(kids) = self.children.get(&cur) {
                stack.extend(kids.iter().rev().map(|(_, k)| *k));
            }
        }
        archived
    }

    /// After a turn's terminal event: autoArchive (once), else the idle boundary.
    pub(super) fn after_terminal_turn(&mut self, id: AgentId, was_turn: bool) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        // A turn that ended while another is held (a notice turn, SPEC 4) leaves the held turn
        // waiting for the user: archiving now would end it unasked.
        if was_turn
            && a.record.auto_archive
            && !a.record.auto_archive_done
            && a.record.held_turn.is_none()
        {
            a.record.auto_archive_done = true;
            let ws = a.record.created_workspace_id.clone();
            let _ = self.archive(id);
            if let Some(ws) = ws {
                self.out.effects.push(Effect::ArchiveWorktree {
                    workspace: ws,
                    requested_by: id,
                });
            }
            return;
        }
        self.after_idle_boundary(id);
    }

    /// Archives a workspace: refused while live agents work in it unless `confirmed`; then every
    /// unarchived agent in it is archived (one batch, with cascades) and the record is hidden.
    pub fn archive_workspace(
        &mut self,
        ws: &WorkspaceId,
        confirmed: bool,
    ) -> Result<Vec<AgentId>, EngineError> {
        let rec = self
            .workspaces
            .get(ws)
            .ok_or_else(|| EngineError::UnknownWorkspace(ws.clone()))?;
        if rec.is_archived() {
            return Ok(Vec::new());
        }
        let members: Vec<AgentId> = self
            .list(
                &ListFilter {
                    workspace: Some(ws.clone()),
                    ..Default::default()
                },
                usize::MAX,
            )
            .0
            .into_iter()
            .map(|a| a.record.id)
            .collect();
        let live = members
            .iter()
            .filter(|id| self.agents[id].status().is_active())
            .count();
        if live > 0 && !confirmed {
            return Err(EngineError::WorkspaceBusy {
                workspace: ws.clone(),
                live,
            });
        }
        let batch = BatchId::new();
        let mut archived = Vec::new();
        for id in members {
            archived.extend(self.archive_into(id, &batch));
        }
        let now = self.now();
        if let Some(w) = self.workspaces.get_mut(ws) {
            w.archived_at = Some(now);
            w.updated_at = now;
        }
        self.out.workspaces.insert(ws.clone());
        self.out.workspaces_registry = true;
        Ok(archived)
    }

    /// The agents a restore of `id` brings back (its archive batch).
    pub fn restore_batch(&self, id: AgentId) -> Result<Vec<AgentId>, EngineError> {
        let a = self.agents.get(&id).ok_or(EngineError::UnknownAgent(id))?;
        if !a.record.is_archived() {
            return Err(EngineError::NotArchived(id));
        }
        Ok(match &a.record.archive_batch_id {
            Some(b) => self.batches.get(b).cloned().unwrap_or_else(|| vec![id]),
            None => vec![id],
        })
    }

    /// The agents a restore of `id` alone brings back: `id` and the members of its batch below
    /// it (through parent links within the batch), so nothing restored comes back cut from its
    /// own children. The rest of the batch stays archived, restorable. Archive order (parents
    /// before their children) is kept.
    pub fn restore_subtree(&self, id: AgentId) -> Result<Vec<AgentId>, EngineError> {
        let batch = self.restore_batch(id)?;
        // Down from `id` through the batch's own parent links: linear in the batch, however
        // deep its chains (archived agents are out of the children index); no cycle followed.
        let mut kids: FxHashMap<AgentId, Vec<AgentId>> = FxHashMap::default();
        for m in &batch {
            if let Some(p) = self.agents.get(m).and_then(|a| a.parent) {
                kids.entry(p).or_default().push(*m);
            }
        }
        let mut below: HashSet<AgentId> = HashSet::from([id]);
        let mut stack = vec![id];
        while let Some(cur) = stack.pop() {
            for k in kids.get(&cur).into_iter().flatten() {
                if below.insert(*k) {
                    stack.push(*k);
                }
            }
        }
        Ok(batch.into_iter().filter(|m| below.contains(m)).collect())
    }

    /// The agents a restore brings back: the whole batch, or only `id`'s part of it.
    pub fn restore_set(
        &self,
        id: AgentId,
        scope: RestoreScope,
    ) -> Result<Vec<AgentId>, EngineError> {
        match scope {
            RestoreScope::Batch => self.restore_batch(id),
            RestoreScope::Member => self.restore_subtree(id),
        }
    }

    /// The archived workspaces a restore of `id` needs back first.
    pub fn restore_workspaces(
        &self,
        id: AgentId,
        scope: RestoreScope,
    ) -> Result<Vec<WorkspaceRecord>, EngineError> {
        let mut out: Vec<WorkspaceRecord> = Vec::new();
        for m in self.restore_set(id, scope)? {
            if let Some(w) = self.agents[&m]
                .record
                .workspace_id
                .as_ref()
                .and_then(|w| self.workspaces.get(w))
            {
                if w.is_archived() && !out.iter().any(|x| x.workspace_id == w.workspace_id) {
                    out.push(w.clone());
                }
            }
        }
        Ok(out)
    }

    /// Brings an archived workspace back (its directory exists again).
    pub fn unarchive_workspace(&mut self, ws: &WorkspaceId) -> Result<(), EngineError> {
        let now = self.now();
        let w = self
            .workspaces
            .get_mut(ws)
            .ok_or_else(|| EngineError::UnknownWorkspace(ws.clone()))?;
        if w.archived_at.take().is_some() {
            w.updated_at = now;
            self.out.workspaces.insert(ws.clone());
            self.out.workspaces_registry = true;
        }
        Ok(())
    }

    /// Restores the batch `id` was archived in: the agents come back closed, links intact.
    /// When a restored agent's parent (outside the batch) is still archived, the restore is
    /// refused, unless `as_root` asks to restore those agents as root agents (detached).
    pub fn restore(&mut self, id: AgentId, as_root: bool) -> Result<Vec<AgentId>, EngineError> {
        self.restore_scoped(id, as_root, RestoreScope::Batch)
    }

    /// [`Engine::restore`] of the whole batch, or of `id` and its part of the batch only
    /// ([`Engine::restore_subtree`]): the others stay archived in their batch, restorable.
    /// A member whose parent stays archived is refused or detached exactly as in a whole
    /// restore.
    pub fn restore_scoped(
        &mut self,
        id: AgentId,
        as_root: bool,
        scope: RestoreScope,
    ) -> Result<Vec<AgentId>, EngineError> {
        let members = self.restore_set(id, scope)?;
        // Those coming back: a parent among them is live again, one outside is checked.
        let back: HashSet<AgentId> = members.iter().copied().collect();
        let mut detach = Vec::new();
        for m in &members {
            let st = &self.agents[m];
            let r = &st.record;
            if let Some(ws) = &r.workspace_id {
                if self.workspaces.get(ws).is_some_and(|w| w.is_archived()) {
                    return Err(EngineError::RestoreWorkspaceArchived {
                        agent: *m,
                        workspace: ws.clone(),
                    });
                }
            }
            if let Some(p) = st.parent {
                if !back.contains(&p)
                    && self
                        .agents
                        .get(&p)
                        .is_some_and(|pa| pa.record.is_archived())
                {
                    if as_root {
                        detach.push(*m);
                    } else {
                        return Err(EngineError::RestoreParentArchived {
                            child: *m,
                            parent: p,
                        });
                    }
                }
            }
        }
        let now = self.now();
        let chains: Vec<(AgentId, Option<AgentId>)> = detach
            .iter()
            .map(|m| (*m, self.budget_parent(*m)))
            .collect();
        if let Some(b) = self.agents[&id].record.archive_batch_id.clone() {
            let left = self.batches.get_mut(&b).map(|v| {
                v.retain(|m| !back.contains(m));
                v.is_empty()
            });
            if left != Some(false) {
                self.batches.remove(&b);
            }
        }
        for m in &members {
            let a = self.agents.get_mut(m).expect("batch member");
            a.record.archived_at = None;
            a.record.archive_batch_id = None;
            a.record.updated_at = now;
            step(&mut a.record, Status::Closed);
            // A held turn ends with its archive (its caller was told "archived"); one an earlier
            // version archived along is not brought back to be run unannounced.
            a.record.waiting_prompt = None;
            if a.record.held_turn.take().is_some() {
                a.pending_permission = None;
                if a.record.attention_reason == Some(AttentionReason::Permission) {
                    clear_attention(&mut a.record);
                }
            }
            if detach.contains(m) {
                a.clear_parent();
            }
            self.touch(*m);
        }
        // Restored as a root, its subtree's usage leaves the trees above it.
        if !detach.is_empty() {
            self.index_tree_usage();
        }
        // Restored as a root, an agent whose creator is not its parent leaves budget trees.
        if chains
            .iter()
            .any(|(m, before)| self.budget_parent(*m) != *before)
        {
            self.index_budget_spent();
        }
        for m in &members {
            self.index_child(*m);
            if let Some(p) = self.agents[m].parent {
                self.out.tracks.insert(p);
            }
        }
        // Members are in archive order (parents before their children), so each one's parent
        // already has its root.
        for m in &members {
            self.adopt_root(*m);
            self.refresh(*m);
        }
        Ok(members)
    }
}
