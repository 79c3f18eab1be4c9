//! Nothing lost (SPEC 15), the store's part, through the real runtime on real data roots:
//! damaged registries are set aside and reported, never replaced unseen; agents whose record
//! cannot be written are refused at creation; timelines stay bounded; a full disk makes the
//! agent fail visibly and writes recover when space is back.

use std::path::Path;

use paseo_core::config::Config;
use paseo_core::model::AgentId;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{CreateAgent, Runtime, RuntimeHandle, RuntimeOptions, WorkspaceTarget};

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

fn shell_in(ws: &paseo_core::model::WorkspaceId, cwd: Option<String>) -> CreateAgent {
    CreateAgent::new(
        "shell",
        WorkspaceTarget::Existing {
            id: ws.clone(),
            cwd,
        },
    )
}

#[tokio::test]
async fn a_cwd_too_long_to_store_is_refused_at_creation_naming_cwd() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // Every component fits the file system; the folder named after the whole path does not.
    let mut deep = work.path().to_path_buf();
    for c in ["a", "b", "c"] {
        deep.push(c.repeat(100));
    }
    std::fs::create_dir_all(&deep).unwrap();
    let rt = start(home.path()).await;
    let h = rt.handle();
    let ws = add_workspace(&h, work.path()).await;

    let by_dir = CreateAgent::new(
        "shell",
        WorkspaceTarget::Directory {
            path: deep.display().to_string(),
        },
    );
    let inside = shell_in(&ws, Some(deep.display().to_string()));
    for req in [by_dir, inside] {
        let err = h.create(req).await.unwrap_err();
        assert_eq!(err.code(), "invalid");
        let msg = err.to_string();
        assert!(msg.starts_with("cwd: "), "{msg}");
        assert!(msg.contains("255"), "{msg}");
    }
    let snap = h.snapshot().await.unwrap();
    assert!(snap.agents.is_empty());
    assert_eq!(
        snap.workspaces.len(),
        1,
        "a refused creation registers nothing"
    );
    assert!(!home.path().join("agents").exists());

    // A short cwd in the same workspace is fine.
    let ok = h.create(shell_in(&ws, None)).await.unwrap();
    assert_eq!(ok.record.cwd, work.path().display().to_string());
    rt.shutdown().await;
}

#[tokio::test]
async fn creation_answers_only_once_the_record_is_durable() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let rt = start(home.path()).await;
    let h = rt.handle();
    let ws = add_workspace(&h, work.path()).await;
    let layout = h.layout().clone();
    for _ in 0..20 {
        let a = h.create(shell_in(&ws, None)).await.unwrap();
        // Read at once, no waiting: the answer came after the write.
        let path = layout.record_path(&a.record.cwd, a.id());
        let on_disk: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(on_disk["id"], a.id().to_string());
    }
    rt.shutdown().await;

    // A record that cannot be written: creation fails with the reason, not success.
    let other = tempfile::tempdir().unwrap();
    let rt = start(home.path()).await;
    let h = rt.handle();
    let ws = add_workspace(&h, other.path()).await;
    let folder = layout.record_path(&other.path().display().to_string(), AgentId::new());
    let folder = folder.parent().unwrap();
    std::fs::create_dir_all(layout.agents_dir()).unwrap();
    std::fs::write(folder, b"a file where the folder goes").unwrap();
    let err = h.create(shell_in(&ws, None)).await.unwrap_err();
    assert_eq!(err.code(), "io", "{err}");
    assert!(
        err.to_string().contains(&folder.display().to_string()),
        "{err}"
    );
    rt.shutdown().await;
}
