//! One meaning of "needs you" (SPEC 7 track header, the status bar): each count is exactly the
//! rows whose word it repeats, "needs you" and "failed" said apart, a count stays while the
//! agent's state does (opening a failed agent does not drop it), and each is a link listing the
//! agents it counts. The words come from the core (paseo-core model/tally.rs).

use crate::anthropic::{AnthropicStandIn, Input, Reply};
use crate::common::{poll, tid, Harness, TIMEOUT};
use crate::helpers::*;
use serde_json::json;

#[tokio::test]
async fn needs_you_and_failed_count_the_rows_that_say_so_and_list_them() {
    counts(Harness::new("counts_ui"), "").await;
    let dark = Harness::builder("counts_ui_dark")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    counts(dark, "-dark").await;
}

async fn counts(h: Harness, theme: &str) {
    // A Claude lead in its default mode (it asks) starts a shell helper: the helper's start is
    // held for the user (its row says "needs you: approve start").
    let api = AnthropicStandIn::start(|req| match req.input() {
        Input::Text(t) if t.contains("spawn a helper") => Reply::tool_use(
            "mcp__paseo__create_agent",
            json!({"provider": "shell", "title": "helper",
                   "initialPrompt": "echo helper-done",
                   "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
        ),
        Input::ToolResult { .. } => Reply::text("started the helper"),
        Input::Text(_) => Reply::text("noted"),
    })
    .await;
    use_claude(&h, &api);
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("repo");
    let ws = app.add_workspace(&dir).await;
    // A root agent that fails.
    let broken = app.create_shell(&dir, "broken", "exit 3").await;
    app.wait_for_status(&id(&broken), "error").await;
    let lead = app
        .create_agent(
            json!({"provider": "claude", "model": "standin-model", "title": "lead",
            "prompt": "spawn a helper, please", "workspaceId": ws["workspaceId"],
            "autoArchive": false}),
        )
        .await;
    let lead_id = id(&lead);
    let helper = wait_children(&app, &lead_id, 1).await.remove(0);
    let helper_id = id(&helper);
    open_root(&app, &lead).await;
    app.wait_for_attr(&sel_row(&helper_id), "data-bucket", "needs_input")
        .await;

    // The track counts its one row that says "needs you"; the status bar says both words.
    app.wait_for_text(&tid("track-counts"), |t| {
        t == "0 running · 1 needs you · 1 total"
    })
    .await;
    app.wait_for_text(&tid("status-line"), |t| {
        t.ends_with("0 running · 1 needs you · 1 failed · 3 total")
    })
    .await;

    // Each count is a link listing the agents it counts.
    let track_link = format!(
        "{} [data-testid=\"count-link\"][data-kind=\"needs_input\"]",
        tid("track-counts")
    );
    app.click(&track_link).await;
    app.wait_for(&tid("count-list")).await;
    assert_eq!(app.count(&tid("count-list-item")).await, 1);
    let item = format!("{} [data-agent-id=\"{helper_id}\"]", tid("count-list"));
    app.wait_for_text(&item, |t| {
        t.contains("helper") && t.contains("needs you: approve start")
    })
    .await;
    app.screenshot(&format!("counts-track-list{theme}")).await;
    app.click(&item).await;
    app.wait_for(&sel_pane(&helper_id)).await;

    let failed_link = format!(
        "{} [data-testid=\"count-link\"][data-kind=\"failed\"]",
        tid("status-line")
    );
    app.click(&failed_link).await;
    let item = format!("{} [data-agent-id=\"{}\"]", tid("count-list"), id(&broken));
    app.wait_for_text(&item, |t| t.contains("broken") && t.contains("failed"))
        .await;
    app.screenshot(&format!("counts-failed-list{theme}")).await;
    app.click(&item).await;
    // Opened, the failed agent is seen, and still failed: the count stays.
    app.wait_for(&sel_pane(&id(&broken))).await;
    app.wait_for_attr(&sel_pane(&id(&broken)), "data-status", "error")
        .await;
    let broken_id = id(&broken);
    poll("the failed agent to be seen", TIMEOUT, || async {
        app.agent(&broken_id)
            .await
            .filter(|a| a["requiresAttention"] != true)
    })
    .await;
    let line = app.text(&tid("status-line")).await;
    assert!(
        line.ends_with("0 running · 1 needs you · 1 failed · 3 total"),
        "{line}"
    );

    // The workspace counts every agent of its trees by the status bar's rule (a subagent that
    // needs you or failed lights its root's workspace): its row says what needs you and what
    // failed, and its home's line agrees with the status bar and lists them.
    let row = sel_ws(ws_id(&ws));
    app.wait_for_text(&format!("{row} .ws-word"), |t| {
        t == "1 needs you · 1 failed"
    })
    .await;
    app.wait_for_attr(&row, "data-status", "needs_input").await;
    app.click(&row).await;
    app.click(&tid("tab-home")).await;
    app.wait_for_text(&tid("workspace-counts"), |t| {
        t == "0 running · 1 needs you · 1 failed · 3 total"
    })
    .await;
    let ws_link = format!(
        "{} [data-testid=\"count-link\"][data-kind=\"failed\"]",
        tid("workspace-counts")
    );
    app.click(&ws_link).await;
    let item = format!("{} [data-agent-id=\"{broken_id}\"]", tid("count-list"));
    app.wait_for(&item).await;
    assert_eq!(app.count(&tid("count-list-item")).await, 1);
    app.screenshot(&format!("counts-workspace{theme}")).await;
    // A second click on its link closes the list.
    app.click(&ws_link).await;
    app.wait_count(&tid("count-list"), 0).await;
    let needs_link = format!(
        "{} [data-testid=\"count-link\"][data-kind=\"needs_input\"]",
        tid("workspace-counts")
    );
    app.click(&needs_link).await;
    let item = format!("{} [data-agent-id=\"{helper_id}\"]", tid("count-list"));
    app.wait_for(&item).await;
    app.click(&needs_link).await;
    app.wait_count(&tid("count-list"), 0).await;

    // The home's filter and search stand for whole trees: "needs you" shows the lead, whose
    // helper needs you (the lead itself is idle); the helper's title finds the lead's row.
    let rows = format!("{} {}", tid("workspace-home"), tid("workspace-agent"));
    let lead_row = format!("[data-testid=\"workspace-agent\"][data-agent-id=\"{lead_id}\"]");
    app.execute(
        &format!(
            "const f = document.querySelector('{}'); f.value = 'needs_input'; \
             f.dispatchEvent(new Event('change'))",
            tid("home-filter")
        ),
        vec![],
    )
    .await;
    app.wait_count(&rows, 1).await;
    app.wait_for(&lead_row).await;
    app.wait_for_text(&tid("home-shown"), |t| t == "1 of 2")
        .await;
    app.screenshot(&format!("counts-home-filter{theme}")).await;
    app.execute(
        &format!(
            "const f = document.querySelector('{}'); f.value = ''; \
             f.dispatchEvent(new Event('change'))",
            tid("home-filter")
        ),
        vec![],
    )
    .await;
    app.wait_count(&rows, 2).await;
    app.type_into(&tid("home-search"), "helper").await;
    app.wait_count(&rows, 1).await;
    app.wait_for(&lead_row).await;
    app.quit().await;
}
