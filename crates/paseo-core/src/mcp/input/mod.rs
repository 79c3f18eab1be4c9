//! The tools' input types and their validation.
//!
//! The types give the input schemas (schemars, the same serde shape the tools accept). Parsing
//! is done by hand on the JSON value rather than by serde, because serde loses the field path
//! inside internally tagged unions (`workspace.source.target` buffers its content before the
//! variant is known): every error here names the offending field by its full path and says
//! what is wrong, e.g. `workspace.source.target.newBranch: is required`.

use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

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

pub(crate) type R<T> = Result<T, FieldError>;

/// A tool input parsed from the call's raw arguments.
pub trait Input: Sized {
    fn parse(v: &Value) -> R<Self>;
}

/// The raw arguments of a tool call, with the input schema of `T`. Deserializing never fails,
/// so a bad input reaches the tool, which answers it with a tool error naming the field
/// (rmcp would answer a serde failure with a protocol error instead).
pub struct Args<T> {
    pub raw: Value,
    _t: PhantomData<T>,
}

impl<T: Input> Args<T> {
    pub fn parse(&self) -> R<T> {
        T::parse(&self.raw)
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
mod walker;

pub use agents::{
    AgentInput, ChangesInput, CreateWorktreeInput, ListInput, SendPromptInput, StatusInput,
    WaitInput,
};
pub use create::{CreateAgentInput, Relationship, SourceInput, WorkspaceInput};

#[cfg(test)]
mod tests;
