//! The `window` command: what only a window of this app has, and no other client of the core's
//! API would: facts about this app, the window's own saved layout, which agent it shows,
//! another window, and the ☰ menu's Settings and Quit.

use super::{menu, Answer};
use crate::notify::{Notifications, Presence};
use crate::state::AppState;
use crate::windows::{Layouts, WindowsError};
use paseo_core::api::ApiError;
use paseo_core::model::AgentId;
use paseo_headless::data_root;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tauri::{AppHandle, Manager, Runtime, State};

/// One window action: `{"kind": "appInfo"}`, `{"kind": "saveLayout", "layout": {…}}`, ….
#[derive(Debug, Clone, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum WindowAction {
    /// What the shell shows about the running app ([`AppInfo`]).
    AppInfo,
    /// The calling window's saved layout ([`WindowLayout`]); each window only sees its own.
    Layout,
    /// Saves the calling window's layout (atomically, in `$PASEO_HOME/windows.json`).
    SaveLayout { layout: Value },
    /// The window has (or lost) focus and shows `agentId`'s tab (or none): no notification
    /// for that agent while both hold, and, focused or not, the runtime never closes it to
    /// make room for a waiting start (SPEC 14 `maxLiveAgents`: the user is looking at it).
    Presence {
        focused: bool,
        #[serde(default)]
        agent_id: Option<AgentId>,
    },
    /// Opens another client window with its own layout; answers its label.
    NewWindow,
    /// Opens `$PASEO_HOME/config.json` with the system opener; answers its path.
    OpenSettings,
    /// The menu's Quit: the tray's path, a confirm first when agents are running.
    Quit,
}

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
    /// Where agents reach the MCP server (from `$PASEO_HOME/mcp.json`), once it runs.
    pub mcp_url: Option<String>,
    /// Every look's glyph and word and the urgency order (the core's status language): the
    /// page draws with these and holds none of its own.
    pub status_language: paseo_core::model::attention::StatusLanguage,
}

/// What a window gets back at start: who it is and the layout it had.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowLayout {
    /// `main`, or `window-N` for the windows "New window" opened.
    pub label: String,
    /// The layout this window saved last (opaque to the backend), if any.
    pub layout: Option<Value>,
    /// A problem reading the saved layouts, to show once.
    pub notice: Option<String>,
}

fn window_error(e: WindowsError) -> ApiError {
    let code = match e {
        WindowsError::InvalidLayout(_) => "invalid",
        WindowsError::Write { .. } => "io",
        WindowsError::Open(_) => "window",
    };
    ApiError::new(code, e.to_string())
}

fn json(value: impl Serialize) -> Answer<Value> {
    serde_json::to_value(value).map_err(|e| ApiError::new("error", e.to_string()))
}

/// One window action for the calling window. Async: building a window from the main thread's
/// command handler would wait on the main thread itself.
#[tauri::command]
pub async fn window<R: Runtime>(
    app: AppHandle<R>,
    window: tauri::Window<R>,
    state: State<'_, AppState>,
    layouts: State<'_, Layouts>,
    notifications: State<'_, Notifications>,
    action: Value,
) -> Answer<Value> {
    let action: WindowAction = serde_json::from_value(action)
        .map_err(|e| ApiError::new("invalid", format!("action: {e}")))?;
    let label = window.label().to_string();
    match action {
        WindowAction::AppInfo => json(app_info(&app, &state)),
        WindowAction::Layout => json(WindowLayout {
            layout: layouts.get(&label),
            notice: layouts.take_notice(),
            label,
        }),
        WindowAction::SaveLayout { layout } => {
            layouts.set(&label, layout).map_err(window_error)?;
            Ok(Value::Null)
        }
        WindowAction::Presence { focused, agent_id } => {
            notifications.set_presence(
                &label,
                Presence {
                    focused,
                    agent: agent_id,
                },
            );
            if let Some(rt) = state.runtime() {
                if let Err(error) = crate::reads::shown(&rt, &label, agent_id).await {
                    tracing::warn!(%error, "cannot tell the backend which agent the window shows");
                }
            }
            Ok(Value::Null)
        }
        WindowAction::NewWindow => {
            let label = layouts.fresh_label(|l| app.get_webview_window(l).is_some());
            // Saved at once, so the window comes back after a restart even if it never saves
            // a layout.
            layouts
                .set(&label, serde_json::json!({}))
                .map_err(window_error)?;
            if let Err(error) = crate::extra::open_extra(&app, &label) {
                let _ = layouts.remove(&label);
                return Err(window_error(error));
            }
            Ok(Value::String(label))
        }
        WindowAction::OpenSettings => Ok(Value::String(menu::open_settings(&state).await?)),
        WindowAction::Quit => {
            menu::quit_app(&app);
            Ok(Value::Null)
        }
    }
}

fn app_info<R: Runtime>(app: &AppHandle<R>, state: &AppState) -> AppInfo {
    let package = app.package_info();
    let started = state.backend_started_at();
    let mcp_url = std::fs::read(paseo_core::store::Layout::new(state.data_root()).mcp_json_path())
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v["url"].as_str().map(String::from));
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
        mcp_url,
        status_language: paseo_core::model::attention::status_language(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// Every JavaScript module of the page.
    fn page_modules(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                page_modules(&path, out);
            } else if path.extension().is_some_and(|e| e == "js") {
                out.push(path);
            }
        }
    }

    /// The status language reaches the page with the app info and nowhere else: no module
    /// spells a look's glyph or a word that is only the status language's ("needs you",
    /// "finished", "no activity"), so a word changed in the core changes everywhere.
    #[test]
    fn the_page_holds_no_status_language_of_its_own() {
        let language = paseo_core::model::attention::status_language();
        let mut modules = Vec::new();
        page_modules(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("ui"),
            &mut modules,
        );
        assert!(modules.len() > 20, "{modules:?}");
        // Glyphs the page also uses for other things (a notice's ✕, a host's ● dot, a tool
        // call's ✓) are checked in the status module only.
        let elsewhere = ["✕", "●", "✓"];
        let words = ["needs you", "finished", "no activity"];
        for module in &modules {
            let text = std::fs::read_to_string(module).unwrap();
            let status_module = module.ends_with("ui/status.js");
            for (name, look) in &language.looks {
                if status_module || !elsewhere.contains(&look.glyph) {
                    assert!(
                        !text.contains(look.glyph),
                        "{} spells the glyph of `{name}` ({})",
                        module.display(),
                        look.glyph
                    );
                }
            }
            // As code spells a string (prettier's single quotes, or a template); a comment
            // may name a word in double quotes.
            for word in words {
                for quoted in [format!("'{word}'"), format!("`{word}`")] {
                    assert!(
                        !text.contains(&quoted),
                        "{} spells the status word {quoted}",
                        module.display()
                    );
                }
            }
            assert!(
                !text.contains("'needs_input', 'failed', 'running'"),
                "{} spells the urgency order",
                module.display()
            );
        }
        // The app info carries it, in the shape status.js reads.
        let json = serde_json::to_value(&language).unwrap();
        assert_eq!(json["urgency"][0], "needs_input");
        assert_eq!(json["looks"]["needs_input"]["word"], "needs you");
    }
}
