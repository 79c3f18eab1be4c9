//! Storage benchmarks (SPEC 12), each beside its baseline measured in the same run:
//! - load 10,000 records at startup vs a plain sequential loop that opens, reads and closes
//!   the same files (target ≤ 1.5×);
//! - durable archive of a 1,000-agent cascade (engine + coalescing writer: temp file, fsync,
//!   rename, fsync the folder, replacing the existing records) vs the bare write + fsync +
//!   rename of 1,000 files over existing ones, sequentially.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use paseo_core::engine::{Engine, NewAgent};
use paseo_core::model::{
    AgentId, ProjectId, Timestamp, WorkspaceId, WorkspaceKind, WorkspaceRecord,
};
use paseo_core::store::{self, Layout, Writer};

fn ws() -> WorkspaceRecord {
    WorkspaceRecord {
        workspace_id: "w".parse().unwrap(),
        project_id: "p".parse::<ProjectId>().unwrap(),
        cwd: "/src/app".into(),
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

fn agent(parent: Option<AgentId>, cwd: &str) -> NewAgent {
    NewAgent {
        title: "review the login form and write tests".into(),
        labels: BTreeMap::from([("team".into(), "web".into())]),
        parent,
        created_by: parent,
        ..NewAgent::new("claude", true, cwd, "w".parse::<WorkspaceId>().unwrap())
    }
}

/// A data root with `n` realistic records spread over 20 cwd folders.
fn data_root(n: usize) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::new(dir.path());
    let mut e = Engine::new();
    e.upsert_workspace(ws(), None);
    let mut paths = Vec::new();
    for i in 0..n {
        let cwd = format!("/home/me/src/project-{}", i % 20);
        let id = e.create(agent(None, &cwd)).unwrap();
        let r = &e.agent(id).unwrap().record;
        let p = layout.record_path(&r.cwd, id);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, store::encode_record(r).unwrap()).unwrap();
        paths.push(p);
    }
    (dir, paths)
}

fn cascade(n: usize, cwd: &str) -> (Engine, AgentId) {
    let mut e = Engine::new();
    e.upsert_workspace(ws(), None);
    let root = e.create(agent(None, cwd)).unwrap();
    let mut level = vec![root];
    let mut made = 1;
    while made < n {
        let mut next = Vec::new();
        for p in &level {
            for _ in 0..5 {
                if made < n {
                    next.push(e.create(agent(Some(*p), cwd)).unwrap());
                    made += 1;
                }
            }
        }
        level = next;
    }
    let _ = e.take_outcome();
    (e, root)
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("storage");
    g.sample_size(10).measurement_time(Duration::from_secs(10));

    let (dir, paths) = data_root(10_000);
    let layout = Layout::new(dir.path());
    g.bench_function(
        "baseline: open+read+close 10k record files sequentially",
        |b| {
            b.iter(|| {
                let mut total = 0;
                let mut buf = Vec::new();
                for p in &paths {
                    buf.clear();
                    let mut f = fs::File::open(p).unwrap();
                    total += f.read_to_end(&mut buf).unwrap();
                }
                total
            })
        },
    );
    g.bench_function("load 10k records (list, read, parse, validate)", |b| {
        b.iter(|| {
            let l = store::load_agents(&layout).unwrap();
            assert_eq!(l.records.len(), 10_000);
            l
        })
    });

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let adir = tempfile::tempdir().unwrap();
    let alayout = Layout::new(adir.path());
    let cwd = "/home/me/src/app";
    fs::create_dir_all(alayout.agents_dir().join(store::cwd_with_dashes(cwd))).unwrap();
    let writer = Writer::new(4);
    g.bench_function("durable archive of a 1,000-agent cascade", |b| {
        b.iter_batched(
            || {
                // The records exist before they are archived: the archive rewrites them.
                let (e, root) = cascade(1_000, cwd);
                for a in e.agents() {
                    let p = alayout.record_path(&a.record.cwd, a.record.id);
                    fs::write(&p, store::encode_record(&a.record).unwrap()).unwrap();
                }
                (e, root)
            },
            |(mut e, root)| {
                let ids = e.archive(root).unwrap();
                assert_eq!(ids.len(), 1_000);
                let out = e.take_outcome();
                let tickets: Vec<_> = out
                    .agents
                    .iter()
                    .map(|id| {
                        let r = &e.agent(*id).unwrap().record;
                        writer.submit(
                            alayout.record_path(&r.cwd, *id),
                            store::encode_record(r).unwrap(),
                        )
                    })
                    .collect();
                rt.block_on(writer.wait_all(&tickets)).unwrap();
                e
            },
            BatchSize::LargeInput,
        )
    });
    let bdir = tempfile::tempdir().unwrap();
    let (sample_engine, root) = cascade(1_000, cwd);
    let bytes = store::encode_record(&sample_engine.agent(root).unwrap().record).unwrap();
    g.bench_function("baseline: bare write+fsync+rename of 1,000 files", |b| {
        b.iter(|| {
            for i in 0..1_000 {
                let tmp = bdir.path().join(format!("{i}.tmp"));
                let dst = bdir.path().join(format!("{i}.json"));
                let mut f = fs::File::create(&tmp).unwrap();
                f.write_all(&bytes).unwrap();
                f.sync_all().unwrap();
                fs::rename(&tmp, &dst).unwrap();
            }
        })
    });
    g.finish();
}

criterion_group!(storage, benches);
criterion_main!(storage);
