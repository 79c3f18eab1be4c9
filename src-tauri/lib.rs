//! The Tauri shell of Paseo Desktop: command-line handling, the backend both modes start (data-root
//! lock, logs, later the core runtime), the window mode (main window, tray, single instance) and
//! the headless mode. The product's logic lives in `paseo-core`; this crate only adapts it.

pub mod backend;
pub mod cli;
pub mod commands;
pub mod data_root;
pub mod desktop;
pub mod headless;
pub mod lock;
pub mod logging;
pub mod notify;
pub mod quit;
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
    let command = match cli::parse(std::env::args().skip(1)) {
        Ok(command) => command,
        Err(error) => {
            eprintln!("paseo-desktop: {error}");
            return ExitCode::from(2);
        }
    };
    let mode = match command {
        cli::Command::Help => {
            print!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        cli::Command::Version => {
            println!("paseo-desktop {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        cli::Command::Run(mode) => mode,
    };
    let root = match data_root::from_env() {
        Ok(root) => root,
        Err(error) => {
            eprintln!("paseo-desktop: {error}");
            return ExitCode::FAILURE;
        }
    };
    match mode {
        cli::Mode::Window => desktop::run(root),
        cli::Mode::Headless => headless::run(root),
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
