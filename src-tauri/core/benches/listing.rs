//! Issue 19: one `list_agents` call over the real MCP server (loopback HTTP, user token) with
//! 10,000 agents, request to last byte, beside a baseline measured in the same run: serializing
//! the same 10,000 agents as full snapshots (what a listing answered before it carried
//! summaries). Prints the response size too (target ≤ 5 MB, ≤ 150 ms on the 2-core machine).
//!
//! `cargo bench -p paseo-core --bench listing`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use paseo_core::engine::{Engine, NewAgent};
use paseo_core::mcp::McpServer;
use paseo_core::model::{AgentId, ProjectId, Timestamp, WorkspaceKind, WorkspaceRecord};
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Runtime, RuntimeOptions};
use paseo_core::store::{self, atomic, Layout};

const N: usize = 10_000;

/// N agents in trees over 20 workspaces, each with a system prompt and model like real ones.
fn seed(home: &std::path::Path) {
    let layout = Layout::new(home);
    let mut e = Engine::new();
    let workspaces: Vec<WorkspaceRecord> = (0..20)
        .map(|i| WorkspaceRecord {
            workspace_id: format!("seed-ws-{i}").parse().unwrap(),
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
    for i in 0..N {
        let parent = (i % 5 != 0).then(|| parents[parents.len().saturating_sub(1 + i % 3)]);
        let w = i % 20;
        let mut new = NewAgent {
            title: format!("agent {i}: review the login form"),
            parent,
            created_by: parent,
            ..NewAgent::new(
                "shell",
                false,
                format!("/tmp/seed/project-{w}"),
                workspaces[w].workspace_id.clone(),
            )
        };
        new.config.model = Some("claude-sonnet-4-5".into());
        new.config.system_prompt = Some("You review code for the team. ".repeat(20));
        let id = e.create(new).unwrap();
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
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    seed(&home);
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let (rt, mcp, url, token) = tokio.block_on(async {
        let layout = Layout::new(&home);
        let server = McpServer::bind(&layout, None).unwrap();
        let rt = Runtime::start(
            RuntimeOptions::new(&home, ProviderRegistry::new()),
            Some(server.access()),
        )
        .await
        .unwrap();
        let mcp = server.serve(rt.handle()).await.unwrap();
        let url = mcp.url().to_string();
        let token = mcp.tokens().user_token().to_string();
        (rt, mcp, url, token)
    });
    let client = reqwest::Client::new();
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "list_agents", "arguments": {"limit": N}}})
    .to_string();
    let list = || async {
        let r = client
            .post(&url)
            .header("Authorization", format!("Bearer {token}"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{}", r.status());
        r.bytes().await.unwrap()
    };
    let bytes = tokio.block_on(list());
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains(&format!("\"total\":{N}")),
        "every agent listed"
    );
    let snapshots = tokio.block_on(async {
        let f = paseo_core::engine::ListFilter::default();
        rt.handle().list(f, N).await.unwrap().0
    });
    let full = serde_json::to_vec(&snapshots).unwrap().len();
    println!(
        "list_agents with {N} agents: response {:.2} MB (full snapshots as JSON: {:.2} MB, {:.1}x larger)",
        bytes.len() as f64 / 1e6,
        full as f64 / 1e6,
        full as f64 / bytes.len() as f64
    );

    let mut g = c.benchmark_group("listing");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("list_agents 10,000 over MCP (request to last byte)", |b| {
        b.iter(|| tokio.block_on(list()))
    });
    g.bench_function(
        "baseline: the same 10,000 as full snapshots, JSON only",
        |b| b.iter(|| serde_json::to_vec(&snapshots).unwrap()),
    );
    g.finish();
    tokio.block_on(async {
        mcp.shutdown().await;
        rt.shutdown().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
