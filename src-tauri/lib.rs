//! The Tauri shell of Paseo Desktop: the window mode (main window, tray, single instance,
//! notifications) and the webview's commands. The command line, the backend both modes start
//! and the headless mode come from the paseo-headless crate; the product's logic lives in
//! `paseo-core`. This crate only adapts them.

pub mod app;
pub mod commands;
pub mod desktop;
pub mod extra;
pub mod geometry;
pub mod names;
pub mod native;
pub mod notify;
pub mod quit;
pub mod reads;
pub mod state;
pub mod tray;
pub mod windows;

pub use app::configure;
pub use paseo_core;

use std::process::ExitCode;

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
