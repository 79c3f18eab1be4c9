//! Desktop notifications end to end: the real app on a private session bus with a notification
//! server stand-in (org.freedesktop.Notifications written with zbus: it records every Notify
//! call and "clicks" by emitting ActionInvoked). Agents are real shell agents; the window is the
//! real webview over WebDriver. Checked: one notification per failure, naming the agent and the
//! reason (markup escaped); none for an agent in view; the click shows the hidden window and
//! opens the agent; the ☰ toggle writes config.json and silences; a burst is one notification.

mod common;

use common::{tid, Harness, TIMEOUT};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedValue;

const PATH: &str = "/org/freedesktop/Notifications";

/// One Notify call as the server received it.
#[derive(Debug, Clone)]
struct Notified {
    id: u32,
    app_name: String,
    summary: String,
    body: String,
    actions: Vec<String>,
}

/// The notification server stand-in.
struct Server {
    calls: Arc<Mutex<Vec<Notified>>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Server {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &mut self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut calls = self.calls.lock().unwrap();
        let id = calls.len() as u32 + 1;
        calls.push(Notified {
            id,
            app_name,
            summary,
            body,
            actions,
        });
        id
    }

    fn get_capabilities(&self) -> Vec<String> {
        ["actions", "body", "body-markup"]
            .map(String::from)
            .to_vec()
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "stand-in".into(),
            "paseo-tests".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    async fn close_notification(
        &self,
        id: u32,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> zbus::fdo::Result<()> {
        Server::notification_closed(&emitter, id, 3).await?;
        Ok(())
    }

    #[zbus(signal)]
    async fn action_invoked(
        emitter: &SignalEmitter<'_>,
        id: u32,
        action_key: &str,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn notification_closed(
        emitter: &SignalEmitter<'_>,
        id: u32,
        reason: u32,
    ) -> zbus::Result<()>;
}

struct Daemon {
    connection: zbus::Connection,
    calls: Arc<Mutex<Vec<Notified>>>,
}

impl Daemon {
    async fn start(bus: &str) -> Daemon {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let server = Server {
            calls: calls.clone(),
        };
        let connection = zbus::connection::Builder::address(bus)
            .unwrap()
            .name("org.freedesktop.Notifications")
            .unwrap()
            .serve_at(PATH, server)
            .unwrap()
            .build()
            .await
            .expect("cannot start the notification server stand-in");
        Daemon { connection, calls }
    }

    fn calls(&self) -> Vec<Notified> {
        self.calls.lock().unwrap().clone()
    }

    /// Waits until `n` notifications arrived; returns them all.
    async fn wait_for(&self, n: usize) -> Vec<Notified> {
        common::poll(&format!("{n} notifications"), TIMEOUT, || async {
            let calls = self.calls();
            (calls.len() >= n).then_some(calls)
        })
        .await
    }

    /// What a server sends when the user clicks the notification's body.
    async fn click(&self, id: u32) {
        let server = self
            .connection
            .object_server()
            .interface::<_, Server>(PATH)
            .await
            .unwrap();
        Server::action_invoked(server.signal_emitter(), id, "default")
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn failures_notify_once_except_in_view_and_a_click_opens_the_agent() {
    let h = Harness::builder("notifications")
        .dbus(true)
        .env("RUST_LOG", "info,paseo_desktop::notify=debug")
        .build();
    let daemon = Daemon::start(h.bus_address().unwrap()).await;
    let app = h.launch_ready(&[]).await;
    h.wait_for_mcp().await;

    // An agent whose tab is shown in the focused window fails: the user sees it, no notification.
    let window = h.wait_for_window("Paseo").await;
    assert!(
        h.xdotool_in_window(window, &[]).await,
        "cannot focus the window"
    );
    let watched = app
        .create_shell(&h.work_dir("watched"), "watched", "sleep 2; exit 5")
        .await;
    let watched = watched["id"].as_str().unwrap().to_string();
    app.call_ui("/gestures/tabs.js", "openAgent", vec![json!(watched)])
        .await;
    app.wait_for(&format!(
        "[data-testid=\"agent-pane\"][data-agent-id=\"{watched}\"]"
    ))
    .await;
    let focused = app.execute("return document.hasFocus()", vec![]).await;
    assert_eq!(focused, json!(true), "the window should have focus");
    app.wait_for_status(&watched, "error").await;

    // One in the background fails: exactly one notification, naming it and the reason. (Had
    // the watched agent been notified, that notification would have come first.)
    let broken = h.mcp_create_shell("broken <b>&</b>", "exit 3");
    let calls = daemon.wait_for(1).await;
    let note = &calls[0];
    assert_eq!(note.app_name, "Paseo");
    assert_eq!(note.summary, "broken <b>&</b>");
    assert!(
        note.body.starts_with("failed: ") && note.body.contains('3'),
        "{note:?}"
    );
    assert!(!note.body.contains('<'), "markup escaped: {note:?}");
    assert_eq!(note.actions[0], "default");
    // Nothing else follows for the same failure.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(daemon.calls().len(), 1, "{:?}", daemon.calls());
    app.screenshot("a-background-failure").await;

    // From a hidden window (the tray's Hide window), the click shows it and opens that agent.
    let tray = h.tray_menu(app.pid()).await;
    tray.click("Hide window").await;
    h.wait_window_visible("Paseo", false).await;
    daemon.click(note.id).await;
    h.wait_window_visible("Paseo", true).await;
    app.wait_for(&format!(
        "[data-testid=\"agent-pane\"][data-agent-id=\"{broken}\"]"
    ))
    .await;

    // What the window reports is what counts: told (as a window showing that tab would say) that
    // it shows an agent, the app keeps quiet when that agent fails, even though this page never
    // opened it (so never marks it seen).
    let shown = h.mcp_create_shell("shown elsewhere", "sleep 1; exit 7");
    app.call_ui(
        "/backend.js",
        "windowPresence",
        vec![json!(true), json!(shown)],
    )
    .await;
    h.mcp_wait_status(&shown, "error").await;

    // The ☰ menu's toggle switches notifications off in config.json: a failure then says nothing;
    // switched on again, the next one does.
    let toggle = |on: bool| {
        let app = &app;
        async move {
            app.click(&tid("app-menu")).await;
            app.wait_for_attr(&tid("menu-notifications"), "aria-checked", &on.to_string())
                .await;
            app.click(&tid("menu-notifications")).await;
        }
    };
    toggle(true).await;
    let config = || -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(h.home().join("config.json")).unwrap_or_default())
            .unwrap_or_default()
    };
    common::poll(
        "config.json to switch notifications off",
        TIMEOUT,
        || async { (config()["notifications"]["enabled"] == false).then_some(()) },
    )
    .await;
    let quiet = h.mcp_create_shell("quiet", "exit 4");
    h.mcp_wait_status(&quiet, "error").await;
    toggle(false).await;
    common::poll(
        "config.json to switch notifications on",
        TIMEOUT,
        || async { (config()["notifications"]["enabled"] == true).then_some(()) },
    )
    .await;
    h.mcp_create_shell("loud", "exit 6");
    let calls = daemon.wait_for(2).await;
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1].summary, "loud", "{calls:?}");
    assert_eq!(config()["notifications"]["subagentFinished"], false);

    // Three root agents finishing together make one notification. They wait for a file, so they
    // end within one poll of each other, however slow the machine.
    let go = h.work_dir("gate").join("go");
    let wait = format!("while [ ! -f '{}' ]; do sleep 0.05; done", go.display());
    let ids: Vec<String> = ["one", "two", "three"]
        .iter()
        .map(|title| h.mcp_create_shell(title, &wait))
        .collect();
    for id in &ids {
        h.mcp_wait_status(id, "running").await;
    }
    std::fs::write(&go, b"").unwrap();
    let calls = daemon.wait_for(3).await;
    assert_eq!(calls[2].summary, "3 agents finished", "{calls:?}");
    // One line per agent, in the order they finished.
    let mut lines: Vec<&str> = calls[2].body.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        ["one — finished", "three — finished", "two — finished"]
    );
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    assert_eq!(daemon.calls().len(), 3, "{:?}", daemon.calls());
    app.quit().await;
    assert!(h.shutdown().is_empty());
}

/// The README's screenshot: a real notification server (dunst) on the test's display shows what
/// the app sends. Run by hand: `cargo test --test notifications -- --ignored docs_screenshot`,
/// then crop `target/e2e-screenshots/notifications_docs/notification.png` to the window
/// (`convert … -crop 1280x760+0+0`) into `docs/screenshots/`. Needs dunst, installed by hand
/// (`apt-get install dunst`), not by scripts/setup.sh: its D-Bus service file would let every
/// other test's private bus start it on the test's display whenever the app notifies.
#[tokio::test]
#[ignore]
async fn docs_screenshot() {
    let h = Harness::builder("notifications_docs").dbus(true).build();
    let mut dunst = h.command("dunst");
    dunst.args(["-config", "/dev/null"]);
    let _dunst = h.spawn("dunst", dunst);
    let app = h.launch_ready(&[]).await;
    h.wait_for_mcp().await;
    let lead = app
        .create_shell(&h.work_dir("app"), "lead", "echo 'plan: 3 steps'")
        .await;
    app.call_ui("/gestures/tabs.js", "openAgent", vec![lead["id"].clone()])
        .await;
    h.mcp_create_shell(
        "migrate",
        "echo 'migration 0042 failed: column exists' >&2; exit 3",
    );
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    h.screenshot_screen("notification");
    app.quit().await;
}
