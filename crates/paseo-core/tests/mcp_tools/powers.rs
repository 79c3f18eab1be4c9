//! SPEC 14 over MCP: an agent that asks before it acts cannot start, through the app, a turn
//! that would run without asking. Its call returns as usual, the turn waits behind a permission
//! request on the agent that would run it, and nothing of it runs before the user allows it.

use super::*;
use crate::support::Door;
use paseo_core::model::Power;
use paseo_core::providers::TurnInput;

/// A root agent of `provider` the user made, idle after `ok ready`.
pub(super) async fn made_by_user(h: &Harness, provider: &str, mode: Option<&str>) -> AgentSnapshot {
    let mut r = CreateAgent::new(provider, WorkspaceTarget::existing(h.ws.clone()));
    r.initial_prompt = Some("ok ready".into());
    r.mode = mode.map(str::to_string);
    let a = h.h().create(r).await.unwrap();
    h.idle(a.id()).await;
    a
}

/// Whether `agent`'s session was ever given a prompt containing `text`.
pub(super) fn ran(h: &Harness, agent: AgentId, text: &str) -> bool {
    h.env
        .log
        .lock()
        .unwrap()
        .inputs
        .iter()
        .any(|(a, i)| *a == agent && matches!(i, TurnInput::Prompt(p) if p.contains(text)))
}

/// The finish notices `parent` was given about `kid`.
pub(super) fn notices(h: &Harness, parent: AgentId, kid: AgentId) -> Vec<String> {
    h.env
        .log
        .lock()
        .unwrap()
        .inputs
        .iter()
        .filter_map(|(a, i)| match i {
            TurnInput::Notice(t) if *a == parent && t.contains(&kid.to_string()) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

/// Waits until `id` shows a held turn; returns its snapshot.
pub(super) async fn held(h: &Harness, id: AgentId) -> AgentSnapshot {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let s = h.h().get(id).await.unwrap();
        if s.record.held_turn.is_some() && s.needs_you {
            return s;
        }
        assert!(tokio::time::Instant::now() < deadline, "{id} never held");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub(super) async fn create_child(c: &Client, provider: &str, prompt: &str) -> AgentId {
    let args = json!({
        "provider": provider,
        "initialPrompt": prompt,
        "relationship": {"kind": "subagent"},
        "workspace": {"kind": "current"}
    });
    id_of(&ok(c, "create_agent", args).await)
}

pub(super) async fn settle() {
    // Long enough for a turn that was wrongly let through to reach the scripted session.
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn an_asking_agent_cannot_start_a_full_turn_until_the_user_allows_it() {
    let h = Harness::start().await;
    let parent = made_by_user(&h, "asker", None).await;
    assert_eq!(parent.power, Power::Asks);
    let c = h.as_agent(parent.id()).await;

    // The call answers at once, saying so; the full-power child holds its first turn.
    let r = call(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok kid ran",
               "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
    )
    .await;
    assert!(text(&r).contains("The turn is held"), "{}", text(&r));
    let kid = id_of(&r.structured_content.clone().unwrap());
    let s = held(&h, kid).await;
    settle().await;
    assert!(!ran(&h, kid, "kid ran"), "nothing of a held turn runs");
    assert_eq!(s.power, Power::Full);
    let req = s.pending_permission.clone().expect("a permission request");
    assert!(req.is_held_start());
    let shown = serde_json::to_string(&req.input).unwrap();
    for what in ["script", &s.record.cwd, "ok kid ran"] {
        assert!(shown.contains(what), "the request shows {what}: {shown}");
    }
    // The parent's track shows it: the child needs the user.
    let p = h.h().get(parent.id()).await.unwrap();
    assert_eq!(p.status, Status::Idle, "the caller is not blocked");

    // Allow: the turn runs, as the caller's, and the caller hears when it ends.
    h.h()
        .answer_permission(kid, req.request_id.clone(), true)
        .await
        .unwrap();
    h.idle(kid).await;
    assert!(ran(&h, kid, "kid ran"));
    let deadline = tokio::time::Instant::now() + T;
    while notices(&h, parent.id(), kid).is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no finish notice");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A second answer to the same request changes nothing.
    assert!(h
        .h()
        .answer_permission(kid, req.request_id, true)
        .await
        .is_err());

    // A follow-up prompt to a full agent is held the same way.
    // Foreground or not, the call answers at once and says the turn is held.
    let r = call(
        &c,
        "send_agent_prompt",
        json!({"agentId": kid.to_string(), "prompt": "ok second turn"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert!(text(&r).contains("The turn is held"), "{}", text(&r));
    let s = held(&h, kid).await;
    settle().await;
    assert!(!ran(&h, kid, "second turn"));
    let req = s.pending_permission.unwrap();
    h.h()
        .answer_permission(kid, req.request_id, true)
        .await
        .unwrap();
    h.idle(kid).await;
    assert!(ran(&h, kid, "second turn"));
    h.stop().await;
}

#[tokio::test]
async fn a_denied_held_turn_errors_and_the_caller_hears_it_once() {
    let h = Harness::start().await;
    let parent = made_by_user(&h, "asker", None).await;
    let c = h.as_agent(parent.id()).await;
    let kid = create_child(&c, "script", "ok must not run").await;
    let req = held(&h, kid).await.pending_permission.unwrap();
    h.h()
        .answer_permission(kid, req.request_id, false)
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + T;
    while notices(&h, parent.id(), kid).is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no finish notice");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    settle().await;
    let s = h.h().get(kid).await.unwrap();
    assert_eq!(s.status, Status::Error);
    assert_eq!(
        s.record.last_error.as_deref(),
        Some(paseo_core::engine::DENIED)
    );
    assert!(!ran(&h, kid, "must not run"));
    let n = notices(&h, parent.id(), kid);
    assert_eq!(n.len(), 1, "exactly one notice: {n:?}");
    assert!(n[0].contains("denied by the user"), "{}", n[0]);
    h.stop().await;
}

#[tokio::test]
async fn equal_or_lesser_power_and_the_user_are_never_held() {
    let h = Harness::start().await;
    // Asks → asks: not held.
    let asker = made_by_user(&h, "asker", None).await;
    let c = h.as_agent(asker.id()).await;
    let same = create_child(&c, "asker", "ok same power").await;
    h.idle(same).await;
    assert!(ran(&h, same, "same power"));
    // Full (bypassPermissions) → full: not held.
    let bypass = made_by_user(&h, "asker", Some("bypassPermissions")).await;
    assert_eq!(bypass.power, Power::Full);
    let c = h.as_agent(bypass.id()).await;
    let kid = create_child(&c, "script", "ok full to full").await;
    h.idle(kid).await;
    assert!(ran(&h, kid, "full to full"));
    // Full → asks: lesser, not held.
    let lesser = create_child(&c, "asker", "ok lesser").await;
    h.idle(lesser).await;
    assert!(ran(&h, lesser, "lesser"));
    // The user's token is the user: never held.
    let u = h.user().await;
    let out = ok(
        &u,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok by the user",
               "relationship": {"kind": "detached"},
               "workspace": {"kind": "create", "source": {"kind": "directory",
                   "path": h.env.work.display().to_string()}}}),
    )
    .await;
    let mine = id_of(&out);
    h.idle(mine).await;
    assert!(ran(&h, mine, "by the user"));
    h.stop().await;
}

#[tokio::test]
async fn a_held_turn_survives_a_restart_still_answerable() {
    let h = Harness::start().await;
    let parent = made_by_user(&h, "asker", None).await;
    let c = h.as_agent(parent.id()).await;
    let kid = create_child(&c, "script", "ok after restart").await;
    let before = held(&h, kid).await.pending_permission.unwrap();
    drop(c);
    let env = h.stop().await;

    let h = Harness::start_on(env, None).await;
    let s = held(&h, kid).await;
    let req = s.pending_permission.unwrap();
    assert_eq!(req.request_id, before.request_id);
    settle().await;
    assert!(!ran(&h, kid, "after restart"));
    h.h()
        .answer_permission(kid, req.request_id, true)
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + T;
    while !ran(&h, kid, "after restart") {
        assert!(tokio::time::Instant::now() < deadline, "never ran");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    h.stop().await;
}

/// Waits until `parent` has been given `n` notices about `kid`, then a while longer for any
/// extra one; returns them all.
async fn notices_after(h: &Harness, parent: AgentId, kid: AgentId, n: usize) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + T;
    while notices(h, parent, kid).len() < n {
        assert!(tokio::time::Instant::now() < deadline, "no finish notice");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    settle().await;
    notices(h, parent, kid)
}

#[tokio::test]
async fn a_restart_tells_the_caller_nothing_until_the_held_turn_really_ends() {
    // SPEC 4: a held turn never ran, so no restart interrupted it; its caller hears the real
    // outcome, once, when the user answers.
    let h = Harness::start().await;
    let parent = made_by_user(&h, "asker", None).await;
    let c = h.as_agent(parent.id()).await;
    let kid = create_child(&c, "script", "ok held over a restart").await;
    held(&h, kid).await;
    drop(c);
    let env = h.stop().await;

    let h = Harness::start_on(env, None).await;
    let s = held(&h, kid).await;
    settle().await;
    assert_eq!(notices(&h, parent.id(), kid), Vec::<String>::new());
    assert_eq!(s.record.last_error, None);
    let req = s.pending_permission.unwrap();
    h.h()
        .answer_permission(kid, req.request_id, false)
        .await
        .unwrap();
    let n = notices_after(&h, parent.id(), kid, 1).await;
    assert_eq!(n.len(), 1, "exactly one notice: {n:?}");
    assert!(n[0].contains("denied by the user"), "{}", n[0]);
    assert!(!n[0].contains("interrupted"), "{}", n[0]);
    assert!(!ran(&h, kid, "held over a restart"));
    h.stop().await;
}

#[tokio::test]
async fn cancel_agent_ends_a_held_turn_and_its_caller_hears_it_once() {
    let h = Harness::start().await;
    let parent = made_by_user(&h, "asker", None).await;
    let c = h.as_agent(parent.id()).await;
    let kid = create_child(&c, "script", "ok never to run").await;
    held(&h, kid).await;
    let out = ok(&c, "cancel_agent", json!({"agentId": kid.to_string()})).await;
    // It never had a session (nothing of a held start runs, its CLI included): closed.
    assert_eq!(out["status"], "closed", "{out}");
    let s = h.h().get(kid).await.unwrap();
    assert!(s.record.held_turn.is_none() && s.pending_permission.is_none());
    assert!(!s.needs_you);
    let n = notices_after(&h, parent.id(), kid, 1).await;
    assert_eq!(n.len(), 1, "exactly one notice: {n:?}");
    assert!(n[0].contains("canceled"), "{}", n[0]);
    assert!(!ran(&h, kid, "never to run"));
    // It takes prompts again (at the caller's power, held again).
    let r = call(
        &c,
        "send_agent_prompt",
        json!({"agentId": kid.to_string(), "prompt": "ok next"}),
    )
    .await;
    assert!(text(&r).contains("The turn is held"), "{}", text(&r));
    h.stop().await;
}

#[tokio::test]
async fn archiving_a_held_child_tells_its_caller_it_was_archived() {
    let h = Harness::start().await;
    let parent = made_by_user(&h, "asker", None).await;
    let c = h.as_agent(parent.id()).await;
    let kid = create_child(&c, "script", "ok never archived").await;
    held(&h, kid).await;
    ok(&c, "archive_agent", json!({"agentId": kid.to_string()})).await;
    let n = notices_after(&h, parent.id(), kid, 1).await;
    assert_eq!(n.len(), 1, "exactly one notice: {n:?}");
    assert!(n[0].contains("archived"), "{}", n[0]);
    assert!(!ran(&h, kid, "never archived"));
    h.stop().await;
}
