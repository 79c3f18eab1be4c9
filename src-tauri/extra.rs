//! The extra windows (SPEC 7): opened with the main window's page and their own layout,
//! put back where the user left them, reopened at launch, and forgotten when the user closes
//! one. Their layouts are kept by [`crate::windows::Layouts`], their places by
//! [`crate::geometry`].

use tauri::{AppHandle, Manager, Runtime, WebviewWindowBuilder};

use crate::tray::MAIN_WINDOW;
use crate::windows::{extra_number, Layouts, WindowsError};

/// Opens the client window `label` (an extra window: same page, its own layout).
pub fn open_extra<R: Runtime>(app: &AppHandle<R>, label: &str) -> Result<(), WindowsError> {
    if let Some(window) = app.get_webview_window(label) {
        let _ = window.show();
        let _ = window.set_focus();
        return Ok(());
    }
    let mut config = app
        .config()
        .app
        .windows
        .iter()
        .find(|window| window.label == MAIN_WINDOW)
        .ok_or_else(|| WindowsError::Open("tauri.conf.json has no main window".to_string()))?
        .clone();
    config.label = label.to_string();
    config.title = match extra_number(label) {
        Some(n) => format!("Paseo — window {n}"),
        None => "Paseo — window".to_string(),
    };
    let window = WebviewWindowBuilder::from_config(app, &config)
        .and_then(|builder| builder.build())
        .map_err(|e| WindowsError::Open(e.to_string()))?;
    crate::geometry::restore(&window);
    tracing::info!(label, "window open");
    Ok(())
}

/// Reopens the extra windows that were open when the app last quit.
pub fn restore_extra<R: Runtime>(app: &AppHandle<R>) {
    let Some(layouts) = app.try_state::<Layouts>() else {
        return;
    };
    for label in layouts.extra_labels() {
        if let Err(error) = open_extra(app, &label) {
            tracing::warn!(%label, %error, "cannot reopen a window");
        }
    }
}

/// The user closed an extra window: it does not come back at the next launch.
pub fn closed_by_user<R: Runtime>(app: &AppHandle<R>, label: &str) {
    if extra_number(label).is_none() {
        return;
    }
    if let Some(layouts) = app.try_state::<Layouts>() {
        if let Err(error) = layouts.remove(label) {
            tracing::warn!(%label, %error, "cannot forget the window's layout");
        }
    }
}
