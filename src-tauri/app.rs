//! What the app registers with Tauri that needs no display or session bus: plugins, the
//! managed state and the commands. The window mode (`desktop.rs`) and the mock-runtime tests
//! both build from it.

use tauri::{Builder, Runtime};

use crate::{commands, notify, state, windows};

/// The app's plugins, managed state and commands on `builder`.
pub fn configure<R: Runtime>(builder: Builder<R>, state: state::AppState) -> Builder<R> {
    let layouts = windows::Layouts::new(state.data_root());
    let notifications = notify::Notifications::new(state.data_root());
    builder
        .plugin(tauri_plugin_dialog::init())
        .manage(state)
        .manage(layouts)
        .manage(notifications)
        .invoke_handler(commands::handler())
}
