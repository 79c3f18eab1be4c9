//! Permission requests (SPEC 2, 9): a provider asks the user before a tool runs, or the app
//! holds a turn that would have more power than its caller until the user approves its start
//! (SPEC 14). Which of the two a request is, is its `kind`, set where the request is made.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// How a held turn's request id starts. Only this module reads it: requests written before
/// they carried a kind are told apart by it ([`PermissionRequest`]'s deserializer).
pub(crate) const HELD_REQUEST_PREFIX: &str = "paseo-held-";

/// What the user is asked to allow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionKind {
    /// A provider's tool call (e.g. Claude Code's `can_use_tool`).
    #[default]
    Tool,
    /// A turn the app held because it would give its caller more power (SPEC 14): allowing it
    /// starts the turn.
    HeldStart,
    /// A turn held because its tree used its budget (SPEC 18): allowing it runs that one turn.
    Budget,
}

/// A permission request the user answers.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequest {
    pub request_id: String,
    pub kind: PermissionKind,
    pub tool_name: String,
    pub input: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool call this asks about (its timeline item's `callId`), when the provider says, so
    /// the UI can show that call as waiting for the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

impl PermissionRequest {
    /// A provider's question about a tool call.
    pub fn tool(request_id: impl Into<String>, tool_name: impl Into<String>, input: Value) -> Self {
        PermissionRequest {
            request_id: request_id.into(),
            kind: PermissionKind::Tool,
            tool_name: tool_name.into(),
            input,
            description: None,
            call_id: None,
        }
    }

    /// A turn held for the user's approval of its start (SPEC 14).
    pub fn is_held_start(&self) -> bool {
        self.kind == PermissionKind::HeldStart
    }

    /// A turn held because its tree used its budget (SPEC 18).
    pub fn is_budget(&self) -> bool {
        self.kind == PermissionKind::Budget
    }
}

/// Reads a request; one written before requests carried a kind is a held start when its id says
/// so (the only way they were told apart then), else a tool call.
impl<'de> Deserialize<'de> for PermissionRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire {
            request_id: String,
            kind: Option<PermissionKind>,
            tool_name: String,
            #[serde(default)]
            input: Value,
            description: Option<String>,
            call_id: Option<String>,
        }
        let w = Wire::deserialize(d)?;
        let kind = w
            .kind
            .unwrap_or(if w.request_id.starts_with(HELD_REQUEST_PREFIX) {
                PermissionKind::HeldStart
            } else {
                PermissionKind::Tool
            });
        Ok(PermissionRequest {
            request_id: w.request_id,
            kind,
            tool_name: w.tool_name,
            input: w.input,
            description: w.description,
            call_id: w.call_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_kind_is_written_and_read_back() {
        let r = PermissionRequest::tool("r1", "Bash", json!({"command": "ls"}));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["kind"], "tool");
        let held = PermissionRequest {
            kind: PermissionKind::HeldStart,
            ..r.clone()
        };
        let v = serde_json::to_value(&held).unwrap();
        assert_eq!(v["kind"], "heldStart");
        let back: PermissionRequest = serde_json::from_value(v).unwrap();
        assert_eq!(back, held);
        assert!(back.is_held_start());
    }

    /// Requests written before they had a kind: the held start's id is all that told it apart.
    #[test]
    fn an_old_request_without_a_kind_reads_its_kind_from_its_id() {
        let old_held = json!({
            "requestId": "paseo-held-5b0e8a8e-3f59-4a35-a1b2-0c3d4e5f6a7b",
            "toolName": "Run a shell agent with full power",
            "input": {"prompt": "make"},
            "description": "held",
        });
        let r: PermissionRequest = serde_json::from_value(old_held).unwrap();
        assert_eq!(r.kind, PermissionKind::HeldStart);
        assert_eq!(r.description.as_deref(), Some("held"));
        let old_tool =
            json!({"requestId": "toolu_01", "toolName": "Bash", "input": {}, "callId": "c1"});
        let r: PermissionRequest = serde_json::from_value(old_tool).unwrap();
        assert_eq!(r.kind, PermissionKind::Tool);
        assert_eq!(r.call_id.as_deref(), Some("c1"));
        // A kind written down wins over the id.
        let said =
            json!({"requestId": "paseo-held-x", "kind": "tool", "toolName": "T", "input": {}});
        let r: PermissionRequest = serde_json::from_value(said).unwrap();
        assert_eq!(r.kind, PermissionKind::Tool);
    }
}
