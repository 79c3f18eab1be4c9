//! The tray with a real fleet, over D-Bus as a panel sees it (private session bus): agents that
//! need the user are listed live and open in the window's UI when clicked; the icon follows; Quit asks
//! first when agents run and then stops them cleanly, as do stop signals and closing the last
//! window with no tray host. Agents are real shell agents created over MCP with the user token.

mod common;

use common::{mcp_call, stdout_of, tid, Answer, Harness, TrayMenu, TIMEOUT};
use serde_json::json;

/// Waits until the tray menu reads exactly `entries` (the counts line, then the agents that need
/// the user), followed by the two fixed items every menu ends with.
async fn wait_for_menu(tray: &TrayMenu, entries: &[&str]) {
    let expected = [entries, &["Hide window", "Quit Paseo"]].concat();
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let last = tray.labels().await;
        if last == expected {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "tray menu: expected {expected:?}, last saw {last:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The colour of the tray icon's status dot as the panel would draw it (hex RGBA), read from the
/// icon file the item points the panel to.
async fn icon_dot(tray: &TrayMenu) -> Option<String> {
    let file = tray.icon_file().await?;
    let dot = stdout_of(tokio::process::Command::new("convert").arg(&file).args([
        "-format",
        "%[hex:p{50,16}]",
        "info:",
    ]))
    .await?;
    Some(dot.trim().to_string())
}

/// Waits until the icon's dot has `colour` (the colours of icons/src/tray-*.svg).
async fn wait_for_icon(tray: &TrayMenu, what: &str, colour: &str) {
    common::poll(
        &format!("the {what} tray icon ({colour})"),
        TIMEOUT,
        || async { (icon_dot(tray).await.as_deref() == Some(colour)).then_some(()) },
    )
    .await
}

const IDLE: &str = "94A3B8FF";
const RUNNING: &str = "3B82F6FF";
const FAILED: &str = "EF4444FF";
const FINISHED: &str = "22C55EFF";

/// Shell processes running `command` (they carry the harness marker: the app started them).
fn agent_processes(h: &Harness, command: &str) -> Vec<u32> {
    h.processes()
        .into_iter()
        .filter(|(_, cmd)| cmd.contains(command))
        .map(|(pid, _)| pid)
        .collect()
}

#[tokio::test]
async fn the_tray_lists_agents_that_need_the_user_and_opens_them_in_the_window() {
    let h = Harness::builder("tray_attention").dbus(true).build();
    let app = h.launch(&[]).await;
    let tray = h.tray_menu(app.pid()).await;
    h.wait_for_mcp().await;
    wait_for_icon(&tray, "idle", IDLE).await;

    let broken = h.mcp_create_shell("broken", "exit 3");
    let docs = h.mcp_create_shell("docs", "echo done");
    // The first line is the status bar's line: an unseen failure has its entry, and both lines
    // count it as failed (its row's word), never one "needs you" where the other says "failed".
    let line = "0 running · 0 need you · 1 failed · 2 total";
    wait_for_menu(&tray, &[line, "✕ broken — failed", "✓ docs — finished"]).await;
    app.wait_for_text(&tid("status-line"), |t| t.ends_with(line))
        .await;
    // The most urgent reason colours the icon: an unseen failure is red.
    wait_for_icon(&tray, "failed", FAILED).await;

    // From a hidden window: the click shows it and the window is told which agent to open.
    tray.click("Hide window").await;
    h.wait_window_visible("Paseo", false).await;
    tray.click("✕ broken — failed").await;
    h.wait_window_visible("Paseo", true).await;
    // The UI opens that agent (its pane shows) and opening it marks it seen.
    app.wait_for(&format!(
        "[data-testid=\"agent-pane\"][data-agent-id=\"{broken}\"]"
    ))
    .await;
    // Seen now: its entry leaves the menu live, and the icon turns to the next reason.
    wait_for_menu(&tray, &[line, "✓ docs — finished"]).await;
    wait_for_icon(&tray, "finished", FINISHED).await;

    tray.click("✓ docs — finished").await;
    wait_for_menu(&tray, &[line]).await;
    wait_for_icon(&tray, "idle", IDLE).await;
    app.wait_for_text(&tid("status-line"), |t| t.ends_with(line))
        .await;
    app.wait_for(&format!(
        "[data-testid=\"agent-pane\"][data-agent-id=\"{docs}\"]"
    ))
    .await;
    app.screenshot("after-opening-from-the-tray").await;
}

#[tokio::test]
async fn quit_asks_while_agents_run_then_stops_them_cleanly() {
    let h = Harness::builder("tray_quit").dbus(true).build();
    let mut app = h.spawn_window_app().await;
    let tray = h.tray_menu(app.pid()).await;
    h.wait_for_mcp().await;

    let sleeper = h.mcp_create_shell("sleeper", "sleep 300");
    h.mcp_wait_status(&sleeper, "running").await;
    wait_for_menu(&tray, &["1 running · 0 need you · 1 total"]).await;
    wait_for_icon(&tray, "running", RUNNING).await;
    assert!(!agent_processes(&h, "sleep 300").is_empty());

    // Cancel keeps everything.
    tray.click("Quit Paseo").await;
    h.answer_dialog("Quit Paseo?", Answer::Cancel).await;
    h.wait_for_log("quit canceled").await;
    assert!(app.exited().is_none(), "Cancel quit the app");
    assert_eq!(
        mcp_call(h.home(), "get_agent", json!({"agentId": sleeper}))["status"],
        "running"
    );
    assert!(!agent_processes(&h, "sleep 300").is_empty());
    tray.wait_for_label("Quit Paseo").await;

    // OK stops the agent, persists it and exits 0.
    tray.click("Quit Paseo").await;
    h.wait_for_window("Quit Paseo?").await;
    h.screenshot_screen("quit-confirm");
    h.answer_dialog("Quit Paseo?", Answer::Ok).await;
    let status = app.wait_exit(TIMEOUT).await;
    assert_eq!(status.code(), Some(0), "{}", app.stderr());
    assert!(h.lock_is_free());
    assert_eq!(h.agent_record(&sleeper)["lastStatus"], "closed");
    assert!(
        agent_processes(&h, "sleep 300").is_empty(),
        "the agent's process survived"
    );
    let log = h.log_text();
    assert!(
        log.contains("quit confirmed: stopping the agents running=1"),
        "{log}"
    );
    assert!(log.contains("data root released"), "{log}");

    // Nothing running: Quit exits at once, with no dialog to answer.
    let mut app = h.spawn_window_app().await;
    let tray = h.tray_menu(app.pid()).await;
    wait_for_menu(&tray, &["0 running · 0 need you · 1 total"]).await;
    tray.click("Quit Paseo").await;
    let status = app.wait_exit(TIMEOUT).await;
    assert_eq!(status.code(), Some(0), "{}", app.stderr());
    // Exiting by itself proves no dialog waited for an answer; the log says why.
    assert!(h.log_text().contains("nothing running: quitting"));
}

#[tokio::test]
async fn stop_signals_and_closing_the_last_window_stop_running_agents_cleanly() {
    // No tray host on the bus: closing the window quits, like the tray's Quit.
    let h = Harness::builder("tray_stop_paths").dbus(true).build();

    // SIGTERM: no confirm, the same clean stop.
    let mut app = h.spawn_window_app().await;
    h.wait_for_mcp().await;
    let first = h.mcp_create_shell("first", "sleep 301");
    h.mcp_wait_status(&first, "running").await;
    app.signal(libc::SIGTERM);
    let status = app.wait_exit(TIMEOUT).await;
    assert_eq!(status.code(), Some(0), "{}", app.stderr());
    assert_eq!(h.agent_record(&first)["lastStatus"], "closed");
    assert!(agent_processes(&h, "sleep 301").is_empty());

    // Closing the last window with an agent running asks like Quit: Cancel keeps the window.
    let mut app = h.spawn_window_app().await;
    let tray = h.tray_menu(app.pid()).await;
    let second = h.mcp_create_shell("second", "sleep 302");
    h.mcp_wait_status(&second, "running").await;
    h.close_window("Paseo").await;
    h.answer_dialog("Quit Paseo?", Answer::Cancel).await;
    h.wait_for_log("quit canceled").await;
    assert!(app.exited().is_none(), "Cancel quit the app");
    h.wait_window_visible("Paseo", true).await;
    tray.wait_for_label("Quit Paseo").await;
    assert!(!agent_processes(&h, "sleep 302").is_empty());

    h.close_window("Paseo").await;
    h.answer_dialog("Quit Paseo?", Answer::Ok).await;
    let status = app.wait_exit(TIMEOUT).await;
    assert_eq!(status.code(), Some(0), "{}", app.stderr());
    assert_eq!(h.agent_record(&second)["lastStatus"], "closed");
    assert!(agent_processes(&h, "sleep 302").is_empty());
}
