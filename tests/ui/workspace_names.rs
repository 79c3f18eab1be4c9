//! Workspaces that share a directory are told apart (SPEC 1 `name`): one made for an agent is
//! named after it, unnamed ones read "app · 2"; the user renames one in place (kept in
//! workspaces.json) and removes one, which archives its agents after a confirm that counts them.

use crate::common::{mcp_call, tid, Answer};
use crate::helpers::*;
use fantoccini::key::Key;
use serde_json::{json, Value};

fn registry_name(h: &crate::common::Harness, ws: &str) -> Value {
    let path = h.home().join("projects/workspaces.json");
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["workspaceId"] == ws)
        .map(|w| w.get("name").cloned().unwrap_or(Value::Null))
        .unwrap_or_else(|| panic!("no workspace {ws} in the registry"))
}

async fn wait_name_on_disk(h: &crate::common::Harness, ws: &str, name: Value) {
    crate::common::poll("the name on disk", crate::common::TIMEOUT, || {
        let got = registry_name(h, ws);
        let want = name.clone();
        async move { (got == want).then_some(()) }
    })
    .await
}

async fn rename(app: &crate::common::App, ws: &str, to: &str) {
    app.click(&sel_ws(ws)).await;
    app.click(&tid("tab-home")).await;
    app.click(&tid("workspace-rename")).await;
    let input = tid("workspace-name-input");
    app.wait_for(&input).await;
    app.execute(
        "document.querySelector(arguments[0]).value = ''",
        vec![json!(input)],
    )
    .await;
    app.type_into(&input, &format!("{to}{}", Key::Enter)).await;
}

#[tokio::test]
async fn workspaces_sharing_a_directory_are_named_renamed_and_removed() {
    let (h, app, dir) = start("workspace_names").await;
    h.wait_for_mcp().await;
    let make = |title: &str| {
        mcp_call(
            h.home(),
            "create_agent",
            json!({"provider": "shell", "title": title, "initialPrompt": "echo hi",
                   "relationship": {"kind": "detached"},
                   "workspace": {"kind": "create", "source": {"kind": "directory", "path": dir}}}),
        )
    };
    let a = make("docs review");
    let b = make("lint");
    let (ws1, ws2) = (
        a["workspaceId"].as_str().unwrap().to_string(),
        b["workspaceId"].as_str().unwrap().to_string(),
    );
    assert_ne!(ws1, ws2);
    // The user token reuses one of them: no third workspace.
    let c = mcp_call(
        h.home(),
        "create_agent",
        json!({"provider": "shell", "title": "tests", "initialPrompt": "echo hi",
               "relationship": {"kind": "detached"},
               "workspace": {"kind": "existing", "workspaceId": ws2}}),
    );
    assert_eq!(c["workspaceId"], json!(ws2));

    // Named after the agents they were made for.
    app.wait_for_text(&sel_ws(&ws1), |t| t.contains("docs review"))
        .await;
    app.wait_for_text(&sel_ws(&ws2), |t| t.contains("lint"))
        .await;
    assert_eq!(registry_name(&h, &ws1), json!("docs review"));
    app.wait_count(&tid("workspace-row"), 2).await;

    // Rename in place: the sidebar, the home page and the registry follow.
    rename(&app, &ws2, "api checks").await;
    app.wait_for_text(&sel_ws(&ws2), |t| t.contains("api checks"))
        .await;
    app.wait_for_text(&tid("workspace-name"), |t| t == "api checks")
        .await;
    wait_name_on_disk(&h, &ws2, json!("api checks")).await;
    app.screenshot("renamed").await;

    // Esc leaves the name as it was.
    app.click(&tid("workspace-rename")).await;
    app.type_into(&tid("workspace-name-input"), &format!("zzz{}", Key::Escape))
        .await;
    app.wait_for_text(&tid("workspace-name"), |t| t == "api checks")
        .await;

    // Names cleared: the two read "app" and "app · 2", oldest first.
    rename(&app, &ws2, "").await;
    wait_name_on_disk(&h, &ws2, Value::Null).await;
    rename(&app, &ws1, "").await;
    wait_name_on_disk(&h, &ws1, Value::Null).await;
    app.wait_for_text(&sel_ws(&ws2), |t| t.contains("app · 2"))
        .await;
    let first = app.text(&format!("{} .ws-name", sel_ws(&ws1))).await;
    assert_eq!(first, "app");

    // Remove: the confirm counts the agents; Cancel changes nothing, Remove archives them.
    app.click(&sel_ws(&ws2)).await;
    app.click(&tid("tab-home")).await;
    app.click(&tid("workspace-remove")).await;
    h.wait_for_window("Remove workspace?").await;
    h.screenshot_screen("remove-dialog");
    h.answer_dialog("Remove workspace?", Answer::Cancel).await;
    assert_eq!(app.count(&sel_ws(&ws2)).await, 1);
    let agent_id = |v: &Value| v["agentId"].as_str().unwrap().to_string();
    let (lint, tests) = (agent_id(&b), agent_id(&c));
    assert!(!archived_on_disk(&h, &lint));
    app.click(&tid("workspace-remove")).await;
    h.answer_dialog("Remove workspace?", Answer::Ok).await;
    wait_archived_on_disk(&h, &[&lint, &tests], true).await;
    app.wait_count(&sel_ws(&ws2), 0).await;
    assert!(!archived_on_disk(&h, &agent_id(&a)));
    app.wait_count(&tid("workspace-row"), 1).await;
    app.quit().await;
}

/// The confirm's words, as the gesture makes them: how many agents go and how many run.
#[tokio::test]
async fn removing_a_workspace_counts_its_agents() {
    let (_h, app, dir) = start("workspace_remove_counts").await;
    let lead = app.create_shell(&dir, "lead", "sleep 300").await;
    app.wait_for_status(&id(&lead), "running").await;
    let reach = app
        .call_ui(
            "/gestures/workspaces.js",
            "workspaceReach",
            vec![json!(ws_id(&lead))],
        )
        .await;
    assert_eq!(reach, json!({"total": 1, "running": 1}));
    app.quit().await;
}
