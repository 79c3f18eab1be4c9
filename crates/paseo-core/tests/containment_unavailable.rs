//! When nothing here can box an agent (SPEC 16: bubblewrap missing, and Landlock not chosen),
//! contained agents do not start: each says why and how to fix it; the fleet's snapshot and its
//! notices say so too; an agent the user made unconfined still runs. Its own test binary: what
//! the machine offers is probed once per process.

mod support;

use std::time::Duration;

use paseo_core::config::{Config, EngineChoice, SandboxConfig};
use paseo_core::model::Status;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{CreateAgent, RuntimeOptions, WorkspaceTarget};
use paseo_core::server::Runtime;
use support::Door;

#[tokio::test]
async fn without_an_engine_contained_agents_refuse_to_start_and_say_why() {
    // A PATH without bubblewrap (the shell and coreutils stay), before anything probes.
    let bin = tempfile::tempdir().unwrap();
    for tool in ["sh", "bash", "cat", "echo", "true", "git"] {
        if let Ok(p) = which(tool) {
            std::os::unix::fs::symlink(p, bin.path().join(tool)).unwrap();
        }
    }
    std::env::set_var("PATH", bin.path());
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut opts = RuntimeOptions::new(
        home.path(),
        ProviderRegistry::from_config(&Config::default()),
    );
    opts.sandbox = SandboxConfig {
        engine: EngineChoice::Bubblewrap,
        ..SandboxConfig::default()
    };
    let rt = Runtime::start(opts, None).await.unwrap();
    let h = rt.handle();
    let snap = h.snapshot().await.unwrap();
    assert_eq!(snap.containment.state, "unavailable");
    assert!(
        snap.notices
            .iter()
            .any(|n| n.contains("containment is unavailable")),
        "{:?}",
        snap.notices
    );
    let ws = h
        .add_workspace(work.path().display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id;
    let create = |unconfined: bool| {
        let mut req = CreateAgent::new("shell", WorkspaceTarget::existing(ws.clone()));
        req.initial_prompt = Some("echo ran".into());
        req.unconfined = unconfined;
        req
    };
    let boxed = h.create(create(false)).await.unwrap().record.id;
    let r = h.wait(boxed, Duration::from_secs(20)).await.unwrap();
    assert_eq!(r.agent.status, Status::Error);
    let why = r.agent.record.last_error.clone().unwrap_or_default();
    assert!(why.contains("bubblewrap"), "{why}");
    assert!(why.contains("sandbox"), "says how to turn it off: {why}");
    assert!(
        why.contains("unconfined"),
        "or to make this agent unconfined: {why}"
    );
    // The user's own choice still runs.
    let free = h.create(create(true)).await.unwrap().record.id;
    let r = h.wait(free, Duration::from_secs(20)).await.unwrap();
    assert_eq!(
        r.agent.status,
        Status::Idle,
        "{:?}",
        r.agent.record.last_error
    );
    rt.shutdown().await;
}

fn which(tool: &str) -> Result<std::path::PathBuf, ()> {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| std::path::Path::new(d).join(tool))
        .find(|p| p.exists())
        .ok_or(())
}
