//! Enforcing config.json `limits` (SPEC 14, the values in `config/limits.rs`): how deep a chain
//! of agents creating agents may go, and how many agents one agent may create per minute. A
//! runaway agent that spawns in a loop is stopped by these two; a fleet larger than the machine
//! by `maxLiveAgents` (the queue in `runtime/live.rs`).

use std::collections::{HashMap, VecDeque};

use super::RuntimeError;
use crate::config::Limits;
use crate::model::{AgentId, Timestamp};

/// Refuses a new agent with `depth` agents above it.
pub fn check_depth(limits: &Limits, depth: usize) -> Result<(), RuntimeError> {
    if depth > limits.max_depth {
        return Err(RuntimeError::Limit(format!(
            "limits.maxDepth is {}: the new agent would have {depth} agents above it",
            limits.max_depth
        )));
    }
    Ok(())
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
        check_depth(&l, 8).unwrap();
        let e = check_depth(&l, 9).unwrap_err().to_string();
        assert!(e.contains("limits.maxDepth is 8"), "{e}");
    }
}
