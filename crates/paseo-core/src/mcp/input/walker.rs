//! The hand-written walker: reads one JSON object at a time, naming every field by its path.

use serde_json::{Map, Value};

use super::{FieldError, R};
use crate::model::AgentId;

pub(super) fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

pub(super) fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One JSON object being read, with its path and the fields it may have.
pub(super) struct Obj<'a> {
    pub(super) path: String,
    pub(super) map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    /// `v` must be an object whose keys are all in `known`.
    pub(super) fn new(v: &'a Value, path: &str, known: &[&str]) -> R<Obj<'a>> {
        let Value::Object(map) = v else {
            let message = format!("must be an object, got {}", describe(v));
            return Err(if path.is_empty() {
                FieldError::new("", format!("the arguments {message}"))
            } else {
                FieldError::new(path, message)
            });
        };
        for k in map.keys() {
            if !known.contains(&k.as_str()) {
                return Err(FieldError::new(
                    join(path, k),
                    format!("unknown field; expected one of: {}", known.join(", ")),
                ));
            }
        }
        Ok(Obj {
            path: path.to_string(),
            map,
        })
    }

    pub(super) fn field(&self, name: &str) -> String {
        join(&self.path, name)
    }

    /// The value of `name`; absent and `null` both count as not given.
    pub(super) fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    pub(super) fn req(&self, name: &str) -> R<&'a Value> {
        self.get(name)
            .ok_or_else(|| FieldError::new(self.field(name), "is required"))
    }

    pub(super) fn opt_str(&self, name: &str) -> R<Option<&'a str>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(FieldError::new(
                self.field(name),
                format!("must be a string, got {}", describe(v)),
            )),
        }
    }

    /// A string that must be given and not blank.
    pub(super) fn req_str(&self, name: &str) -> R<&'a str> {
        self.req(name)?;
        let s = self.opt_str(name)?.unwrap_or_default();
        if s.trim().is_empty() {
            return Err(FieldError::new(self.field(name), "must not be empty"));
        }
        Ok(s)
    }

    /// An optional string; a blank one counts as not given.
    pub(super) fn opt_text(&self, name: &str) -> R<Option<String>> {
        Ok(self
            .opt_str(name)?
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string))
    }

    pub(super) fn opt_bool(&self, name: &str) -> R<Option<bool>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(FieldError::new(
                self.field(name),
                format!("must be true or false, got {}", describe(v)),
            )),
        }
    }

    pub(super) fn opt_f64(&self, name: &str) -> R<Option<f64>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_f64().map(Some).ok_or_else(|| {
                FieldError::new(self.field(name), "must be a finite number".to_string())
            }),
            Some(v) => Err(FieldError::new(
                self.field(name),
                format!("must be a number, got {}", describe(v)),
            )),
        }
    }

    pub(super) fn opt_u64(&self, name: &str, max: u64) -> R<Option<u64>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(x) if x <= max => Ok(Some(x)),
                _ => Err(FieldError::new(
                    self.field(name),
                    format!("must be a whole number from 0 to {max}, got {n}"),
                )),
            },
            Some(v) => Err(FieldError::new(
                self.field(name),
                format!("must be a whole number, got {}", describe(v)),
            )),
        }
    }

    pub(super) fn req_agent_id(&self, name: &str) -> R<AgentId> {
        let s = self.req_str(name)?;
        agent_id(&self.field(name), s)
    }

    pub(super) fn opt_agent_id(&self, name: &str) -> R<Option<AgentId>> {
        match self.opt_str(name)? {
            None => Ok(None),
            Some(s) => agent_id(&self.field(name), s).map(Some),
        }
    }

    /// The `kind` tag of a union: required, a string, one of `kinds`.
    pub(super) fn kind(&self, kinds: &[&'static str]) -> R<&'static str> {
        let field = self.field("kind");
        let v = self.get("kind").ok_or_else(|| {
            FieldError::new(
                &field,
                format!("is required (one of: {})", kinds.join(", ")),
            )
        })?;
        let Value::String(s) = v else {
            return Err(FieldError::new(
                &field,
                format!("must be a string, one of: {}", kinds.join(", ")),
            ));
        };
        kinds.iter().copied().find(|k| k == s).ok_or_else(|| {
            FieldError::new(
                &field,
                format!("unknown kind {s:?}; expected one of: {}", kinds.join(", ")),
            )
        })
    }
}

pub(super) fn agent_id(field: &str, s: &str) -> R<AgentId> {
    s.parse::<AgentId>().map_err(|_| {
        FieldError::new(
            field,
            format!("{s:?} is not an agent id (expected a UUID such as 2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d)"),
        )
    })
}

/// The keys of a tagged union's variant (with its `kind`).
pub(super) fn with_kind<'k>(fields: &[&'k str]) -> Vec<&'k str> {
    let mut v = vec!["kind"];
    v.extend_from_slice(fields);
    v
}

/// Reads a union: checks `kind` first (against every key the union knows, so a misspelled
/// field is reported as unknown), then the variant's own keys.
pub(super) fn union<'a>(
    v: &'a Value,
    path: &str,
    variants: &[(&'static str, &[&str])],
) -> R<(&'static str, Obj<'a>)> {
    let mut all: Vec<&str> = vec!["kind"];
    for (_, fs) in variants {
        for f in *fs {
            if !all.contains(f) {
                all.push(f);
            }
        }
    }
    let o = Obj::new(v, path, &all)?;
    let kinds: Vec<&'static str> = variants.iter().map(|(k, _)| *k).collect();
    let kind = o.kind(&kinds)?;
    let own = variants
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, fs)| with_kind(fs))
        .unwrap_or_default();
    for k in o.map.keys() {
        if !own.contains(&k.as_str()) && !o.map[k].is_null() {
            return Err(FieldError::new(
                join(path, k),
                format!(
                    "is not a field of kind {kind:?} (its fields: {})",
                    own.join(", ")
                ),
            ));
        }
    }
    Ok((kind, o))
}
