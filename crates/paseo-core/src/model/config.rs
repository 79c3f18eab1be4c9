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
    /// Set for an agent loaded at rest (docs/scale.md): its system prompt was left in its record
    /// file and `system_prompt` is `None` meanwhile. Nothing in the app changes a prompt once
    /// written, and every write of the record carries it, so the file always holds the text:
    /// a session start, a rewrite and `get_agent` read it back from there
    /// (`store::read_back`); `store::encode_record` refuses a record still marked so.
    #[serde(skip)]
    pub system_prompt_on_disk: bool,
    /// The user chose to run it outside the sandbox (SPEC 16). Only the user sets it: an agent
    /// that asks for an unconfined agent is held (SPEC 14). Absent in records written before
    /// containment, which read as contained. Here rather than in the record: configs are
    /// shared, so it costs a record nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unconfined: bool,
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
                "unconfined" => {
                    c.unconfined = map.next_value::<Option<bool>>()?.unwrap_or_default()
                }
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

/// A config as records hold it: shared between the agents that have the same one. A fleet's
/// agents mostly differ in their prompts, which at rest stay on disk; their model and mode
/// repeat, so sharing saves a config per record (docs/scale.md). Changed through
/// `Arc::make_mut`, so a change never reaches another agent.
pub type SharedConfig = std::sync::Arc<AgentConfig>;

/// Distinct shared configs kept at most: beyond that, a config is held by its agent alone.
const POOL_MAX: usize = 1024;

type PoolKey = (Option<CompactString>, Option<CompactString>, bool, bool);

static POOL: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<PoolKey, SharedConfig>>,
> = std::sync::LazyLock::new(Default::default);

thread_local! {
    /// Pool entries a thread keeps at hand: a fleet has a few model/mode pairs.
    static RECENT: super::recent::Recent<(PoolKey, SharedConfig), 8> =
        const { super::recent::Recent::new() };
}

impl AgentConfig {
    /// This config as a record holds it: the one shared copy of an equal config without a
    /// prompt in memory or extras (those are the agent's own), a new one otherwise.
    pub fn shared(self) -> SharedConfig {
        if self.system_prompt.is_some() || !self.extra.is_empty() {
            return SharedConfig::new(self);
        }
        let key = (
            self.model.clone(),
            self.mode.clone(),
            self.system_prompt_on_disk,
            self.unconfined,
        );
        // The load's reading threads each ask this once per record: a few configs seen last on
        // this thread answer without the pool's lock, which four threads contending for cost a
        // twentieth of the load's CPU at 100,000 records (docs/benchmarks.md).
        if let Some(c) = RECENT.with(|r| r.find_map(|(k, c)| (*k == key).then(|| c.clone()))) {
            return c;
        }
        let c = {
            // A poisoned pool still holds whole entries: each is inserted in one step.
            let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(c) = pool.get(&key) {
                c.clone()
            } else if pool.len() >= POOL_MAX {
                return SharedConfig::new(self);
            } else {
                let c = SharedConfig::new(self);
                pool.insert(key.clone(), c.clone());
                c
            }
        };
        RECENT.with(|r| r.keep((key, c.clone())));
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AgentRecord;

    fn at_rest(id: &str, config: &str) -> AgentRecord {
        let json = format!(
            r#"{{"id":"{id}","provider":"shell","cwd":"/w","lastStatus":"idle",
                "createdAt":"2026-12-05T04:00:00.000Z","updatedAt":"2026-12-05T04:00:00.000Z",
                "config":{config}}}"#
        );
        *AgentRecord::from_json_at_rest(json.as_bytes()).unwrap()
    }

    const A: &str = "00000000-0000-4000-8000-00000000000a";
    const B: &str = "00000000-0000-4000-8000-00000000000b";

    #[test]
    fn agents_loaded_with_the_same_config_share_it_and_a_change_stays_with_one() {
        let prompted = r#"{"model":"opus","mode":"plan","systemPrompt":"be brief"}"#;
        let mut a = at_rest(A, prompted);
        let b = at_rest(B, prompted);
        assert!(SharedConfig::ptr_eq(&a.config, &b.config));
        // A different model, or a prompt not in the file, is another config.
        let other = at_rest(B, r#"{"model":"sonnet","mode":"plan","systemPrompt":"x"}"#);
        assert!(!SharedConfig::ptr_eq(&a.config, &other.config));
        let no_prompt = at_rest(B, r#"{"model":"opus","mode":"plan"}"#);
        assert!(!SharedConfig::ptr_eq(&a.config, &no_prompt.config));
        assert!(!no_prompt.config.system_prompt_on_disk);
        // Changing one agent's config leaves the other's as it was.
        a.config_mut().system_prompt = Some("be brief".into());
        a.config_mut().system_prompt_on_disk = false;
        assert_eq!(b.config.system_prompt, None);
        assert!(b.config.system_prompt_on_disk);
        assert_eq!(a.config.model, b.config.model);
    }

    #[test]
    fn a_config_with_its_own_extras_or_prompt_in_memory_is_never_shared() {
        let extras = r#"{"model":"opus","sandbox":"read-only"}"#;
        let a = at_rest(A, extras);
        let b = at_rest(B, extras);
        assert!(!SharedConfig::ptr_eq(&a.config, &b.config));
        assert_eq!(a.config, b.config);
        let whole = |id: &str| {
            let json = format!(
                r#"{{"id":"{id}","provider":"shell","cwd":"/w","lastStatus":"idle",
                    "createdAt":"2026-12-05T04:00:00.000Z","updatedAt":"2026-12-05T04:00:00.000Z",
                    "config":{{"model":"opus","systemPrompt":"p"}}}}"#
            );
            *AgentRecord::from_json_boxed(json.as_bytes()).unwrap()
        };
        assert!(!SharedConfig::ptr_eq(&whole(A).config, &whole(B).config));
    }
}
