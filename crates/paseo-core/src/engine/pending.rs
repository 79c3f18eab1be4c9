//! An agent's pending permission request as it ends: taken as answered or withdrawn (with the
//! attention it raised), and the timeline item that records the answer. Shared by provider
//! requests ([`super::permission`]) and held turns ([`super::hold`]).

use super::clear_attention;
use crate::model::{AttentionReason, ItemKind, NewItem};

/// Takes the agent's pending request as answered: its attention cleared, and the timeline item
/// that records the answer.
pub(super) fn answered(a: &mut super::AgentState, request_id: &str, allow: bool) -> NewItem {
    let tool = a
        .pending_permission
        .take()
        .map(|p| p.tool_name)
        .unwrap_or_default();
    clear_attention(&mut a.record);
    answer_item(if allow { "Allowed" } else { "Denied" }, &tool, request_id)
}

/// Withdraws the agent's pending request if it is `request_id`, with the attention it raised.
/// Returns whether it was.
pub(super) fn withdraw_pending(a: &mut super::AgentState, request_id: &str) -> bool {
    if a.pending_permission
        .as_ref()
        .is_none_or(|p| p.request_id != request_id)
    {
        return false;
    }
    a.pending_permission = None;
    if a.record.attention_reason == Some(AttentionReason::Permission) {
        clear_attention(&mut a.record);
    }
    true
}

/// The timeline item that records how request `request_id` (for `tool`) was answered.
pub(super) fn answer_item(answer: &str, tool: &str, request_id: &str) -> NewItem {
    let mut item = NewItem::new(ItemKind::Permission, format!("{answer} {tool}"));
    item.call_id = Some(request_id.to_string());
    item
}
