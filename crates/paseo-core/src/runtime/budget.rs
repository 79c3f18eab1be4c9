//! Budgets (SPEC 18) at the runtime's edge: the user sets, raises or clears an agent's budget
//! (the rule and what it releases are the engine's, `engine/budget.rs`); a new root agent gets
//! config.json's default; an agent's child gets at most what its tree has left.

use super::actor::Actor;
use super::command::Command;
use super::events::AgentSnapshot;
use super::policy::Caller;
use super::{RuntimeError, RuntimeHandle};
use crate::model::{AgentId, Budget};

impl Actor {
    /// Sets (`None`: clears) `id`'s budget and starts what no longer waits on it.
    pub(super) fn set_budget(
        &mut self,
        id: AgentId,
        budget: Option<Budget>,
    ) -> Result<AgentSnapshot, RuntimeError> {
        self.engine.set_budget(id, budget)?;
        self.apply();
        self.snap(id)
    }

    /// The budget a new agent starts with: the one asked for (from an agent: at most what its
    /// tree has left, else an error naming the field), or for a root agent config.json's
    /// default. A detached agent an agent creates stays in its creator's budget tree.
    pub(super) fn budget_of_new(
        &self,
        caller: Caller,
        asked: Option<Budget>,
        root: bool,
    ) -> Result<Option<Budget>, RuntimeError> {
        match (caller.agent(), asked) {
            (Some(c), Some(b)) => {
                self.engine.check_child_budget(c, &b)?;
                Ok(Some(b))
            }
            (None, Some(b)) => Ok(Some(b)),
            (_, None) if root => Ok(self.budget),
            _ => Ok(None),
        }
    }
}

impl RuntimeHandle {
    /// Sets (`None`: clears) an agent's budget; answers the agent as it is after.
    pub(crate) async fn set_budget(
        &self,
        id: AgentId,
        budget: Option<Budget>,
    ) -> Result<AgentSnapshot, RuntimeError> {
        self.ask(|reply| Command::SetBudget { id, budget, reply })
            .await
    }
}

/// Checks a budget from a request: a cost must be a number of USD, 0 or more.
pub(crate) fn check(budget: &Budget, field: &str) -> Result<(), RuntimeError> {
    match budget.tree_cost_usd {
        Some(c) if !(c.is_finite() && c >= 0.0) => Err(RuntimeError::invalid(
            &format!("{field}.treeCostUsd"),
            "expected a number of USD (0 or more)",
        )),
        _ => Ok(()),
    }
}
