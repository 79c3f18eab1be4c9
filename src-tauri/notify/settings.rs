//! The ☰ menu's notification toggle writes `notifications` into config.json. Only that key
//! changes: the rest of the file (its other settings, their order) is kept, and a file that does
//! not parse is left for the user to fix rather than overwritten.

use super::NotifyError;
use paseo_core::config::{Config, NotificationsConfig};
use paseo_core::store::atomic::write_atomic;
use serde_json::{Map, Value};
use std::path::Path;

/// Sets `notifications` in `$PASEO_HOME/config.json` (creating the file if there is none).
pub fn write_settings(data_root: &Path, settings: NotificationsConfig) -> Result<(), NotifyError> {
    let path = Config::path(data_root);
    let file = path.display().to_string();
    let refuse = |message: String| NotifyError::Config {
        file: file.clone(),
        message,
    };
    let mut root = match std::fs::read_to_string(&path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(root)) => root,
            Ok(_) => return Err(refuse("not a JSON object; fix the file first".into())),
            Err(error) => {
                return Err(refuse(format!(
                    "invalid JSON ({error}); fix the file first"
                )))
            }
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(source) => return Err(NotifyError::Write { file, source }),
    };
    let value = serde_json::to_value(settings).map_err(|e| refuse(e.to_string()))?;
    root.insert("notifications".to_string(), value);
    let text =
        serde_json::to_string_pretty(&Value::Object(root)).map_err(|e| refuse(e.to_string()))?;
    // Never write a file the next start would refuse (an error elsewhere in it stays the
    // user's to fix, with the message naming it).
    Config::parse(&text, &file).map_err(|e| refuse(format!("{e}; fix the file first")))?;
    write_atomic(&path, format!("{text}\n").as_bytes())
        .map_err(|source| NotifyError::Write { file, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_only_its_key_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = Config::path(dir.path());
        std::fs::write(
            &path,
            r#"{"storage": {"timelineMaxBytes": 100000}, "mcp": {"port": 0}}"#,
        )
        .unwrap();
        let off = NotificationsConfig {
            enabled: false,
            ..NotificationsConfig::default()
        };
        write_settings(dir.path(), off).unwrap();
        let config = Config::load(dir.path()).unwrap();
        assert_eq!(config.notifications, off);
        assert_eq!(config.storage.timeline_max_bytes, 100_000);
        assert_eq!(config.mcp.port, Some(0));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.find("storage") < text.find("notifications"), "{text}");
    }

    #[test]
    fn creates_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        write_settings(dir.path(), NotificationsConfig::default()).unwrap();
        assert_eq!(
            Config::load(dir.path()).unwrap().notifications,
            NotificationsConfig::default()
        );
    }

    #[test]
    fn a_broken_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = Config::path(dir.path());
        for text in ["{not json", "[1]", r#"{"mcp": {"port": "x"}}"#] {
            std::fs::write(&path, text).unwrap();
            let error = write_settings(dir.path(), NotificationsConfig::default()).unwrap_err();
            assert!(error.to_string().contains("fix the file"), "{error}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
    }
}
