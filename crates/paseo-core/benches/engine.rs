//! Engine benchmarks (SPEC 12), no I/O, each beside a baseline measured in the same run:
//! - build a fleet of 10,000 agents in trees vs inserting the same records into a HashMap;
//! - archive a root with a 10,000-descendant cascade vs stamping `archivedAt` on 10,000 records;
//! - 100,000 status transitions with incremental workspace activity vs the same transitions on
//!   bare records (no indexes at all).

use std::collections::HashMap;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use paseo_core::engine::{Engine, NewAgent};
use paseo_core::model::{
    AgentId, AgentRecord, Status, Timestamp, TurnOrigin, TurnOutcome, WorkspaceId,
};

const N: usize = 10_000;

#[path = "support/workspace.rs"]
mod workspace;
use workspace::ws;

fn new_agent(parent: Option<AgentId>, w: usize) -> NewAgent {
    let workspace = format!("w{w}").parse::<WorkspaceId>().unwrap();
    NewAgent {
        title: "agent".into(),
        parent,
        created_by: parent,
        ..NewAgent::new("shell", false, format!("/src/w{w}"), workspace)
    }
}

fn base_engine() -> Engine {
    let mut e = Engine::new();
    e.set_clock(Some(Timestamp::from_millis(1)));
    for i in 0..10 {
        e.upsert_workspace(ws(i), None);
    }
    let _ = e.take_outcome();
    e
}

/// 10,000 agents: 100 roots over 10 workspaces, each with a tree of 99 descendants (fan-out 3).
fn fleet() -> (Engine, Vec<AgentId>) {
    let mut e = base_engine();
    let mut ids = Vec::with_capacity(N);
    for r in 0..100 {
        let root = e.create(new_agent(None, r % 10)).unwrap();
        ids.push(root);
        let mut level = vec![root];
        let mut made = 1;
        while made < N / 100 {
            let mut next = Vec::new();
            for p in &level {
                for _ in 0..3 {
                    if made == N / 100 {
                        break;
                    }
                    let id = e.create(new_agent(Some(*p), r % 10)).unwrap();
                    ids.push(id);
                    next.push(id);
                    made += 1;
                }
            }
            level = next;
        }
    }
    let _ = e.take_outcome();
    (e, ids)
}

/// One root with 10,000 descendants (a bushy tree of fan-out 4, plus a long chain).
fn cascade_fleet() -> (Engine, AgentId) {
    let mut e = base_engine();
    let root = e.create(new_agent(None, 0)).unwrap();
    let mut level = vec![root];
    let mut made = 0;
    while made < N / 2 {
        let mut next = Vec::new();
        for p in &level {
            for _ in 0..4 {
                if made < N / 2 {
                    next.push(e.create(new_agent(Some(*p), 1)).unwrap());
                    made += 1;
                }
            }
        }
        level = next;
    }
    let mut prev = root;
    for _ in 0..N / 2 {
        prev = e.create(new_agent(Some(prev), 2)).unwrap();
    }
    for id in e.agents().map(|a| a.record.id).collect::<Vec<_>>() {
        e.session_ready(id).unwrap();
    }
    let _ = e.take_outcome();
    (e, root)
}

fn records(n: usize) -> Vec<AgentRecord> {
    let (e, _) = fleet();
    e.agents()
        .take(n)
        .map(|a| AgentRecord::clone(&a.record))
        .collect()
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    g.sample_size(20).measurement_time(Duration::from_secs(8));

    let recs = records(N);
    g.bench_function("baseline: insert 10k records into a HashMap", |b| {
        b.iter_batched(
            || recs.clone(),
            |recs| {
                let m: HashMap<AgentId, AgentRecord> =
                    recs.into_iter().map(|r| (r.id, r)).collect();
                m
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("create 10k agents in trees", |b| b.iter(fleet));

    g.bench_function("baseline: stamp archivedAt on 10k records", |b| {
        b.iter_batched(
            || recs.clone(),
            |mut recs| {
                let now = Timestamp::from_millis(5);
                for r in recs.iter_mut() {
                    r.archived_at = Some(now);
                    r.last_status = Status::Closed;
                }
                recs
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("archive with a 10k-descendant cascade", |b| {
        b.iter_batched(
            cascade_fleet,
            |(mut e, root)| {
                let n = e.archive(root).unwrap().len();
                assert_eq!(n, N + 1);
                (e.take_outcome(), e)
            },
            BatchSize::LargeInput,
        )
    });

    // 100,000 transitions: 10k agents × (prompt → running, turn end → idle) × 5.
    g.bench_function("baseline: 100k status writes on bare records", |b| {
        b.iter_batched(
            || recs.clone(),
            |mut recs| {
                for round in 0..5 {
                    for r in recs.iter_mut() {
                        r.last_status = Status::Running;
                        r.turn_count += 1;
                    }
                    for r in recs.iter_mut() {
                        r.last_status = if round % 2 == 0 {
                            Status::Idle
                        } else {
                            Status::Error
                        };
                    }
                }
                recs
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("100k transitions with incremental activity", |b| {
        b.iter_batched(
            || {
                let (mut e, ids) = fleet();
                for id in &ids {
                    e.session_ready(*id).unwrap();
                }
                let _ = e.take_outcome();
                (e, ids)
            },
            |(mut e, ids)| {
                for round in 0..5 {
                    for id in &ids {
                        e.prompt(*id, "go".into(), TurnOrigin::User, None).unwrap();
                    }
                    for id in &ids {
                        let o = if round % 2 == 0 {
                            TurnOutcome::Completed
                        } else {
                            TurnOutcome::Failed {
                                message: "x".into(),
                                detail: None,
                            }
                        };
                        e.turn_ended(*id, o).unwrap();
                    }
                    let _ = e.take_outcome();
                }
                e
            },
            BatchSize::LargeInput,
        )
    });
    let (e, _) = fleet();
    g.bench_function("reference: recompute all activity from scratch once", |b| {
        b.iter(|| e.recompute_activity())
    });
    g.finish();
}

criterion_group!(engine, benches);
criterion_main!(engine);
