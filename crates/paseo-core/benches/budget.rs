//! Budget benchmarks (SPEC 18), no I/O: a fleet in trees under roots that carry a budget, every
//! agent with usage (a fleet of Claude/Codex agents), each figure beside the same fleet with no
//! budget at all, measured in the same run:
//! - every agent's snapshot as the whole-fleet snapshot builds it (`with_rollups`);
//! - one agent's snapshot, as each `AgentUpdated` builds it (`AgentSnapshot::of`);
//! - the budget check before an agent's turn starts (`budget_reached`);
//! - the root's tree usage as a snapshot reads it (`tree_usage`, kept per tree) beside the sum
//!   from scratch over every agent with usage (`tree_usage_from_scratch`, how it was read).
//!
//! Sizes: `PASEO_BUDGET_BENCH_SIZES` (comma-separated, default `10000,100000`); the whole-fleet
//! snapshot only up to `PASEO_BUDGET_BENCH_FLEET_MAX` agents (default all sizes).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use paseo_core::engine::{Engine, NewAgent};
use paseo_core::model::{AgentId, Budget, Timestamp, TurnUsage, WorkspaceId};
use paseo_core::runtime::AgentSnapshot;

#[path = "support/workspace.rs"]
mod workspace;
use workspace::ws;

/// `n` agents as the seeded data roots grow them (every fifth a root, the others subagents of
/// a recent agent), each root with a budget when `budget` (as config.json's default gives every
/// new root), every agent with one turn's usage. Returns the engine and the deepest agent.
fn fleet(n: usize, budget: bool) -> (Engine, Vec<AgentId>, AgentId) {
    let mut e = Engine::new();
    e.set_clock(Some(Timestamp::from_millis(1)));
    for i in 0..10 {
        e.upsert_workspace(ws(i), None);
    }
    let cap = Budget {
        tree_tokens: Some(u64::MAX / 2),
        tree_cost_usd: Some(1e12),
    };
    let mut ids: Vec<AgentId> = Vec::with_capacity(n);
    let mut depth: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        let p = (!i.is_multiple_of(5)).then(|| ids.len().saturating_sub(1 + i % 3));
        let parent = p.map(|k| ids[k]);
        let w = i % 10;
        let id = e
            .create(NewAgent {
                title: "agent".into(),
                parent,
                created_by: parent,
                ..NewAgent::new(
                    "claude",
                    true,
                    format!("/src/w{w}"),
                    format!("w{w}").parse::<WorkspaceId>().unwrap(),
                )
            })
            .unwrap();
        if budget && parent.is_none() {
            e.give_budget(id, Some(cap));
        }
        e.turn_usage(
            id,
            &TurnUsage {
                input_tokens: 1000 + i as u64,
                output_tokens: 200,
                cache_read_tokens: 5000,
                cache_write_tokens: 30,
                cost_usd: Some(0.01),
                session_cost_usd: None,
                restored: false,
            },
        )
        .unwrap();
        ids.push(id);
        depth.push(p.map(|k| depth[k] + 1).unwrap_or(0));
    }
    let _ = e.take_outcome();
    let _ = e.take_rerender();
    let deepest = (0..n).max_by_key(|k| depth[*k]).map(|k| ids[k]).unwrap();
    (e, ids, deepest)
}

fn sizes(var: &str, default: &str) -> Vec<usize> {
    std::env::var(var)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("budget");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    let fleet_max = sizes("PASEO_BUDGET_BENCH_FLEET_MAX", &usize::MAX.to_string())[0];
    for n in sizes("PASEO_BUDGET_BENCH_SIZES", "10000,100000") {
        for budget in [false, true] {
            let (e, ids, deepest) = fleet(n, budget);
            let what = if budget {
                "budgets"
            } else {
                "baseline: no budget"
            };
            if n <= fleet_max {
                g.bench_function(
                    BenchmarkId::new(format!("whole-fleet snapshot, {what}"), n),
                    |b| {
                        b.iter(|| {
                            let r = e.usage_rollups();
                            ids.iter()
                                .map(|id| {
                                    AgentSnapshot::with_rollups(&e, e.agent(*id).unwrap(), &r)
                                })
                                .filter(|s| s.tree_budget.is_some())
                                .count()
                        })
                    },
                );
            }
            g.bench_function(
                BenchmarkId::new(format!("one agent's snapshot, {what}"), n),
                |b| b.iter(|| AgentSnapshot::of(&e, e.agent(deepest).unwrap())),
            );
            g.bench_function(
                BenchmarkId::new(format!("budget check before a turn, {what}"), n),
                |b| b.iter(|| e.budget_reached(deepest)),
            );
            if !budget {
                let root = ids[0];
                g.bench_function(BenchmarkId::new("tree usage of a root, kept", n), |b| {
                    b.iter(|| e.tree_usage(root))
                });
                g.bench_function(
                    BenchmarkId::new("baseline: tree usage of a root, from scratch", n),
                    |b| b.iter(|| e.tree_usage_from_scratch(root)),
                );
            }
        }
    }
    g.finish();
}

criterion_group!(budget, benches);
criterion_main!(budget);
