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
    // A row stands for its tree: the lead's failed subagent makes it as urgent as the failed
    // beta, and it was active more recently.
    choose(&app, "home-sort", "status").await;
    wait_titles(&app, &["lead", "beta", "alpha"]).await;

    // Only the failed ones (a tree with a failed subagent among them); then a search within all.
    choose(&app, "home-filter", "failed").await;
    wait_titles(&app, &["lead", "beta"]).await;
    assert_eq!(app.text(&tid("home-shown")).await, "2 of 3");
    choose(&app, "home-filter", "running").await;
    wait_titles(&app, &["lead"]).await;
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
    wait_titles(&app, &["lead", "beta", "alpha"]).await;
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

/// One member of an archived batch, restored on its own and read without restoring (SPEC 5):
/// the members list offers Restore per member, which brings back only that agent (closed, in
/// its live parent's track, its failure kept) while the others stay archived; an archived
/// agent opens read-only (its timeline from disk, marked archived, no composer), and its
/// Restore brings it back. `dark`: the same in the dark theme, for the screenshots.
async fn restore_one_member_and_read_one(test: &str, dark: bool) {
    let mut b = crate::common::Harness::builder(test);
    if dark {
        b = b.env("GTK_THEME", "Adwaita:dark");
    }
    let h = b.build();
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("app");
    let kids = [
        kid("lint", "echo clean"),
        kid("docs", "echo 'docs written to README'"),
        kid("deploy", "echo 'no such target' >&2; exit 2"),
    ];
    let fam = family(&app, &dir, &kids, "echo ok").await;
    let (lint, docs, deploy) = (fam.kid("lint"), fam.kid("docs"), fam.kid("deploy"));
    for k in [&lint, &docs] {
        app.wait_for_status(k, "idle").await;
    }
    app.wait_for_status(&deploy, "error").await;
    // Seen, its failure no longer holds it back from "Archive finished".
    app.call_backend("markSeen", vec![json!(deploy)]).await;
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 3).await;
    app.click(&tid("track-archive-finished")).await;
    // Its failure seen, deploy goes too, named as failed (never "finished").
    h.wait_for_window("Archive the subagents that are not running?")
        .await;
    h.wait_for_log("“deploy” (failed)").await;
    h.answer_dialog(
        "Archive the subagents that are not running?",
        crate::common::Answer::Ok,
    )
    .await;
    wait_archived_on_disk(&h, &[&lint, &docs, &deploy], true).await;

    // The members, each with its own Restore; deploy is said to have failed.
    app.click(&tid("archived-toggle")).await;
    let toggle = tid("archived-members-toggle");
    app.wait_for_text(&toggle, |t| t == "+ 2 more").await;
    app.click(&toggle).await;
    app.wait_count(&tid("archived-member-restore"), 3).await;
    let member = |id: &str| format!("[data-testid=\"archived-member\"][data-agent-id=\"{id}\"]");
    let word = app.text(&member(&deploy)).await;
    assert!(word.contains("failed"), "{word}");
    for width in [1200, 900] {
        resize(&h, &app, width, 700).await;
        if !app.is_shown(&tid("archived-members")).await {
            app.click(&toggle).await;
        }
        app.wait_for(&tid("archived-members")).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        app.screenshot(&format!("members-{width}")).await;
    }

    // docs, read-only: its timeline from disk, marked archived, nothing to type into.
    app.click(&format!(
        "[data-testid=\"archived-member-open\"][data-agent-id=\"{docs}\"]"
    ))
    .await;
    let view = format!("[data-testid=\"archived-view\"][data-agent-id=\"{docs}\"]");
    app.wait_for(&view).await;
    app.wait_for_text(&format!("{view} [data-testid=\"timeline\"]"), |t| {
        t.contains("docs written to README")
    })
    .await;
    assert_eq!(
        app.text(&tid("archived-view-tag")).await,
        "archived · read-only"
    );
    assert_eq!(app.count(&tid("composer-input")).await, 0, "no composer");
    assert_eq!(app.count(&tid("agent-pane")).await, 0);
    assert!(archived_on_disk(&h, &docs), "reading it restores nothing");
    assert_eq!(
        app.agent(&docs).await,
        None,
        "reading it does not bring it back into the fleet"
    );
    for width in [1200, 900] {
        resize(&h, &app, width, 700).await;
        app.execute("document.activeElement?.blur()", vec![]).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        app.screenshot(&format!("read-only-{width}")).await;
    }

    // deploy alone: back in the lead's track, closed, its failure kept; the others stay.
    app.click(&toggle).await;
    app.click(&format!(
        "[data-testid=\"archived-member-restore\"][data-agent-id=\"{deploy}\"]"
    ))
    .await;
    wait_archived_on_disk(&h, &[&deploy], false).await;
    assert!(archived_on_disk(&h, &lint) && archived_on_disk(&h, &docs));
    let back = app.wait_for_status(&deploy, "closed").await;
    assert_eq!(back["parentAgentId"], json!(fam.lead_id));
    let detail = app.agent_detail(&deploy).await;
    assert!(
        detail["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("no such target")),
        "{detail}"
    );
    app.wait_for_text(&toggle, |t| t == "+ 1 more").await;

    // docs's own Restore, from the read-only view: the view gives way to the agent.
    app.click(&tid("archived-view-restore")).await;
    wait_archived_on_disk(&h, &[&docs], false).await;
    app.wait_for(&sel_pane(&docs)).await;
    assert_eq!(app.count(&tid("archived-view")).await, 0);
    assert!(archived_on_disk(&h, &lint), "lint is still archived");
    app.wait_for_text(&tid("archived-list"), |t| t.contains("lint"))
        .await;
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 2).await;
    app.wait_for_attr(&sel_row(&deploy), "data-status", "closed")
        .await;
    app.execute("document.activeElement?.blur()", vec![]).await;
    app.screenshot("restored-one").await;
    // Opened (and so resumed), it still says its last turn failed, until a prompt runs.
    row_action(&app, &deploy, "track-open").await;
    app.wait_for(&sel_pane(&deploy)).await;
    app.wait_for_text(&tid("agent-error"), |t| {
        t.starts_with("Its last turn failed") && t.contains("no such target")
    })
    .await;
    app.screenshot("restored-failed").await;
    app.quit().await;
}

#[tokio::test]
async fn an_archived_member_restores_alone_and_opens_read_only() {
    restore_one_member_and_read_one("member_restore", false).await;
}

#[tokio::test]
async fn an_archived_member_restores_alone_and_opens_read_only_in_the_dark() {
    restore_one_member_and_read_one("member_restore_dark", true).await;
}
