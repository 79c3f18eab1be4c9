use paseo_core::config::Config;
use paseo_core::mcp::McpServer;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Runtime, RuntimeOptions};
use paseo_core::store::Layout;
use std::time::Instant;

fn main() {
    eprintln!(
        "sizes: record {} state {}",
        std::mem::size_of::<paseo_core::model::AgentRecord>(),
        std::mem::size_of::<paseo_core::engine::AgentState>()
    );
    let home = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    let reps: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for _ in 0..reps {
        rt.block_on(async {
            let t = Instant::now();
            let layout = Layout::new(&home);
            let (config, _) = Config::load_or_default(&home);
            let mcp = McpServer::bind(&layout, config.mcp.port).unwrap();
            let t1 = t.elapsed();
            let options = RuntimeOptions::new(&home, ProviderRegistry::from_config(&config));
            let runtime = Runtime::start(options, Some(mcp.access())).await.unwrap();
            let t2 = t.elapsed();
            let mcp = mcp.serve(runtime.handle()).await.unwrap();
            let t3 = t.elapsed();
            let (_, total) = runtime.handle().list(Default::default(), 1).await.unwrap();
            let t4 = t.elapsed();
            eprintln!("bind {t1:?} runtime {t2:?} serve {t3:?} list {t4:?} total {total}");
            mcp.shutdown().await;
            runtime.shutdown().await;
        });
    }
}
