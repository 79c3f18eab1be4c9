//! The live-agent limit making room (SPEC 14 `maxLiveAgents`, UI.md "Queued agents"): when a start
//! waits, the idle agent quiet the longest is closed, and the window says so: the status bar at
//! once (a link to that agent), the closed agent's pane for good. The agent the user is looking
//! at is never the one closed, even when it is the one quiet the longest.

use crate::common::{tid, Harness};
use crate::helpers::*;

#[tokio::test]
async fn an_agent_closed_to_make_room_says_so_and_the_shown_agent_stays_live() {
    make_room(Harness::new("room_ui"), "").await;
    let dark = Harness::builder("room_ui_dark")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    make_room(dark, "-dark").await;
}

async fn make_room(h: Harness, theme: &str) {
    std::fs::write(
        h.home().join("config.json"),
        r#"{"limits": {"maxLiveAgents": 2}}"#,
    )
    .unwrap();
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("app");
    let explorer = app.create_shell(&dir, "explorer", "echo exploring").await;
    app.wait_for_status(&id(&explorer), "idle").await;
    let reviewer = app.create_shell(&dir, "reviewer", "echo reviewing").await;
    app.wait_for_status(&id(&reviewer), "idle").await;
    // The user looks at "explorer", the agent quiet the longest: a third agent's start closes
    // "reviewer" instead.
    open_root(&app, &explorer).await;
    let _newcomer = app.create_shell(&dir, "newcomer", "echo hello").await;
    // The news stays up for 20 s: it is read and followed first, the rest checked after (a
    // loaded machine spent those seconds in waits before, and the link was gone when clicked).
    let said = app
        .wait_for_text(&tid("status-said"), |t| t.contains("'reviewer'"))
        .await;
    assert_eq!(
        said,
        "Closed 'reviewer' to make room for 'newcomer' (live-agent limit 2)"
    );
    assert_eq!(app.agent(&id(&reviewer)).await.unwrap()["status"], "closed");
    assert_eq!(app.agent(&id(&explorer)).await.unwrap()["status"], "idle");
    assert_eq!(
        app.prop(&sel_pane(&id(&explorer)), "dataset.status").await,
        "idle"
    );
    assert!(app.is_shown(&tid("status-said")).await);
    app.screenshot(&format!("room-status-bar{theme}")).await;

    // The news links to the closed agent, whose pane says why it closed and how it comes back.
    app.click(&tid("status-said")).await;
    let pane = sel_pane(&id(&reviewer));
    app.wait_for(&pane).await;
    app.wait_for_text(&format!("{pane} {}", tid("timeline")), |t| {
        t.contains(
            "Closed to make room for 'newcomer' (live-agent limit 2, config.json \
             limits.maxLiveAgents); it resumes when you use it.",
        )
    })
    .await;
    // Opened, it resumes (it is shown now), and the room it needs is made and said the same way.
    app.wait_for_attr(&pane, "data-status", "idle").await;
    app.wait_for_text(&tid("status-said"), |t| {
        t.contains("to make room for 'reviewer' (live-agent limit 2)")
    })
    .await;
    app.screenshot(&format!("room-pane{theme}")).await;
    app.quit().await;
}
