//! SPEC 14 over MCP, the reach half of power: an agent cannot start, through the app, an agent
//! that works where it may not write (its cwd outside the caller's tree, however the path is
//! spelled), that runs unconfined while it is contained, or whose provider the user launches
//! without permission checks. Such a turn is held for the user like a wider mode; equal reach
//! (a subdirectory, a worktree of the caller's own repository) never is.

use super::powers::{create_child, held, made_by_user, ran, settle};
use super::*;
use crate::support::Door;
use paseo_core::model::{HoldReason, Power};

/// `create_agent` as `c`, a subagent of `provider` in a new directory workspace at `path`.
async fn create_in(c: &Client, provider: &str, path: &str, prompt: &str) -> CallToolResult {
    call(
        c,
        "create_agent",
        json!({"provider": provider, "initialPrompt": prompt,
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "directory", "path": path}}}),
    )
    .await
}

/// The held request's reasons, by kind.
fn kinds(s: &AgentSnapshot) -> Vec<&'static str> {
    let h = s.record.held_turn.as_ref().expect("a held turn");
    h.reasons()
        .iter()
        .map(|r| match r {
            HoldReason::WiderMode => "mode",
            HoldReason::OutsideReach { .. } => "reach",
            HoldReason::Unconfined => "unconfined",
        })
        .collect()
}

#[tokio::test]
async fn an_equal_child_outside_the_callers_cwd_is_held_however_the_path_is_spelled() {
    let h = Harness::start().await;
    let asker = made_by_user(&h, "asker", None).await;
    assert_eq!(asker.power, Power::Asks);
    let c = h.as_agent(asker.id()).await;
    let work = h.env.work.clone();
    // A `$HOME`-like directory beside the caller's project, reached directly, through `..`, and
    // through a symlink the caller could have planted in its own tree; `/`, and the data root.
    let home = h.env.dir.path().join("home-u");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::os::unix::fs::symlink(&home, work.join("to-home")).unwrap();
    let data_root = h.env.home();
    let paths = [
        home.display().to_string(),
        format!("{}/../home-u", work.display()),
        work.join("to-home").display().to_string(),
        "/".to_string(),
        data_root.display().to_string(),
    ];
    for (i, path) in paths.iter().enumerate() {
        let prompt = format!("ok read the keys {i}");
        let r = create_in(&c, "asker", path, &prompt).await;
        assert_ne!(r.is_error, Some(true), "{path}: {}", text(&r));
        assert!(
            text(&r).contains("The turn is held"),
            "{path}: {}",
            text(&r)
        );
        assert!(text(&r).contains("outside the directory you may write"));
        let kid = id_of(&r.structured_content.clone().unwrap());
        let s = held(&h, kid).await;
        // Same provider, same mode: only the reach is more.
        assert_eq!(s.power, Power::Asks);
        assert_eq!(kinds(&s), ["reach"], "{path}");
        let req = s.pending_permission.clone().unwrap();
        let cwd = s.record.cwd.to_string();
        assert_eq!(req.input["cwd"], cwd.as_str());
        let why = req.description.clone().unwrap();
        assert!(
            why.contains(&cwd) && why.contains(&work.display().to_string()),
            "the request names both paths: {why}"
        );
        assert_eq!(
            req.input["reasons"][0]["callerCwd"],
            work.display().to_string()
        );
        settle().await;
        assert!(
            !ran(&h, kid, &prompt),
            "{path}: nothing of a held turn runs"
        );
    }

    // Allowed once, the child's next prompt from the same caller is held again: it still
    // works outside the caller's reach.
    let kid = id_of(
        &create_in(&c, "asker", &home.display().to_string(), "ok first")
            .await
            .structured_content
            .unwrap(),
    );
    let req = held(&h, kid).await.pending_permission.unwrap();
    h.h()
        .answer_permission(kid, req.request_id, true)
        .await
        .unwrap();
    h.idle(kid).await;
    assert!(ran(&h, kid, "first"));
    let r = call(
        &c,
        "send_agent_prompt",
        json!({"agentId": kid.to_string(), "prompt": "ok second"}),
    )
    .await;
    assert!(text(&r).contains("The turn is held"), "{}", text(&r));
    assert_eq!(kinds(&held(&h, kid).await), ["reach"]);
    settle().await;
    assert!(!ran(&h, kid, "second"));
    h.stop().await;
}

#[tokio::test]
async fn an_equal_child_inside_the_callers_cwd_or_its_own_repository_is_not_held() {
    let h = Harness::start().await;
    let asker = made_by_user(&h, "asker", None).await;
    let c = h.as_agent(asker.id()).await;
    // Its own workspace, a subdirectory of its cwd given as a new directory workspace, and the
    // same through `current` with a cwd.
    let sub = h.env.work.join("pkg/sub");
    std::fs::create_dir_all(&sub).unwrap();
    let kid = create_child(&c, "asker", "ok where I am").await;
    h.idle(kid).await;
    assert!(ran(&h, kid, "where I am"));
    let r = create_in(&c, "asker", &sub.display().to_string(), "ok in a subdir").await;
    assert!(!text(&r).contains("held"), "{}", text(&r));
    let kid = id_of(&r.structured_content.unwrap());
    h.idle(kid).await;
    assert!(ran(&h, kid, "in a subdir"));
    let out = ok(
        &c,
        "create_agent",
        json!({"provider": "asker", "initialPrompt": "ok current sub",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "current", "cwd": sub.display().to_string()}}),
    )
    .await;
    h.idle(id_of(&out)).await;
    assert!(ran(&h, id_of(&out), "current sub"));

    // An asking agent working in a repository: a worktree of that repository is its own reach
    // (the same git common dir), a worktree of another repository is not.
    let r = repo(&h);
    let mut req = CreateAgent::new("asker", WorkspaceTarget::directory(r.display().to_string()));
    req.initial_prompt = Some("ok in the repo".into());
    let in_repo = h.h().create(req).await.unwrap();
    h.idle(in_repo.id()).await;
    let c = h.as_agent(in_repo.id()).await;
    let out = ok(
        &c,
        "create_agent",
        json!({"provider": "asker", "initialPrompt": "ok in my worktree",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "worktree",
                   "target": {"kind": "branch-off", "newBranch": "feat/mine"}}}}),
    )
    .await;
    let kid = id_of(&out);
    let s = h.idle(kid).await;
    assert!(s.record.held_turn.is_none());
    assert!(!s.record.cwd.starts_with(r.display().to_string().as_str()));
    assert!(ran(&h, kid, "in my worktree"));

    let other = h.env.dir.path().join("dotfiles");
    std::fs::create_dir_all(&other).unwrap();
    git(&other, &["init", "-q", "-b", "main"]);
    git(&other, &["commit", "-q", "--allow-empty", "-m", "init"]);
    // Another repository is not its to branch (SPEC 16b): refused before git makes anything.
    let e = err(
        &c,
        "create_agent",
        json!({"provider": "asker", "initialPrompt": "ok in their worktree",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "worktree",
                   "repo": other.display().to_string(),
                   "target": {"kind": "branch-off", "newBranch": "feat/theirs"}}}}),
    )
    .await;
    assert!(
        e.starts_with("workspace.source.repo:") && e.contains("outside the calling agent's reach"),
        "{e}"
    );
    assert!(git(&other, &["branch", "--list", "feat/theirs"])
        .trim()
        .is_empty());
    h.stop().await;
}

#[tokio::test]
async fn a_contained_agent_asking_for_an_unconfined_one_is_held() {
    let h = Harness::start().await;
    let asker = made_by_user(&h, "asker", None).await;
    let c = h.as_agent(asker.id()).await;
    let r = call(
        &c,
        "create_agent",
        json!({"provider": "asker", "initialPrompt": "ok outside the box",
               "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"},
               "unconfined": true}),
    )
    .await;
    assert!(text(&r).contains("runs unconfined"), "{}", text(&r));
    let kid = id_of(&r.structured_content.unwrap());
    let s = held(&h, kid).await;
    assert!(s.record.config.unconfined);
    assert_eq!(kinds(&s), ["unconfined"]);
    let req = s.pending_permission.unwrap();
    assert_eq!(req.tool_name, "Run an unconfined asker agent");
    assert!(req.description.unwrap().contains("unconfined"));
    settle().await;
    assert!(!ran(&h, kid, "outside the box"));

    // Even a full-power contained caller cannot start an unconfined equal.
    let full = h.root("ok full").await;
    let c = h.as_agent(full.id()).await;
    let r = call(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok free",
               "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"},
               "unconfined": true}),
    )
    .await;
    let kid = id_of(&r.structured_content.unwrap());
    assert_eq!(kinds(&held(&h, kid).await), ["unconfined"]);
    // An unconfined full-power caller asking for its equal, anywhere, is not held.
    let free = h.root_as("ok free lead", true).await;
    let c = h.as_agent(free.id()).await;
    let elsewhere = h.env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = ok(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok equal",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "directory",
                   "path": elsewhere.display().to_string()}},
               "unconfined": true}),
    )
    .await;
    h.idle(id_of(&out)).await;
    assert!(ran(&h, id_of(&out), "equal"));
    h.stop().await;
}

#[tokio::test]
async fn a_provider_launched_without_permission_checks_is_full_and_held() {
    let h = Harness::start().await;
    let asker = made_by_user(&h, "asker", None).await;
    let c = h.as_agent(asker.id()).await;
    let r = call(
        &c,
        "create_agent",
        json!({"provider": "claude-yolo", "initialPrompt": "ok yolo",
               "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
    )
    .await;
    assert!(text(&r).contains("acts without asking"), "{}", text(&r));
    let kid = id_of(&r.structured_content.unwrap());
    let s = held(&h, kid).await;
    // A Claude Code agent with no mode, which would ask, but for its provider's command.
    assert_eq!(s.record.config.mode, None);
    assert_eq!(s.power, Power::Full);
    assert_eq!(kinds(&s), ["mode"]);
    settle().await;
    assert!(!ran(&h, kid, "yolo"));
    h.stop().await;
}

#[tokio::test]
async fn the_data_root_is_outside_every_callers_reach_even_inside_its_cwd() {
    let h = Harness::start().await;
    // An asking agent the user started in a directory that holds the data root (as `$HOME`
    // holds `~/.paseo`).
    let above = h.env.dir.path().canonicalize().unwrap();
    assert!(h.env.home().starts_with(h.env.dir.path()));
    let mut req = CreateAgent::new(
        "asker",
        WorkspaceTarget::directory(above.display().to_string()),
    );
    req.initial_prompt = Some("ok up here".into());
    let asker = h.h().create(req).await.unwrap();
    h.idle(asker.id()).await;
    let c = h.as_agent(asker.id()).await;
    // Its own tree is its reach...
    let r = create_in(&c, "asker", &h.env.work.display().to_string(), "ok below").await;
    assert!(!text(&r).contains("held"), "{}", text(&r));
    // ...but not the data root in it: the agents' records, tokens and config live there.
    let r = create_in(
        &c,
        "asker",
        &h.env.home().display().to_string(),
        "ok records",
    )
    .await;
    assert!(text(&r).contains("The turn is held"), "{}", text(&r));
    let kid = id_of(&r.structured_content.unwrap());
    assert_eq!(kinds(&held(&h, kid).await), ["reach"]);
    settle().await;
    assert!(!ran(&h, kid, "records"));
    h.stop().await;
}
