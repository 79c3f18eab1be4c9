//! The checks serde's derive cannot express, one function per kind of field, for
//! `#[serde(deserialize_with = "…")]`: an error here is at the field's own path.

use serde::de::Error;
use serde::{Deserialize, Deserializer};

use super::MAX_WAIT_SECONDS;
use crate::model::AgentId;

/// A string that is not blank.
pub(super) fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Err(D::Error::custom("must not be empty"));
    }
    Ok(s)
}

/// An optional string, trimmed: a blank one counts as not given.
pub(super) fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d).map(trimmed)
}

pub(super) fn trimmed(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

pub(super) fn agent_id<'de, D: Deserializer<'de>>(d: D) -> Result<AgentId, D::Error> {
    parse_agent_id(&String::deserialize(d)?)
}

pub(super) fn some_agent_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<AgentId>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|s| parse_agent_id(&s))
        .transpose()
}

// `AgentId`'s own words say "UUID"; a model given an example gets the form right.
fn parse_agent_id<E: Error>(s: &str) -> Result<AgentId, E> {
    s.parse().map_err(|_| {
        E::custom(format!(
            "{s:?} is not an agent id (expected a UUID such as \
             2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d)"
        ))
    })
}

/// A whole number from `MIN` to `MAX`; any JSON number is read, so a negative or fractional one
/// is told the range rather than serde's type.
pub(super) fn whole<'de, D: Deserializer<'de>, const MIN: u64, const MAX: u64>(
    d: D,
) -> Result<Option<u64>, D::Error> {
    let Some(n) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    match n.as_u64() {
        Some(x) if (MIN..=MAX).contains(&x) => Ok(Some(x)),
        _ => Err(D::Error::custom(format!(
            "must be a whole number from {MIN} to {MAX}, got {n}"
        ))),
    }
}

/// `wait_for_agent`'s `timeoutSeconds`.
pub(super) fn wait_seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Option::<f64>::deserialize(d)? {
        Some(t) if !(0.0..=MAX_WAIT_SECONDS).contains(&t) => Err(D::Error::custom(format!(
            "must be between 0 and {MAX_WAIT_SECONDS}, got {t}"
        ))),
        t => Ok(t),
    }
}
