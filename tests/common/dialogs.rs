//! Top-level X windows and native GTK dialogs, as a user meets them: found by title with
//! xdotool, answered with the keys a user presses, closed with the WM_DELETE_WINDOW a window
//! manager sends, and shot from the display's own pixels.

use super::harness::{capture, Harness};
use super::{poll, screenshot_dir, TIMEOUT};
use std::path::PathBuf;

/// What to press in a native dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The action button (after Cancel, which has the focus): Tab, Return.
    Ok,
    /// Escape.
    Cancel,
    /// Return alone: whatever button has the focus (Cancel, in every dialog of the app).
    Return,
    /// A key combination, e.g. "alt+a": the mnemonic of the button labelled "_Archive" (a
    /// button's label is not visible to xdotool, but its mnemonic works only if it is there).
    Keys(&'static str),
}

fn xdotool(display: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("xdotool");
    command.env("DISPLAY", display);
    command
}

/// X window ids of top-level windows on `display` titled exactly `title`.
pub(super) async fn windows_on(display: &str, title: &str, only_visible: bool) -> Vec<u64> {
    let mut command = xdotool(display);
    command.arg("search");
    if only_visible {
        command.arg("--onlyvisible");
    }
    command.args(["--name", &format!("^{}$", regex_escape(title))]);
    let output = command.output().await.expect("cannot run xdotool");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

impl Harness {
    /// X window ids of top-level windows titled exactly `title`.
    pub async fn windows(&self, title: &str, only_visible: bool) -> Vec<u64> {
        windows_on(self.display(), title, only_visible).await
    }

    /// Waits until a window titled `title` is visible (`true`) or none is (`false`).
    pub async fn wait_window_visible(&self, title: &str, visible: bool) {
        let what = format!(
            "window {title:?} to be {}",
            if visible { "visible" } else { "hidden" }
        );
        poll(&what, TIMEOUT, || async {
            let shown = !self.windows(title, true).await.is_empty();
            (shown == visible).then_some(())
        })
        .await
    }

    /// Waits (bounded) for a visible window titled `title` and returns its id.
    pub async fn wait_for_window(&self, title: &str) -> u64 {
        poll(&format!("window {title:?}"), TIMEOUT, || async {
            self.windows(title, true).await.first().copied()
        })
        .await
    }

    /// Asks the visible window titled `title` to close, as a window manager does when the user
    /// clicks its close button (a WM_DELETE_WINDOW client message).
    pub async fn close_window(&self, title: &str) {
        let ids = self.windows(title, true).await;
        assert!(!ids.is_empty(), "no visible window titled {title:?}");
        for id in ids {
            send_wm_delete(self.display(), id);
        }
    }

    /// Focuses window `id`, then runs xdotool with `args` on it, as a user typing there would,
    /// e.g. `["key", "--delay", "50", "Tab", "Return"]` or `["type", "/some/path"]`. False if
    /// xdotool failed.
    pub async fn xdotool_in_window(&self, id: u64, args: &[&str]) -> bool {
        xdotool(self.display())
            .args(["windowfocus", "--sync", &id.to_string()])
            .args(args)
            .status()
            .await
            .expect("cannot run xdotool")
            .success()
    }

    /// Waits (bounded) for the native dialog titled exactly `title`, presses OK or Cancel, and
    /// waits until it is gone. GTK puts focus on Cancel: OK is Tab then Return, Cancel is Escape.
    pub async fn answer_dialog(&self, title: &str, answer: Answer) {
        let id = self.wait_for_window(title).await;
        if let Answer::Keys(_) = answer {
            // A mnemonic works once GTK has shown the dialog's buttons, a moment after its window
            // is mapped; Tab and Escape do not wait for that.
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        }
        let keys: &[&str] = match answer {
            Answer::Ok => &["key", "--delay", "50", "Tab", "Return"],
            Answer::Cancel => &["key", "--delay", "50", "Escape"],
            Answer::Return => &["key", "--delay", "50", "Return"],
            Answer::Keys(combo) => &["key", "--delay", "50", combo],
        };
        assert!(
            self.xdotool_in_window(id, keys).await,
            "xdotool could not answer {title:?}"
        );
        poll(&format!("dialog {title:?} to close"), TIMEOUT, || async {
            self.windows(title, true).await.is_empty().then_some(())
        })
        .await
    }

    /// Screenshot of the whole display (native dialogs included) to
    /// `target/e2e-screenshots/<test>/<name>.png`.
    pub fn screenshot_screen(&self, name: &str) -> PathBuf {
        let path = screenshot_dir(&self.shared.test).join(format!("{name}.png"));
        assert!(
            capture(self.display(), "root", &path),
            "import could not capture {}",
            self.display()
        );
        path
    }
}

fn regex_escape(text: &str) -> String {
    let mut escaped = String::new();
    for c in text.chars() {
        if "\\.^$|?*+()[]{}".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

fn send_wm_delete(display: &str, window: u64) {
    use std::ffi::CString;
    use x11::xlib;
    let name = CString::new(display).unwrap();
    // SAFETY: plain Xlib calls on a connection opened and closed here; the event is fully
    // initialised before it is sent.
    unsafe {
        let dpy = xlib::XOpenDisplay(name.as_ptr());
        assert!(!dpy.is_null(), "cannot open display {display}");
        let protocols = xlib::XInternAtom(dpy, c"WM_PROTOCOLS".as_ptr(), xlib::False);
        let delete = xlib::XInternAtom(dpy, c"WM_DELETE_WINDOW".as_ptr(), xlib::False);
        let mut data = xlib::ClientMessageData::new();
        data.set_long(0, delete as std::os::raw::c_long);
        data.set_long(1, xlib::CurrentTime as std::os::raw::c_long);
        let mut event = xlib::XEvent {
            client_message: xlib::XClientMessageEvent {
                type_: xlib::ClientMessage,
                serial: 0,
                send_event: xlib::True,
                display: dpy,
                window: window as xlib::Window,
                message_type: protocols,
                format: 32,
                data,
            },
        };
        xlib::XSendEvent(dpy, window as xlib::Window, xlib::False, 0, &mut event);
        xlib::XFlush(dpy);
        xlib::XCloseDisplay(dpy);
    }
}
