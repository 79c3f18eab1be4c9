//! The in-process part of a launch, phase by phase, for profiling (`perf record` this with a
//! release build that keeps symbols): config, MCP bind, runtime start (load), serve, first
//! listing, a window's first screen and its pages. The whole-process figure is the `launch`
//! bench of the desktop crate.
//!
//! `cargo run --release -p paseo-core --example launch_phases -- HOME [RUNS [--cache]]`
//! (seed HOME first with the `seed_records` example).

use paseo_core::api::{verbs, Request, Response};
use paseo_core::config::Config;
use paseo_core::mcp::McpServer;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Caller, RuntimeOptions};
use paseo_core::server::Runtime;
use paseo_core::store::Layout;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(home) = args.next().map(std::path::PathBuf::from) else {
        eprintln!("usage: launch_phases HOME [RUNS]");
        std::process::exit(2);
    };
    // As the app does first thing (`paseo_headless::prepare`): its heap's shape is the app's.
    paseo_core::runtime::limit_heap_arenas();
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    // `--cache`: write the records cache first, as a launch before these would have.
    if args.next().as_deref() == Some("--cache") {
        let built = paseo_core::store::records_cache::rebuild(&Layout::new(&home));
        println!("records cache: {built:?}");
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    for _ in 0..runs {
        rt.block_on(async {
            let t = Instant::now();
            let layout = Layout::new(&home);
            let (config, _) = Config::load_or_default(&home);
            let mcp = McpServer::bind(&layout, config.mcp.port).expect("bind");
            let bound = t.elapsed();
            let options = RuntimeOptions::new(&home, ProviderRegistry::from_config(&config));
            let runtime = Runtime::start(options, Some(mcp.access()))
                .await
                .expect("runtime start");
            let loaded = t.elapsed();
            let mcp = mcp.serve(runtime.handle()).await.expect("serve");
            let serving = t.elapsed();
            let list = verbs::ListAgents {
                limit: Some(1),
                ..Default::default()
            };
            let total = match runtime.handle().call(Caller::User, list.into()).await {
                Ok(Response::Agents { total, .. }) => total,
                other => panic!("list: {other:?}"),
            };
            let listed = t.elapsed();
            // A window's first screen with nothing selected: the latest workspace's agents.
            let first = Instant::now();
            let screen = window(&runtime, verbs::FleetFirstScreen::default().into()).await;
            let first = first.elapsed();
            // The rest of the fleet in the page's pages of 5,000 (`ui/boot.js`), as it asks.
            let paging = Instant::now();
            let (mut after, mut pages) = (None, 0);
            loop {
                let cards = verbs::FleetCards {
                    after,
                    limit: Some(5000),
                };
                let page = window(&runtime, cards.into()).await;
                pages += 1;
                // Its key comes last (`"next": [ms, id]` or null): read from there, so the time
                // is the runtime's, not a parse of the whole page here.
                let next = page
                    .rfind("\"next\":")
                    .and_then(|at| page[at + 7..].strip_suffix('}'))
                    .expect("a page ends with its next key");
                after = match serde_json::from_str(next).expect("a next key") {
                    Some(key) => Some(key),
                    None => break,
                };
            }
            let paging = paging.elapsed();
            if let Some(out) = std::env::var_os("PASEO_FIRST_SCREEN_OUT") {
                std::fs::write(out, &screen).expect("write the first screen");
            }
            println!(
                "bind {bound:.1?}, runtime started (loaded) {loaded:.1?}, serving {serving:.1?}, \
                 first listing {listed:.1?}: {total} agents; a window's first screen {first:.1?} \
                 ({} KB), the rest in {pages} pages {paging:.1?}",
                screen.len() / 1000
            );
            // The runtime's memory with the fleet loaded, freed pages returned as the app does.
            paseo_core::runtime::release_freed_memory();
            println!("  memory: {}", memory());
            runtime.handle().deliver_pending().await.expect("deliver");
            mcp.shutdown().await;
            runtime.shutdown().await;
        });
    }
}

/// Resident and anonymous memory of this process, from `/proc/self/smaps_rollup`.
/// A window's snapshot (a screen, a page of cards) as its text.
async fn window(runtime: &Runtime, request: Request) -> String {
    match runtime.handle().call(Caller::User, request).await {
        Ok(Response::Window(text)) => text,
        other => panic!("window snapshot: {other:?}"),
    }
}

fn memory() -> String {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let kb = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    // SAFETY: mallinfo2 reads glibc's own counters, under its arenas' locks.
    let heap = unsafe { libc::mallinfo2() };
    format!(
        "RSS {:.1} MB, anonymous {:.1} MB (the heap: {:.1} MB in use, {:.1} MB free)",
        kb("Rss:") / 1000.0,
        kb("Anonymous:") / 1000.0,
        heap.uordblks as f64 / 1e6,
        heap.fordblks as f64 / 1e6,
    )
}
