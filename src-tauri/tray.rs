//! The system tray: an icon whose variant shows the fleet's state (idle / running / needs you), a
//! first menu line with the counts, Show/Hide window, and Quit.

use crate::state::FleetCounts;
use tauri::image::Image;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager, Runtime};

pub const MAIN_WINDOW: &str = "main";
const ID_COUNTS: &str = "counts";
const ID_TOGGLE: &str = "toggle-window";
const ID_QUIT: &str = "quit";

/// Which icon the tray shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayState {
    Idle,
    Running,
    Attention,
}

impl TrayState {
    /// Attention wins over running: what needs the user matters most at a glance.
    pub fn of(counts: &FleetCounts) -> Self {
        if counts.needs_you > 0 {
            TrayState::Attention
        } else if counts.running > 0 {
            TrayState::Running
        } else {
            TrayState::Idle
        }
    }

    fn icon(self) -> Image<'static> {
        match self {
            TrayState::Idle => tauri::include_image!("icons/tray-idle.png"),
            TrayState::Running => tauri::include_image!("icons/tray-running.png"),
            TrayState::Attention => tauri::include_image!("icons/tray-attention.png"),
        }
    }
}

/// The tray and the menu items it updates; managed by the app as `Tray<R>`.
pub struct Tray<R: Runtime> {
    icon: TrayIcon<R>,
    counts: MenuItem<R>,
    toggle: MenuItem<R>,
}

pub fn build<R: Runtime>(app: &AppHandle<R>, counts: &FleetCounts) -> tauri::Result<Tray<R>> {
    let counts_item = MenuItem::with_id(app, ID_COUNTS, counts.summary(), false, None::<&str>)?;
    let toggle = MenuItem::with_id(app, ID_TOGGLE, "Hide window", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, ID_QUIT, "Quit Paseo", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &counts_item,
            &PredefinedMenuItem::separator(app)?,
            &toggle,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let icon = TrayIconBuilder::with_id("main")
        .icon(TrayState::of(counts).icon())
        .tooltip(tooltip(counts))
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| match event.id().as_ref() {
            ID_TOGGLE => toggle_main_window(app),
            ID_QUIT => {
                tracing::info!("quit from the tray");
                app.exit(0);
            }
            _ => {}
        })
        .build(app)?;
    Ok(Tray {
        icon,
        counts: counts_item,
        toggle,
    })
}

fn tooltip(counts: &FleetCounts) -> String {
    format!("Paseo — {}", counts.summary())
}

impl<R: Runtime> Tray<R> {
    /// Re-renders the icon, tooltip and counts line (the runtime's event forwarder calls this).
    pub fn set_counts(&self, counts: &FleetCounts) -> tauri::Result<()> {
        self.icon.set_icon(Some(TrayState::of(counts).icon()))?;
        self.icon.set_tooltip(Some(tooltip(counts)))?;
        self.counts.set_text(counts.summary())
    }

    /// Keeps the Show/Hide item's wording in step with the window.
    pub fn set_window_visible(&self, visible: bool) -> tauri::Result<()> {
        self.toggle.set_text(if visible {
            "Hide window"
        } else {
            "Show window"
        })
    }
}

/// Shows, unminimizes and focuses the main window (tray "Show", second launch).
pub fn show_main_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW) {
        let shown = window
            .show()
            .and_then(|_| window.unminimize())
            .and_then(|_| window.set_focus());
        if let Err(error) = shown {
            tracing::warn!(%error, "cannot show the main window");
        }
    }
    note_visibility(app, true);
}

pub fn hide_main_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW) {
        if let Err(error) = window.hide() {
            tracing::warn!(%error, "cannot hide the main window");
        }
    }
    note_visibility(app, false);
}

fn toggle_main_window<R: Runtime>(app: &AppHandle<R>) {
    let visible = app
        .get_webview_window(MAIN_WINDOW)
        .and_then(|window| window.is_visible().ok())
        .unwrap_or(false);
    if visible {
        hide_main_window(app);
    } else {
        show_main_window(app);
    }
}

fn note_visibility<R: Runtime>(app: &AppHandle<R>, visible: bool) {
    if let Some(tray) = app.try_state::<Tray<R>>() {
        if let Err(error) = tray.set_window_visible(visible) {
            tracing::warn!(%error, "cannot update the tray menu");
        }
    }
}

/// Whether a tray host (a StatusNotifier watcher: KDE, GNOME's AppIndicator extension, XFCE, …)
/// is on the session bus right now. Without one the tray icon is invisible, so hiding the window
/// would leave the user no way back: closing must quit instead. Asked at close time because
/// panels come and go.
#[cfg(target_os = "linux")]
pub fn host_available() -> bool {
    let ask = || -> zbus::Result<bool> {
        let connection = zbus::blocking::Connection::session()?;
        let proxy = zbus::blocking::fdo::DBusProxy::new(&connection)?;
        let name = zbus::names::BusName::try_from("org.kde.StatusNotifierWatcher")?;
        Ok(proxy.name_has_owner(name)?)
    };
    match ask() {
        Ok(present) => present,
        Err(error) => {
            tracing::debug!(%error, "no session bus to look for a tray host");
            false
        }
    }
}

/// Other platforms always have a notification area.
#[cfg(not(target_os = "linux"))]
pub fn host_available() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icon_state_puts_attention_before_running_before_idle() {
        let counts = |running, needs_you| FleetCounts {
            running,
            needs_you,
            total: running + needs_you,
        };
        assert_eq!(TrayState::of(&counts(0, 0)), TrayState::Idle);
        assert_eq!(TrayState::of(&counts(2, 0)), TrayState::Running);
        assert_eq!(TrayState::of(&counts(2, 1)), TrayState::Attention);
        assert_eq!(TrayState::of(&counts(0, 1)), TrayState::Attention);
    }
}
