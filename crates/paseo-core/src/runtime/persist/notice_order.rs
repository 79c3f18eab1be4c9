//! The write order of finish notices (SPEC 4: exactly once at any crash instant). The engine's
//! ledger ([`NoticeOrder`]) says where each notice moved; this turns it into writer gates: the
//! parent's side (its inbox, or its timeline item) is on disk before the child's record that
//! stops owing the notice can land, and a received notice's timeline item before the inbox that
//! no longer holds it. Writes outside the ledger keep no order between paths.

use super::Persistence;
use crate::engine::{Engine, NoticeOrder};
use crate::model::{AgentId, AgentRecord, Notice};
use crate::store::{self, Gate, Layout, Mark, Ticket};
use rustc_hash::{FxHashMap, FxHashSet};

impl Persistence {
    /// Writes the inboxes that changed; an inbox that gave a notice to its agent's turn waits
    /// for the timeline item showing it received (`mark`: set once what an agent's timeline has
    /// waiting now is on disk). Returns each inbox's ticket.
    pub(in super::super) fn write_inboxes(
        &mut self,
        engine: &Engine,
        inboxes: &FxHashSet<AgentId>,
        order: &[NoticeOrder],
        mark: &mut dyn FnMut(AgentId) -> Mark,
    ) -> FxHashMap<AgentId, Ticket> {
        let mut tickets = FxHashMap::default();
        for id in inboxes {
            let path = self.layout.inbox_path(*id);
            let delivered = order
                .iter()
                .any(|o| matches!(o, NoticeOrder::Delivered { target } if target == id));
            if delivered {
                let mark = mark(*id);
                self.writer.hold(path.clone(), vec![Gate::Mark(mark)]);
            }
            let t = match engine.inbox(*id) {
                Some(q) if !q.is_empty() => {
                    let v: Vec<_> = q.iter().cloned().collect();
                    match store::encode_inbox(&v) {
                        Ok(b) => self.writer.submit(path, b),
                        Err(e) => {
                            tracing::error!(error = %e, "cannot encode inbox");
                            continue;
                        }
                    }
                }
                _ => self.writer.remove(path),
            };
            tickets.insert(*id, t.clone());
            self.tickets.push(t);
        }
        tickets
    }

    /// Holds the record of every child that stopped owing a notice behind the write that now
    /// holds it, whenever that record is written (now, or later as a load repair).
    pub(in super::super) fn hold_notice_owers(
        &mut self,
        engine: &Engine,
        order: &[NoticeOrder],
        inboxes: &FxHashMap<AgentId, Ticket>,
        mark: &mut dyn FnMut(AgentId) -> Mark,
    ) {
        for o in order {
            let (child, gate) = match o {
                NoticeOrder::Queued { child, target } => match inboxes.get(target) {
                    Some(t) => (*child, Gate::Write(t.clone())),
                    None => {
                        // The inbox could not be encoded: the record keeps owing the notice on
                        // disk (a mark never set), so the next load derives it again.
                        tracing::error!(%child, %target, "a notice's inbox was not written");
                        (*child, Gate::Mark(Mark::new()))
                    }
                },
                NoticeOrder::Recorded { child, target } => (*child, Gate::Mark(mark(*target))),
                NoticeOrder::Delivered { .. } => continue,
            };
            let Some(a) = engine.agent(child) else {
                continue;
            };
            let path = self.record_path(child, &a.record.cwd);
            self.writer.hold(path, vec![gate]);
        }
    }
}

/// The notices the timelines of the agents concerned show as received: the targets of records
/// still owing a notice and the agents with queued notices, a handful after a crash and none
/// after a clean quit, so a load of 100,000 agents reads no timeline it does not need.
pub(in super::super) async fn received_at_load(
    layout: &Layout,
    records: &[Box<AgentRecord>],
    inboxes: &[(AgentId, Vec<Notice>)],
) -> Vec<String> {
    let mut targets: Vec<AgentId> = records
        .iter()
        .filter_map(|r| r.notify_arm.as_ref().map(|a| a.target_agent_id))
        .chain(
            inboxes
                .iter()
                .filter(|(_, q)| !q.is_empty())
                .map(|(id, _)| *id),
        )
        .collect();
    if targets.is_empty() {
        return Vec::new();
    }
    targets.sort_unstable();
    targets.dedup();
    let layout = layout.clone();
    let scan = move || {
        let mut ids = Vec::new();
        for t in targets {
            match store::timeline::received_notice_ids(&layout.timeline_path(t)) {
                Ok(found) => ids.extend(found),
                // Unreadable: its notices may come twice, never zero times.
                Err(e) => tracing::warn!(agent = %t, error = %e, "cannot read a timeline"),
            }
        }
        ids
    };
    tokio::task::spawn_blocking(scan).await.unwrap_or_default()
}
