//! What the app shows through the desktop's own toolkit rather than the page: the confirm every
//! destructive gesture asks with (SPEC 10), and the webview's context menu.
//!
//! The confirm's buttons are "Cancel" and a verb naming the gesture ("Archive", "Quit",
//! "Commit"), never a bare OK, so the button says what a click does. The dialog plugin's custom
//! labels put the action first and focused on GTK (Return would archive), so on Linux the dialog
//! is built here: Cancel first and focused, the action after it, each with a mnemonic (Alt+A
//! archives, Escape cancels).

use serde::Deserialize;
use tauri::{AppHandle, Runtime};

/// One confirm: the title (also the window title, which tests find it by), the message naming
/// what will happen, and the verb on the button that does it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Confirm {
    pub title: String,
    pub message: String,
    pub action: String,
}

/// The errors of this module.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error("{0}: must not be empty")]
    Empty(&'static str),
    #[error("{0}: at most {1} characters")]
    TooLong(&'static str, usize),
    #[error("the dialog could not be shown: {0}")]
    Show(String),
}

impl Confirm {
    /// Refuses what no dialog should show: an empty title or verb, or text a screen cannot hold.
    pub fn check(&self) -> Result<(), NativeError> {
        for (field, value, max) in [
            ("title", &self.title, 200),
            ("action", &self.action, 60),
            ("message", &self.message, 20_000),
        ] {
            if value.trim().is_empty() && field != "message" {
                return Err(NativeError::Empty(field));
            }
            if value.chars().count() > max {
                return Err(NativeError::TooLong(field, max));
            }
        }
        Ok(())
    }
}

/// The button label with a GTK mnemonic: the first letter that is not Cancel's "C" (two buttons
/// with one mnemonic would only move the focus). Underscores of the label itself are doubled so
/// they show as written.
pub fn mnemonic(label: &str) -> String {
    let at = label
        .char_indices()
        .find(|(_, c)| c.is_alphanumeric() && !c.eq_ignore_ascii_case(&'c'))
        .map(|(i, _)| i);
    let mut out = String::with_capacity(label.len() + 2);
    for (i, c) in label.char_indices() {
        if Some(i) == at {
            out.push('_');
        }
        if c == '_' {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// Asks `confirm` and resolves to whether the user chose its action (Cancel, Escape and closing
/// the dialog all say no).
pub async fn ask<R: Runtime>(app: &AppHandle<R>, confirm: Confirm) -> Result<bool, NativeError> {
    confirm.check()?;
    // The whole question is logged: what the user was asked is what they answered.
    tracing::info!(title = %confirm.title, action = %confirm.action, message = %confirm.message, "asking the user");
    let (tx, rx) = tokio::sync::oneshot::channel();
    show(app, confirm, tx)?;
    // A dropped sender (the dialog destroyed without an answer) is a no.
    Ok(rx.await.unwrap_or(false))
}

#[cfg(target_os = "linux")]
fn show<R: Runtime>(
    app: &AppHandle<R>,
    confirm: Confirm,
    tx: tokio::sync::oneshot::Sender<bool>,
) -> Result<(), NativeError> {
    app.run_on_main_thread(move || {
        use gtk::prelude::*;
        let dialog = gtk::MessageDialog::new(
            None::<&gtk::Window>,
            gtk::DialogFlags::MODAL,
            gtk::MessageType::Warning,
            gtk::ButtonsType::None,
            &confirm.title,
        );
        dialog.set_title(&confirm.title);
        dialog.set_secondary_text(Some(&confirm.message));
        dialog.add_button("_Cancel", gtk::ResponseType::Cancel);
        dialog.add_button(&mnemonic(&confirm.action), gtk::ResponseType::Accept);
        // The focus starts on the default response: Return alone is the safe answer.
        dialog.set_default_response(gtk::ResponseType::Cancel);
        let tx = std::cell::RefCell::new(Some(tx));
        dialog.connect_response(move |dialog, response| {
            if let Some(tx) = tx.borrow_mut().take() {
                let _ = tx.send(response == gtk::ResponseType::Accept);
            }
            // SAFETY: the dialog is ours alone; nothing touches it after this handler.
            unsafe { dialog.destroy() };
        });
        dialog.show_all();
    })
    .map_err(|e| NativeError::Show(e.to_string()))
}

#[cfg(not(target_os = "linux"))]
fn show<R: Runtime>(
    app: &AppHandle<R>,
    confirm: Confirm,
    tx: tokio::sync::oneshot::Sender<bool>,
) -> Result<(), NativeError> {
    use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};
    app.dialog()
        .message(confirm.message)
        .title(confirm.title)
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom(
            confirm.action,
            "Cancel".into(),
        ))
        .show(move |ok| {
            let _ = tx.send(ok);
        });
    Ok(())
}

/// Takes the browser's entries out of the webview's context menu: Back, Forward, Stop and Reload
/// mean nothing in an app, and Reload throws its state away one right-click from anywhere; the
/// link and image entries would open app pages elsewhere. Inspect Element goes too, so a debug
/// build behaves as the release one (its inspector stays on Ctrl+Shift+I). What is left (Copy on
/// a selection; Cut, Copy, Paste in a text field) stays; a menu with nothing left is not shown.
#[cfg(target_os = "linux")]
pub fn quiet_context_menu<R: Runtime>(webview: &tauri::Webview<R>) {
    let result = webview.with_webview(|platform| {
        use webkit2gtk::{ContextMenuAction, ContextMenuExt, ContextMenuItemExt, WebViewExt};
        platform.inner().connect_context_menu(|_, menu, _, _| {
            for item in menu.items() {
                if matches!(
                    item.stock_action(),
                    ContextMenuAction::GoBack
                        | ContextMenuAction::GoForward
                        | ContextMenuAction::Stop
                        | ContextMenuAction::Reload
                        | ContextMenuAction::OpenLink
                        | ContextMenuAction::OpenLinkInNewWindow
                        | ContextMenuAction::DownloadLinkToDisk
                        | ContextMenuAction::OpenImageInNewWindow
                        | ContextMenuAction::DownloadImageToDisk
                        | ContextMenuAction::InspectElement
                ) {
                    menu.remove(&item);
                }
            }
            // Separators alone are not a menu.
            let useful = menu.items().iter().any(|item| !item.is_separator());
            // true: handled, no menu.
            !useful
        });
    });
    if let Err(error) = result {
        tracing::warn!(%error, "cannot reach the webview to quiet its context menu");
    }
}

#[cfg(not(target_os = "linux"))]
pub fn quiet_context_menu<R: Runtime>(_webview: &tauri::Webview<R>) {}

/// Every webview the app opens gets the quiet context menu.
pub fn plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri::plugin::Builder::new("paseo-native")
        .on_webview_ready(|webview| quiet_context_menu(&webview))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_skip_cancels_letter_and_keep_underscores() {
        assert_eq!(mnemonic("Archive"), "_Archive");
        assert_eq!(mnemonic("Quit"), "_Quit");
        assert_eq!(mnemonic("Commit"), "C_ommit");
        assert_eq!(mnemonic("my_branch"), "_my__branch");
        assert_eq!(mnemonic("…"), "…");
    }

    #[test]
    fn a_confirm_needs_a_title_and_a_verb() {
        let ok = Confirm {
            title: "Archive subagent?".into(),
            message: "Archive “x”?".into(),
            action: "Archive".into(),
        };
        assert!(ok.check().is_ok());
        let no_verb = Confirm {
            action: " ".into(),
            ..ok.clone()
        };
        assert_eq!(
            no_verb.check().unwrap_err().to_string(),
            "action: must not be empty"
        );
        let long = Confirm {
            title: "x".repeat(201),
            ..ok
        };
        assert!(long.check().unwrap_err().to_string().starts_with("title:"));
    }
}
