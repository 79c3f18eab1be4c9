//! SPEC 14 limits: a runaway agent that spawns agents in a loop is stopped by `createPerMinute`
//! and `maxDepth` (a tool error naming the limit; nothing created), and a fleet larger than
//! `maxLiveAgents` waits in a visible queue, oldest first, starting as slots free.

use super::*;
use crate::support::Door;
use paseo_core::config::Limits;
use paseo_core::runtime::Caller;

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
    h.h().archive(Caller::User, ids[3]).await.unwrap();
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
    // Each idle before the next starts, so which one has been quiet the longest does not
    // depend on which first turn happens to end first.
    let quiet = h.root("ok first").await.id();
    h.idle(quiet).await;
    let recent = h.root("ok second").await.id();
    h.idle(recent).await;
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
        .prompt(Caller::User, quiet, "ok back".into(), None, None)
        .await
        .unwrap();
    h.idle(quiet).await;
    h.stop().await;
}

/// What a refused create must not leave: worktrees and branches of `repo`, and the workspaces
/// the app has registered.
async fn made(h: &Harness, repo: &std::path::Path) -> (String, String, usize) {
    let out = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let workspaces = h.h().snapshot().await.unwrap().workspaces.len();
    (
        out(&["worktree", "list", "--porcelain"]),
        out(&["branch", "--list"]),
        workspaces,
    )
}

/// SPEC 14: `create_worktree` counts against `createPerMinute` like `create_agent` (one
/// counter per calling agent), and a refused call makes no worktree, branch or workspace.
#[tokio::test]
async fn create_worktree_is_counted_by_create_per_minute_and_a_refusal_makes_nothing() {
    let h = Harness::start_limited(Env::new(), None, limits(50, 8, 3)).await;
    let r = repo(&h);
    let lead = h.root("ok lead").await;
    let c = h.as_agent(lead.id()).await;
    let worktree = |branch: &str| {
        json!({"repo": r.display().to_string(),
               "target": {"kind": "branch-off", "newBranch": branch, "base": "main"}})
    };
    // Two worktrees and one agent: the three this minute allows.
    ok(&c, "create_worktree", worktree("wt/1")).await;
    ok(&c, "create_worktree", worktree("wt/2")).await;
    assert_ne!(spawn(&c, "ok kid").await.is_error, Some(true));
    let before = made(&h, &r).await;
    let e = err(&c, "create_worktree", worktree("wt/over")).await;
    assert!(e.contains("limits.createPerMinute is 3"), "{e}");
    // create_agent in a new worktree is refused before git runs.
    let e = err(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok over",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "worktree",
                   "repo": r.display().to_string(),
                   "target": {"kind": "branch-off", "newBranch": "wt/over-agent"}}}}),
    )
    .await;
    assert!(e.contains("limits.createPerMinute is 3"), "{e}");
    let after = made(&h, &r).await;
    assert_eq!(before, after, "nothing made by the refused calls");
    assert!(!after.1.contains("wt/over"), "{}", after.1);
    // The user is not limited.
    let u = h.user().await;
    ok(&u, "create_worktree", worktree("wt/user")).await;
    h.stop().await;
}

/// SPEC 14: a create over `maxDepth` into a new directory workspace registers nothing (the
/// limits are checked before the directory is).
#[tokio::test]
async fn a_create_over_max_depth_registers_no_directory_workspace() {
    let h = Harness::start_limited(Env::new(), None, limits(50, 1, 30)).await;
    let root = h.root("ok root").await;
    let c = h.as_agent(root.id()).await;
    let kid = id_of(
        &ok(
            &c,
            "create_agent",
            json!({"provider": "script", "initialPrompt": "ok a",
        "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
        )
        .await,
    );
    h.idle(kid).await;
    let c = h.as_agent(kid).await;
    let dir = h.env.work.join("elsewhere");
    std::fs::create_dir_all(&dir).unwrap();
    let before = h.h().snapshot().await.unwrap().workspaces.len();
    let e = err(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok deep",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "directory",
                   "path": dir.display().to_string()}}}),
    )
    .await;
    assert!(e.contains("limits.maxDepth is 1"), "{e}");
    let snap = h.h().snapshot().await.unwrap();
    assert_eq!(snap.workspaces.len(), before, "no workspace registered");
    assert!(
        !snap
            .workspaces
            .iter()
            .any(|w| w.record.cwd.contains("elsewhere")),
        "{:?}",
        snap.workspaces
    );
    h.stop().await;
}
