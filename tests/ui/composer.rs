//! The composer's placeholder stays on one line at the default window size (a
//! textarea wraps a long placeholder and cuts off the second line), whatever the agent's title.

use crate::common::Harness;
use crate::helpers::*;
use serde_json::Value;

/// The placeholder and the widths that matter, measured by the layout engine: the text laid out
/// in a span with the input's font, against the input's content box.
async fn placeholder_fit(app: &crate::common::App) -> (String, f64, f64) {
    let script = r#"
        const el = document.querySelector('[data-testid="composer-input"]');
        const s = getComputedStyle(el);
        const probe = document.createElement('span');
        for (const k of ['fontFamily', 'fontSize', 'fontWeight', 'fontStyle', 'letterSpacing']) probe.style[k] = s[k];
        probe.style.whiteSpace = 'pre';
        probe.style.position = 'absolute';
        probe.textContent = el.placeholder;
        document.body.append(probe);
        const width = probe.getBoundingClientRect().width;
        probe.remove();
        const room = el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
        return [el.placeholder, width, room];
    "#;
    let got = app.execute(script, vec![]).await;
    let num = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    (
        got[0].as_str().unwrap_or_default().to_string(),
        num(&got[1]),
        num(&got[2]),
    )
}

#[tokio::test]
async fn the_composer_placeholder_stays_on_one_line() {
    let h = Harness::new("composer_placeholder");
    let dir = h.work_dir("repo");
    let app = h.launch_ready(&[]).await;

    let long = "Refactor the storage layer and document every field of the records";
    let agent = app.create_shell(&dir, long, "true").await;
    open_root(&app, &agent).await;
    app.wait_for_attr(&sel_pane(&id(&agent)), "data-status", "idle")
        .await;
    let (text, width, room) = placeholder_fit(&app).await;
    assert!(room > 100.0, "the composer has no room: {room}");
    assert!(
        width <= room,
        "placeholder {text:?} is {width}px wide in a {room}px box: it wraps"
    );
    // Shortened, it still names the agent and says how to send.
    assert!(text.starts_with(&format!("Send to {long}")), "{text:?}");
    assert!(text.contains("Enter to send"), "{text:?}");

    // A short title keeps the whole hint.
    let short = app.create_shell(&dir, "fix", "true").await;
    open_root(&app, &short).await;
    app.wait_for_attr(&sel_pane(&id(&short)), "data-status", "idle")
        .await;
    let (text, width, room) = placeholder_fit(&app).await;
    assert!(width <= room, "{text:?}: {width}px in {room}px");
    assert!(text.contains("Shift+Enter"), "{text:?}");
    app.quit().await;
}

/// SPEC 13: the Stop button (`composer-interrupt`), Esc in the composer and Ctrl+. anywhere stop
/// the running turn; each is driven by real input (a click, WebDriver keys), and the turn ends
/// at the backend (the agent idle again), not only in the page.
#[tokio::test]
async fn stop_esc_and_ctrl_period_stop_the_running_turn() {
    use fantoccini::key::Key;
    let h = Harness::new("composer_stop");
    let dir = h.work_dir("repo");
    let app = h.launch_ready(&[]).await;
    let agent = app.create_shell(&dir, "sleeper", "sleep 300").await;
    let agent_id = id(&agent);
    open_root(&app, &agent).await;
    let pane = sel_pane(&agent_id);
    let input = r#"[data-testid="composer-input"]"#;
    for how in ["button", "esc", "ctrl+period"] {
        app.wait_for_attr(&pane, "data-status", "running").await;
        app.wait_for_status(&agent_id, "running").await;
        match how {
            "button" => app.click(r#"[data-testid="composer-interrupt"]"#).await,
            "esc" => app.type_into(input, &Key::Escape.to_string()).await,
            _ => {
                let keys = format!("{}.{}", Key::Control, Key::Null);
                app.type_into("body", &keys).await
            }
        }
        // Named by the gesture, so a failure says which of the three no longer stops.
        crate::common::poll(
            &format!("{how} to stop the turn"),
            crate::common::TIMEOUT,
            || async { app.agent(&agent_id).await.filter(|a| a["status"] == "idle") },
        )
        .await;
        app.wait_for_attr(&pane, "data-status", "idle").await;
        // The next turn, sent from the composer with Enter, runs again to be stopped.
        app.type_into(input, &format!("sleep 300{}", Key::Enter))
            .await;
    }
    app.wait_for_status(&agent_id, "running").await;
    app.quit().await;
}

/// Enter while the agent runs sends nothing: the composer says why (the draft is kept) and
/// offers Stop, which stops the turn; once idle, Enter sends the kept draft.
#[tokio::test]
async fn enter_while_the_agent_runs_says_why_nothing_was_sent_and_offers_stop() {
    use fantoccini::key::Key;
    let h = Harness::new("composer_busy");
    let dir = h.work_dir("repo");
    let app = h.launch_ready(&[]).await;
    let agent = app.create_shell(&dir, "sleeper", "sleep 300").await;
    let agent_id = id(&agent);
    open_root(&app, &agent).await;
    let pane = sel_pane(&agent_id);
    app.wait_for_attr(&pane, "data-status", "running").await;
    let input = r#"[data-testid="composer-input"]"#;
    assert!(!app.is_shown(r#"[data-testid="composer-busy"]"#).await);
    app.type_into(input, &format!("echo after{}", Key::Enter))
        .await;
    let said = app
        .wait_for_text(r#"[data-testid="composer-busy"]"#, |t| !t.is_empty())
        .await;
    assert!(
        said.contains("Not sent") && said.contains("still working"),
        "{said}"
    );
    assert!(said.contains("draft is kept"), "{said}");
    assert_eq!(
        app.prop(input, "value").await,
        serde_json::json!("echo after")
    );
    app.screenshot("busy-enter").await;
    app.click(r#"[data-testid="composer-busy-stop"]"#).await;
    app.wait_for_status(&agent_id, "idle").await;
    app.wait_for_attr(&pane, "data-status", "idle").await;
    assert!(!app.is_shown(r#"[data-testid="composer-busy"]"#).await);
    app.type_into(input, &Key::Enter.to_string()).await;
    app.wait_for_text(
        &format!("{pane} [data-testid=\"timeline-item\"][data-kind=\"output\"]"),
        |t| t.contains("after"),
    )
    .await;
    app.quit().await;
}
