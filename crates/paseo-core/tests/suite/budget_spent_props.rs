//! Property test (SPEC 18): what each budget tree spent is kept up to date as usage comes in
//! and as trees change, instead of being summed over the whole fleet per question. After every
//! step of a random sequence (creates with independent parents and creators, usage, budgets set
//! and cleared, detach, reattach, archive, restore, reload from the records), every agent's
//! figure equals the one summed from scratch.

use std::collections::BTreeMap;

use paseo_core::engine::{Engine, NewAgent};
use paseo_core::model::{
    AgentId, AgentRecord, Budget, ProjectId, Reach, Spent, Timestamp, TurnUsage, WorkspaceId,
    WorkspaceKind, WorkspaceRecord,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// A new agent: `parent` and `creator` are picked independently (a user's subagent has no
    /// creator; a detached agent's creator is not its parent).
    Create {
        parent: Option<u8>,
        creator: Option<u8>,
        budget: Option<u16>,
    },
    Usage {
        a: u8,
        tokens: u16,
        cost: Option<u8>,
    },
    SetBudget(u8, Option<u16>),
    Detach(u8),
    Reattach(u8),
    Archive(u8),
    Restore(u8, bool),
    Reload,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (
            proptest::option::weighted(0.8, any::<u8>()),
            proptest::option::of(any::<u8>()),
            proptest::option::of(any::<u16>()),
        )
            .prop_map(|(parent, creator, budget)| Op::Create { parent, creator, budget }),
        5 => (any::<u8>(), any::<u16>(), proptest::option::of(any::<u8>()))
            .prop_map(|(a, tokens, cost)| Op::Usage { a, tokens, cost }),
        2 => (any::<u8>(), proptest::option::of(any::<u16>())).prop_map(|(a, b)| Op::SetBudget(a, b)),
        2 => any::<u8>().prop_map(Op::Detach),
        1 => any::<u8>().prop_map(Op::Reattach),
        3 => any::<u8>().prop_map(Op::Archive),
        3 => (any::<u8>(), any::<bool>()).prop_map(|(a, b)| Op::Restore(a, b)),
        1 => Just(Op::Reload),
    ]
}

fn workspace() -> WorkspaceRecord {
    WorkspaceRecord {
        workspace_id: "w".parse().unwrap(),
        project_id: "p".parse::<ProjectId>().unwrap(),
        cwd: "/src/w".into(),
        kind: WorkspaceKind::Directory,
        display_name: "w".into(),
        name: None,
        created_at: Timestamp::from_millis(0),
        updated_at: Timestamp::from_millis(0),
        archived_at: None,
        repo: None,
        branch: None,
        created_by_agent_id: None,
        created_by_request: None,
        extra: Default::default(),
    }
}

fn budget(tokens: u16) -> Budget {
    Budget {
        tree_tokens: Some(tokens as u64 * 4),
        tree_cost_usd: tokens.is_multiple_of(3).then_some(tokens as f64 / 100.0),
    }
}

struct Harness {
    e: Engine,
    ids: Vec<AgentId>,
}

impl Harness {
    fn new() -> Harness {
        let mut e = Engine::new();
        e.set_clock(Some(Timestamp::from_millis(1)));
        e.upsert_workspace(workspace(), None);
        Harness { e, ids: Vec::new() }
    }

    fn pick(&self, i: u8) -> Option<AgentId> {
        (!self.ids.is_empty()).then(|| self.ids[i as usize % self.ids.len()])
    }

    fn step(&mut self, op: &Op) {
        match op.clone() {
            Op::Create {
                parent,
                creator,
                budget: b,
            } => {
                let parent = parent.and_then(|p| self.pick(p));
                let created_by = creator.and_then(|c| self.pick(c));
                let new = NewAgent {
                    title: "t".into(),
                    parent,
                    created_by,
                    labels: BTreeMap::new(),
                    ..NewAgent::new(
                        "claude",
                        true,
                        "/src/w",
                        "w".parse::<WorkspaceId>().unwrap(),
                    )
                };
                if let Ok(id) = self.e.create(new) {
                    self.e.give_budget(id, b.map(budget));
                    self.ids.push(id);
                }
            }
            Op::Usage { a, tokens, cost } => {
                if let Some(id) = self.pick(a) {
                    let u = TurnUsage {
                        input_tokens: tokens as u64,
                        output_tokens: tokens as u64 / 3,
                        cache_read_tokens: 7,
                        cache_write_tokens: tokens as u64 % 5,
                        cost_usd: cost.map(|c| c as f64 / 1000.0),
                        session_cost_usd: None,
                        restored: false,
                    };
                    let _ = self.e.turn_usage(id, &u);
                }
            }
            Op::SetBudget(a, b) => {
                if let Some(id) = self.pick(a) {
                    let _ = self.e.set_budget(id, b.map(budget));
                }
            }
            Op::Detach(a) => {
                if let Some(id) = self.pick(a) {
                    let _ = self.e.detach(id);
                }
            }
            Op::Reattach(a) => {
                if let Some(id) = self.pick(a) {
                    if let Some(p) = self.e.agent(id).and_then(|s| s.record.created_by) {
                        let _ = self.e.reattach(id, p, Reach::Inside, false);
                    }
                }
            }
            Op::Archive(a) => {
                if let Some(id) = self.pick(a) {
                    let _ = self.e.archive(id);
                }
            }
            Op::Restore(a, as_root) => {
                if let Some(id) = self.pick(a) {
                    let _ = self.e.restore(id, as_root);
                }
            }
            Op::Reload => {
                let records: Vec<AgentRecord> = self
                    .e
                    .agents()
                    .map(|a| AgentRecord::clone(&a.record))
                    .collect();
                let workspaces = self.e.workspaces().cloned().collect();
                let mut e = Engine::new();
                e.set_clock(Some(Timestamp::from_millis(1)));
                e.load(records, workspaces, Vec::new(), Vec::new(), &|_| true);
                e.deliver_pending();
                self.e = e;
            }
        }
        let _ = self.e.take_outcome();
        self.check(op);
    }

    /// Every agent's tree figure is the one summed from scratch: tokens exactly, cost up to
    /// the rounding of adding in another order.
    fn check(&self, op: &Op) {
        for id in &self.ids {
            let kept = self.e.tree_usage(*id);
            let fresh = self.e.tree_usage_from_scratch(*id);
            assert!(
                same(Spent::of(&kept), Spent::of(&fresh)) && kept.turns == fresh.turns,
                "after {op:?}: {id} tree usage kept {kept:?}, from scratch {fresh:?}"
            );
        }
        for id in &self.ids {
            let kept = self.e.budget_spent(*id);
            let fresh = self.e.budget_spent_from_scratch(*id);
            assert!(
                same(kept, fresh),
                "after {op:?}: {id} kept {kept:?}, from scratch {fresh:?}"
            );
        }
    }
}

fn same(a: Spent, b: Spent) -> bool {
    a.tokens == b.tokens
        && match (a.cost_usd, b.cost_usd) {
            (None, None) => true,
            (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
            _ => false,
        }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, max_shrink_iters: 4000, .. ProptestConfig::default() })]

    #[test]
    fn kept_tree_spending_equals_the_sum_from_scratch(ops in proptest::collection::vec(op(), 1..100)) {
        let mut h = Harness::new();
        for op in &ops {
            h.step(op);
        }
    }
}
