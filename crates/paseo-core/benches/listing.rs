//! Scale (SPEC 12, docs/scale.md): one `list_agents` call over the real MCP server (loopback HTTP,
//! user token) with 10,000 agents, request to last byte, beside a baseline measured in the same
//! run: serializing the same 10,000 agents as full snapshots (what a listing answered before it
//! carried summaries). Prints the response size too (target ≤ 5 MB, ≤ 150 ms on the 2-core
//! machine).
//!
//! `cargo bench -p paseo-core --bench listing`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use paseo_core::mcp::{McpServer, RunningMcp};
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::RuntimeOptions;
use paseo_core::server::Runtime;
use paseo_core::store::Layout;

#[path = "support/seed.rs"]
mod seed;

const N: usize = 10_000;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    seed::seed(&home, N);
    let tokio = tokio::runtime::Runtime::new().unwrap();
    let (rt, mcp) = tokio.block_on(serve(&home));
    let client = reqwest::Client::new();
    let list = || list_all(&client, &mcp);
    let bytes = tokio.block_on(list());
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains(&format!("\"total\":{N}")),
        "every agent listed"
    );
    let snapshots = tokio.block_on(async {
        let list = paseo_core::api::verbs::ListAgents {
            limit: Some(N),
            ..Default::default()
        };
        let caller = paseo_core::runtime::Caller::User;
        match rt.handle().call(caller, list.into()).await {
            Ok(paseo_core::api::Response::Agents { agents, .. }) => agents,
            other => panic!("listAgents: {other:?}"),
        }
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
    // The same two, timed here as medians, so one line states the figures against the target
    // and the baseline (scripts/bench.sh prints it in its summary).
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let listing = median(
        (0..11)
            .map(|_| {
                let t = std::time::Instant::now();
                tokio.block_on(list());
                t.elapsed()
            })
            .collect(),
    );
    let baseline = median(
        (0..11)
            .map(|_| {
                let t = std::time::Instant::now();
                std::hint::black_box(serde_json::to_vec(&snapshots).unwrap());
                t.elapsed()
            })
            .collect(),
    );
    println!(
        "list_agents {N}: {:.1} ms request to last byte (target ≤ 150 ms), {:.2} MB (target ≤ 5 MB) = {:.2}× baseline: JSON of the full snapshots {:.1} ms",
        listing.as_secs_f64() * 1e3,
        bytes.len() as f64 / 1e6,
        listing.as_secs_f64() / baseline.as_secs_f64(),
        baseline.as_secs_f64() * 1e3
    );
    tokio.block_on(async {
        mcp.shutdown().await;
        rt.shutdown().await;
    });
    long_fleet(&tokio, &client);
}

/// The runtime on `home` and its MCP server, as the app starts them.
async fn serve(home: &std::path::Path) -> (Runtime, RunningMcp) {
    let layout = Layout::new(home);
    let server = McpServer::bind(&layout, None).unwrap();
    let rt = Runtime::start(
        RuntimeOptions::new(home, ProviderRegistry::new()),
        Some(server.access()),
    )
    .await
    .unwrap();
    let mcp = server.serve(rt.handle()).await.unwrap();
    (rt, mcp)
}

/// One `list_agents` of every agent with the user's token, as the response's bytes.
async fn list_all(
    client: &reqwest::Client,
    mcp: &RunningMcp,
) -> impl std::ops::Deref<Target = [u8]> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "list_agents", "arguments": {"limit": N}}});
    let r = client
        .post(mcp.url())
        .header(
            "Authorization",
            format!("Bearer {}", mcp.tokens().user_token()),
        )
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    r.bytes().await.unwrap()
}

/// The listing's size on a fleet with long titles, deep folders and labels (the target holds
/// whatever they are).
fn long_fleet(tokio: &tokio::runtime::Runtime, client: &reqwest::Client) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    seed::seed_long(&home, N);
    tokio.block_on(async {
        let (rt, mcp) = serve(&home).await;
        let bytes = list_all(client, &mcp).await;
        assert!(String::from_utf8_lossy(&bytes).contains(&format!("\"total\":{N}")));
        println!(
            "list_agents {N}, long titles, folders and labels: {:.2} MB (target ≤ 5 MB)",
            bytes.len() as f64 / 1e6
        );
        mcp.shutdown().await;
        rt.shutdown().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
