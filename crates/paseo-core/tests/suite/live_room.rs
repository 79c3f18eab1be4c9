//! SPEC 14 `maxLiveAgents`: when starts wait, the idle agent quiet the longest is closed to make
//! room, and never silently (its timeline and an event for the status bars say why), and never
//! the agent a window shows: when that is the only candidate, the start waits until it is not.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use paseo_core::config::Limits;
use paseo_core::model::{AgentId, Bucket, ItemKind, Status};
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Event, RuntimeOptions};
use paseo_core::server::{Runtime, Server};
use support::scripted::{req, workspace, Env, Scripted};
use support::Door;

const T: Duration = Duration::from_secs(10);

const WHY: &str =
    "(live-agent limit 2, config.json limits.maxLiveAgents); it resumes when you use it.";

async fn start_two_live(env: &Env) -> Runtime {
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
    opts.limits = Limits {
        max_live_agents: 2,
        max_depth: 8,
        create_per_minute: 30,
    };
    let rt = Runtime::start(opts, None).await.unwrap();
    rt.handle.deliver_pending().await.unwrap();
    rt
}

/// Creates a scripted agent titled `title` that finishes one turn, and waits until it is idle.
async fn idle_agent(h: &Server, env: &Env, title: &str) -> AgentId {
    let ws = workspace(h, env).await;
    let mut r = req(&ws, &format!("ok {title} done"));
    r.title = Some(title.to_string());
    let a = h.create(r).await.unwrap();
    let w = h.wait(a.id(), T).await.unwrap();
    assert_eq!(w.agent.status, Status::Idle, "{title}");
    a.id()
}

/// The system items of `id`'s timeline.
async fn system_items(h: &Server, id: AgentId) -> Vec<String> {
    h.timeline(id, 0, 100)
        .await
        .unwrap()
        .into_iter()
        .filter(|i| i.kind == ItemKind::System)
        .map(|i| i.text.to_string())
        .collect()
}

async fn status(h: &Server, id: AgentId) -> Status {
    h.get(id).await.unwrap().status
}

#[tokio::test]
async fn the_agent_closed_for_room_says_why_and_a_shown_agent_is_never_the_one() {
    let env = Env::new();
    let rt = start_two_live(&env).await;
    let h = rt.handle();
    let quiet = idle_agent(&h, &env, "explorer").await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let recent = idle_agent(&h, &env, "reviewer").await;
    // The user looks at "explorer", the one quiet the longest.
    h.set_shown("main", Some(quiet)).await.unwrap();
    let mut rx = h.subscribe();

    let newcomer = idle_agent(&h, &env, "newcomer").await;
    assert_ne!(
        status(&h, quiet).await,
        Status::Closed,
        "the shown agent stays live"
    );
    assert_eq!(
        status(&h, recent).await,
        Status::Closed,
        "the other idle agent made room"
    );
    let said = system_items(&h, recent).await;
    let expected = format!("Closed to make room for 'newcomer' {WHY}");
    assert!(said.contains(&expected), "{said:?}");
    assert!(
        !system_items(&h, quiet)
            .await
            .iter()
            .any(|t| t.contains("make room")),
        "nothing said on the agent that stayed"
    );
    // The windows' status bars hear it too, naming both agents.
    let news = tokio::time::timeout(T, async {
        loop {
            if let Ok(Event::ClosedForRoom { agent_id, message }) = rx.recv().await {
                return (agent_id, message);
            }
        }
    })
    .await
    .expect("a ClosedForRoom event");
    assert_eq!(news.0, recent);
    assert_eq!(
        news.1,
        "Closed 'reviewer' to make room for 'newcomer' (live-agent limit 2)"
    );

    // Both live agents shown (another window shows the newcomer): a new start waits rather
    // than closing either, however long it takes.
    h.set_shown("second", Some(newcomer)).await.unwrap();
    let ws = workspace(&h, &env).await;
    let mut r = req(&ws, "ok late done");
    r.title = Some("late".into());
    let late = h.create(r).await.unwrap().id();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let l = h.get(late).await.unwrap();
    assert_eq!((l.bucket, l.queue_place), (Bucket::Queued, Some(1)));
    assert_ne!(status(&h, quiet).await, Status::Closed);
    assert_ne!(status(&h, newcomer).await, Status::Closed);
    // The second window closes (it shows nothing now): the newcomer makes room at once.
    h.set_shown("second", None).await.unwrap();
    let w = h.wait(late, T).await.unwrap();
    assert_eq!(w.agent.status, Status::Idle, "the waiting start ran");
    assert_eq!(status(&h, newcomer).await, Status::Closed);
    assert_ne!(status(&h, quiet).await, Status::Closed);
    let said = system_items(&h, newcomer).await;
    assert!(
        said.contains(&format!("Closed to make room for 'late' {WHY}")),
        "{said:?}"
    );
    rt.shutdown().await;
}
