//! Adding a workspace with the native GTK folder chooser, answered by typing into its location
//! field as a user does.

use crate::common::{poll, tid, TIMEOUT};
use crate::helpers::*;
use serde_json::json;

#[tokio::test]
async fn add_a_workspace_with_the_native_folder_picker() {
    let (h, app, first) = start("folder_picker").await;
    let picked = h.work_dir("picked");
    let ws = app.add_workspace(&first).await;
    app.wait_for(&sel_ws(ws_id(&ws))).await;

    // The GTK folder chooser opens beside the selected workspace; type the other folder's
    // path into its location field, go there, and choose it.
    app.click(&tid("add-workspace")).await;
    let picker = h.wait_for_window("Add a workspace").await;
    let location = format!("{}/", picked.display());
    let enter = ["key", "--delay", "300", "Return"];
    assert!(
        h.xdotool_in_window(picker, &["key", "--delay", "100", "ctrl+l"])
            .await
    );
    assert!(
        h.xdotool_in_window(picker, &["type", "--delay", "5", &location])
            .await
    );
    assert!(h.xdotool_in_window(picker, &enter).await);
    h.screenshot_screen("folder-picker");
    // Return in the location field enters the folder; Open (Return again) chooses it.
    if !h.windows("Add a workspace", true).await.is_empty() {
        assert!(h.xdotool_in_window(picker, &enter).await);
    }
    let added = poll("the picked workspace", TIMEOUT, || async {
        app.fleet_snapshot().await["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["cwd"] == json!(picked.display().to_string()))
            .cloned()
    })
    .await;
    let row = sel_ws(ws_id(&added));
    app.wait_for_attr(&row, "aria-current", "true").await;
    app.wait_for(&tid("workspace-home")).await;
    app.quit().await;
}
