//! Issue 17.3 in the window: an agent closed by a restart resumes its session when the user
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
