//! The commands the webview may invoke (through ui/backend.js). Each one also needs a permission
//! in src-tauri/permissions/app.toml, granted in src-tauri/capabilities, or the ACL refuses it.

use crate::data_root;
use crate::state::{AppState, FleetCounts};
use serde::Serialize;
use tauri::{AppHandle, Runtime, State};

/// What the shell shows about the running app.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub product: String,
    pub version: String,
    pub mode: &'static str,
    pub pid: u32,
    pub data_root: String,
    pub log_dir: String,
    /// "running" once the backend holds the data root, else "stopped".
    pub backend: &'static str,
    /// ISO 8601 UTC.
    pub started_at: String,
    pub counts: FleetCounts,
    pub counts_line: String,
}

#[tauri::command]
pub fn app_info<R: Runtime>(app: AppHandle<R>, state: State<'_, AppState>) -> AppInfo {
    let package = app.package_info();
    let started = state.backend_started_at();
    let counts = state.counts();
    AppInfo {
        product: package.name.clone(),
        version: package.version.to_string(),
        mode: state.mode().as_str(),
        pid: std::process::id(),
        data_root: state.data_root().display().to_string(),
        log_dir: data_root::log_dir(state.data_root()).display().to_string(),
        backend: if started.is_some() {
            "running"
        } else {
            "stopped"
        },
        started_at: started
            .unwrap_or_else(|| state.created_at())
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        counts,
        counts_line: counts.summary(),
    }
}

/// The invoke handler with every command, for `Builder::invoke_handler`.
pub fn handler<R: Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
    tauri::generate_handler![app_info]
}
