//! Lifecycle and archive rules with the scripted provider and real files: an archive's track
//! and workspace news only once it is durable (SPEC 5), refused creates leave nothing (SPEC 14),
//! an unwritable record refuses the agent before it starts (SPEC 15), and stop or quit closes
//! an errored agent (SPEC 2).

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use paseo_core::model::Status;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::limits::Limits;
use paseo_core::runtime::{Caller, Event, Runtime, RuntimeOptions, WorkspaceTarget};
use support::scripted::{req, workspace, Env, Scripted};

const T: Duration = Duration::from_secs(10);

async fn start_limited(env: &Env, limits: Limits) -> Runtime {
    let mut reg = ProviderRegistry::new();
    reg.insert(
        "script",
        Arc::new(Scripted {
            id: "script",
            reads: true,
            log: env.log.clone(),
        }),
    );
    let mut opts = RuntimeOptions::new(env.home(), reg);
    opts.limits = limits;
    let rt = Runtime::start(opts, None).await.unwrap();
    rt.handle.deliver_pending().await.unwrap();
    rt
}

fn on_disk(p: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// SPEC 5: windows hear of an archive once its record is durable, and that holds for the
/// parent's track and the workspace's bucket as much as for the agent itself: a row that leaves
/// a track before the archive is on disk may come back when the write fails.
#[tokio::test]
async fn an_archives_track_and_workspace_news_wait_for_the_durable_record() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let lead = h.create(req(&ws, "ok lead")).await.unwrap();
    h.wait(lead.id(), T).await.unwrap();
    let mut k = req(&ws, "hang");
    k.caller = Caller::Agent(lead.id());
    k.subagent = true;
    let kid = h.create(k).await.unwrap();
    support::poll("the kid runs", || {
        (env.log.lock().unwrap().inputs.iter().any(|(a, _)| *a == kid.id())).then_some(())
    })
    .await;
    h.flush().await;
    // A directory in the way of the kid's record: its archived record cannot land yet.
    let path = h.layout().record_path(&kid.record.cwd, kid.id());
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("blocker"), b"x").unwrap();

    let mut rx = h.subscribe();
    let h2 = h.clone();
    let id = kid.id();
    let call = tokio::spawn(async move { h2.archive(id).await });
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        match tokio::time::timeout(Duration::from_millis(100), rx.recv()).await {
            Ok(Ok(Event::TrackChanged { track })) if track.parent_agent_id == lead.id() => {
                panic!("the lead's track changed before the archive was durable: {track:?}")
            }
            Ok(Ok(Event::WorkspaceUpdated { workspace })) if workspace.record.workspace_id == ws => {
                panic!("the workspace was updated before the archive was durable")
            }
            Ok(Ok(Event::AgentArchived { .. })) => panic!("announced before durable"),
            _ => {}
        }
    }
    let r = tokio::time::timeout(T, call).await.unwrap().unwrap();
    assert!(r.is_err(), "{r:?}");
    std::fs::remove_dir_all(&path).unwrap();
    // Once it lands: the archive, then the track without the kid.
    let deadline = Instant::now() + T;
    let mut archived = false;
    loop {
        let ev = tokio::time::timeout_at(deadline.into(), rx.recv())
            .await
            .expect("the track's news once the record landed")
            .unwrap();
        match ev {
            Event::AgentArchived { agent } if agent.id() == id => archived = true,
            Event::TrackChanged { track } if track.parent_agent_id == lead.id() => {
                assert!(archived, "the track changed before the archive was announced");
                assert!(!track.members.contains(&id), "{track:?}");
                break;
            }
            _ => {}
        }
    }
    assert!(on_disk(&path)["archivedAt"].is_string());
    rt.shutdown().await;
}
