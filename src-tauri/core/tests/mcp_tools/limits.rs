//! SPEC 14 limits: a runaway agent that spawns agents in a loop is stopped by `createPerMinute`
//! and `maxDepth` (a tool error naming the limit; nothing created), and a fleet larger than
//! `maxLiveAgents` waits in a visible queue, oldest first, starting as slots free.

use super::*;
use paseo_core::runtime::limits::Limits;

fn limits(max_live_agents: usize, max_depth: usize, create_per_minute: usize) -> Limits {
    Limits {
        max_live_agents,
        max_depth,
        create_per_minute,
    }
}

async fn spawn(c: &Client, prompt: &str) -> CallToolResult {
    call(
        c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": prompt,
               "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
    )
    .await
}

#[tokio::test]
async fn a_spawning_loop_is_stopped_by_create_per_minute_and_creates_nothing_more() {
    let h = Harness::start_limited(Env::new(), None, limits(50, 8, 5)).await;
    let parent = h.root("ok loop").await;
    let c = h.as_agent(parent.id()).await;
    let mut refused = Vec::new();
    for i in 0..20 {
        let r = spawn(&c, &format!("ok child {i}")).await;
        if r.is_error == Some(true) {
            refused.push(text(&r));
        }
    }
    assert_eq!(
        refused.len(),
        15,
        "5 created, the rest refused: {refused:?}"
    );
    assert!(
        refused[0].contains("limits.createPerMinute is 5"),
        "the error names the limit and its value: {}",
        refused[0]
    );
    assert_eq!(
        h.count(true).await,
        6,
        "the parent and five children, no more"
    );
    // Another agent has its own allowance; the user is not limited.
    let other = h.root("ok other").await;
    let c2 = h.as_agent(other.id()).await;
    assert_ne!(spawn(&c2, "ok mine").await.is_error, Some(true));
    h.root("ok the user's own").await;
    h.stop().await;
}

#[tokio::test]
async fn a_chain_deeper_than_max_depth_is_refused() {
    let h = Harness::start_limited(Env::new(), None, limits(50, 2, 30)).await;
    let root = h.root("ok root").await;
    let c = h.as_agent(root.id()).await;
    let a = id_of(
        &ok(
            &c,
            "create_agent",
            json!({"provider": "script", "initialPrompt": "ok a",
        "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
        )
        .await,
    );
    h.idle(a).await;
    // Detached does not escape the chain: the creator counts.
    let c = h.as_agent(a).await;
    let b = id_of(
        &ok(
            &c,
            "create_agent",
            json!({"provider": "script", "initialPrompt": "ok b",
        "relationship": {"kind": "detached"}, "workspace": {"kind": "current"}}),
        )
        .await,
    );
    h.idle(b).await;
    let c = h.as_agent(b).await;
    let before = h.count(true).await;
    let e = err(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok c",
        "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
    )
    .await;
    assert!(e.contains("limits.maxDepth is 2"), "{e}");
    assert_eq!(h.count(true).await, before, "nothing created");
    h.stop().await;
}

#[tokio::test]
async fn agents_beyond_max_live_agents_wait_visibly_and_start_oldest_first() {
    let h = Harness::start_limited(Env::new(), None, limits(2, 8, 30)).await;
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(h.root("hang").await.id());
    }
    let running = |s: &AgentSnapshot| s.status == Status::Running;
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let a = h.h().get(ids[0]).await.unwrap();
        let b = h.h().get(ids[1]).await.unwrap();
        if running(&a) && running(&b) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "first two never ran"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for id in &ids[2..] {
        let s = h.h().get(*id).await.unwrap();
        assert_eq!(s.status, Status::Initializing);
        assert_eq!(s.waiting_for_slot, Some(2), "shown as waiting for a slot");
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["waitingForSlot"], 2);
    }
    assert_eq!(h.env.log.lock().unwrap().starts.len(), 2, "two processes");
    // A slot frees: the oldest waiting agent starts, the other keeps waiting.
    h.h().stop(ids[0]).await.unwrap();
    let deadline = tokio::time::Instant::now() + T;
    while !running(&h.h().get(ids[2]).await.unwrap()) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the oldest never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let s = h.h().get(ids[2]).await.unwrap();
    assert_eq!(s.waiting_for_slot, None);
    assert_eq!(h.h().get(ids[3]).await.unwrap().waiting_for_slot, Some(2));
    // Archiving a waiting agent takes it out of the queue; the last one runs when a slot frees.
    h.h().archive(ids[3]).await.unwrap();
    h.h().stop(ids[1]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let starts: Vec<AgentId> = h
        .env
        .log
        .lock()
        .unwrap()
        .starts
        .iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(
        starts,
        vec![ids[0], ids[1], ids[2]],
        "oldest first, the archived one never"
    );
    h.stop().await;
}

#[tokio::test]
async fn idle_agents_make_room_for_waiting_starts_and_resume_when_used() {
    let h = Harness::start_limited(Env::new(), None, limits(2, 8, 30)).await;
    let quiet = h.root("ok first").await.id();
    let recent = h.root("ok second").await.id();
    // Both idle with live sessions: the third start closes the one quiet the longest.
    let third = h.root("ok third").await.id();
    let s = h.h().get(quiet).await.unwrap();
    assert_eq!(
        s.status,
        Status::Closed,
        "the quietest idle agent made room"
    );
    assert_ne!(h.h().get(recent).await.unwrap().status, Status::Closed);
    assert_eq!(h.h().get(third).await.unwrap().waiting_for_slot, None);
    // Used again, it resumes (and another idle one makes room).
    h.h()
        .prompt(
            quiet,
            "ok back".into(),
            paseo_core::model::TurnOrigin::User,
            None,
        )
        .await
        .unwrap();
    h.idle(quiet).await;
    h.stop().await;
}
