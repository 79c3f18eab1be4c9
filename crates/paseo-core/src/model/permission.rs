//! Permission requests (SPEC 2, 9): a provider asks the user before a tool runs.

use serde::Serialize;
use serde_json::Value;

/// A permission request a provider surfaces (e.g. Claude Code's `can_use_tool`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequest {
    pub request_id: String,
    pub tool_name: String,
    pub input: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool call this asks about (its timeline item's `callId`), when the provider says, so
    /// the UI can show that call as waiting for the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}
