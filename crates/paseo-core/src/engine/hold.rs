//! Held turns (SPEC 14): a turn an agent asked for that would run with more power than the
//! asking agent has waits behind a permission request on the agent that would run it. Nothing
//! of it runs before the user allows it; a denial ends it `error` ("denied by the user") and the
//! caller's finish notice says so. The held turn is in the record, so it survives a restart
//! still answerable.

use super::{require_attention, set_error, AgentState, Engine, EngineError, Queued};
use crate::model::NoticeOutcome;
use crate::model::{
    AgentId, AttentionReason, HeldTurn, Hold, ItemKind, NewItem, NotifyArm, Status, TurnInput,
    TurnOrigin,
};

pub use crate::model::DENIED;

impl Engine {
    /// Holds `prompt` for agent `id`: `hold` says who asked for it and why it waits. `notify` is armed as a prompt's would be and fires when the turn
    /// ends, or at once when the user denies it. A busy agent (running, something queued, a turn
    /// already held) refuses, as for a prompt.
    pub fn hold_turn(
        &mut self,
        id: AgentId,
        prompt: String,
        hold: Hold,
        notify: Option<AgentId>,
    ) -> Result<(), EngineError> {
        let (now, a) = self.turn_target(id, notify)?;
        if a.pending_permission.is_some() {
            return Err(EngineError::Busy {
                id,
                status: "waiting for a permission",
            });
        }
        let held = hold.turn(prompt);
        let req = held.request(&a.record.provider, &a.record.config, &a.record.cwd);
        a.record.held_turn = Some(Box::new(held));
        a.record.notify_arm = notify.map(|t| Box::new(NotifyArm::new(t)));
        a.record.last_user_message_at = Some(now);
        a.pending_permission = Some(Box::new(req.clone()));
        require_attention(&mut a.record, AttentionReason::Permission, now);
        self.touch(id);
        let mut item = NewItem::new(
            ItemKind::Permission,
            format!("Permission requested: {}", req.tool_name),
        );
        item.call_id = Some(req.request_id.clone());
        item.tool_name = Some(req.tool_name.clone());
        item.input = Some(req.input.clone());
        self.timeline(id, item);
        Ok(())
    }

    /// Answers a held turn, if `request_id` is the agent's held one; `Ok(false)` when it is not
    /// (the request is a provider's).
    pub(super) fn answer_held(
        &mut self,
        id: AgentId,
        request_id: &str,
        allow: bool,
    ) -> Result<bool, EngineError> {
        let a = self.unarchived_mut(id)?;
        if a.record
            .held_turn
            .as_ref()
            .is_none_or(|h| h.request_id != request_id)
        {
            return Ok(false);
        }
        let budget = a
            .record
            .held_turn
            .as_ref()
            .is_some_and(|h| h.budget.is_some());
        if allow && budget {
            self.run_budget_held(id, "Allowed");
        } else if allow {
            let Some((held, arm, item)) = take_held(a, request_id, "Allowed") else {
                return Ok(false);
            };
            self.touch(id);
            self.timeline(id, item);
            self.begin(
                id,
                Queued {
                    input: TurnInput::Prompt(held.prompt),
                    origin: TurnOrigin::Agent(held.caller),
                    arm,
                },
            );
        } else {
            self.end_held(id, Ending::Denied);
        }
        Ok(true)
    }

    /// Ends the agent's held turn without running it: denied by the user, or canceled (the UI's
    /// Stop, `cancel_agent`). Either is the turn's terminal event: its caller hears the outcome
    /// once, and autoArchive applies as after any turn (SPEC 4, 5, 14). While a notice turn runs
    /// (SPEC 4 delivers notices to an agent with a held turn), that turn keeps the status: its
    /// own end is the idle boundary. Returns whether there was a held turn.
    pub(super) fn end_held(&mut self, id: AgentId, how: Ending) -> bool {
        if self.end_notice_hold(id, how) {
            return true;
        }
        let now = self.now();
        let Some(a) = self.agents.get_mut(&id) else {
            return false;
        };
        let Some(request_id) = a.record.held_turn.as_ref().map(|h| h.request_id.clone()) else {
            return false;
        };
        let answer = match how {
            Ending::Denied => "Denied",
            Ending::Canceled => "Canceled",
        };
        let Some((_, arm, item)) = take_held(a, &request_id, answer) else {
            return false;
        };
        let running = a.record.last_status == Status::Running;
        match how {
            Ending::Denied if !running => {
                set_error(&mut a.record, DENIED, now);
                // The user's own answer: nothing to alert them about (model/status.rs `denied`).
                super::clear_attention(&mut a.record);
                self.timeline(id, item);
                self.report_failure(id, DENIED.to_string(), arm);
            }
            Ending::Denied => {
                self.touch(id);
                self.timeline(id, item);
                if let Some(arm) = arm {
                    self.send_notice(id, arm, NoticeOutcome::Failed, Some(DENIED.to_string()));
                }
            }
            Ending::Canceled => {
                if !running {
                    require_attention(&mut a.record, AttentionReason::Canceled, now);
                }
                self.touch(id);
                self.timeline(id, item);
                if let Some(arm) = arm {
                    self.send_notice(id, arm, NoticeOutcome::Canceled, None);
                }
            }
        }
        if !running {
            self.after_terminal_turn(id, true);
        }
        true
    }
}

/// How a held turn ends without running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ending {
    Denied,
    Canceled,
}

/// Takes the held turn `request_id` off the agent with the arm it owes, and the timeline item
/// that records how it was answered (`Allowed`, `Denied`, `Canceled`). The pending request is
/// taken only if it is the held one: a provider's request of a running notice turn may stand in
/// its place meanwhile.
pub(super) fn take_held(
    a: &mut AgentState,
    request_id: &str,
    answer: &str,
) -> Option<(Box<HeldTurn>, Option<NotifyArm>, NewItem)> {
    let held = a.record.held_turn.take()?;
    let r = &a.record;
    let tool = held.request(&r.provider, &r.config, &r.cwd).tool_name;
    super::pending::withdraw_pending(a, request_id);
    let item = super::pending::answer_item(answer, &tool, request_id);
    let arm = a.record.take_notify_arm();
    Some((held, arm, item))
}

/// The arm a turn that just ended (or never came) owes, if any. While a turn is held, the
/// record's arm is the held turn's (SPEC 4): only that turn's own end (run, denied, canceled,
/// archived) reports it, never a notice turn that ran meanwhile, a session that failed, died or
/// was stopped, or a restart. Likewise a turn allowed while a notice turn ran waits behind it
/// with its own arm.
pub(super) fn take_turn_arm(a: &mut AgentState) -> Option<NotifyArm> {
    if a.record.held_turn.is_some() || a.queued.is_some() {
        return None;
    }
    a.record.take_notify_arm()
}

/// After something ended around a held turn (a notice turn, a provider's request, the session):
/// the held request is the agent's pending request again, and it asks for the user's answer
/// (SPEC 4: nothing but the held turn's own end clears it). An error the user has not seen
/// keeps its own attention; the request still shows.
pub(super) fn keep_held(a: &mut AgentState, now: crate::model::Timestamp) {
    if a.record.held_turn.is_none() {
        return;
    }
    if a.pending_permission.is_none() {
        a.pending_permission = super::held_request(&a.record);
    }
    let error_unseen =
        a.record.requires_attention && a.record.attention_reason == Some(AttentionReason::Error);
    if !error_unseen && a.record.attention_reason != Some(AttentionReason::Permission) {
        require_attention(&mut a.record, AttentionReason::Permission, now);
    }
}
