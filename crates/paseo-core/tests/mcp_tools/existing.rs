//! `create_agent` with `workspace: {kind: "existing", workspaceId}` (SPEC 8): a script with the
//! user token reuses one workspace instead of making one per call; an agent may name only a
//! workspace inside its own reach (SPEC 14), and a refusal names the field and creates nothing.

use super::*;
use crate::support::Door;

fn in_existing(provider: &str, ws: &str, prompt: &str) -> Value {
    json!({"provider": provider, "initialPrompt": prompt,
           "relationship": {"kind": "detached"},
           "workspace": {"kind": "existing", "workspaceId": ws}})
}

async fn workspace_count(h: &Harness) -> usize {
    h.h().snapshot().await.unwrap().workspaces.len()
}

#[tokio::test]
async fn the_user_token_reuses_an_existing_workspace() {
    let h = Harness::start().await;
    let user = h.user().await;
    let before = workspace_count(&h).await;
    let ws = h.ws.to_string();
    for prompt in ["ok one", "ok two"] {
        let out = ok(&user, "create_agent", in_existing("script", &ws, prompt)).await;
        assert_eq!(out["workspaceId"], ws.as_str(), "{out}");
        assert_eq!(out["cwd"], h.env.work.display().to_string(), "{out}");
        h.idle(id_of(&out)).await;
    }
    assert_eq!(workspace_count(&h).await, before, "no workspace per call");

    // Bad ids: named by their field, nothing created.
    let agents = h.count(true).await;
    let msg = err(
        &user,
        "create_agent",
        in_existing("script", "no-such-ws", "ok x"),
    )
    .await;
    assert!(msg.contains("workspace.workspaceId"), "{msg}");
    let msg = err(
        &user,
        "create_agent",
        in_existing("script", "../etc", "ok x"),
    )
    .await;
    assert!(msg.contains("workspace.workspaceId"), "{msg}");
    let msg = err(
        &user,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok x",
               "relationship": {"kind": "detached"}, "workspace": {"kind": "existing"}}),
    )
    .await;
    assert!(msg.contains("workspace.workspaceId"), "{msg}");
    assert_eq!(h.count(true).await, agents);
    h.stop().await;
}

#[tokio::test]
async fn an_agent_names_only_a_workspace_inside_its_reach() {
    let h = Harness::start().await;
    let other = h.env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let outside = h
        .h()
        .add_workspace(other.display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id
        .to_string();
    let root = h.root("ok ready").await;
    let c = h.as_agent(root.id()).await;

    // Its own workspace: fine, not held.
    let out = ok(
        &c,
        "create_agent",
        in_existing("script", h.ws.as_str(), "ok mine"),
    )
    .await;
    assert_eq!(out["workspaceId"], h.ws.to_string());
    h.idle(id_of(&out)).await;

    // A workspace outside the directory it may write: refused, nothing created.
    let agents = h.count(true).await;
    let msg = err(
        &c,
        "create_agent",
        in_existing("script", &outside, "ok theirs"),
    )
    .await;
    assert!(
        msg.contains("workspace.workspaceId") && msg.contains("outside the calling agent's reach"),
        "{msg}"
    );
    assert_eq!(h.count(true).await, agents, "nothing created");
    h.stop().await;
}
