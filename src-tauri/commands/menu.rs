//! The ☰ menu's app entries: Settings opens `config.json` with the desktop's opener, and Quit
//! takes the same path as the tray's (a confirm when agents are running). About reads the
//! window's `appInfo`.

use super::Answer;
use crate::state::AppState;
use paseo_core::api::ApiError;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tauri::{AppHandle, Runtime};

/// What opens a file with the user's default application (freedesktop).
const OPENER: &str = "xdg-open";

/// Makes sure `config.json` exists, so the opener has a file to show: a new one (and the bare
/// `{}` earlier versions wrote) is the starter file, which sets nothing and lists the keys with
/// their defaults; a file with anything else in it is never touched.
fn ensure_config(path: &Path) -> std::io::Result<()> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim() == "{}" => {}
        Ok(_) => return Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    paseo_core::store::atomic::write_atomic(path, paseo_core::config::STARTER.as_bytes())
}

/// How long the opener may take to say it found no application (it execs the application, or
/// hands the file to it, and exits; `xdg-open` exits 3 when nothing opens the file type).
const OPENER_VERDICT: Duration = Duration::from_secs(3);

/// Opens `$PASEO_HOME/config.json` with the system opener; answers its path. An opener that
/// fails (no application for JSON files here) is an error naming the file, so the window says
/// where to edit it instead of showing nothing.
pub(super) async fn open_settings(state: &AppState) -> Answer<String> {
    let path: PathBuf = paseo_core::store::Layout::new(state.data_root()).config_path();
    // Waiting for the opener's verdict blocks: off the async runtime's threads.
    tauri::async_runtime::spawn_blocking(move || open_config(path))
        .await
        .map_err(|e| ApiError::new("error", format!("opening the settings stopped: {e}")))?
}

fn open_config(path: PathBuf) -> Answer<String> {
    let shown = path.display().to_string();
    ensure_config(&path)
        .map_err(|e| ApiError::new("error", format!("cannot create {shown}: {e}")))?;
    let mut child = std::process::Command::new(OPENER)
        .arg(&path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| {
            ApiError::new(
                "unavailable",
                format!("cannot run {OPENER} ({e}); the settings are in {shown}: edit it with any text editor"),
            )
        })?;
    let deadline = Instant::now() + OPENER_VERDICT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(status)) => {
                tracing::warn!(path = %shown, %status, "the opener could not open the settings");
                return Err(ApiError::new(
                    "unavailable",
                    format!(
                        "no application here opens {shown} ({OPENER} {status}); edit it with any \
                         text editor"
                    ),
                ));
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            // Still at it (an application it started in the foreground): it opened the file.
            Ok(None) | Err(_) => {
                std::thread::spawn(move || child.wait());
                break;
            }
        }
    }
    tracing::info!(path = %shown, "settings opened");
    Ok(shown)
}

/// The menu's Quit: the tray's path, a confirm first when agents are running.
pub(super) fn quit_app<R: Runtime>(app: &AppHandle<R>) {
    tracing::info!("quit from the menu");
    crate::quit::request(app);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_bare_config_becomes_the_starter_and_anything_else_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        ensure_config(&path).unwrap();
        let starter = paseo_core::config::STARTER;
        assert_eq!(std::fs::read_to_string(&path).unwrap(), starter);
        // What earlier versions wrote: nothing set, so the starter loses nothing.
        std::fs::write(&path, "{}\n").unwrap();
        ensure_config(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), starter);
        std::fs::write(&path, "{\"mcp\": {\"port\": 7777}}").unwrap();
        ensure_config(&path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"mcp\": {\"port\": 7777}}"
        );
    }
}
