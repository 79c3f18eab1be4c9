//! SPEC 2 in the window: an agent closed by a restart resumes its session when the user
//! opens it (not only when a prompt arrives), and a prompt typed right away runs.

use crate::common::{tid, Harness};
use crate::helpers::*;

#[tokio::test]
async fn opening_a_closed_agent_resumes_it_and_a_prompt_runs() {
    let h = Harness::new("wake_on_open");
    let dir = h.work_dir("repo");
    let app = h.launch_ready(&[]).await;
    let agent = app.create_shell(&dir, "sleeper", "echo first").await;
    let id = id(&agent);
    open_root(&app, &agent).await;
    app.wait_for_attr(&sel_pane(&id), "data-status", "idle")
        .await;
    app.quit().await;

    // After a restart nothing runs: the agent is closed until it is used again.
    let app = h.launch_ready(&[]).await;
    assert_eq!(app.agent(&id).await.unwrap()["status"], "closed");
    open_root(&app, &agent).await;
    // Opening it starts its session: initializing, then idle, with nothing typed.
    app.wait_for_attr(&sel_pane(&id), "data-status", "idle")
        .await;
    app.type_into(&tid("composer-input"), "echo $((40+2))-woke")
        .await;
    app.click(&tid("composer-send")).await;
    app.wait_for_text(&tid("timeline"), |t| t.contains("42-woke"))
        .await;
    app.wait_for_attr(&sel_pane(&id), "data-status", "idle")
        .await;
    app.quit().await;
}

/// Restoring from the archived list brings the agent back closed (SPEC 5): its tab opens, but
/// nothing starts until it is used; the first prompt resumes it and runs (SPEC 2).
#[tokio::test]
async fn a_restored_agent_comes_back_closed_and_resumes_when_used() {
    let h = Harness::new("restore_closed");
    let dir = h.work_dir("repo");
    let app = h.launch_ready(&[]).await;
    let agent = app.create_shell(&dir, "napper", "echo first").await;
    let id = id(&agent);
    app.wait_for_status(&id, "idle").await;
    open_root(&app, &agent).await;
    // An idle root agent: closing its tab archives it without asking.
    app.click(&sel_tab_close(&id)).await;
    wait_archived_on_disk(&h, &[&id], true).await;
    app.click(&tid("archived-toggle")).await;
    app.wait_count(&format!("{} li", tid("archived-list")), 1)
        .await;
    app.click(&format!("{} {}", tid("archived-list"), tid("restore")))
        .await;
    wait_archived_on_disk(&h, &[&id], false).await;
    app.wait_for(&sel_tab(&id)).await;
    app.wait_for_attr(&sel_pane(&id), "data-status", "closed")
        .await;
    // It stays closed: nothing was started behind the user's back.
    for _ in 0..20 {
        assert_eq!(app.agent(&id).await.unwrap()["status"], "closed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(h.agent_record(&id)["lastStatus"], "closed");
    app.screenshot("restored-closed").await;
    // Used: a prompt resumes it and runs.
    app.type_into(&tid("composer-input"), "echo $((40+3))-back")
        .await;
    app.click(&tid("composer-send")).await;
    app.wait_for_text(&tid("timeline"), |t| t.contains("43-back"))
        .await;
    app.wait_for_attr(&sel_pane(&id), "data-status", "idle")
        .await;
    app.quit().await;
}
