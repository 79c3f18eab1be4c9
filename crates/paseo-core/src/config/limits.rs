//! config.json `limits` (SPEC 14): how many agents have a live process at once, how deep a
//! chain of agents creating agents may go, and how many agents one agent may create per
//! minute. The runtime enforces them (`runtime/limits.rs`).

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `maxLiveAgents`: agents with a live runtime (a process started or starting).
    pub max_live_agents: usize,
    /// `maxDepth`: how many agents may stand above a new one in the chain of agents that
    /// created each other.
    pub max_depth: usize,
    /// `createPerMinute`: agents one calling agent may create in any 60 seconds.
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

impl Limits {
    /// Parses config.json's `limits` object; an error names the field (`limits.<key>`).
    pub fn parse(v: &Value) -> Result<Limits, (String, String)> {
        let obj = v
            .as_object()
            .ok_or_else(|| ("limits".to_string(), "expected an object".to_string()))?;
        let mut l = Limits::default();
        for (k, v) in obj {
            let slot = match k.as_str() {
                "maxLiveAgents" => &mut l.max_live_agents,
                "maxDepth" => &mut l.max_depth,
                "createPerMinute" => &mut l.create_per_minute,
                other => return Err((format!("limits.{other}"), "unknown field".to_string())),
            };
            *slot = v
                .as_u64()
                .filter(|n| (1..=1_000_000).contains(n))
                .map(|n| n as usize)
                .ok_or_else(|| {
                    (
                        format!("limits.{k}"),
                        "expected a whole number from 1 to 1000000".to_string(),
                    )
                })?;
        }
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_parse_errors_name_the_field() {
        assert_eq!(Limits::parse(&json!({})).unwrap(), Limits::default());
        let l = Limits::parse(&json!({"maxLiveAgents": 2, "maxDepth": 3, "createPerMinute": 4}))
            .unwrap();
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
            assert_eq!(Limits::parse(&bad).unwrap_err().0, field, "{bad}");
        }
    }
}
