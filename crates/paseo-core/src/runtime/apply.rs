//! The settle step after every engine operation: carrying out what the engine decided (durable
//! writes, sessions started, fed and closed, worktrees removed) and the events every window
//! renders from.

use super::durable::Durable;
use super::internal::Internal;
use super::removal::Pending;
use super::sessions::Buffered;
use crate::engine::Effect;
use crate::model::{AgentId, NewItem, WorkspaceId, WorkspaceKind};
use crate::store::Ticket;

use super::actor::Actor;

impl Actor {
    /// Carries out everything the engine's last operations asked for, persists what changed and
    /// tells every window.
    pub(crate) fn apply(&mut self) {
        loop {
            let out = self.engine.take_outcome();
            if out.is_empty() {
                // Slots freed by what was just carried out go to the oldest waiting starts.
                if self.fill_slots() {
                    continue;
                }
                break;
            }
            for e in out.effects {
                self.execute(e);
            }
            // A notice's new place is written before its old place forgets it (SPEC 4).
            let tails = &mut self.tails;
            let mut mark = |id| tails.mark(id);
            let inboxes = self.persist.write_inboxes(
                &self.engine,
                &out.inboxes,
                &out.notice_order,
                &mut mark,
            );
            self.persist
                .hold_notice_owers(&self.engine, &out.notice_order, &inboxes, &mut mark);
            let mut archived = Vec::new();
            for id in &out.agents {
                let t = self.persist_agent(*id);
                if self
                    .engine
                    .agent(*id)
                    .is_some_and(|a| a.record.is_archived())
                {
                    archived.push((*id, t));
                }
            }
            self.persist.write_registries(
                &self.engine,
                out.workspaces_registry,
                out.projects_registry,
            );
            // Nobody to tell (at start, before any window or client subscribed): the events
            // are not built at all; a start after a big load would build one per parent.
            let listening = self.out.listening();
            for id in out.agents.iter().filter(|_| listening) {
                if let Some(a) = self.engine.agent(*id) {
                    if a.record.is_archived() {
                        continue;
                    }
                    self.out.agent_updated(&self.engine, a);
                }
            }
            // A track or bucket that drops an archived agent is news of the archive: it goes
            // out with the archive, once the record is durable (SPEC 5).
            let held = !archived.is_empty();
            if held {
                self.out.hold_news(
                    archived.iter().map(|(id, _)| *id).collect(),
                    out.workspaces.iter().cloned().collect(),
                    out.tracks.iter().copied().collect(),
                );
            }
            for (id, t) in archived {
                if self.persist.announce_when_durable(id, t, &self.internal_tx) {
                    self.announce_archived(id);
                }
            }
            // Ancestors whose tree usage changed; archived ones are read when listed.
            let rerender = self.engine.take_rerender();
            for id in rerender.difference(&out.agents).filter(|_| listening) {
                if let Some(a) = self.engine.agent(*id).filter(|a| !a.record.is_archived()) {
                    self.out.agent_updated(&self.engine, a);
                }
            }
            if !out.agents.is_empty() {
                self.out.counts_may_change();
            }
            if !held && listening {
                // Later news of what a pending archive touched would show it too early: it
                // goes out with that archive's (current then).
                self.out
                    .tell_unheld(&self.engine, out.workspaces.iter(), out.tracks.iter());
            }
            for n in out.notices {
                self.out.notice(n);
            }
        }
        self.start_removals();
        self.tails.flush(&self.out);
    }

    /// The archived record of `id` is durable: every window hears of the archive now (unless
    /// it was restored in between).
    pub(super) fn announce_archived(&mut self, id: AgentId) {
        let Some(tx) = self.persist.take_announcement(id) else {
            self.out.release_news(&self.engine, id);
            return;
        };
        if let Some(a) = self.engine.agent(id) {
            if a.record.is_archived() {
                self.out.agent_archived(&self.engine, a);
            }
        }
        self.out.release_news(&self.engine, id);
        let _ = tx.send(true);
    }

    pub(super) fn execute(&mut self, e: Effect) {
        match e {
            Effect::StartSession { agent, resume } => self.start_or_wait(agent, resume),
            Effect::SendTurn { agent, input } => self.with_session(agent, Buffered::Send(input)),
            Effect::Interrupt { agent, turn } => {
                self.with_session(agent, Buffered::Interrupt);
                let tx = self.internal_tx.clone();
                let d = self.sessions.cancel_timeout();
                tokio::spawn(async move {
                    tokio::time::sleep(d).await;
                    let _ = tx.send(Internal::CancelTimeout { agent, turn });
                });
            }
            Effect::CloseSession { agent } => self.close_session(agent),
            Effect::AnswerPermission {
                agent,
                request_id,
                allow,
            } => self.with_session(agent, Buffered::Permission(request_id, allow)),
            Effect::Timeline { agent, item } => self.push_item(agent, *item),
            Effect::ArchiveWorktree {
                workspace,
                requested_by,
            } => {
                tracing::info!(%workspace, %requested_by, "autoArchive: archiving the worktree it created");
                let cause = match self.engine.agent(requested_by) {
                    Some(a) if !a.record.title.trim().is_empty() => a.record.title.clone(),
                    _ => format!("agent {requested_by}"),
                };
                match self.engine.archive_workspace(&workspace, true) {
                    Ok(archived) => {
                        let mut show_on = vec![requested_by];
                        show_on.extend(archived.iter().filter(|a| **a != requested_by));
                        // The sessions of the agents just archived close in the effects still
                        // to run: the removal is decided once they all have (SPEC 15).
                        self.removals.push(Pending {
                            workspace,
                            wait_for: show_on.clone(),
                            cause,
                            show_on,
                        });
                    }
                    Err(e) => self.notice(format!("could not archive worktree {workspace}: {e}")),
                }
            }
            Effect::RevokeAccess { agent } => self.revoke(agent),
        }
    }

    pub(super) fn notice(&mut self, message: String) {
        self.out.notice(message);
    }

    pub(crate) fn push_item(&mut self, agent: AgentId, item: NewItem) {
        let turn = self
            .engine
            .agent(agent)
            .map(|a| a.record.turn_count)
            .unwrap_or(0);
        self.tails.push(agent, turn, item);
    }

    pub(super) fn persist_agent(&mut self, id: AgentId) -> Option<Ticket> {
        match self.persist.write_agent(&self.engine, id) {
            Ok(t) => t,
            Err(message) => {
                self.notice(message);
                None
            }
        }
    }

    /// Submits held-back load repairs: all of them (`all`), or the next batch the writer has
    /// room for once they are released.
    pub(super) fn write_deferred(&mut self, all: bool) {
        let Some((registries, batch)) = self.persist.next_deferred(all) else {
            return;
        };
        if registries {
            self.persist.write_registries(&self.engine, true, true);
        }
        for id in batch {
            let _ = self.persist_agent(id);
        }
    }

    /// Starts the removals decided during the last `apply`, whose effects have all run.
    fn start_removals(&mut self) {
        for p in std::mem::take(&mut self.removals) {
            self.remove_worktree_later(&p.workspace, &p.wait_for, &p.cause, p.show_on);
        }
    }

    /// Removes an archived worktree workspace's directory once the processes of `archived`
    /// are gone ([`super::removal`]).
    pub(super) fn remove_worktree_later(
        &mut self,
        ws: &WorkspaceId,
        archived: &[AgentId],
        cause: &str,
        show_on: Vec<AgentId>,
    ) {
        let Some(rec) = self.engine.workspace(ws).cloned() else {
            return;
        };
        if rec.kind != WorkspaceKind::Worktree {
            return;
        }
        let closes = self.sessions.closes(archived);
        let closes = closes.into_iter().map(|(_, rx)| rx).collect();
        let (layout, tx) = (self.layout.clone(), self.internal_tx.clone());
        super::removal::remove_later(rec, closes, layout, tx, cause, show_on);
    }

    /// What the caller of this step waits for: its writes, and the announcements and closes
    /// of `ids`.
    pub(super) fn durable(&mut self, ids: &[AgentId]) -> Durable {
        Durable::new(
            self.persist.take_tickets(),
            self.persist.announcements(ids),
            self.sessions.closes(ids),
        )
    }
}
