//! Undo for the soft gestures: closing a root agent's tab, Detach, a track archive and "Archive
//! finished" each show a toast whose Undo puts back exactly what the gesture changed (on disk
//! too); the toast goes after its time and answers the keyboard. A root agent's tab × looks
//! unlike a subagent's, as it archives.

use crate::common::{poll, tid, Answer, Harness, TIMEOUT};
use crate::helpers::*;
use fantoccini::key::Key;
use serde_json::json;
use std::time::Duration;

const PARENT: &str = "paseo.parent-agent-id";

fn toast_says(text: &str) -> impl Fn(&str) -> bool + '_ {
    move |t| t.contains(text)
}

async fn wait_toast_gone(app: &crate::common::App) {
    app.wait_for_attr(&tid("toast"), "data-state", "hidden")
        .await;
    assert!(!app.is_shown(&tid("toast")).await);
}

/// The agent ids of this window's tabs, in order.
async fn tab_order(app: &crate::common::App) -> Vec<String> {
    let ids = app
        .execute(
            "return [...document.querySelectorAll('[data-testid=\"tab\"]')].map((t) => t.dataset.agentId)",
            vec![],
        )
        .await;
    serde_json::from_value(ids).unwrap_or_default()
}

/// Whether the × of `id`'s tab is the archiving kind.
async fn close_archives(app: &crate::common::App, id: &str) -> bool {
    let script =
        "return document.querySelector(arguments[0])?.classList.contains('archives') ?? null";
    let v = app.execute(script, vec![json!(sel_tab_close(id))]).await;
    assert!(v.is_boolean(), "no × for {id}");
    v == json!(true)
}

#[tokio::test]
async fn each_soft_gesture_is_undone_by_its_toast() {
    let (h, app, dir) = start("undo_soft_gestures").await;
    let kids = [
        kid("done-1", "echo one"),
        kid("done-2", "echo two"),
        kid("loner", "sleep 300"),
    ];
    let fam = family(&app, &dir, &kids, "echo ok").await;
    let lead_id = fam.lead_id.clone();
    let (done1, done2, loner) = (fam.kid("done-1"), fam.kid("done-2"), fam.kid("loner"));
    for k in [&done1, &done2, &lead_id] {
        app.wait_for_status(k, "idle").await;
    }
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 3).await;
    app.wait_for_attr(&sel_row(&loner), "data-status", "running")
        .await;

    // Detach, then Undo: back in its parent's track, the parent label back on disk, still
    // running (nothing was stopped either way).
    row_action(&app, &loner, "track-detach").await;
    app.wait_count(&tid("track-row"), 2).await;
    app.wait_for_text(
        &tid("toast-text"),
        toast_says("“loner” is now a root agent"),
    )
    .await;
    app.screenshot("detach-toast").await;
    app.click(&tid("toast-undo")).await;
    app.wait_count(&tid("track-row"), 3).await;
    wait_toast_gone(&app).await;
    let back = app.agent(&loner).await.unwrap();
    assert_eq!(back["parentAgentId"], json!(lead_id), "{back}");
    assert_eq!(back["status"], json!("running"), "{back}");
    poll("the parent label back on disk", TIMEOUT, || async {
        (h.agent_record(&loner)["labels"][PARENT] == json!(lead_id)).then_some(())
    })
    .await;

    // The track's ×: asks, archives; Undo restores it into the same track.
    row_action(&app, &done1, "track-archive").await;
    h.answer_dialog("Archive subagent?", Answer::Ok).await;
    wait_archived_on_disk(&h, &[&done1], true).await;
    app.wait_for_text(&tid("toast-text"), toast_says("“done-1” archived"))
        .await;
    app.click(&tid("toast-undo")).await;
    wait_archived_on_disk(&h, &[&done1], false).await;
    app.wait_for(&sel_row(&done1)).await;
    assert_eq!(h.agent_record(&done1)["labels"][PARENT], json!(lead_id));
    wait_toast_gone(&app).await;

    // "Archive finished": one batch; Undo brings the whole batch back.
    app.click(&tid("track-archive-finished")).await;
    h.answer_dialog("Archive finished subagents?", Answer::Ok)
        .await;
    wait_archived_on_disk(&h, &[&done1, &done2], true).await;
    app.wait_count(&tid("track-row"), 1).await;
    app.wait_for_text(
        &tid("toast-text"),
        toast_says("2 subagents of “lead” archived"),
    )
    .await;
    app.click(&tid("toast-undo")).await;
    wait_archived_on_disk(&h, &[&done1, &done2], false).await;
    app.wait_count(&tid("track-row"), 3).await;
    wait_toast_gone(&app).await;

    // A root agent's × is the archiving kind, a subagent's is not.
    row_action(&app, &done2, "track-open").await;
    app.wait_for(&sel_tab(&done2)).await;
    assert!(
        close_archives(&app, &lead_id).await,
        "the root's × archives"
    );
    assert!(
        !close_archives(&app, &done2).await,
        "a subagent's × only closes"
    );
    assert_eq!(
        app.prop(&sel_tab_close(&lead_id), "title").await,
        json!("Close and archive (Ctrl+W)")
    );

    // Closing the root's tab archives it and its subagents (their tabs close too); Undo
    // restores the batch and reopens both tabs where they were, the root's active.
    assert_eq!(tab_order(&app).await, vec![lead_id.clone(), done2.clone()]);
    click_tab_close(&app, &lead_id).await;
    h.answer_dialog("Archive agent with running subagents?", Answer::Ok)
        .await;
    wait_archived_on_disk(&h, &[&lead_id, &done1, &done2, &loner], true).await;
    app.wait_count(&tid("tab"), 0).await;
    app.wait_for_text(
        &tid("toast-text"),
        toast_says("“lead” archived with 3 subagents"),
    )
    .await;
    // The window repaints the home page under it first; let that frame land.
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.screenshot("archive-toast").await;
    app.click(&tid("toast-undo")).await;
    wait_archived_on_disk(&h, &[&lead_id, &done1, &done2, &loner], false).await;
    poll("both tabs back in order", TIMEOUT, || async {
        (tab_order(&app).await == vec![lead_id.clone(), done2.clone()]).then_some(())
    })
    .await;
    app.wait_for_attr(&sel_tab(&lead_id), "aria-selected", "true")
        .await;
    app.wait_for(&sel_pane(&lead_id)).await;
    app.wait_count(&tid("track-row"), 3).await;
    for k in [&done1, &done2, &loner] {
        assert_eq!(h.agent_record(k)["labels"][PARENT], json!(lead_id));
    }
    app.quit().await;
}

/// The toast in the dark theme: it goes by itself after about ten seconds; the keyboard
/// reaches it (Enter on its focused Undo, or Ctrl+Z from outside a text field); its role lets
/// screen readers announce it.
#[tokio::test]
async fn the_undo_toast_times_out_and_answers_the_keyboard() {
    let h = Harness::builder("undo_toast_keyboard")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    let dir = h.work_dir("app");
    let app = h.launch_ready(&[]).await;
    let a = app.create_shell(&dir, "docs review", "echo first").await;
    let b = app.create_shell(&dir, "notes", "echo second").await;
    let (a_id, b_id) = (id(&a), id(&b));
    app.wait_for_status(&a_id, "idle").await;
    app.wait_for_status(&b_id, "idle").await;
    open_root(&app, &a).await;

    // An idle root agent's tab closes without a dialog: the toast is the only word of it.
    app.click(&sel_tab_close(&a_id)).await;
    wait_archived_on_disk(&h, &[&a_id], true).await;
    app.wait_for_text(&tid("toast-text"), toast_says("“docs review” archived"))
        .await;
    let role = app
        .execute(
            "return document.querySelector('[data-testid=\"toast\"]').getAttribute('role')",
            vec![],
        )
        .await;
    assert_eq!(role, json!("status"));
    app.screenshot("toast-dark").await;
    // Left alone, it goes by itself (about ten seconds), and the agent stays archived.
    tokio::time::sleep(Duration::from_secs(8)).await;
    assert!(app.is_shown(&tid("toast")).await, "gone too early");
    poll("the toast to go", Duration::from_secs(10), || async {
        (!app.is_shown(&tid("toast")).await).then_some(())
    })
    .await;
    assert!(archived_on_disk(&h, &a_id));

    // Keyboard: Enter on the focused Undo.
    open_root(&app, &b).await;
    app.type_into(&tid("tab-home"), &format!("{}w{}", Key::Control, Key::Null))
        .await;
    app.wait_for_text(&tid("toast-text"), toast_says("“notes” archived"))
        .await;
    wait_archived_on_disk(&h, &[&b_id], true).await;
    app.type_into(&tid("toast-undo"), &Key::Enter.to_string())
        .await;
    wait_archived_on_disk(&h, &[&b_id], false).await;
    app.wait_for(&sel_tab(&b_id)).await;
    wait_toast_gone(&app).await;

    // Ctrl+Z from the tab strip undoes the latest gesture.
    app.click(&sel_tab(&b_id)).await;
    app.click(&sel_tab_close(&b_id)).await;
    wait_archived_on_disk(&h, &[&b_id], true).await;
    app.wait_for(&tid("toast-undo")).await;
    app.type_into(&tid("tab-home"), &format!("{}z{}", Key::Control, Key::Null))
        .await;
    wait_archived_on_disk(&h, &[&b_id], false).await;
    app.wait_for(&sel_tab(&b_id)).await;
    app.quit().await;
}
