//! Budgets (SPEC 18): a cap on a tree's usage. An agent's budget tree is the agent and every
//! agent below it, where "below" follows the parent link or, for a detached agent an agent
//! created, the creator (detaching never escapes a budget). Archived agents count too.
//!
//! When any budget above a turn (or its agent's own) is used up, the next turn an agent asked
//! for (a prompt, a first prompt, a finish notice delivered as a turn) is held for the user
//! like a held turn (SPEC 14): Allow runs that one turn, raising the budget releases every turn
//! that waits on it. The user's own prompts are never held; a running turn always finishes.
//! Everything here is a function of the records: the runtime only carries it out.

use rustc_hash::{FxHashMap, FxHashSet};

use super::hold::Ending;
use super::{require_attention, Engine, EngineError, Queued};
use crate::model::{
    AgentId, AttentionReason, Budget, BudgetHold, HeldTurn, ItemKind, NewItem, Spent, TreeBudget,
    TurnInput, TurnOrigin, Usage,
};

/// What the engine keeps of budgets besides the records: the agents the user allowed one turn
/// past a used-up budget (consumed by that turn's start).
#[derive(Debug, Default)]
pub struct BudgetPasses(FxHashSet<AgentId>);

impl BudgetPasses {
    /// Spends `id`'s allowance, if it had one (its turn starts).
    pub(super) fn spend(&mut self, id: AgentId) {
        self.0.remove(&id);
    }
}

/// A used-up budget above (or at) an agent.
#[derive(Clone, Debug, PartialEq)]
pub struct Reached {
    pub holder: AgentId,
    pub budget: Budget,
    pub spent: Spent,
}

impl Reached {
    fn hold(&self, notice: bool, tree: String) -> BudgetHold {
        BudgetHold {
            agent_id: self.holder,
            tree,
            words: self.budget.stop_words(self.spent),
            notice,
        }
    }
}

impl Engine {
    /// The agent a budget tree continues above `id`: its parent, or the agent that created it.
    pub(super) fn budget_parent(&self, id: AgentId) -> Option<AgentId> {
        let a = self.agents.get(&id)?;
        a.parent.or(a.record.created_by)
    }

    /// `id` and every agent above it in budget trees, nearest first (cycle-safe).
    pub(super) fn budget_chain(&self, id: AgentId) -> Vec<AgentId> {
        let mut seen = FxHashSet::default();
        let mut chain = Vec::new();
        let mut cur = Some(id);
        while let Some(c) = cur.filter(|c| seen.insert(*c) && self.agents.contains_key(c)) {
            chain.push(c);
            cur = self.budget_parent(c);
        }
        chain
    }

    /// What `holder`'s budget tree used: its own usage and that of every agent below it. Kept
    /// up to date (see [`Engine::index_budget_spent`]) rather than summed per question: every
    /// snapshot and every agent turn's start asks, and summing walks the fleet.
    pub fn budget_spent(&self, holder: AgentId) -> Spent {
        self.usage.spent.get(&holder).copied().unwrap_or_default()
    }

    /// [`Engine::budget_spent`] summed from scratch over every agent with usage: the reference
    /// the kept figures are tested against (O(agents with usage × depth); not for snapshots).
    pub fn budget_spent_from_scratch(&self, holder: AgentId) -> Spent {
        let mut total = Usage::default();
        for id in &self.usage.agents {
            if self.budget_chain(*id).contains(&holder) {
                if let Some(a) = self.agents.get(id) {
                    total.add(&a.record.usage);
                }
            }
        }
        Spent::of(&total)
    }

    /// Sums what every agent's budget tree used, from every agent with usage up its budget
    /// chain: at load, and when a budget chain changed (rare: a detach or a restore as a root
    /// of an agent whose creator is not its parent).
    pub(super) fn index_budget_spent(&mut self) {
        let mut spent: FxHashMap<AgentId, Spent> = FxHashMap::default();
        for id in &self.usage.agents {
            let Some(a) = self.agents.get(id) else {
                continue;
            };
            let s = Spent::of(&a.record.usage);
            for h in self.budget_chain(*id) {
                spent.entry(h).or_default().add(s);
            }
        }
        self.usage.spent = spent;
    }

    /// Adds what `id` just used to every tree it counts in (`chain`: its budget chain).
    pub(super) fn add_spent(&mut self, chain: &[AgentId], grown: Spent) {
        for h in chain {
            self.usage.spent.entry(*h).or_default().add(grown);
        }
    }

    /// After `id`'s budget parent may have changed from `before`: the figures of the trees it
    /// left and joined are summed again when it did. Detaching keeps the creator above it
    /// (SPEC 18), so this is rare.
    pub(super) fn budget_parent_changed(&mut self, id: AgentId, before: Option<AgentId>) {
        if self.budget_parent(id) != before {
            self.index_budget_spent();
        }
    }

    /// Every budget at or above `id`, nearest first, with what its tree used.
    fn budgets_over(&self, id: AgentId) -> Vec<Reached> {
        self.budget_chain(id)
            .into_iter()
            .filter_map(|h| {
                let b = **self.agents.get(&h)?.record.budget.as_ref()?;
                Some(Reached {
                    holder: h,
                    budget: b,
                    spent: self.budget_spent(h),
                })
            })
            .collect()
    }

    /// The first used-up budget at or above `id`, if any.
    pub fn budget_reached(&self, id: AgentId) -> Option<Reached> {
        self.budgets_over(id)
            .into_iter()
            .find(|r| r.budget.reached(r.spent))
    }

    /// What `id`'s trees have left: the tightest of every budget at or above it (`None` when
    /// no budget applies).
    pub fn budget_left(&self, id: AgentId) -> Option<Budget> {
        self.budgets_over(id)
            .into_iter()
            .map(|r| r.budget.left(r.spent))
            .reduce(Budget::min)
    }

    /// The budget `get_agent` and the agent header show for `id`: the nearest budget at or
    /// above it, what its tree used, and what is left of every budget over it.
    pub fn tree_budget(&self, id: AgentId) -> Option<TreeBudget> {
        let all = self.budgets_over(id);
        let nearest = all.first()?.clone();
        let left = all
            .iter()
            .map(|r| r.budget.left(r.spent))
            .reduce(Budget::min)
            .unwrap_or_default();
        Some(TreeBudget {
            agent_id: nearest.holder,
            budget: nearest.budget,
            used: nearest.spent,
            left,
            reached: all.iter().any(|r| r.budget.reached(r.spent)),
        })
    }

    /// Whether a child budget `asked` fits in what `caller`'s trees have left (SPEC 18: budgets
    /// never grow down a tree). An error names the field at fault.
    pub fn check_child_budget(&self, caller: AgentId, asked: &Budget) -> Result<(), EngineError> {
        match self.budget_left(caller) {
            Some(left) => asked
                .fits_in(&left)
                .map_err(|e| EngineError::BudgetTooLarge {
                    field: e.field,
                    message: e.message,
                }),
            None => Ok(()),
        }
    }

    /// Sets (or with `None` clears) `id`'s own budget; turns that waited on a budget and no
    /// longer need to run now (SPEC 18: "Raise budget…" releases what waits).
    pub fn set_budget(&mut self, id: AgentId, budget: Option<Budget>) -> Result<(), EngineError> {
        let a = self.unarchived_mut(id)?;
        a.record.budget = budget.filter(|b| !b.is_empty()).map(Box::new);
        self.touch(id);
        self.release_budget_holds();
        Ok(())
    }

    /// A new agent's own budget (its create already checked it).
    pub fn give_budget(&mut self, id: AgentId, budget: Option<Budget>) {
        if let Some(a) = self.agents.get_mut(&id) {
            a.record.budget = budget.filter(|b| !b.is_empty()).map(Box::new);
        }
    }

    /// Starts every turn held on a budget that is no longer used up.
    pub(super) fn release_budget_holds(&mut self) {
        let mut waiting: Vec<AgentId> = self
            .agents
            .values()
            .filter(|a| {
                !a.record.is_archived()
                    && a.record
                        .held_turn
                        .as_ref()
                        .is_some_and(|h| h.budget.is_some())
            })
            .map(|a| a.record.id)
            .collect();
        waiting.sort();
        for id in waiting {
            if self.budget_reached(id).is_none() {
                self.run_budget_held(id, "Released");
            }
        }
    }

    /// Runs the turn held on a budget (`answer`: how the timeline records it).
    pub(super) fn run_budget_held(&mut self, id: AgentId, answer: &str) -> bool {
        let Some(a) = self.agents.get_mut(&id) else {
            return false;
        };
        let Some(request_id) = a.record.held_turn.as_ref().map(|h| h.request_id.clone()) else {
            return false;
        };
        let Some((held, arm, item)) = super::hold::take_held(a, &request_id, answer) else {
            return false;
        };
        let Some(b) = held.budget else {
            return false;
        };
        self.touch(id);
        self.timeline(id, item);
        if b.notice {
            // The notice never left the inbox: it is delivered now.
            if let Some(a) = self.agents.get_mut(&id) {
                a.record.notify_arm = arm.map(Box::new);
            }
            self.budget_pass.0.insert(id);
            self.after_idle_boundary(id);
        } else {
            self.budget_pass.0.insert(id);
            self.begin(
                id,
                Queued {
                    input: TurnInput::Prompt(held.prompt),
                    origin: TurnOrigin::Agent(held.caller),
                    arm,
                },
            );
        }
        true
    }

    /// Whether an agent's turn must wait on a budget: `Some` with what to hold it for, unless
    /// the user asked for it or allowed this one turn. `spend` spends that allowance (the turn
    /// starts now).
    pub(super) fn budget_gate(
        &mut self,
        id: AgentId,
        origin: &TurnOrigin,
        notice: bool,
        spend: bool,
    ) -> Option<BudgetHold> {
        if matches!(origin, TurnOrigin::User) {
            return None;
        }
        let passed = if spend {
            self.budget_pass.0.remove(&id)
        } else {
            self.budget_pass.0.contains(&id)
        };
        if passed {
            return None;
        }
        let r = self.budget_reached(id)?;
        let tree = self
            .agents
            .get(&r.holder)
            .map(|a| a.record.title.clone())
            .unwrap_or_default();
        Some(r.hold(notice, tree))
    }

    /// Holds the turn `q` of agent `id` on a budget instead of starting it.
    pub(super) fn hold_on_budget(&mut self, id: AgentId, q: Queued, hold: BudgetHold) {
        let now = self.now();
        let Some(a) = self.agents.get(&id) else {
            return;
        };
        let caller = match &q.origin {
            TurnOrigin::Agent(c) => *c,
            _ => id,
        };
        let power = self.power_of(a);
        let held = HeldTurn::for_budget(q.input.text().to_string(), caller, power, hold);
        let Some(a) = self.agents.get_mut(&id) else {
            return;
        };
        let req = held.request(&a.record.provider, &a.record.config, &a.record.cwd);
        a.record.held_turn = Some(Box::new(held));
        if q.arm.is_some() {
            a.record.notify_arm = q.arm.map(Box::new);
        }
        a.pending_permission = Some(Box::new(req.clone()));
        require_attention(&mut a.record, AttentionReason::Permission, now);
        self.touch(id);
        let mut item = NewItem::new(ItemKind::Permission, format!("Held: {}", req.tool_name));
        item.call_id = Some(req.request_id.clone());
        item.tool_name = Some(req.tool_name.clone());
        item.input = Some(req.input.clone());
        self.timeline(id, item);
    }

    /// Ends a held notice turn without running it (denied or canceled): the notice leaves the
    /// inbox and is only recorded on the timeline, as for an agent that cannot read. Returns
    /// `false` when the held turn is not a notice's.
    pub(super) fn end_notice_hold(&mut self, id: AgentId, how: Ending) -> bool {
        let Some(a) = self.agents.get_mut(&id) else {
            return false;
        };
        let Some(request_id) = a
            .record
            .held_turn
            .as_ref()
            .filter(|h| h.budget.as_ref().is_some_and(|b| b.notice))
            .map(|h| h.request_id.clone())
        else {
            return false;
        };
        let answer = match how {
            Ending::Denied => "Denied",
            Ending::Canceled => "Canceled",
        };
        let Some((_, arm, item)) = super::hold::take_held(a, &request_id, answer) else {
            return false;
        };
        a.record.notify_arm = arm.map(Box::new);
        self.touch(id);
        self.timeline(id, item);
        if let Some(n) = self.inbox.get_mut(&id).and_then(|q| q.pop_front()) {
            self.out.inboxes.insert(id);
            self.timeline(id, NewItem::notice(&n, n.summary()));
        }
        if self.inbox.get(&id).is_some_and(|q| q.is_empty()) {
            self.inbox.remove(&id);
        }
        true
    }
}
