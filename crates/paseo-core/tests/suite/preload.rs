//! A data root read ahead of the runtime's start ([`Preload`], what the desktop app starts
//! before its window opens): the start takes what was read instead of reading again, with what
//! could not be read set aside and reported as its own reading does; a reading of another data
//! root is not used.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support;

use paseo_core::config::Config;
use paseo_core::model::{AgentId, Timestamp};
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Preload, RuntimeOptions};
use paseo_core::server::Runtime;
use paseo_core::store::Layout;
use support::Door;

/// Writes a minimal record of a shell agent in `cwd`; returns its id.
fn record(home: &Path, cwd: &str) -> AgentId {
    let id = AgentId::new();
    let now = Timestamp::now().to_string();
    let path = Layout::new(home).record_path(cwd, id);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let json = serde_json::json!({
        "id": id.to_string(), "provider": "shell", "cwd": cwd, "title": "t",
        "lastStatus": "idle", "createdAt": now, "updatedAt": now,
    });
    std::fs::write(path, serde_json::to_vec(&json).unwrap()).unwrap();
    id
}

fn options(home: &Path, preload: Option<Preload>) -> RuntimeOptions {
    let mut opts = RuntimeOptions::new(home, ProviderRegistry::from_config(&Config::default()));
    opts.preload = preload;
    opts
}

async fn ids(rt: &Runtime) -> Vec<AgentId> {
    let filter = paseo_core::engine::ListFilter {
        include_archived: true,
        ..Default::default()
    };
    let (agents, _) = rt.handle().list(filter, 100).await.unwrap();
    let mut ids: Vec<AgentId> = agents.iter().map(|a| a.record.id).collect();
    ids.sort();
    ids
}

fn read_ahead(home: &Path) -> Preload {
    let preload = Preload::start(home).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !preload.is_read() {
        assert!(Instant::now() < deadline, "the reading never ended");
        std::thread::sleep(Duration::from_millis(5));
    }
    preload
}

#[tokio::test]
async fn the_start_takes_what_was_read_ahead() {
    let home = tempfile::tempdir().unwrap();
    let mut kept: Vec<AgentId> = (0..3)
        .map(|i| record(home.path(), &format!("/src/p{}", i % 2)))
        .collect();
    kept.sort();
    let bad = Layout::new(home.path()).record_path("/src/p0", AgentId::new());
    let folder = bad.parent().unwrap().to_path_buf();
    std::fs::write(&bad, b"{\"id\": [not a record").unwrap();
    let temp = folder.join(".tmp-4242-0-left-by-a-crash.json");
    std::fs::write(&temp, b"half a write").unwrap();

    let preload = read_ahead(home.path());
    // Written after the reading ended: a start that read again would list it. (The lock keeps
    // any other writer out while a preload runs; this one stands in to see what is used.)
    let later = record(home.path(), "/src/p1");

    let rt = Runtime::start(options(home.path(), Some(preload)), None)
        .await
        .unwrap();
    assert_eq!(
        ids(&rt).await,
        kept,
        "the agents read ahead, and only those"
    );
    let snap = rt.handle().snapshot().await.unwrap();
    assert_eq!(snap.quarantined.len(), 1, "{:?}", snap.quarantined);
    assert!(
        snap.notices
            .iter()
            .any(|n| n.contains(&bad.display().to_string())),
        "the unreadable record reported: {:?}",
        snap.notices
    );
    assert!(!bad.exists(), "the unreadable record set aside");
    assert!(!temp.exists(), "the crash's temp file removed");
    rt.shutdown().await;

    // A start of its own reads the root as it is now.
    let rt = Runtime::start(options(home.path(), None), None)
        .await
        .unwrap();
    let mut all = kept.clone();
    all.push(later);
    all.sort();
    assert_eq!(ids(&rt).await, all);
    rt.shutdown().await;
}

#[tokio::test]
async fn a_reading_of_another_data_root_is_not_used() {
    let (one, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    record(one.path(), "/src/a");
    let theirs = record(other.path(), "/src/b");
    let preload = read_ahead(one.path());
    let rt = Runtime::start(options(other.path(), Some(preload)), None)
        .await
        .unwrap();
    assert_eq!(ids(&rt).await, vec![theirs]);
    rt.shutdown().await;
}
