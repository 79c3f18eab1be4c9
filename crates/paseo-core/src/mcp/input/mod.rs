//! The tools' inputs: their types give the input schemas (schemars) and read the arguments
//! (serde), so each field is written once. A bad input is a tool error naming the field by its
//! full path and saying what is wrong (`workspace.source.target.newBranch: is required`): the
//! tagged unions are read kind first (`model::tagged`), which keeps serde's path inside them.
//! What serde's derive cannot check is in `fields.rs` (one function per kind of field) and in
//! [`Input::check`] (one field against another).

use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::model::tagged::{self, Misread};

/// Largest `limit` of `list_agents`.
pub const MAX_LIST_LIMIT: u64 = 10_000;
/// Default `limit` of `list_agents`.
pub const DEFAULT_LIST_LIMIT: u64 = 200;
/// Default and largest `timeoutSeconds` of `wait_for_agent`.
pub const DEFAULT_WAIT_SECONDS: f64 = 30.0;
pub const MAX_WAIT_SECONDS: f64 = 600.0;

/// A bad input: which field, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl From<Misread> for FieldError {
    fn from(e: Misread) -> Self {
        // The path already ends with the missing field's name, which serde's words repeat.
        let message = if e.missing {
            "is required".to_string()
        } else {
            e.message
        };
        FieldError::new(e.field.unwrap_or_default(), message)
    }
}

pub(crate) type R<T> = Result<T, FieldError>;

/// A tool input, read by serde from the call's arguments.
pub trait Input: DeserializeOwned {
    /// What a field's type cannot say on its own: a field that needs another.
    fn check(self) -> R<Self> {
        Ok(self)
    }
}

/// Reads a tool's input from its call's arguments; none at all is a call without any.
pub fn parse<T: Input>(args: Value) -> R<T> {
    let args = match args {
        Value::Null => Value::Object(Map::new()),
        args => args,
    };
    tagged::from_value::<T>(args)?.check()
}

/// The raw arguments of a tool call, with the input schema of `T`. Deserializing never fails,
/// so a bad input reaches the tool, which answers it with a tool error naming the field
/// (rmcp would answer a serde failure with a protocol error instead).
pub struct Args<T> {
    pub raw: Value,
    _t: PhantomData<T>,
}

impl<T: Input> Args<T> {
    pub fn parse(self) -> R<T> {
        parse(self.raw)
    }
}

impl<'de, T> Deserialize<'de> for Args<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Args {
            raw: Value::deserialize(d)?,
            _t: PhantomData,
        })
    }
}

impl<T: JsonSchema> JsonSchema for Args<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(g)
    }
}

/// The JSON Schema of a tool input, with every subschema inlined: no `$ref`/`$defs`, which some
/// clients' schema converters do not follow.
pub fn input_schema<T: JsonSchema>() -> std::sync::Arc<Map<String, Value>> {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut map = match schema.to_value() {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    // The wrapper type's own title and doc are noise to a model.
    map.remove("title");
    map.remove("description");
    map.remove("$schema");
    std::sync::Arc::new(map)
}

mod agents;
mod create;
mod fields;

pub use agents::{
    AgentInput, ChangesInput, CreateWorktreeInput, ListInput, SendPromptInput, StatusInput,
    WaitInput,
};
pub use create::{
    CreateAgentInput, CreateInput, CurrentInput, DirectoryInput, ExistingInput, Relationship,
    SourceInput, WorkspaceInput, WorktreeInput,
};

#[cfg(test)]
mod tests;
