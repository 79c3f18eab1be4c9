//! Nothing lost (SPEC 15), the store's part, through the real runtime on real data roots:
//! damaged registries are set aside and reported, never replaced unseen; agents whose record
//! cannot be written are refused at creation; timelines stay bounded; a full disk makes the
//! agent fail visibly and writes recover when space is back.

use std::path::Path;
use std::time::Duration;

use paseo_core::config::Config;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Runtime, RuntimeHandle, RuntimeOptions};

async fn start(home: &Path) -> Runtime {
    start_with(RuntimeOptions::new(
        home,
        ProviderRegistry::from_config(&Config::default()),
    ))
    .await
}

async fn start_with(opts: RuntimeOptions) -> Runtime {
    let rt = Runtime::start(opts, None).await.unwrap();
    rt.handle.deliver_pending().await.unwrap();
    rt
}

fn quarantined_files(home: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(home.join("quarantine"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

async fn add_workspace(h: &RuntimeHandle, dir: &Path) -> paseo_core::model::WorkspaceId {
    h.add_workspace(dir.display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id
}

#[tokio::test]
async fn damaged_registries_are_set_aside_reported_and_never_replaced_unseen() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let projects = home.path().join("projects");
    std::fs::create_dir_all(projects.join("workspaces.json/odd")).unwrap();
    std::fs::write(projects.join("workspaces.json/odd/data"), b"unseen").unwrap();
    std::fs::write(projects.join("projects.json"), b"{\"projects\": [tor").unwrap();

    let rt = start(home.path()).await;
    let h = rt.handle();
    let snap = h.snapshot().await.unwrap();
    assert_eq!(snap.quarantined.len(), 2, "{:?}", snap.quarantined);
    for name in ["workspaces.json", "projects.json"] {
        assert!(
            snap.notices.iter().any(|n| n.contains(name)),
            "{name} reported: {:?}",
            snap.notices
        );
    }
    // The app writes both registries again…
    add_workspace(&h, work.path()).await;
    rt.shutdown().await;
    assert!(projects.join("workspaces.json").is_file());
    // …and what it could not read is still there, byte for byte.
    let aside = quarantined_files(home.path());
    assert_eq!(aside.len(), 2, "{aside:?}");
    let ws = aside
        .iter()
        .find(|p| p.to_string_lossy().ends_with("workspaces.json"))
        .unwrap();
    assert_eq!(std::fs::read(ws.join("odd/data")).unwrap(), b"unseen");
    let pj = aside
        .iter()
        .find(|p| p.to_string_lossy().ends_with("projects.json"))
        .unwrap();
    assert_eq!(std::fs::read(pj).unwrap(), b"{\"projects\": [tor");

    // A restart on the rewritten registries reports nothing more.
    let rt = start(home.path()).await;
    let snap = rt.handle().snapshot().await.unwrap();
    assert!(snap.quarantined.is_empty(), "{:?}", snap.quarantined);
    assert_eq!(snap.workspaces.len(), 1);
    rt.shutdown().await;
}
