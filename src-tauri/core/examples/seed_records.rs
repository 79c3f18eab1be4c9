//! Writes N realistic agent records (in trees, over 20 workspaces) into a data root, for memory
//! and load measurements: `cargo run --release -p paseo-core --example seed_records -- HOME N`.

use paseo_core::engine::{Engine, NewAgent};
use paseo_core::model::{
    AgentId, ProjectId, Timestamp, WorkspaceId, WorkspaceKind, WorkspaceRecord,
};
use paseo_core::store::{self, atomic, Layout};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(home), Some(n)) = (
        args.next(),
        args.next().and_then(|n| n.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: seed_records HOME N");
        std::process::exit(2);
    };
    let layout = Layout::new(&home);
    let mut e = Engine::new();
    let workspaces: Vec<WorkspaceRecord> = (0..20)
        .map(|i| WorkspaceRecord {
            workspace_id: format!("seed-ws-{i}").parse::<WorkspaceId>().unwrap(),
            project_id: "seed-project".parse::<ProjectId>().unwrap(),
            cwd: format!("/tmp/seed/project-{i}"),
            kind: WorkspaceKind::Directory,
            display_name: format!("project-{i}"),
            created_at: Timestamp::now(),
            updated_at: Timestamp::now(),
            archived_at: None,
            repo: None,
            branch: None,
            created_by_agent_id: None,
            created_by_request: None,
            extra: Default::default(),
        })
        .collect();
    for w in &workspaces {
        e.upsert_workspace(w.clone(), None);
    }
    let mut parents: Vec<AgentId> = Vec::new();
    for i in 0..n {
        // Every fifth agent is a root; the others are subagents of a recent agent.
        let parent = (i % 5 != 0).then(|| parents[parents.len().saturating_sub(1 + i % 3)]);
        let w = i % 20;
        let id = e
            .create(NewAgent {
                title: format!("agent {i}: review the login form"),
                parent,
                created_by: parent,
                ..NewAgent::new(
                    "shell",
                    false,
                    format!("/tmp/seed/project-{w}"),
                    workspaces[w].workspace_id.clone(),
                )
            })
            .unwrap();
        e.close(id).unwrap();
        parents.push(id);
    }
    for a in e.agents() {
        let p = layout.record_path(&a.record.cwd, a.record.id);
        atomic::ensure_dir(p.parent().unwrap()).unwrap();
        std::fs::write(&p, store::encode_record(&a.record).unwrap()).unwrap();
    }
    atomic::write_atomic(
        &layout.workspaces_path(),
        &store::encode_workspaces(e.workspaces()).unwrap(),
    )
    .unwrap();
    println!("seeded {n} records into {home}");
}
