//! Layouts: each window's tabs are saved per window label and come back after a restart; a
//! closed extra window is forgotten.

use crate::common::{poll, tid, App, TIMEOUT};
use crate::helpers::*;
use serde_json::{json, Value};
use std::path::Path;

/// Waits until `$PASEO_HOME/windows.json` holds a layout for `label` satisfying `check`.
async fn wait_saved_layout(home: &Path, label: &str, check: impl Fn(&Value) -> bool) -> Value {
    poll(&format!("the saved layout of {label}"), TIMEOUT, || async {
        let bytes = std::fs::read(home.join("windows.json")).ok()?;
        let saved: Value = serde_json::from_slice(&bytes).ok()?;
        let layout = saved["windows"][label].clone();
        check(&layout).then_some(layout)
    })
    .await
}

/// Dispatches Ctrl (+ Shift) + `key` (KeyboardEvent `code`) to the document, where the UI's
/// keyboard shortcuts listen.
async fn ctrl_key(app: &App, code: &str, key: &str, shift: bool) {
    let script = "const [code, key, shiftKey] = arguments; document.dispatchEvent(new \
        KeyboardEvent('keydown', {code, key, ctrlKey: true, shiftKey, bubbles: true}))";
    app.execute(script, vec![json!(code), json!(key), json!(shift)])
        .await;
}

/// Every key of the windows.json the real UI saved has a row in docs/data-model.md, and every
/// row there names a key it saved.
async fn windows_json_matches_the_data_model_doc(home: &Path) {
    use crate::doc_keys::{compare, keys, Shape};
    // The window's size and place are written once it is shown.
    let saved: Value = poll("the main window's geometry", TIMEOUT, || async {
        let saved: Value =
            serde_json::from_slice(&std::fs::read(home.join("windows.json")).ok()?).ok()?;
        saved["geometry"]["main"]["width"].is_u64().then_some(saved)
    })
    .await;
    let shape = Shape::new(
        &[
            ("windows", "<label>"),
            ("windows.<label>.groups", "<workspaceId>"),
            ("geometry", "<label>"),
        ],
        &[],
    );
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/data-model.md"))
            .unwrap();
    let problems = compare(&doc, "## windows.json", &keys(&saved, &shape));
    assert!(
        problems.is_empty(),
        "docs/data-model.md is out of date:\n  {}",
        problems.join("\n  ")
    );
}

#[tokio::test]
async fn each_windows_layout_is_saved_and_restored_after_a_restart() {
    let (h, app, dir) = start("layout_restart").await;
    let one = app.create_shell(&dir, "one", "echo one").await;
    let two = app.create_shell(&dir, "two", "echo two").await;
    let three = app.create_shell(&dir, "three", "echo three").await;
    for a in [&one, &two, &three] {
        app.wait_for_status(&id(a), "idle").await;
    }
    let ws = ws_id(&one);
    open_root(&app, &one).await;
    open_root(&app, &two).await;
    open_root(&app, &three).await;
    // Ctrl+PageUp goes back one tab: "two" is active.
    ctrl_key(&app, "PageUp", "PageUp", false).await;
    app.wait_for(&sel_pane(&id(&two))).await;

    // A second window with only "three", opened with the keyboard shortcut.
    ctrl_key(&app, "KeyN", "N", true).await;
    app.switch_to_window("window-2", 2).await;
    open_root(&app, &three).await;
    let want_main = json!([id(&one), id(&two), id(&three)]);
    wait_saved_layout(h.home(), "main", |l| {
        l["groups"][ws]["tabs"] == want_main && l["groups"][ws]["active"] == json!(id(&two))
    })
    .await;
    wait_saved_layout(h.home(), "window-2", |l| {
        l["groups"][ws]["tabs"] == json!([id(&three)])
    })
    .await;
    windows_json_matches_the_data_model_doc(h.home()).await;
    app.quit().await;
    poll("the app to release the data root", TIMEOUT, || async {
        h.lock_is_free().then_some(())
    })
    .await;

    // After a restart both windows come back with their own tabs.
    let app = h.launch_ready(&[]).await;
    app.switch_to_window("main", 2).await;
    app.wait_for(&sel_pane(&id(&two))).await;
    let tabs: Vec<String> = {
        let mut ids = Vec::new();
        for el in app.find_all(&tid("tab")).await {
            ids.push(el.attr("data-agent-id").await.unwrap().unwrap());
        }
        ids
    };
    assert_eq!(json!(tabs), want_main);
    app.wait_for_attr(&sel_tab(&id(&two)), "aria-selected", "true")
        .await;
    app.switch_to_window("window-2", 2).await;
    app.wait_count(&tid("tab"), 1).await;
    app.wait_for(&sel_pane(&id(&three))).await;

    // Closing the extra window forgets it: the next launch opens only the main window.
    h.close_window("Paseo — window 2").await;
    wait_saved_layout(h.home(), "window-2", Value::is_null).await;
    app.quit().await;
}
