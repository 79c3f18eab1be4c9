//! Held turns (SPEC 14): a turn an agent asked for that would run with more power than the
//! asking agent has waits behind a permission request on the agent that would run it. Nothing
//! of it runs before the user allows it; a denial ends it `error` ("denied by the user") and the
//! caller's finish notice says so. The held turn is in the record, so it survives a restart
//! still answerable.

use super::{require_attention, set_error, Engine, EngineError, Queued};
use crate::model::{
    AgentId, AttentionReason, Hold, ItemKind, NewItem, NotifyArm, TurnInput, TurnOrigin,
};

/// What a denied held turn ends with.
pub const DENIED: &str = "denied by the user";

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
        let now = self.now();
        let a = self.live_mut(id)?;
        if a.record
            .held_turn
            .as_ref()
            .is_none_or(|h| h.request_id != request_id)
        {
            return Ok(false);
        }
        let Some(held) = a.record.held_turn.take() else {
            return Ok(false);
        };
        let item = super::permission::answered(a, request_id, allow);
        let arm = a.record.take_notify_arm();
        if allow {
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
            set_error(&mut a.record, DENIED, now);
            self.timeline(id, item);
            self.report_failure(id, DENIED.to_string(), arm);
        }
        Ok(true)
    }
}
