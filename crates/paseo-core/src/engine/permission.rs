//! Permission requests (SPEC 2, 9, 14): a provider asks before a tool runs; the agent stays
//! running and needs the user until the request is answered, withdrawn, or dies with its turn.

use super::hold::{keep_held, take_turn_arm};
use super::pending::{answered, withdraw_pending};
use super::{require_attention, Effect, Engine, EngineError};
use crate::model::NoticeOutcome;
use crate::model::{AgentId, AttentionReason, ItemKind, NewItem, PermissionRequest, Status};

impl Engine {
    /// A pending permission: the agent stays running and needs the user (`permission`). An armed
    /// turn reports it to its parent now (one notice per armed turn).
    pub fn permission_requested(
        &mut self,
        id: AgentId,
        req: PermissionRequest,
    ) -> Result<(), EngineError> {
        let now = self.now();
        let a = self.running_mut(id, Status::Running)?;
        let text = format!("Permission requested: {}", req.tool_name);
        let mut item = NewItem::new(ItemKind::Permission, text);
        item.call_id = Some(req.request_id.clone());
        item.tool_name = Some(req.tool_name.clone());
        item.input = Some(req.input.clone());
        a.pending_permission = Some(Box::new(req.clone()));
        require_attention(&mut a.record, AttentionReason::Permission, now);
        let arm = take_turn_arm(a);
        self.touch(id);
        self.timeline(id, item);
        if let Some(arm) = arm {
            self.send_notice(
                id,
                arm,
                NoticeOutcome::NeedsPermission,
                Some(format!("waiting for permission to use {}", req.tool_name)),
            );
        }
        Ok(())
    }

    /// Answers the pending permission request.
    pub fn answer_permission(
        &mut self,
        id: AgentId,
        request_id: &str,
        allow: bool,
    ) -> Result<(), EngineError> {
        if self.answer_held(id, request_id, allow)? {
            return Ok(());
        }
        let now = self.now();
        let a = self.unarchived_mut(id)?;
        match &a.pending_permission {
            Some(p) if p.request_id == request_id => {}
            _ => return Err(EngineError::NoSuchPermission(id, request_id.to_string())),
        }
        let item = answered(a, request_id, allow);
        keep_held(a, now);
        self.touch(id);
        self.timeline(id, item);
        self.out.effects.push(Effect::AnswerPermission {
            agent: id,
            request_id: request_id.to_string(),
            allow,
        });
        Ok(())
    }

    /// The provider withdrew a permission request (e.g. the turn was interrupted).
    pub fn permission_resolved(
        &mut self,
        id: AgentId,
        request_id: &str,
    ) -> Result<(), EngineError> {
        let now = self.now();
        let a = self.get_mut(id)?;
        if withdraw_pending(a, request_id) {
            keep_held(a, now);
            self.touch(id);
        }
        Ok(())
    }
}
