//! Quitting the window app. The user's gestures (tray Quit; closing the last window when there is
//! no tray to hide to) ask first with a native confirm when agents are running. Every way out,
//! SIGINT and SIGTERM included (no confirm there), then takes the same clean path: the event loop
//! ends, and on its way out the backend stops every agent, persists every record and releases the
//! data root (the exit hook in `desktop.rs`), and the process exits 0.

use crate::state::AppState;
use std::sync::atomic::{AtomicBool, Ordering};
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};

/// The confirm's title (tests find the dialog window by it).
pub const CONFIRM_TITLE: &str = "Quit Paseo?";

/// Set while a quit confirm is open, so a second Quit does not stack another dialog.
static CONFIRMING: AtomicBool = AtomicBool::new(false);

/// What the confirm says when `running` agents are initializing or running; `None` when nothing
/// runs (quit at once: nothing would be lost).
pub fn confirm_message(running: usize) -> Option<String> {
    match running {
        0 => None,
        1 => Some(
            "1 agent is running. Quitting stops it; its state is saved and it can be resumed \
             later."
                .to_string(),
        ),
        n => Some(format!(
            "{n} agents are running. Quitting stops them; their state is saved and they can be \
             resumed later."
        )),
    }
}

/// Quits, after a confirm if agents are running. Returns at once; the answer comes later.
pub fn request<R: Runtime>(app: &AppHandle<R>) {
    if CONFIRMING.swap(true, Ordering::SeqCst) {
        tracing::info!("a quit confirm is already open");
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let running = match app.state::<AppState>().runtime() {
            // A runtime that no longer answers has nothing left to stop.
            Some(runtime) => runtime.counts().await.map(|c| c.running).unwrap_or(0),
            None => 0,
        };
        let Some(message) = confirm_message(running) else {
            tracing::info!("nothing running: quitting");
            app.exit(0);
            return;
        };
        let handle = app.clone();
        app.dialog()
            .message(message)
            .title(CONFIRM_TITLE)
            .kind(MessageDialogKind::Warning)
            // GTK's stock pair: Cancel | OK with the focus on Cancel, so Return alone is safe.
            .buttons(MessageDialogButtons::OkCancel)
            .show(move |ok| {
                CONFIRMING.store(false, Ordering::SeqCst);
                if ok {
                    tracing::info!(running, "quit confirmed: stopping the agents");
                    handle.exit(0);
                } else {
                    tracing::info!("quit canceled");
                }
            });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_confirm_names_how_many_agents_will_be_stopped() {
        assert_eq!(confirm_message(0), None);
        let one = confirm_message(1).unwrap();
        assert!(one.starts_with("1 agent is running."), "{one}");
        assert!(one.contains("stops it"), "{one}");
        let three = confirm_message(3).unwrap();
        assert!(three.starts_with("3 agents are running."), "{three}");
        assert!(three.contains("stops them"), "{three}");
        assert!(three.contains("resumed later"), "{three}");
    }
}
