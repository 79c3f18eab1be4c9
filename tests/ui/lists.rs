//! Lists that scale for people: the workspace home sorts (activity, name, status), filters by
//! status, searches titles, and rolls each root's subagents up ("4 subagents: 1 failed, 2
//! running"), and the archived list names the members of a batch.

use crate::common::{tid, App, TIMEOUT};
use crate::helpers::*;
use crate::words::resize;
use serde_json::json;

/// The titles the home lists, top to bottom.
async fn home_titles(app: &App) -> Vec<String> {
    let v = app
        .execute(
            "return [...document.querySelectorAll('[data-testid=\"workspace-agent\"]')] \
             .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top) \
             .map(r => r.querySelector('.wa-name').textContent);",
            vec![],
        )
        .await;
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

async fn wait_titles(app: &App, want: &[&str]) {
    let mut last = Vec::new();
    let found = tokio::time::timeout(TIMEOUT, async {
        loop {
            last = home_titles(app).await;
            if last == want {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(found.is_ok(), "the home lists {last:?}, not {want:?}");
}

async fn choose(app: &App, select: &str, value: &str) {
    app.execute(
        "const s = document.querySelector(arguments[0]); s.value = arguments[1]; \
         s.dispatchEvent(new Event('change', {bubbles: true})); return null;",
        vec![json!(tid(select)), json!(value)],
    )
    .await;
}

#[tokio::test]
async fn the_workspace_home_sorts_filters_searches_and_rolls_up_subagents() {
    let (h, app, dir) = start("home_lists").await;
    let beta = app.create_shell(&dir, "beta", "echo no >&2; exit 2").await;
    app.wait_for_status(&id(&beta), "error").await;
    let alpha = app.create_shell(&dir, "alpha", "echo fine").await;
    app.wait_for_status(&id(&alpha), "idle").await;
    let kids = [
        kid("k1", "sleep 300"),
        kid("k2", "sleep 300"),
        kid("k3", "echo bad >&2; exit 3"),
        kid("k4", "echo done"),
    ];
    let fam = family(&app, &dir, &kids, "sleep 300").await;
    app.wait_for_status(&fam.kid("k3"), "error").await;
    app.wait_for_status(&fam.kid("k4"), "idle").await;
    app.click(&sel_ws(ws_id(&fam.lead))).await;
    app.click(&tid("tab-home")).await;
    app.wait_count(&tid("workspace-agent"), 3).await;

    // The roll-up of the lead's subagents, most urgent first.
    let lead_row = format!(
        "[data-testid=\"workspace-agent\"][data-agent-id=\"{}\"] .wa-meta",
        fam.lead_id
    );
    app.wait_for_text(&lead_row, |t| {
        t.contains("4 subagents: 1 failed, 2 running")
    })
    .await;

    // Recent activity first (the default), then by name, then most urgent first.
    wait_titles(&app, &["lead", "alpha", "beta"]).await;
    choose(&app, "home-sort", "name").await;
    wait_titles(&app, &["alpha", "beta", "lead"]).await;
    choose(&app, "home-sort", "status").await;
    wait_titles(&app, &["beta", "lead", "alpha"]).await;

    // Only the failed ones; then a search within all.
    choose(&app, "home-filter", "failed").await;
    wait_titles(&app, &["beta"]).await;
    assert_eq!(app.text(&tid("home-shown")).await, "1 of 3");
    choose(&app, "home-filter", "").await;
    app.type_into(&tid("home-search"), "LPH").await;
    wait_titles(&app, &["alpha"]).await;
    app.type_into(&tid("home-search"), "zzz").await;
    app.wait_for_text(&tid("home-empty"), |t| t == "No agent matches.")
        .await;
    app.execute(
        "const s = document.querySelector('[data-testid=\"home-search\"]'); s.value = ''; \
         s.dispatchEvent(new Event('input', {bubbles: true})); return null;",
        vec![],
    )
    .await;
    wait_titles(&app, &["beta", "lead", "alpha"]).await;
    app.execute("document.activeElement?.blur()", vec![]).await;
    app.screenshot("home-1200").await;
    resize(&h, &app, 900, 700).await;
    app.screenshot("home-900").await;
    app.quit().await;
}

#[tokio::test]
async fn an_archived_batch_lists_its_members() {
    let (h, app, dir) = start("batch_members").await;
    let kids = [
        kid("lint", "echo clean"),
        kid("docs", "echo written"),
        kid("deploy", "echo no >&2; exit 2"),
    ];
    let fam = family(&app, &dir, &kids, "echo ok").await;
    for k in ["lint", "docs"] {
        app.wait_for_status(&fam.kid(k), "idle").await;
    }
    app.wait_for_status(&fam.kid("deploy"), "error").await;
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 3).await;
    app.click(&tid("track-archive-finished")).await;
    h.answer_dialog("Archive finished subagents?", crate::common::Answer::Ok)
        .await;
    wait_archived_on_disk(&h, &[&fam.kid("lint"), &fam.kid("docs")], true).await;
    app.click(&tid("archived-toggle")).await;
    let toggle = tid("archived-members-toggle");
    app.wait_for_text(&toggle, |t| t == "+ 1 more").await;
    app.click(&toggle).await;
    app.wait_count(&tid("archived-member"), 2).await;
    let listed = app.text(&tid("archived-members")).await;
    assert!(
        listed.contains("lint") && listed.contains("docs"),
        "{listed}"
    );
    assert!(
        !listed.contains("deploy"),
        "a failed agent is kept, not archived: {listed}"
    );
    app.screenshot("batch-members").await;
    app.execute("document.activeElement?.blur()", vec![]).await;
    app.quit().await;
}
