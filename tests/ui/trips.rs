//! What a new user tripped over in a day of use (UX review 2026-12-07), each in the real webview:
//! a click at the centre of a tab selects it, and a neighbour that slides under a pointer that
//! did not move is not archived by the next click; a merge refused because another agent works
//! in the base checkout says so, in words and until dismissed; the Changes view is kept per
//! agent; a held agent's composer says what to do and the Allow/Deny panel stays put; a denied
//! start reads "denied", not "failed"; long names and a narrow window keep the header whole.

use crate::common::{poll, tid, TIMEOUT};
use crate::helpers::*;
use fantoccini::key::Key;
use serde_json::Value;
use std::time::Duration;

/// The tab's element at the viewport point, as the page hit-tests it: its agent and whether the
/// point is on its ×.
async fn hit(app: &crate::common::App, (x, y): (f64, f64)) -> Value {
    app.execute(
        "const el = document.elementFromPoint(arguments[0], arguments[1]); \
         const tab = el && el.closest('[data-testid=\"tab\"]'); \
         return {agent: tab ? tab.dataset.agentId : null, \
                 close: !!(el && el.closest('[data-testid=\"tab-close\"]'))};",
        vec![x.into(), y.into()],
    )
    .await
}

#[tokio::test]
async fn a_tabs_centre_selects_it_and_a_neighbour_sliding_under_a_still_pointer_is_not_archived() {
    let (h, app, dir) = start("trip_tabs").await;
    let mut agents = Vec::new();
    // Short titles: where the × sat right after the title, it covered the tab's centre.
    for title in ["lead", "docs", "build"] {
        let a = app.create_shell(&dir, title, "echo done").await;
        app.wait_for_status(&id(&a), "idle").await;
        agents.push(a);
    }
    for a in &agents {
        open_root(&app, a).await;
    }
    app.wait_count(&tid("tab"), 3).await;
    // The centre of every tab is the tab, never its ×; a click there selects it.
    for a in &agents {
        let at = app.centre_of(&sel_tab(&id(a))).await;
        let what = hit(&app, at).await;
        assert_eq!(what["agent"], id(a).as_str(), "{what}");
        assert_eq!(
            what["close"], false,
            "the centre of {} is its ×",
            a["title"]
        );
        app.click_at(at.0, at.1).await;
        app.wait_for_attr(&sel_tab(&id(a)), "aria-selected", "true")
            .await;
    }
    app.screenshot("trip-tabs").await;

    // Close "lead" with its ×; "docs" slides into its place, its × under the pointer.
    let (a, bb) = (id(&agents[0]), id(&agents[1]));
    app.click(&sel_tab(&a)).await;
    app.wait_for_attr(&sel_tab(&a), "aria-selected", "true")
        .await;
    let x = app.centre_of(&sel_tab_close(&a)).await;
    app.click_at(x.0, x.1).await;
    wait_archived_on_disk(&h, &[&a], true).await;
    app.wait_count(&tid("tab"), 2).await;
    let now = hit(&app, x).await;
    assert_eq!(now["agent"], bb.as_str(), "the neighbour slid in: {now}");
    // The same click again, the pointer not moved (a double click, a habit): nothing happens.
    app.click_at(x.0, x.1).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!archived_on_disk(&h, &bb), "the neighbour was archived");
    app.wait_count(&tid("tab"), 2).await;
    // Moved away and back, the pointer aims again: that click is the user's.
    app.click_at(x.0 - 60.0, x.1).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let x = app.centre_of(&sel_tab_close(&bb)).await;
    app.click_at(x.0, x.1).await;
    wait_archived_on_disk(&h, &[&bb], true).await;
    app.quit().await;
}

#[tokio::test]
async fn a_merge_refusal_stays_in_words_and_changes_is_kept_per_agent() {
    let (h, app, _) = start("trip_merge").await;
    let repo = h.work_dir("webshop");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "shop\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "start"]);
    // The lead keeps a turn running in the main checkout (where main is); its subagent works
    // and commits in a worktree of its own.
    let mut feature = kid(
        "discount feature",
        "echo off > discount.txt && git add discount.txt && \
         git -c user.name=t -c user.email=t@example.com commit -qm discount && echo done",
    );
    feature.worktree = Some((repo.clone(), "feat/discount".into()));
    let fam = family(&app, &repo, &[feature], "sleep 300").await;
    let kid_id = fam.kid("discount feature");
    app.wait_for_status(&kid_id, "idle").await;
    open_root(&app, &fam.lead).await;
    app.click(&format!("{} {}", sel_row(&kid_id), tid("track-open")))
        .await;
    let pane = sel_pane(&kid_id);
    app.wait_for(&pane).await;
    app.click(&format!("{pane} {}", tid("changes-toggle")))
        .await;
    app.wait_count(&tid("changes-file"), 1).await;

    // Merge: refused before any confirm, in words (the lead by name, no id), and it stays
    // through the view's reloads until dismissed.
    app.click(&tid("changes-merge")).await;
    let said = app
        .wait_for_text(&tid("changes-action-error"), |t| t.contains("waits"))
        .await;
    assert!(
        said.contains("Merge into main waits: “lead” has a turn running in"),
        "{said}"
    );
    assert!(!said.contains(&fam.lead_id), "no raw id: {said}");
    app.screenshot("trip-merge-refused").await;
    app.click(&tid("changes-refresh")).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        app.is_shown(&tid("changes-action-error")).await,
        "it went away by itself"
    );
    assert_eq!(
        git(&repo, &["ls-tree", "--name-only", "main"]).trim(),
        "README"
    );
    app.click(&tid("changes-action-error-dismiss")).await;
    poll("the message to go", TIMEOUT, || async {
        (!app.is_shown(&tid("changes-action-error")).await).then_some(())
    })
    .await;

    // Changes belongs to the agent it was opened on: the lead opens on its timeline, and the
    // subagent comes back in Changes.
    app.click(&format!("{pane} {}", tid("parent-link"))).await;
    let lead_pane = sel_pane(&fam.lead_id);
    app.wait_for(&lead_pane).await;
    poll("the lead's timeline", TIMEOUT, || async {
        (!app.is_shown(&tid("changes-view")).await).then_some(())
    })
    .await;
    app.wait_for_attr(
        &format!("{lead_pane} {}", tid("changes-toggle")),
        "aria-pressed",
        "false",
    )
    .await;
    app.click(&sel_tab(&kid_id)).await;
    app.wait_for(&pane).await;
    app.wait_for_attr(
        &format!("{pane} {}", tid("changes-toggle")),
        "aria-pressed",
        "true",
    )
    .await;
    app.wait_count(&tid("changes-file"), 1).await;
    app.quit().await;
}

#[tokio::test]
async fn a_held_agents_composer_says_what_to_do_and_a_denied_start_is_not_a_failure() {
    let (h, app, dir) = start("trip_held").await;
    // A subagent in a folder outside its parent's: its start is held for the user (SPEC 14).
    let elsewhere = h.work_dir("elsewhere");
    let mut outsider = kid("outsider", "touch ran-marker");
    outsider.directory = Some(elsewhere.clone());
    let fam = family(&app, &dir, &[outsider], "echo lead-done").await;
    let kid_id = fam.kid("outsider");
    open_root(&app, &fam.lead).await;
    let row = sel_row(&kid_id);
    app.wait_for_attr(&row, "data-bucket", "needs_input").await;
    app.click(&format!("{row} {}", tid("track-open"))).await;
    let pane = sel_pane(&kid_id);
    app.wait_for(&format!("{pane} {}", tid("permission-allow")))
        .await;

    // The composer says, in words, that its start waits for the user: before anything is typed.
    let note = app
        .wait_for_text(&tid("composer-held"), |t| !t.is_empty())
        .await;
    assert!(
        note.contains("outsider waits for you to allow its start"),
        "{note}"
    );
    let deny = format!("{pane} {}", tid("permission-deny"));
    let before = app.centre_of(&deny).await;
    app.type_into(&tid("composer-input"), &format!("echo hi{}", Key::Enter))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Nothing sent, nothing moved, no error with an id; the draft is kept.
    assert_eq!(
        app.centre_of(&deny).await,
        before,
        "the Allow/Deny panel moved"
    );
    assert_eq!(app.text(&tid("composer-error")).await, "");
    let draft = app.prop(&tid("composer-input"), "value").await;
    assert_eq!(draft, "echo hi");
    app.screenshot("trip-held-composer").await;

    // Deny: the agent reads "denied", grey; nothing counts it as failed.
    app.click_at(before.0, before.1).await;
    app.wait_for_text(&format!("{pane} {}", tid("agent-status")), |t| {
        t == "denied"
    })
    .await;
    app.wait_for_attr(&pane, "data-bucket", "done").await;
    let line = app
        .wait_for_text(&tid("status-line"), |t| t.contains("0 need you"))
        .await;
    assert!(!line.contains("failed"), "{line}");
    assert!(!elsewhere.join("ran-marker").exists(), "a denied start ran");
    app.screenshot("trip-denied").await;
    // Its parent's track says the same word.
    app.click(&format!("{pane} {}", tid("parent-link"))).await;
    app.wait_for_text(&format!("{row} .row-status"), |t| t == "denied")
        .await;
    app.quit().await;
}

#[tokio::test]
async fn long_names_wrap_in_the_home_header_and_a_narrow_header_keeps_budget() {
    long_names(crate::common::Harness::new("trip_long_names"), "").await;
    let dark = crate::common::Harness::builder("trip_long_names_dark")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    long_names(dark, "-dark").await;
}

async fn long_names(h: crate::common::Harness, theme: &str) {
    let app = h.launch_ready(&[]).await;
    let repo = h.work_dir("pay");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "pay\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "start"]);
    let mut k = kid(
        "payment pipeline refactor with retries and idempotency keys",
        "echo ok",
    );
    k.worktree = Some((
        repo.clone(),
        "feature/very-long-branch-name-for-the-payment-pipeline-retries".into(),
    ));
    let fam = family(&app, &repo, &[k], "echo lead").await;
    let kid_id = fam.kid("payment pipeline refactor with retries and idempotency keys");
    let kid = app.wait_for_status(&kid_id, "idle").await;
    for width in [1000, 1400] {
        resize_window(&h, &app, width).await;
        app.click(&sel_ws(ws_id(&kid))).await;
        app.click(&tid("tab-home")).await;
        app.wait_for(&tid("workspace-home")).await;
        // The name wraps over the header's width (a line or two), and the branch never runs
        // under the buttons.
        let layout = app
            .execute(
                "const t = document.querySelector('[data-testid=\"workspace-name\"]').getBoundingClientRect(); \
                 const b = document.querySelector('.ws-branch').getBoundingClientRect(); \
                 const a = document.querySelector('.ws-home-actions').getBoundingClientRect(); \
                 const lh = parseFloat(getComputedStyle(document.querySelector('[data-testid=\"workspace-name\"]')).lineHeight) || 20; \
                 return {lines: Math.round(t.height / lh), branchRight: b.right, actionsLeft: a.left, \
                         branchShown: b.width > 0};",
                vec![],
            )
            .await;
        assert!(
            layout["lines"].as_f64().unwrap() <= 3.0,
            "{width}: {layout}"
        );
        assert!(
            layout["branchRight"].as_f64().unwrap() <= layout["actionsLeft"].as_f64().unwrap(),
            "{width}: the branch runs under the buttons: {layout}"
        );
        app.screenshot(&format!("trip-long-home-{width}{theme}"))
            .await;
        // The agent header keeps Budget… inside the window.
        open_root(&app, &fam.lead).await;
        let budget = app
            .execute(
                "const b = document.querySelector('[data-testid=\"budget-open\"]'); \
                 const r = b.getBoundingClientRect(); return [r.right, innerWidth, r.width];",
                vec![],
            )
            .await;
        assert!(
            budget[0].as_f64().unwrap() <= budget[1].as_f64().unwrap()
                && budget[2].as_f64().unwrap() > 0.0,
            "{width}: Budget… is clipped: {budget}"
        );
        app.screenshot(&format!("trip-long-header-{width}{theme}"))
            .await;
    }
    app.quit().await;
}
