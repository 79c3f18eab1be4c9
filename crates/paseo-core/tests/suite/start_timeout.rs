//! A provider start that hangs is bounded (SPEC 11): a codex-like command that reads its stdin
//! and never answers `initialize` leaves the agent `error` with the reason once
//! `startTimeoutSecs` passes, and its whole process tree is gone.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::model::Status;
use paseo_core::providers::codex::CodexProvider;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{CreateAgent, RuntimeOptions, WorkspaceTarget};
use paseo_core::server::Runtime;
use support::Door;

#[tokio::test]
async fn a_start_that_never_answers_ends_in_error_with_its_process_tree_killed() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    // In the agent's own folder: a contained agent writes nowhere else (SPEC 16).
    let pids = work.join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    // Reads the handshake and never answers; keeps a child of its own in the group.
    let script = dir.path().join("hung-codex");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > {p}/leader\nsleep 600 &\necho $! > {p}/child\ncat > /dev/null\n",
            p = pids.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();

    let config = ProviderConfig {
        command: Some(vec![script.display().to_string()]),
        ..ProviderConfig::new(ProviderKind::Codex)
    };
    let mut reg = ProviderRegistry::new();
    reg.insert("codex", Arc::new(CodexProvider::new("codex", config)));
    let mut opts = RuntimeOptions::new(dir.path().join("home"), reg);
    opts.start_timeout = Duration::from_secs(2);
    let rt = Runtime::start(opts, None).await.unwrap();
    let h = rt.handle();
    let mut req = CreateAgent::new(
        "codex",
        WorkspaceTarget::directory(work.display().to_string()),
    );
    req.initial_prompt = Some("hello".into());
    let a = h.create(req).await.unwrap();
    assert_eq!(a.status, Status::Initializing);
    let leader = support::host_pid(a.id(), support::read_pid(&pids.join("leader")).await);
    let child = support::host_pid(a.id(), support::read_pid(&pids.join("child")).await);
    assert!(support::alive(leader) && support::alive(child));

    let w = h.wait(a.id(), Duration::from_secs(20)).await.unwrap();
    assert!(!w.timed_out, "the start is bounded");
    assert_eq!(w.agent.status, Status::Error);
    let reason = w.agent.record.last_error.clone().unwrap_or_default();
    assert!(
        reason.contains("did not become ready within 2 s"),
        "{reason}"
    );
    support::poll("the hung process tree gone", || {
        (!support::alive(leader) && !support::alive(child)).then_some(())
    })
    .await;
    rt.shutdown().await;
}
