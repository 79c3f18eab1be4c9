//! The app's commands through Tauri's mock runtime, with the real config and ACL
//! (`generate_context!(test = true)`): what the webview gets back, and what it may not call.

use paseo_desktop::state::AppState;
use paseo_headless::cli::Mode;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{App, Manager, WebviewWindow, WebviewWindowBuilder};

fn app(root: &Path) -> App<MockRuntime> {
    paseo_desktop::configure(
        mock_builder(),
        AppState::new(root.to_path_buf(), Mode::Window),
    )
    .build(tauri::generate_context!("tauri.conf.json", test = true))
    .unwrap()
}

fn window(app: &App<MockRuntime>, label: &str) -> WebviewWindow<MockRuntime> {
    WebviewWindowBuilder::new(app, label, Default::default())
        .build()
        .unwrap()
}

/// A fresh data root, the app on it, and its main window.
fn app_with_main() -> (
    tempfile::TempDir,
    App<MockRuntime>,
    WebviewWindow<MockRuntime>,
) {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let main = window(&app, "main");
    (dir, app, main)
}

/// Invokes `cmd` as the page would; a call that does not answer within 10 s fails the test
/// rather than hanging the suite.
fn invoke(window: &WebviewWindow<MockRuntime>, cmd: &str, body: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(body),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    let window = window.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let response =
            get_ipc_response(&window, request).map(|body| body.deserialize::<Value>().unwrap());
        let _ = tx.send(response);
    });
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{cmd} did not answer"))
}

#[test]
fn app_info_reports_the_data_root_version_and_a_stopped_backend() {
    let (dir, _app, main) = app_with_main();
    let info = invoke(&main, "window", json!({"action": {"kind": "appInfo"}})).unwrap();
    assert_eq!(info["product"], json!("Paseo"));
    assert_eq!(info["version"], json!(env!("CARGO_PKG_VERSION")));
    assert_eq!(info["mode"], json!("window"));
    assert_eq!(info["pid"], json!(std::process::id()));
    assert_eq!(info["dataRoot"], json!(dir.path().display().to_string()));
    assert_eq!(
        info["logDir"],
        json!(dir.path().join("logs").display().to_string())
    );
    assert_eq!(info["backend"], json!("stopped"));
    // The counts are the runtime's to say (the `counts` verb, the status bar's events), not a
    // copy the shell keeps.
    assert!(
        info.get("counts").is_none() && info.get("countsLine").is_none(),
        "{info}"
    );
    chrono::DateTime::parse_from_rfc3339(info["startedAt"].as_str().unwrap()).unwrap();
}

#[test]
fn app_info_follows_the_backend() {
    let (dir, app, main) = app_with_main();
    let state = app.state::<AppState>();

    let backend =
        tauri::async_runtime::block_on(paseo_headless::backend::start(dir.path(), Mode::Window))
            .unwrap();
    let started = backend.started_at();
    state.attach_backend(backend);
    let info = invoke(&main, "window", json!({"action": {"kind": "appInfo"}})).unwrap();
    assert_eq!(info["backend"], json!("running"));
    assert_eq!(
        info["startedAt"],
        json!(started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    );

    tauri::async_runtime::block_on(state.take_backend().unwrap().shutdown());
    let info = invoke(&main, "window", json!({"action": {"kind": "appInfo"}})).unwrap();
    assert_eq!(info["backend"], json!("stopped"));
    // The lock went with the backend: the root can be taken again.
    paseo_headless::lock::DataRootLock::acquire(dir.path())
        .unwrap()
        .release();
}

#[test]
fn the_acl_grants_only_what_the_capability_lists() {
    let (_dir, app, main) = app_with_main();
    let other = window(&app, "other");

    // A window the capability does not name gets nothing, not even the app's facts.
    let refused = invoke(&other, "window", json!({"action": {"kind": "appInfo"}})).unwrap_err();
    assert!(refused.to_string().contains("not allowed"), "{refused}");

    // The client windows may confirm and pick folders, but not save files or read them (the
    // call is refused before any dialog could appear, which is why it cannot hang here).
    let refused = invoke(&main, "plugin:dialog|save", json!({"options": {}})).unwrap_err();
    assert!(refused.to_string().contains("not allowed"), "{refused}");
    let refused = invoke(&main, "plugin:fs|read_file", json!({"path": "/etc/passwd"})).unwrap_err();
    assert!(refused.to_string().contains("not allowed"), "{refused}");

    // Windows "New window" opens (window-N) get what the main window gets.
    let extra = window(&app, "window-7");
    assert!(invoke(&extra, "window", json!({"action": {"kind": "appInfo"}})).is_ok());

    // Unknown commands are refused too.
    assert!(invoke(&main, "no_such_command", json!({})).is_err());
}

#[test]
fn each_window_saves_and_reads_only_its_own_layout() {
    let (dir, app, main) = app_with_main();
    let extra = window(&app, "window-2");

    let fresh = invoke(&main, "window", json!({"action": {"kind": "layout"}})).unwrap();
    assert_eq!(
        fresh,
        json!({"label": "main", "layout": null, "notice": null})
    );
    invoke(
        &main,
        "window",
        json!({"action": {"kind": "saveLayout", "layout": {"selected": "ws-1"}}}),
    )
    .unwrap();
    invoke(
        &extra,
        "window",
        json!({"action": {"kind": "saveLayout", "layout": {"selected": "ws-2"}}}),
    )
    .unwrap();
    assert_eq!(
        invoke(&main, "window", json!({"action": {"kind": "layout"}})).unwrap()["layout"],
        json!({"selected": "ws-1"})
    );
    assert_eq!(
        invoke(&extra, "window", json!({"action": {"kind": "layout"}})).unwrap(),
        json!({"label": "window-2", "layout": {"selected": "ws-2"}, "notice": null})
    );

    // On disk, atomically written, keyed by label.
    let saved: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("windows.json")).unwrap()).unwrap();
    assert_eq!(saved["windows"]["main"], json!({"selected": "ws-1"}));
    assert_eq!(saved["windows"]["window-2"], json!({"selected": "ws-2"}));

    // A layout that is not an object is refused with the reason, and changes nothing.
    let refused = invoke(
        &main,
        "window",
        json!({"action": {"kind": "saveLayout", "layout": [1, 2]}}),
    )
    .unwrap_err();
    assert_eq!(refused["code"], json!("invalid"), "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("JSON object"),
        "{refused}"
    );
    assert_eq!(
        invoke(&main, "window", json!({"action": {"kind": "layout"}})).unwrap()["layout"],
        json!({"selected": "ws-1"})
    );
}

#[test]
fn the_window_has_three_commands_and_the_old_names_are_gone() {
    let (_dir, _app, main) = app_with_main();
    for old in [
        "app_info",
        "archive_agent",
        "create_agent",
        "window_layout_get",
        "mark_seen",
    ] {
        let refused = invoke(&main, old, json!({})).unwrap_err();
        assert!(
            refused.to_string().contains("not allowed")
                || refused.to_string().contains("not found"),
            "{old}: {refused}"
        );
    }
    // Without a backend a request says so, with the API's error shape.
    let refused = invoke(&main, "call", json!({"request": {"kind": "fleetSnapshot"}})).unwrap_err();
    assert_eq!(refused["code"], json!("stopped"), "{refused}");
    let refused = invoke(&main, "window", json!({"action": {"kind": "explode"}})).unwrap_err();
    assert_eq!(refused["code"], json!("invalid"), "{refused}");
}

/// The one `call` command carries the core's requests as the user: answers are `{kind, value}`
/// frames, a bad request names its field and changes nothing, and the notification settings
/// are written by the runtime (the shell only applies them).
#[test]
fn requests_go_through_the_one_call_command() {
    let (dir, app, main) = app_with_main();
    let state = app.state::<AppState>();
    let backend =
        tauri::async_runtime::block_on(paseo_headless::backend::start(dir.path(), Mode::Window))
            .unwrap();
    state.attach_backend(backend);
    let call = |request: Value| invoke(&main, "call", json!({ "request": request }));

    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ws = call(json!({"kind": "addWorkspace", "path": work.display().to_string()})).unwrap();
    assert_eq!(ws["kind"], json!("workspace"), "{ws}");
    let snap = call(json!({"kind": "fleetSnapshot"})).unwrap();
    assert_eq!(snap["kind"], json!("window"));
    assert!(snap["value"]["workspaces"].is_array(), "{snap}");

    for (request, field) in [
        (json!({"kind": "archive"}), "agentId"),
        (json!({"kind": "explode"}), "kind"),
        (json!({"kind": "markSeen", "agentId": "x"}), "agentId"),
        (
            json!({"kind": "timeline", "agentId": "00000000-0000-4000-8000-000000000000", "extra": 1}),
            "extra",
        ),
    ] {
        let refused = call(request.clone()).unwrap_err();
        assert_eq!(refused["code"], json!("invalid"), "{request}: {refused}");
        assert_eq!(refused["field"], json!(field), "{request}: {refused}");
    }

    std::fs::write(dir.path().join("config.json"), r#"{"mcp": {"port": 0}}"#).unwrap();
    let off = json!({"enabled": false, "permission": true, "error": true, "finished": true,
                     "subagentFinished": false});
    let set = call(json!({"kind": "setNotificationSettings", "settings": off})).unwrap();
    assert_eq!(set["value"], off);
    let config: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("config.json")).unwrap()).unwrap();
    assert_eq!(config["notifications"], off);
    assert_eq!(
        config["mcp"]["port"],
        json!(0),
        "the rest of the file is kept"
    );
    let notifications = app.state::<paseo_desktop::notify::Notifications>();
    assert!(!notifications.settings().enabled, "applied at once");
    let read = call(json!({"kind": "notificationSettings"})).unwrap();
    assert_eq!(read["value"], off);

    tauri::async_runtime::block_on(state.take_backend().unwrap().shutdown());
}
