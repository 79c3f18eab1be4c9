//! Reading a request: on the wire one JSON object, `{"kind": "archive", "agentId": "…"}`, the
//! frames the window sends through its one command and a host carries over ssh (SPEC 17). The
//! verbs themselves are [`super::verbs`].

use super::{ApiError, Request};

impl Request {
    /// Reads one request frame; a bad one is an `invalid` error naming the field at fault
    /// (`kind` for an unknown request).
    pub fn from_json(text: &str) -> Result<Request, ApiError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad_request(&e, None))?;
        Self::from_value(value)
    }

    /// As [`Self::from_json`], from an already parsed value (the window's command).
    pub fn from_value(value: serde_json::Value) -> Result<Request, ApiError> {
        serde_json::from_value(value.clone()).map_err(|e| bad_request(&e, Some(&value)))
    }
}

/// serde names the field in its message (`missing field `agentId``, `unknown variant `x``);
/// the field goes into the error's own slot so a client points at it without parsing. A bad
/// value (`invalid agent id "x"`) is named by the field holding it: serde does not track the
/// path inside a tagged enum.
fn bad_request(e: &serde_json::Error, frame: Option<&serde_json::Value>) -> ApiError {
    let message = e.to_string();
    let quoted = message.split('`').nth(1).map(str::to_string);
    let field = if message.contains("unknown variant") || message.contains("missing field `kind`") {
        Some("kind".to_string())
    } else if message.contains("missing field") || message.contains("unknown field") {
        quoted
    } else {
        frame.and_then(|f| holder(f, "", &message))
    };
    let message = match &field {
        Some(f) if !message.starts_with(f.as_str()) => format!("{f}: {message}"),
        _ => message,
    };
    ApiError {
        code: "invalid".to_string(),
        message,
        field,
    }
}

/// The path of the field in `frame` whose value the message quotes, if one does.
fn holder(frame: &serde_json::Value, prefix: &str, message: &str) -> Option<String> {
    let object = frame.as_object()?;
    object.iter().find_map(|(key, value)| {
        if prefix.is_empty() && key == "kind" {
            return None;
        }
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let quoted = match value {
            serde_json::Value::String(s) => Some(format!("\"{s}\"")),
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::Bool(b) => Some(format!("`{b}`")),
            serde_json::Value::Object(_) => return holder(value, &path, message),
            _ => None,
        };
        quoted
            .filter(|q| message.contains(q.as_str()))
            .map(|_| path)
    })
}
