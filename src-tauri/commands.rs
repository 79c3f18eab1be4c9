//! The commands the webview may invoke (through ui/backend.js), three in all: `call` carries
//! every request of the core's one API (`paseo_core::api`) as the user, `window` does what only
//! a window has (its layout, its presence, another window, the menu's app entries) and
//! `confirm_action` asks with the native dialog. Each needs a permission in
//! src-tauri/permissions/app.toml, granted in src-tauri/capabilities, or the ACL refuses it.

use crate::notify::Notifications;
use crate::state::AppState;
use paseo_core::api::{ApiError, Caller, Request, Response};
use paseo_core::server::Server;
use tauri::{Runtime, State};

mod menu;
mod window;
pub use window::*;

type Answer<T> = Result<T, ApiError>;

/// The runtime; a window opens while the backend still loads the data root, and its first
/// requests wait for that.
async fn runtime(state: &AppState) -> Answer<Server> {
    state
        .runtime_started()
        .await
        .ok_or_else(|| ApiError::new("stopped", "the backend is not running"))
}

/// One request of the core's API, as the user: answers the response frame
/// (`{kind, value}`) or fails with `{code, message, field?}`. A search is scoped to the
/// calling window, so a new one (or `cancelSearch`) from it cancels the one before.
#[tauri::command]
pub async fn call<R: Runtime>(
    window: tauri::Window<R>,
    state: State<'_, AppState>,
    notifications: State<'_, Notifications>,
    request: serde_json::Value,
) -> Answer<tauri::ipc::Response> {
    let mut request = Request::from_value(request)?;
    if let Request::SearchTimeline(paseo_core::api::verbs::SearchTimeline { scope, .. })
    | Request::CancelSearch(paseo_core::api::verbs::CancelSearch { scope }) = &mut request
    {
        *scope = Some(window.label().to_string());
    }
    let setting = matches!(request, Request::SetNotificationSettings(..));
    let response = runtime(&state).await?.call(Caller::User, request).await?;
    if let (true, Response::NotificationSettings(settings)) = (setting, &response) {
        // The runtime wrote config.json; the notifier follows at once.
        notifications.apply_settings(*settings);
    }
    Ok(tauri::ipc::Response::new(response.to_json()?))
}

/// Asks the user with the native confirm (SPEC 10): Cancel and a verb button naming the
/// gesture. Resolves to whether the user chose the action.
#[tauri::command]
pub async fn confirm_action<R: Runtime>(
    app: tauri::AppHandle<R>,
    confirm: crate::native::Confirm,
) -> Answer<bool> {
    crate::native::ask(&app, confirm)
        .await
        .map_err(|e| match e {
            crate::native::NativeError::Show(_) => ApiError::new("error", e.to_string()),
            _ => ApiError::new("invalid", e.to_string()),
        })
}

/// The invoke handler with every command, for `Builder::invoke_handler`.
pub fn handler<R: Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
    tauri::generate_handler![call, window, confirm_action]
}
