//! Limits on what agents can start (SPEC 14, config.json `limits`): how many agents have a live
//! process at once (the rest wait in a queue, oldest first), how deep a chain of agents creating
//! agents may go, and how many agents one agent may create per minute. A runaway agent that
//! spawns in a loop is stopped by the last two; a fleet larger than the machine by the first.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use super::RuntimeError;
use crate::model::{AgentId, Timestamp};

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

    /// Refuses a new agent with `depth` agents above it.
    pub fn check_depth(&self, depth: usize) -> Result<(), RuntimeError> {
        if depth > self.max_depth {
            return Err(RuntimeError::Limit(format!(
                "limits.maxDepth is {}: the new agent would have {depth} agents above it",
                self.max_depth
            )));
        }
        Ok(())
    }
}

/// The creates each calling agent made in the last minute.
#[derive(Default)]
pub struct CreateRate {
    recent: HashMap<AgentId, VecDeque<Timestamp>>,
}

impl CreateRate {
    /// Counts one create by `caller` at `now`, or refuses it (and counts nothing) when the
    /// caller already made `per_minute` in the 60 seconds before.
    pub fn take(
        &mut self,
        caller: AgentId,
        now: Timestamp,
        per_minute: usize,
    ) -> Result<(), RuntimeError> {
        self.check(caller, now, per_minute)?;
        self.recent.entry(caller).or_default().push_back(now);
        Ok(())
    }

    /// Whether `caller` may create one more at `now` (agents and worktrees count alike).
    pub fn check(
        &mut self,
        caller: AgentId,
        now: Timestamp,
        per_minute: usize,
    ) -> Result<(), RuntimeError> {
        let Some(q) = self.recent.get_mut(&caller) else {
            return Ok(());
        };
        while q
            .front()
            .is_some_and(|t| now.millis() - t.millis() >= 60_000)
        {
            q.pop_front();
        }
        if q.len() >= per_minute {
            return Err(RuntimeError::Limit(format!(
                "limits.createPerMinute is {per_minute}: this agent already created \
                 {per_minute} agents or worktrees in the last minute"
            )));
        }
        Ok(())
    }

    /// Forgets callers whose window is empty (archived agents, quiet ones).
    pub fn prune(&mut self, now: Timestamp) {
        self.recent
            .retain(|_, q| q.back().is_some_and(|t| now.millis() - t.millis() < 60_000));
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

    #[test]
    fn the_rate_window_slides_and_a_refusal_counts_nothing() {
        let a = AgentId::new();
        let b = AgentId::new();
        let t = |s: i64| Timestamp::from_millis(1_000_000 + s * 1000);
        let mut r = CreateRate::default();
        for s in 0..3 {
            r.take(a, t(s), 3).unwrap();
        }
        let e = r.take(a, t(10), 3).unwrap_err().to_string();
        assert!(e.contains("limits.createPerMinute is 3"), "{e}");
        r.take(b, t(10), 3).expect("per caller");
        // 60 s after the first create, one slot is free again; refusals did not count.
        r.take(a, t(60), 3).unwrap();
        assert!(r.take(a, t(60), 3).is_err());
        r.prune(t(200));
        assert!(r.recent.is_empty());
    }

    #[test]
    fn depth_is_refused_past_the_limit() {
        let l = Limits::default();
        l.check_depth(8).unwrap();
        let e = l.check_depth(9).unwrap_err().to_string();
        assert!(e.contains("limits.maxDepth is 8"), "{e}");
    }
}
