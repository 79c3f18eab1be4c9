//! Usage and cost (what SPEC 18's budgets count): each turn's report added to its agent's record,
//! and the roll-ups per tree (an agent and all its descendants, archived ones included) and per
//! workspace.
//!
//! Each tree's total is kept (`UsageIndex::tree`): a turn's usage is added to its agent and
//! every ancestor, and the totals are summed again from the agents with usage at load and when
//! a parent link changes (detach, reattach, restore as a root). Every agent's snapshot carries
//! its tree's total, so summing it per snapshot walked every agent with usage once per event.
//! Workspaces' roll-ups (windows) are summed when asked; the trees' come from the kept totals.

use super::{Engine, EngineError};
use crate::model::{AgentId, LastRun, Spent, TurnUsage, Usage, WorkspaceId};
use rustc_hash::{FxHashMap, FxHashSet};

/// The agents whose record has usage (what roll-ups are summed from), and the agents whose
/// roll-ups changed since the runtime last took them (to re-render: their records did not).
#[derive(Debug, Default)]
pub struct UsageIndex {
    pub(super) agents: FxHashSet<AgentId>,
    rerender: FxHashSet<AgentId>,
    /// What each agent's budget tree used (SPEC 18), kept up to date by the budget code.
    pub(super) spent: FxHashMap<AgentId, Spent>,
    /// Each agent's tree total (it and its descendants, by parent links), for those with any.
    tree: FxHashMap<AgentId, Usage>,
}

/// Roll-ups of every tree and workspace that has usage.
#[derive(Clone, Debug, Default)]
pub struct UsageRollups {
    tree: FxHashMap<AgentId, Usage>,
    workspace: FxHashMap<WorkspaceId, Usage>,
}

impl UsageRollups {
    /// The usage of `id` and its descendants.
    pub fn tree(&self, id: AgentId) -> Usage {
        self.tree.get(&id).cloned().unwrap_or_default()
    }
    /// The usage of every agent in the workspace.
    pub fn workspace(&self, ws: &WorkspaceId) -> Usage {
        self.workspace.get(ws).cloned().unwrap_or_default()
    }
}

impl Engine {
    /// What the current turn consumed. Persisted with the turn's end, like its last message.
    pub fn turn_usage(&mut self, id: AgentId, u: &TurnUsage) -> Result<(), EngineError> {
        let a = self.get_mut(id)?;
        let before = Spent::of(&a.record.usage);
        let had = (*a.record.usage).clone();
        a.record.usage.add_turn(u);
        let added = growth(&had, &a.record.usage);
        let grown = before.growth(Spent::of(&a.record.usage));
        let ws = a.record.workspace_id.clone();
        self.usage.agents.insert(id);
        let parent = self.agents.get(&id).and_then(|a| a.parent);
        for up in self.tree_chain(id) {
            self.usage.tree.entry(up).or_default().add(&added);
        }
        self.rerender_from(parent);
        // What it used counts in every budget tree it is in, detached agents' creators' too
        // (SPEC 18); their "N of M tokens" is re-rendered.
        let chain = self.budget_chain(id);
        self.add_spent(&chain, grown);
        let holders: Vec<AgentId> = chain
            .into_iter()
            .filter(|h| {
                *h != id
                    && self
                        .agents
                        .get(h)
                        .is_some_and(|a| a.record.budget.is_some())
            })
            .collect();
        self.usage.rerender.extend(holders);
        if let Some(ws) = ws {
            self.out.workspaces.insert(ws);
        }
        Ok(())
    }

    /// Marks `from` and every agent above it for re-rendering: their tree totals changed and
    /// their records did not.
    pub(super) fn rerender_from(&mut self, from: Option<AgentId>) {
        let mut seen = FxHashSet::default();
        let mut cur = from;
        while let Some(p) = cur.filter(|p| seen.insert(*p)) {
            let Some(pa) = self.agents.get(&p) else { break };
            self.usage.rerender.insert(p);
            cur = pa.parent;
        }
    }

    /// Shows `id` again after this step: a roll-up its card carries changed.
    pub(super) fn rerender_one(&mut self, id: AgentId) {
        self.usage.rerender.insert(id);
    }

    /// The agents whose roll-ups changed since the last call, to re-render.
    pub fn take_rerender(&mut self) -> FxHashSet<AgentId> {
        std::mem::take(&mut self.usage.rerender)
    }

    /// How the current turn's process ran (shell and command agents).
    pub fn last_run(&mut self, id: AgentId, run: LastRun) -> Result<(), EngineError> {
        self.get_mut(id)?.record.last_run = Some(Box::new(run));
        Ok(())
    }

    /// Rebuilds the index of agents with usage (after a load).
    pub(super) fn index_usage(&mut self) {
        self.usage.agents = self
            .agents
            .values()
            .filter(|a| !a.record.usage.is_empty())
            .map(|a| a.record.id)
            .collect();
    }

    /// Every tree's and workspace's roll-up.
    pub fn usage_rollups(&self) -> UsageRollups {
        // The trees' totals are kept; only the workspaces' are summed here.
        let mut r = UsageRollups {
            tree: self.usage.tree.clone(),
            workspace: FxHashMap::default(),
        };
        for id in &self.usage.agents {
            let Some(a) = self.agents.get(id) else {
                continue;
            };
            if let Some(ws) = &a.record.workspace_id {
                r.workspace
                    .entry(ws.clone())
                    .or_default()
                    .add(&a.record.usage);
            }
        }
        r
    }

    /// `id` and its ancestors by parent links, nearest first (a cycle, which load cuts, ends it).
    fn tree_chain(&self, id: AgentId) -> Vec<AgentId> {
        let mut seen = FxHashSet::default();
        let mut chain = Vec::new();
        let mut cur = Some(id);
        while let Some(c) = cur.filter(|c| seen.insert(*c)) {
            let Some(a) = self.agents.get(&c) else { break };
            chain.push(c);
            cur = a.parent;
        }
        chain
    }

    /// Sums every tree's total again from the agents with usage: at load, and after a parent
    /// link changed.
    pub(super) fn index_tree_usage(&mut self) {
        let mut tree: FxHashMap<AgentId, Usage> = FxHashMap::default();
        for id in &self.usage.agents {
            let Some(a) = self.agents.get(id) else {
                continue;
            };
            for up in self.tree_chain(*id) {
                tree.entry(up).or_default().add(&a.record.usage);
            }
        }
        self.usage.tree = tree;
    }

    /// The usage of `id` and its descendants, archived ones included (kept, see the module).
    pub fn tree_usage(&self, id: AgentId) -> Usage {
        self.usage.tree.get(&id).cloned().unwrap_or_default()
    }

    /// [`Engine::tree_usage`] summed from scratch: the reference the kept totals are tested
    /// against (O(agents with usage × depth); not for snapshots).
    pub fn tree_usage_from_scratch(&self, id: AgentId) -> Usage {
        let mut total = Usage::default();
        for a in self.usage.agents.iter().filter_map(|u| self.agents.get(u)) {
            if a.record.id == id || self.is_descendant(a.record.id, id) {
                total.add(&a.record.usage);
            }
        }
        total
    }

    /// The usage of every agent in a workspace, archived ones included.
    pub fn workspace_usage(&self, ws: &WorkspaceId) -> Usage {
        let mut total = Usage::default();
        for a in self
            .usage
            .agents
            .iter()
            .filter_map(|id| self.agents.get(id))
        {
            if a.record.workspace_id.as_ref() == Some(ws) {
                total.add(&a.record.usage);
            }
        }
        total
    }
}

/// What `after` added to `before`, field by field (a turn's contribution to the trees above).
fn growth(before: &Usage, after: &Usage) -> Usage {
    Usage {
        input_tokens: after.input_tokens.saturating_sub(before.input_tokens),
        output_tokens: after.output_tokens.saturating_sub(before.output_tokens),
        cache_read_tokens: after
            .cache_read_tokens
            .saturating_sub(before.cache_read_tokens),
        cache_write_tokens: after
            .cache_write_tokens
            .saturating_sub(before.cache_write_tokens),
        cost_usd: after.cost_usd.map(|c| c - before.cost_usd.unwrap_or(0.0)),
        turns: after.turns.saturating_sub(before.turns),
        ..Usage::default()
    }
}
