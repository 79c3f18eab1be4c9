//! End-to-end harness: runs the real `paseo-desktop` binary on its own Xvfb display (and, when
//! asked, its own D-Bus session bus) with its own temporary `PASEO_HOME`, drives the real webview
//! over WebDriver (tauri-driver → WebKitWebDriver) with fantoccini, answers native GTK dialogs
//! with xdotool, reads and clicks the tray menu over D-Bus, and kills every process it started.
//!
//! ```ignore
//! let h = Harness::new("my_test");                 // Xvfb + temp PASEO_HOME, no session bus
//! let app = h.launch_ready(&[]).await;             // app under WebDriver, UI booted
//! app.wait_for_text(&tid("status-line"), |t| t.contains("running")).await;
//! app.click(&tid("new-agent")).await;
//! let (answered, ok) = tokio::join!(
//!     h.answer_dialog("Archive running agent?", Answer::Ok),
//!     app.click(&tid("tab-close")),
//! );
//! app.screenshot("after-archive").await;           // target/e2e-screenshots/my_test/…
//! ```
//!
//! One file per concern: `harness.rs` (the test's world: display, bus, environment, data root,
//! teardown), `proc.rs` (processes, process groups, signals, leftovers), `app.rs` (the app under
//! WebDriver and its page helpers), `fleet.rs` (agents and workspaces through `ui/backend.js`),
//! `dialogs.rs` (X windows and native dialogs), `tray.rs` (the tray menu and a tray host over
//! D-Bus), `mcp.rs` (the MCP server with the user token).
//!
//! Every wait is bounded polling ([`TIMEOUT`] unless given). A test that panics leaves a
//! screenshot of the whole display in `target/e2e-screenshots/<test>/failure.png`.

// Each test binary uses a different part of the harness (and of what it re-exports).
#![allow(dead_code, unused_imports)]

mod app;
mod dialogs;
mod fleet;
mod harness;
mod mcp;
mod proc;
mod tray;

pub use app::App;
pub use dialogs::Answer;
pub use harness::{Harness, HarnessBuilder};
pub use mcp::mcp_call;
pub use proc::{stdout_of, Proc};
pub use tray::{TrayHost, TrayMenu};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The app binary cargo built for this test run.
pub const APP: &str = env!("CARGO_BIN_EXE_paseo-desktop");
/// The headless-only binary (no window stack linked), built alongside.
pub const HEADLESS: &str = env!("CARGO_BIN_EXE_paseo-headless");
/// Default bound for every wait.
pub const TIMEOUT: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(50);

/// CSS selector for a `data-testid`.
pub fn tid(testid: &str) -> String {
    format!("[data-testid=\"{testid}\"]")
}

/// Where screenshots go: `target/e2e-screenshots/<test>/<name>.png`.
pub fn screenshot_dir(test: &str) -> PathBuf {
    let target_tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = target_tmp.parent().unwrap_or(target_tmp);
    target.join("e2e-screenshots").join(test)
}

/// Polls `check` every 50 ms until it returns `Some`, or panics with `what` after `timeout`.
pub async fn poll<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The window stack's libraries (GTK, GDK, WebKitGTK, JavaScriptCore, libsoup, the tray
/// library) named in `text`: `readelf --dynamic` output, `/proc/PID/maps`, sonames.
pub fn window_stack(text: &str) -> Vec<String> {
    const STACK: [&str; 6] = [
        "gtk",
        "gdk",
        "webkit",
        "javascriptcore",
        "soup",
        "appindicator",
    ];
    let mut found: Vec<String> = text
        .split(|c: char| c.is_whitespace() || matches!(c, '[' | ']' | '/'))
        .filter(|word| word.starts_with("lib") && word.contains(".so"))
        .filter(|word| STACK.iter().any(|s| word.to_lowercase().contains(s)))
        .map(str::to_string)
        .collect();
    found.sort();
    found.dedup();
    found
}
