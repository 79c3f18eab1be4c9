//! Reading a request: on the wire one JSON object, `{"kind": "archive", "agentId": "…"}`, the
//! frames the window sends through its one command and a host carries over ssh (SPEC 17). The
//! verbs themselves are [`super::verbs`].

use serde_json::Value;

use super::{ApiError, Request};
use crate::model::tagged;

impl Request {
    /// Reads one request frame; a bad one is an `invalid` error naming the field at fault by
    /// its path (`kind` for an unknown request, `workspace.target.newBranch`, `after[1]`).
    pub fn from_json(text: &str) -> Result<Request, ApiError> {
        let value: Value = serde_json::from_str(text).map_err(|e| invalid(None, e.to_string()))?;
        Self::from_value(value)
    }

    /// As [`Self::from_json`], from an already parsed value (the window's command).
    pub fn from_value(value: Value) -> Result<Request, ApiError> {
        tagged::from_value(value).map_err(|e| invalid(e.field, e.message))
    }
}

/// An `invalid` error about `field`, whose message starts with it so a person reading only the
/// message sees it too; the field has its own slot so a client points at it without parsing.
fn invalid(field: Option<String>, message: String) -> ApiError {
    let message = match &field {
        Some(f) => format!("{f}: {message}"),
        None => message,
    };
    ApiError {
        code: "invalid".to_string(),
        message,
        field,
    }
}
