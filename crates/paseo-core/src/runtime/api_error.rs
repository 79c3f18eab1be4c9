//! A failed request as every client reads it (`{code, message, field?}`): the runtime's errors
//! map onto it ([`RuntimeError::code`]), and an error a host answered is carried back in it
//! ([`RuntimeError::Api`]). The api module hands it on as its own.

use serde::{Deserialize, Serialize};

use super::RuntimeError;

/// A failed request: a stable code a client acts on (`invalid`, `not_found`, `conflict`,
/// `busy`, `forbidden`, `limit`, `canceled`, `stopped`, …), a message for people, and the input
/// at fault by its path when there is one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl ApiError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        ApiError {
            code: code.to_string(),
            message: message.into(),
            field: None,
        }
    }
}

impl From<RuntimeError> for ApiError {
    fn from(e: RuntimeError) -> Self {
        if let RuntimeError::Api(e) = e {
            return e;
        }
        ApiError {
            code: e.code().to_string(),
            message: e.to_string(),
            field: e.field().map(String::from),
        }
    }
}
