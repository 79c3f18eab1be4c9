//! The ☰ menu's app entries: Settings opens `config.json` with the desktop's opener, and Quit
//! takes the same path as the tray's (a confirm when agents are running). About reads the
//! window's `appInfo`.

use super::Answer;
use crate::state::AppState;
use paseo_core::api::ApiError;
use std::io::Write;
use std::path::{Path, PathBuf};
use tauri::{AppHandle, Runtime};

/// What opens a file with the user's default application (freedesktop).
const OPENER: &str = "xdg-open";

/// Makes sure `config.json` exists (an empty object means every default, docs/providers.md),
/// so the opener has a file to show; an existing file is never touched.
fn ensure_config(path: &Path) -> std::io::Result<()> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(mut file) => {
            file.write_all(b"{}\n")?;
            file.sync_all()
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

/// Opens `$PASEO_HOME/config.json` with the system opener; answers its path.
pub(super) fn open_settings(state: &AppState) -> Answer<String> {
    let path: PathBuf = paseo_core::store::Layout::new(state.data_root()).config_path();
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
                format!("cannot run {OPENER} ({e}); the settings are in {shown}"),
            )
        })?;
    // The opener hands the file over and exits; reap it without holding the command up.
    std::thread::spawn(move || child.wait());
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
    fn a_missing_config_is_created_empty_and_an_existing_one_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        ensure_config(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
        std::fs::write(&path, "{\"mcp\": {\"port\": 7777}}").unwrap();
        ensure_config(&path).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"mcp\": {\"port\": 7777}}"
        );
    }
}
