//! Every tool once, end to end, as a lead agent uses them: create (directory and worktree
//! workspaces), create_worktree, send_agent_prompt, wait_for_agent, get_agent, list_agents,
//! cancel_agent and archive_agent.

use super::*;
use crate::support::Door;
use paseo_core::runtime::ExistingWorkspace;

#[tokio::test]
async fn every_tool_works_end_to_end() {
    let h = Harness::start().await;
    // Unconfined with full power: it reaches every directory, so nothing here is held.
    let lead = h.root_as("ok lead", true).await;
    let c = h.as_agent(lead.id()).await;
    let r = repo(&h);

    // create_agent: detached, in a new directory workspace, model inherited from nobody.
    let dir = h.env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&dir).unwrap();
    let det = ok(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok detached done",
               "relationship": {"kind": "detached"},
               "workspace": {"kind": "create", "source": {"kind": "directory", "path": dir.display().to_string()}},
               "model": "m-1"}),
    )
    .await;
    let det_id = id_of(&det);
    assert_ne!(det["workspaceId"], h.ws.to_string());
    assert!(det.get("parentAgentId").is_none());
    let snap = h.h().get(det_id).await.unwrap();
    assert_eq!(snap.parent_agent_id, None);
    assert_eq!(snap.record.created_by, Some(lead.id()));
    assert_eq!(snap.record.config.model.as_deref(), Some("m-1"));

    // wait_for_agent: the first turn's result.
    let w = ok(
        &c,
        "wait_for_agent",
        json!({"agentId": det_id.to_string(), "timeoutSeconds": 10}),
    )
    .await;
    assert_eq!(w["status"], "idle");
    assert_eq!(w["lastMessage"], "detached done");
    assert_eq!(w["timedOut"], false);

    // create_agent in a new worktree (repo given), then create_worktree with the default repo.
    let wt = ok(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok in worktree",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "worktree", "repo": r.display().to_string(),
                   "target": {"kind": "branch-off", "newBranch": "feat/a"}}}}),
    )
    .await;
    let wt_cwd = wt["cwd"].as_str().unwrap().to_string();
    assert!(
        wt_cwd.starts_with(&h.env.home().join("worktrees").display().to_string()),
        "{wt_cwd}"
    );
    assert!(std::path::Path::new(&wt_cwd).join(".git").exists());
    let wt_id: WorkspaceId = wt["workspaceId"].as_str().unwrap().parse().unwrap();
    let ws_rec = h
        .h()
        .snapshot()
        .await
        .unwrap()
        .workspaces
        .into_iter()
        .find(|w| w.record.workspace_id == wt_id)
        .unwrap()
        .record;
    assert_eq!(ws_rec.branch.as_deref(), Some("feat/a"));
    assert_eq!(ws_rec.created_by_agent_id, Some(lead.id()));

    let repo_agent = h
        .h()
        .create({
            let mut r2 = CreateAgent::new(
                "script",
                WorkspaceTarget::Existing(ExistingWorkspace {
                    id: h.ws.clone(),
                    cwd: Some(r.display().to_string()),
                }),
            );
            r2.initial_prompt = Some("ok in repo".into());
            r2
        })
        .await
        .unwrap();
    h.idle(repo_agent.id()).await;
    let rc = h.as_agent(repo_agent.id()).await;
    let made = ok(
        &rc,
        "create_worktree",
        json!({"target": {"kind": "branch-off", "newBranch": "feat/b", "base": "main"}}),
    )
    .await;
    assert_eq!(made["branch"], "feat/b");
    assert!(std::path::Path::new(made["cwd"].as_str().unwrap()).is_dir());
    git(&r, &["branch", "feat/c"]);
    let made = ok(
        &rc,
        "create_worktree",
        json!({"repo": r.display().to_string(), "target": {"kind": "checkout-branch", "branch": "feat/c"}}),
    )
    .await;
    assert_eq!(made["branch"], "feat/c");

    // send_agent_prompt: background (default for agents) then foreground.
    let kid = id_of(&wt);
    h.idle(kid).await;
    let s = ok(
        &c,
        "send_agent_prompt",
        json!({"agentId": kid.to_string(), "prompt": "ok again"}),
    )
    .await;
    assert_eq!(s["background"], true);
    assert!(s.get("lastMessage").is_none());
    h.idle(kid).await;
    assert_eq!(
        h.h().get(kid).await.unwrap().record.last_message.as_deref(),
        Some("again")
    );
    let s = ok(
        &c,
        "send_agent_prompt",
        json!({"agentId": kid.to_string(), "prompt": "ok in the foreground", "background": false}),
    )
    .await;
    assert_eq!(s["background"], false);
    assert_eq!(s["status"], "idle");
    assert_eq!(s["lastMessage"], "in the foreground");
    assert_eq!(s["timedOut"], false);

    // get_agent and list_agents.
    let g = ok(&c, "get_agent", json!({"agentId": kid.to_string()})).await;
    assert_eq!(g["id"], kid.to_string());
    assert_eq!(g["parentAgentId"], lead.id().to_string());
    assert_eq!(g["status"], "idle");
    assert!(g["archivedAt"].is_null());
    assert_eq!(g["labels"][PARENT_LABEL], lead.id().to_string());
    let l = ok(
        &c,
        "list_agents",
        json!({"parentAgentId": lead.id().to_string()}),
    )
    .await;
    assert_eq!(l["total"], 1);
    assert_eq!(l["agents"][0]["id"], kid.to_string());
    // Nothing twice, a flag only when set: the parent is `parentAgentId`, not also a label.
    assert_eq!(l["agents"][0]["parentAgentId"], lead.id().to_string());
    assert!(l["agents"][0].get("labels").is_none(), "{l}");
    assert!(l["agents"][0].get("needsYou").is_none(), "{l}");
    // Its folder is its workspace's, said once in `cwds`.
    assert!(l["agents"][0].get("cwd").is_none(), "{l}");
    let ws = l["agents"][0]["workspaceId"].as_str().unwrap();
    assert_eq!(l["cwds"][ws], g["cwd"], "{l}");
    let l = ok(&c, "list_agents", json!({})).await;
    assert_eq!(l["total"], 4);
    let l = ok(&c, "list_agents", json!({"limit": 2})).await;
    assert_eq!(l["total"], 4);
    assert_eq!(l["agents"].as_array().unwrap().len(), 2);
    assert_eq!(l["agents"][0]["id"], lead.id().to_string(), "oldest first");
    let l = ok(
        &c,
        "list_agents",
        json!({"workspaceId": det["workspaceId"]}),
    )
    .await;
    assert_eq!(l["total"], 1);
    let l = ok(&c, "list_agents", json!({"statuses": ["running", "error"]})).await;
    assert_eq!(l["total"], 0);
    // By labels: every one named must match (a schedule's runs are found so, SPEC 20).
    let parent = lead.id().to_string();
    let l = ok(&c, "list_agents", json!({"labels": {PARENT_LABEL: parent}})).await;
    assert_eq!(l["total"], 1);
    assert_eq!(l["agents"][0]["id"], kid.to_string());
    let l = ok(
        &c,
        "list_agents",
        json!({"labels": {PARENT_LABEL: parent, "schedule": "nightly"}}),
    )
    .await;
    assert_eq!(l["total"], 0);

    // wait_for_agent times out on a long turn; cancel_agent ends it.
    ok(
        &c,
        "send_agent_prompt",
        json!({"agentId": kid.to_string(), "prompt": "hang", "notifyOnFinish": false}),
    )
    .await;
    let w = ok(
        &c,
        "wait_for_agent",
        json!({"agentId": kid.to_string(), "timeoutSeconds": 0.2}),
    )
    .await;
    assert_eq!(w["timedOut"], true);
    assert_eq!(w["status"], "running");
    let l = ok(&c, "list_agents", json!({"statuses": ["running"]})).await;
    assert_eq!(l["total"], 1);
    let x = ok(&c, "cancel_agent", json!({"agentId": kid.to_string()})).await;
    assert_eq!(x["status"], "idle");

    // archive_agent: the cascade, durable; detached agents stay.
    let a = ok(
        &c,
        "archive_agent",
        json!({"agentId": lead.id().to_string()}),
    )
    .await;
    let archived: BTreeSet<String> = a["archived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        archived,
        BTreeSet::from([lead.id().to_string(), kid.to_string()])
    );
    let k = h.h().get(kid).await.unwrap();
    let disk: Value = serde_json::from_slice(
        &std::fs::read(h.h().layout().record_path(&k.record.cwd, kid)).unwrap(),
    )
    .unwrap();
    assert!(disk["archivedAt"].is_string());
    assert!(h
        .h()
        .get(det_id)
        .await
        .unwrap()
        .record
        .archived_at
        .is_none());
    // Archived agents show only on request.
    let u = h.user().await;
    let l = ok(&u, "list_agents", json!({"includeArchived": true})).await;
    assert_eq!(l["total"], 4);
    let l = ok(&u, "list_agents", json!({})).await;
    assert_eq!(l["total"], 2);
    // Archiving again is idempotent.
    let a = ok(&u, "archive_agent", json!({"agentId": kid.to_string()})).await;
    assert_eq!(a["archived"], json!([]));
    h.stop().await;
}
