//! End to end in the real webview (WebKitGTK under Xvfb, driven over WebDriver): the shell loads
//! with backend data, and native confirm dialogs reach the UI with the user's answer.

mod common;

use common::{poll, tid, Answer, App, Harness, TIMEOUT};
use serde_json::{json, Value};

#[tokio::test]
async fn window_shows_the_shell_with_backend_data() {
    let h = Harness::new("window_shows_the_shell_with_backend_data");
    let app = h.launch(&[]).await;
    let root = h.home().canonicalize().unwrap().display().to_string();

    // The command round trip (app_info through backend.js) fills every region.
    app.wait_ready().await;
    for region in ["sidebar", "tab-strip", "pane-region", "status-bar"] {
        assert!(app.is_shown(&tid(region)).await, "{region} is not shown");
    }
    assert_eq!(app.text(&tid("data-root")).await, root);
    assert_eq!(app.text(&tid("log-dir")).await, format!("{root}/logs"));
    assert_eq!(
        app.text(&tid("app-version")).await,
        format!("v{}", env!("CARGO_PKG_VERSION"))
    );
    let pid = app.pid();
    let status = app
        .wait_for_text(&tid("status-line"), |text| text.contains("Backend running"))
        .await;
    assert!(status.contains(&format!("pid {pid}")), "{status}");
    assert!(
        status.contains("0 running · 0 need you · 0 total"),
        "{status}"
    );
    assert_eq!(app.text(&tid("fact-pid")).await, format!("pid {pid}"));

    // The same data straight from the command, through the one UI seam.
    let info = app.call_ui("/backend.js", "appInfo", vec![]).await;
    assert_eq!(info["dataRoot"], json!(root));
    assert_eq!(info["pid"], json!(pid));
    assert_eq!(info["backend"], json!("running"));
    assert_eq!(info["product"], json!("Paseo"));

    // The title the tray, single instance and the user see.
    assert_eq!(app.title().await, "Paseo");
    h.wait_window_visible("Paseo", true).await;
    app.screenshot("shell").await;
    app.quit().await;
}

/// Opens a native confirm from the page (as the UI's destructive gestures do) while a user
/// answers it: the dialog is a real window on the display, beside the app (shot while open),
/// and `answer` is pressed. Returns what the page received.
async fn confirm_answered(
    h: &Harness,
    app: &App,
    title: &str,
    message: &str,
    answer: Answer,
) -> Value {
    let user = async {
        let ids = poll("the dialog", TIMEOUT, || async {
            let ids = h.windows(title, true).await;
            (!ids.is_empty()).then_some(ids)
        })
        .await;
        assert_eq!(ids.len(), 1);
        h.screenshot_screen("dialog-open");
        h.answer_dialog(title, answer).await;
    };
    let (received, ()) = tokio::join!(app.confirm(title, message, "Archive"), user);
    received
}

#[tokio::test]
async fn confirm_dialog_ok_reaches_the_ui() {
    let h = Harness::new("confirm_dialog_ok_reaches_the_ui");
    let app = h.launch(&[]).await;
    let title = "Archive running agent?";
    let message = "This agent is still running. Archiving it will stop it.";
    let answer = confirm_answered(&h, &app, title, message, Answer::Ok).await;
    assert_eq!(answer, json!(true));
    app.quit().await;
}

#[tokio::test]
async fn confirm_dialog_cancel_reaches_the_ui() {
    let h = Harness::new("confirm_dialog_cancel_reaches_the_ui");
    let app = h.launch(&[]).await;
    let title = "Quit with running agents?";
    let answer = confirm_answered(&h, &app, title, "2 agents are running.", Answer::Cancel).await;
    assert_eq!(answer, json!(false));
    // The app is still alive and answering after the dialog.
    let info = app.call_ui("/backend.js", "appInfo", vec![]).await;
    assert_eq!(info["backend"], json!("running"));
    app.quit().await;
}

#[tokio::test]
async fn the_shell_follows_a_dark_system_theme() {
    let h = Harness::builder("dark_theme")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    let app = h.launch_ready(&[]).await;
    let dark = app
        .execute(
            "return matchMedia('(prefers-color-scheme: dark)').matches",
            vec![],
        )
        .await;
    assert_eq!(dark, json!(true));
    let background = app
        .execute(
            "return getComputedStyle(document.body).backgroundColor",
            vec![],
        )
        .await;
    assert_eq!(background, json!("rgb(22, 24, 29)"));
    app.screenshot("shell-dark").await;
    app.quit().await;
}
