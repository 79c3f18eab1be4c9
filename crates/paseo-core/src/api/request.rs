//! Reading a request: on the wire one JSON object, `{"kind": "archive", "agentId": "…"}`, the
//! frames the window sends through its one command and a host carries over ssh (SPEC 17). The
//! verbs themselves are [`super::verbs`].

use serde_json::Value;

use super::{ApiError, Request};
use crate::model::tagged::TAG;

impl Request {
    /// Reads one request frame; a bad one is an `invalid` error naming the field at fault by
    /// its path (`kind` for an unknown request, `workspace.target.newBranch`, `after[1]`).
    pub fn from_json(text: &str) -> Result<Request, ApiError> {
        let value: Value = serde_json::from_str(text).map_err(|e| invalid(None, e.to_string()))?;
        Self::from_value(value)
    }

    /// As [`Self::from_json`], from an already parsed value (the window's command).
    pub fn from_value(mut value: Value) -> Result<Request, ApiError> {
        kind_first(&mut value);
        serde_path_to_error::deserialize(value).map_err(|e| {
            let at = (e.path().iter().len() > 0).then(|| e.path().to_string());
            let message = e.into_inner().to_string();
            // serde reports a missing field at the object lacking it: the field is one further.
            let missing = message
                .strip_prefix("missing field `")
                .and_then(|rest| rest.split('`').next());
            let field = match (at, missing) {
                (Some(at), Some(name)) => Some(format!("{at}.{name}")),
                (None, Some(name)) => Some(name.to_string()),
                (at, None) => at,
            };
            invalid(field, message)
        })
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

/// Moves every object's `kind` to the front: a tagged object whose kind comes later is read
/// from a copy of its fields, and an error in that copy has lost its path (`model::tagged`).
fn kind_first(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            if fields.keys().next().is_some_and(|k| k != TAG) {
                if let Some(kind) = fields.shift_remove(TAG) {
                    fields.shift_insert(0, TAG.to_string(), kind);
                }
            }
            fields.values_mut().for_each(kind_first);
        }
        Value::Array(items) => items.iter_mut().for_each(kind_first),
        _ => {}
    }
}
