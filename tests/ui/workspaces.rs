//! Workspace activity: running subagents lift their root agent's workspace (wherever they
//! work), failed ones do not, and opening the root marks its finished turn seen.

use crate::helpers::*;
use serde_json::json;

#[tokio::test]
async fn workspace_status_subagents_light_their_roots_workspace_as_the_status_bar_counts_them() {
    let (_h, app, home_dir) = start("workspace_status").await;
    // Both subagents work in another workspace; they count in the workspace of their root
    // agent, as the status bar counts them (one rule, model/status.rs tree_bucket). A folder
    // inside the lead's own, so the lead reaches it and its subagents run at once (one outside
    // would be held for the user, SPEC 14).
    let other_dir = home_dir.join("elsewhere");
    std::fs::create_dir_all(&other_dir).unwrap();
    let runner = Kid {
        directory: Some(other_dir.clone()),
        ..kid("runner", "sleep 300")
    };
    let failer = Kid {
        directory: Some(other_dir.clone()),
        ..kid("failer", "echo failing >&2; exit 3")
    };
    let fam = family(&app, &home_dir, &[runner, failer], "echo ok").await;
    let (runner, failer) = (fam.kid("runner"), fam.kid("failer"));
    app.wait_for_status(&fam.lead_id, "idle").await;
    app.wait_for_status(&failer, "error").await;
    app.wait_for_status(&runner, "running").await;
    let home_ws = ws_id(&fam.lead);
    let other_ws = ws_id(by_title(&fam.kids, "runner"));
    assert_ne!(home_ws, other_ws);

    // The root's workspace shows the failure (the most urgent of what its tree shows) and says
    // both words; the subagents' own workspace shows nothing.
    app.wait_for_attr(&sel_ws(home_ws), "data-status", "failed")
        .await;
    app.wait_for_attr(&sel_ws(other_ws), "data-status", "none")
        .await;
    app.wait_for_text(&sel_ws(home_ws), |t| t.contains("1 failed"))
        .await;
    let title = app
        .execute(
            "return document.querySelector(arguments[0]).getAttribute('title')",
            vec![json!(sel_ws(home_ws))],
        )
        .await;
    assert!(
        title.as_str().unwrap_or("").contains("1 running"),
        "{title}"
    );
    app.screenshot("workspace-running").await;

    // Once the running subagent stops, the failure still shows; once the failed subagent is
    // archived, the root's own state does: its finished, unseen turn, then, seen, done.
    app.call_backend("cancelAgent", vec![json!(runner)]).await;
    app.wait_for_attr(&sel_ws(home_ws), "data-status", "failed")
        .await;
    app.call_backend("archiveAgent", vec![json!(failer)]).await;
    app.wait_for_attr(&sel_ws(home_ws), "data-status", "attention")
        .await;
    app.wait_for_attr(&sel_ws(other_ws), "data-status", "none")
        .await;
    // Opening the root marks it seen: the workspace is done.
    open_root(&app, &fam.lead).await;
    app.wait_for_attr(&sel_ws(home_ws), "data-status", "done")
        .await;
    app.quit().await;
}
