//! The Tauri shell of Paseo Desktop: the window mode (main window, tray, single instance,
//! notifications) and the webview's commands. The command line, the backend both modes start
//! and the headless mode come from the paseo-headless crate; the product's logic lives in
//! `paseo-core`. This crate only adapts them.

pub mod commands;
pub mod desktop;
pub mod extra;
pub mod geometry;
pub mod native;
pub mod notify;
pub mod quit;
pub mod reads;
pub mod state;
pub mod tray;
pub mod windows;

pub use paseo_core;

use std::process::ExitCode;
use tauri::{Builder, Runtime};

/// Everything the app registers that does not need a display or a session bus: plugins, the
/// managed state and the commands. The real app and the mock-runtime tests both build from it.
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

/// The `paseo-desktop` binary.
pub fn main() -> ExitCode {
    prepare_environment();
    match paseo_headless::prepare(paseo_headless::cli::Program::Desktop) {
        Ok((paseo_headless::cli::Mode::Window, root)) => desktop::run(root),
        Ok((paseo_headless::cli::Mode::Headless, root)) => paseo_headless::headless::run(root),
        Err(code) => code,
    }
}

/// Process-wide settings that must be in place before any thread or library starts.
fn prepare_environment() {
    // WebKitGTK's DMA-BUF renderer shows a blank window on many Linux GPU/driver setups (and under
    // Xvfb); the user's own choice wins when set.
    #[cfg(target_os = "linux")]
    if std::env::var_os("WEBKIT_DISABLE_DMABUF_RENDERER").is_none() {
        // Single-threaded here: main() calls this first.
        std::env::set_var("WEBKIT_DISABLE_DMABUF_RENDERER", "1");
    }
}
