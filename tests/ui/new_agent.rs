//! The new-agent form and the composer: unavailable providers shown disabled with the reason, a
//! missing directory refused, a filled-in form starting a shell agent, and Send enabled only with
//! a prompt.

use crate::common::{tid, Harness};
use crate::helpers::*;
use serde_json::json;

#[tokio::test]
async fn the_new_agent_form_shows_unavailable_providers_disabled_and_creates_an_agent() {
    let h = Harness::new("new_agent_form");
    std::fs::write(
        h.home().join("config.json"),
        r#"{"providers": {"ghost": {"kind": "command", "command": ["no-such-binary-xyz"]}}}"#,
    )
    .unwrap();
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("fresh");

    // First launch: the welcome pane offers both ways in.
    app.wait_for(&tid("welcome")).await;
    assert!(app.is_shown(&tid("welcome-add-workspace")).await);
    app.screenshot("welcome").await;
    app.click(&tid("welcome-new-agent")).await;
    app.wait_for(&tid("new-agent-form")).await;

    // The unavailable provider is there, disabled, with its reason; the shell is available.
    let ghost = "[data-testid=\"provider-option\"][data-provider=\"ghost\"]";
    app.wait_for_attr(ghost, "data-available", "false").await;
    let disabled = app.prop(&format!("{ghost} input"), "disabled").await;
    assert_eq!(disabled, json!(true));
    let reason = app
        .wait_for_text(&format!("{ghost} {}", tid("provider-reason")), |t| {
            !t.is_empty()
        })
        .await;
    assert!(reason.contains("no-such-binary-xyz"), "{reason}");
    let shell = "[data-testid=\"provider-option\"][data-provider=\"shell\"]";
    app.wait_for_attr(shell, "data-available", "true").await;
    app.screenshot("new-agent-form").await;

    // A missing directory is refused with a clear message, and nothing is created.
    app.click(&format!("{shell} input")).await;
    app.click(&tid("new-agent-submit")).await;
    app.wait_for_text(&tid("new-agent-error"), |t| t.contains("directory"))
        .await;
    assert_eq!(app.fleet_snapshot().await["agents"], json!([]));

    // Filled in: the agent starts, its tab opens, its first prompt runs, the workspace appears.
    app.type_into(&tid("new-agent-directory"), &dir.display().to_string())
        .await;
    app.type_into(&tid("new-agent-title"), "hello").await;
    app.type_into(&tid("new-agent-prompt"), "echo hi from paseo")
        .await;
    app.click(&tid("new-agent-submit")).await;
    app.wait_for(&tid("agent-pane")).await;
    app.wait_for_text(&tid("timeline"), |t| t.contains("hi from paseo"))
        .await;
    let created = app.fleet_snapshot().await["agents"][0].clone();
    assert_eq!(created["title"], json!("hello"));
    assert_eq!(created["provider"], json!("shell"));
    assert_eq!(created["cwd"], json!(dir.display().to_string()));
    app.wait_for(&sel_tab(&id(&created))).await;
    app.wait_for(&sel_ws(ws_id(&created))).await;
    app.wait_for_attr(&sel_pane(&id(&created)), "data-status", "idle")
        .await;

    // The composer: Send is disabled while empty; a prompt runs and shows in the timeline.
    let send = tid("composer-send");
    assert_eq!(app.prop(&send, "disabled").await, json!(true));
    app.type_into(&tid("composer-input"), "echo second turn")
        .await;
    assert_eq!(app.prop(&send, "disabled").await, json!(false));
    app.click(&tid("composer-send")).await;
    app.wait_for_text(&tid("timeline"), |t| t.contains("second turn"))
        .await;
    app.quit().await;
}
