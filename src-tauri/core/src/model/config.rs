//! An agent's provider settings (`config` in its record): model, mode, system prompt — which
//! an agent loaded at rest leaves in its record file — and the provider-specific extras.

use std::fmt;

use compact_str::CompactString;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::ids::{Extra, Key};

/// Provider settings of one agent. Provider-specific extras live in `extra`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<CompactString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<CompactString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Set for an agent loaded at rest (issue 19): its system prompt was left in its record
    /// file and `system_prompt` is `None` meanwhile. Nothing in the app changes a prompt once
    /// written, and every write of the record carries it, so the file always holds the text:
    /// a session start, a rewrite and `get_agent` read it back from there
    /// (`store::read_back`); `store::encode_record` refuses a record still marked so.
    /// 600 characters were 60 MB of the app's memory at 100,000 agents, for nothing.
    #[serde(skip)]
    pub system_prompt_on_disk: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Read field by field, as the record is: serde's `flatten` would first copy every field
/// (the system prompt included) into a buffer of its own, for each of 100,000 records at start.
impl<'de> Deserialize<'de> for AgentConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(AgentConfigVisitor { at_rest: false })
    }
}

/// `at_rest`: the system prompt is checked to be a string and left where it is (see
/// [`AgentConfig::system_prompt_on_disk`]), never copied into memory.
#[derive(Clone, Copy)]
pub(super) struct AgentConfigVisitor {
    pub(super) at_rest: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for AgentConfigVisitor {
    type Value = AgentConfig;

    /// A config or `null` (read as the default one).
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<AgentConfig, D::Error> {
        struct OrNull(AgentConfigVisitor);
        impl<'de> serde::de::Visitor<'de> for OrNull {
            type Value = AgentConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                serde::de::Visitor::expecting(&self.0, f)
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<AgentConfig, E> {
                Ok(AgentConfig::default())
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<AgentConfig, E> {
                Ok(AgentConfig::default())
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<AgentConfig, D::Error> {
                d.deserialize_map(self.0)
            }
        }
        d.deserialize_option(OrNull(self))
    }
}

/// A string, checked and not kept: serde_json hands it over borrowed (or in its scratch).
pub(super) struct SkippedStr;

impl<'de> Deserialize<'de> for SkippedStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SkippedStr;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<SkippedStr, E> {
                Ok(SkippedStr)
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> serde::de::Visitor<'de> for AgentConfigVisitor {
    type Value = AgentConfig;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an agent's config (a JSON object)")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<AgentConfig, A::Error> {
        let mut c = AgentConfig::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match key.as_ref() {
                "model" => c.model = map.next_value()?,
                "mode" => c.mode = map.next_value()?,
                "systemPrompt" if self.at_rest => {
                    c.system_prompt = None;
                    c.system_prompt_on_disk = map.next_value::<Option<SkippedStr>>()?.is_some();
                }
                "systemPrompt" => c.system_prompt = map.next_value()?,
                _ => {
                    let v: Value = map.next_value()?;
                    c.extra.insert(key.into_owned(), v);
                }
            }
        }
        Ok(c)
    }
}
