//! Entry point of the `paseo-desktop` binary: everything lives in the library so tests can build
//! the same app.

// No console window for release builds on Windows; no effect elsewhere.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    paseo_desktop::main()
}
