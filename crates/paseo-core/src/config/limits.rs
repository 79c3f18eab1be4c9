//! config.json `limits` (SPEC 14): how many agents have a live process at once, how deep a
//! chain of agents creating agents may go, and how many agents one agent may create per
//! minute. The runtime enforces them (`runtime/limits.rs`).

use serde::{Deserialize, Deserializer};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Limits {
    /// `maxLiveAgents`: agents with a live runtime (a process started or starting).
    #[serde(deserialize_with = "count")]
    pub max_live_agents: usize,
    /// `maxDepth`: how many agents may stand above a new one in the chain of agents that
    /// created each other.
    #[serde(deserialize_with = "count")]
    pub max_depth: usize,
    /// `createPerMinute`: agents one calling agent may create in any 60 seconds.
    #[serde(deserialize_with = "count")]
    pub create_per_minute: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_live_agents: 50,
            max_depth: 8,
            create_per_minute: 30,
        }
    }
}

fn count<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    super::read::whole(
        d,
        1..=1_000_000,
        "expected a whole number from 1 to 1000000",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::section;
    use serde_json::json;

    fn parse(limits: serde_json::Value) -> Result<Limits, String> {
        section("limits", limits).map(|c| c.limits)
    }

    #[test]
    fn defaults_and_parse_errors_name_the_field() {
        assert_eq!(parse(json!({})).unwrap(), Limits::default());
        let l = parse(json!({"maxLiveAgents": 2, "maxDepth": 3, "createPerMinute": 4})).unwrap();
        assert_eq!(
            (l.max_live_agents, l.max_depth, l.create_per_minute),
            (2, 3, 4)
        );
        for (bad, field) in [
            (json!({"maxDepth": 0}), "limits.maxDepth"),
            (json!({"maxLiveAgents": "50"}), "limits.maxLiveAgents"),
            (json!({"createPerMinute": -1}), "limits.createPerMinute"),
            (json!({"other": 1}), "limits.other"),
            (json!([1]), "limits"),
        ] {
            assert_eq!(parse(bad.clone()).unwrap_err(), field, "{bad}");
        }
    }
}
