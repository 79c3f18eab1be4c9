//! Several windows: each keeps its own tabs, but an archive reaches every window.

use crate::common::{tid, Answer, App};
use crate::helpers::*;

/// Opens the lead and its helper's tab in the current window.
async fn open_lead_and_helper(app: &App, fam: &Family, helper: &str) {
    open_root(app, &fam.lead).await;
    row_action(app, helper, "track-open").await;
    app.wait_for(&sel_tab(helper)).await;
}

#[tokio::test]
async fn each_window_keeps_its_own_tabs_but_archive_reaches_every_window() {
    let (h, app, dir) = start("two_windows").await;
    let fam = family(&app, &dir, &[kid("helper", "sleep 300")], "echo ok").await;
    let (lead_id, helper) = (&fam.lead_id, fam.kid("helper"));
    app.wait_for_status(lead_id, "idle").await;

    // Window A (main): lead and its helper open.
    open_lead_and_helper(&app, &fam, &helper).await;

    // Window B through the menu: its own, empty layout; then the same two tabs.
    app.click(&tid("app-menu")).await;
    app.click(&tid("menu-new-window")).await;
    h.wait_window_visible("Paseo — window 2", true).await;
    app.switch_to_window("window-2", 2).await;
    assert_eq!(app.count(&tid("tab")).await, 0);
    open_lead_and_helper(&app, &fam, &helper).await;

    // A tab closed in A stays open in B.
    app.switch_to_window("main", 2).await;
    click_tab_close(&app, &helper).await;
    app.wait_count(&sel_tab(&helper), 0).await;
    app.switch_to_window("window-2", 2).await;
    assert_eq!(app.count(&sel_tab(&helper)).await, 1);
    assert_eq!(app.count(&sel_tab(lead_id)).await, 1);

    // An archive in A (closing the root's tab) removes both tabs in B.
    app.switch_to_window("main", 2).await;
    click_tab_close(&app, lead_id).await;
    h.answer_dialog("Archive agent with running subagents?", Answer::Ok)
        .await;
    app.wait_count(&sel_tab(lead_id), 0).await;
    app.switch_to_window("window-2", 2).await;
    app.wait_count(&tid("tab"), 0).await;
    wait_archived_on_disk(&h, &[&helper], true).await;
    app.quit().await;
}
