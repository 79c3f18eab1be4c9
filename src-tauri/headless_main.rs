//! Entry point of the `paseo-headless` binary. It uses the paseo-headless crate only (never this
//! package's library), so nothing of Tauri, GTK or WebKit is linked into it.

fn main() -> std::process::ExitCode {
    paseo_headless::run_headless()
}
