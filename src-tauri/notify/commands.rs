//! The commands the windows use for notifications (registered in [`crate::commands::handler`]):
//! each window reports what the user is looking at, and the ☰ menu reads and writes the settings.

use super::{Notifications, NotifyError, Presence};
use crate::commands::CommandError;
use paseo_core::config::NotificationsConfig;
use tauri::{Runtime, State};

impl From<NotifyError> for CommandError {
    fn from(e: NotifyError) -> Self {
        let code = match e {
            NotifyError::Config { .. } => "config",
            _ => "io",
        };
        CommandError {
            code: code.to_string(),
            message: e.to_string(),
            field: None,
        }
    }
}

/// The calling window has (or lost) focus and shows `agent_id`'s tab (or none): no notification
/// for that agent while both hold, and, focused or not, the runtime never closes it to make
/// room for a waiting start (SPEC 14 `maxLiveAgents`: the user is looking at it).
#[tauri::command]
pub fn window_presence<R: Runtime>(
    window: tauri::Window<R>,
    notifications: State<'_, Notifications>,
    state: State<'_, crate::state::AppState>,
    focused: bool,
    agent_id: Option<String>,
) -> Result<(), CommandError> {
    let agent = match agent_id {
        Some(id) => Some(
            id.parse()
                .map_err(|e: paseo_core::model::ModelError| CommandError {
                    code: "invalid".to_string(),
                    message: format!("agentId: {e}"),
                    field: Some("agentId".to_string()),
                })?,
        ),
        None => None,
    };
    notifications.set_presence(window.label(), Presence { focused, agent });
    if let Some(rt) = state.runtime() {
        if let Err(error) = rt.set_shown(window.label(), agent) {
            tracing::warn!(%error, "cannot tell the backend which agent the window shows");
        }
    }
    Ok(())
}

/// The notification settings in force (config.json `notifications`).
#[tauri::command]
pub fn notification_settings(notifications: State<'_, Notifications>) -> NotificationsConfig {
    notifications.settings()
}

/// Writes the settings into config.json and applies them at once.
#[tauri::command]
pub fn set_notification_settings(
    notifications: State<'_, Notifications>,
    settings: NotificationsConfig,
) -> Result<NotificationsConfig, CommandError> {
    notifications.set_settings(settings)?;
    Ok(notifications.settings())
}
