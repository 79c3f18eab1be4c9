//! Finish notices (SPEC 4): an armed turn's notice is queued in its target's durable inbox and
//! delivered, in order, as the target's next turn at its next idle boundary. A notice never
//! interrupts a running turn; it is dropped only when its target is archived. The notice itself
//! is [`crate::model::Notice`].

use super::{Engine, NoticeOrder, Queued, SessionState};
use crate::model::{
    AgentId, NewItem, Notice, NoticeOutcome, NotifyArm, Status, TurnInput, TurnOrigin,
};

impl Engine {
    /// Enqueues the notice an armed turn owes its target, then tries to deliver it.
    pub(super) fn send_notice(
        &mut self,
        child: AgentId,
        arm: NotifyArm,
        outcome: NoticeOutcome,
        error: Option<String>,
    ) {
        let now = self.now();
        let target = arm.target_agent_id;
        let Some(c) = self.agents.get(&child) else {
            return;
        };
        let notice = Notice::new(
            &arm.id,
            child,
            &c.record.title,
            outcome,
            error,
            c.record.last_message.as_deref(),
            now,
        );
        let Some(t) = self.agents.get(&target) else {
            self.out.notices.push(format!(
                "finish notice of {child} dropped: its target {target} no longer exists"
            ));
            return;
        };
        if t.record.is_archived() {
            return; // dropped: notices to archived agents are dropped by design
        }
        if self.delivered_at_load.contains(&notice.id) {
            // Re-derived after a crash, but its target's timeline shows it received.
            return;
        }
        if !t.reads_prompts {
            // A shell agent cannot read: the notice is only recorded in its timeline.
            self.timeline(target, NewItem::notice(&notice, notice.summary()));
            self.out
                .notice_order
                .push(NoticeOrder::Recorded { child, target });
            return;
        }
        let q = self.inbox.entry(target).or_default();
        if q.iter().any(|n| n.id == notice.id) {
            // Re-derived after a crash while still queued: the inbox on disk already has it.
            return;
        }
        q.push_back(notice);
        self.out.inboxes.insert(target);
        self.out
            .notice_order
            .push(NoticeOrder::Queued { child, target });
        self.try_deliver(target);
    }

    /// Notice ids the targets' timelines show as received, read from disk before `load`: a
    /// notice re-derived from a still-armed record, or still in an inbox, whose id is among them
    /// was received before a crash and is not delivered again (SPEC 4).
    pub fn set_delivered_at_load(&mut self, ids: impl IntoIterator<Item = String>) {
        self.delivered_at_load = ids.into_iter().collect();
    }

    /// Delivers the next notice if `id` is at an idle boundary (idle or error, nothing waiting);
    /// resumes a closed agent first. Never interrupts a running turn.
    fn try_deliver(&mut self, id: AgentId) {
        if self.shutting_down || self.delivery_paused {
            return;
        }
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.record.is_archived() || a.queued.is_some() {
            return;
        }
        if !matches!(
            a.record.last_status,
            Status::Idle | Status::Error | Status::Closed
        ) {
            return;
        }
        let Some(next) = self.inbox.get(&id).and_then(|q| q.front()) else {
            return;
        };
        // SPEC 18: a notice waits in the inbox while its target's tree used its budget; the
        // user is asked once (a held turn already waiting holds this one too).
        let origin = TurnOrigin::Notice(next.id.clone());
        let text = next.wrapped();
        if let Some(hold) = self.budget_gate(id, &origin, true, false) {
            if self
                .agents
                .get(&id)
                .is_some_and(|a| a.record.held_turn.is_none())
            {
                let q = Queued {
                    input: TurnInput::Notice(text),
                    origin,
                    arm: None,
                };
                self.hold_on_budget(id, q, hold);
            }
            return;
        }
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        match a.session {
            SessionState::Live => {}
            SessionState::Starting => return, // delivered once it is ready
            SessionState::None => {
                // Resume it first; the notice stays in the durable inbox until its turn starts,
                // so a crash meanwhile loses nothing.
                self.start_session(id);
                self.touch(id);
                return;
            }
        }
        let Some(notice) = self.inbox.get_mut(&id).and_then(|q| q.pop_front()) else {
            return;
        };
        self.budget_pass.spend(id);
        if self.inbox.get(&id).is_some_and(|q| q.is_empty()) {
            self.inbox.remove(&id);
        }
        self.out.inboxes.insert(id);
        self.out
            .notice_order
            .push(NoticeOrder::Delivered { target: id });
        let wrapped = notice.wrapped();
        let item = NewItem::notice(&notice, wrapped.clone());
        let q = Queued {
            input: TurnInput::Notice(wrapped),
            origin: TurnOrigin::Notice(notice.id.clone()),
            arm: None,
        };
        self.start_turn_as(id, q, item);
    }

    /// What happens at an idle boundary: waiting input runs first, then notices.
    pub(super) fn after_idle_boundary(&mut self, id: AgentId) {
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        if a.session == SessionState::Live
            && matches!(a.record.last_status, Status::Idle | Status::Error)
        {
            if let Some(q) = a.take_waiting() {
                self.start_turn(id, q);
                return;
            }
        }
        self.try_deliver(id);
    }

    /// Wakes every unarchived agent that has notices waiting (after load, or when allowed
    /// again), and starts the sessions of those whose prompt was waiting when the app stopped.
    pub fn deliver_pending(&mut self) {
        self.delivery_paused = false;
        for id in std::mem::take(&mut self.waiting_at_load) {
            let waits = self.agents.get(&id).is_some_and(|a| {
                !a.record.is_archived() && a.session == SessionState::None && a.queued.is_some()
            });
            if waits {
                self.start_session(id);
                self.touch(id);
            }
        }
        let mut parents: Vec<AgentId> = self
            .inbox
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(id, _)| *id)
            .collect();
        parents.sort();
        for p in parents {
            self.try_deliver(p);
        }
    }
}
