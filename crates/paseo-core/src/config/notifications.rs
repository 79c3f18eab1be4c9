//! `"notifications"` in config.json: whether the desktop app raises desktop notifications, and
//! for which events. Parsed here with the rest of the file; the desktop crate decides and sends.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which desktop notifications the app raises.
// `default`: a key the file leaves out keeps its default (so does one the API's
// `setNotificationSettings` leaves out).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct NotificationsConfig {
    /// The master switch.
    pub enabled: bool,
    /// An agent waits for the user's answer to a permission request (or a held start).
    pub permission: bool,
    /// An agent's turn failed.
    pub error: bool,
    /// A root agent finished a turn.
    pub finished: bool,
    /// A subagent finished. Off by default: its parent receives the finish as a notice.
    pub subagent_finished: bool,
}

impl Default for NotificationsConfig {
    fn default() -> Self {
        NotificationsConfig {
            enabled: true,
            permission: true,
            error: true,
            finished: true,
            subagent_finished: false,
        }
    }
}

/// Sets `notifications` in `$PASEO_HOME/config.json` (creating the file if there is none): the
/// ☰ menu's toggle, through the API. Only that key changes; the rest of the file (its other
/// settings, their order) is kept, and a file that does not parse is left for the user to fix
/// rather than overwritten.
pub fn write_notifications(
    paseo_home: &std::path::Path,
    settings: NotificationsConfig,
) -> Result<(), super::ConfigError> {
    let value = serde_json::to_value(settings).map_err(|e| super::ConfigError::Json {
        file: super::Config::path(paseo_home).display().to_string(),
        message: e.to_string(),
    })?;
    write_key(paseo_home, "notifications", value)
}

/// Sets one top-level `key` of config.json to `value`, the rest of the file (its other
/// settings, their order) kept; shared by every setting the API writes.
pub(super) fn write_key(
    paseo_home: &std::path::Path,
    key: &str,
    value: Value,
) -> Result<(), super::ConfigError> {
    use super::{Config, ConfigError};
    // One read-modify-write at a time: two writes never lose one another.
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let path = Config::path(paseo_home);
    let file = path.display().to_string();
    let refuse = |message: String| ConfigError::Json {
        file: file.clone(),
        message,
    };
    let mut root = match std::fs::read_to_string(&path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(root)) => root,
            Ok(_) => return Err(refuse("not a JSON object; fix the file first".into())),
            Err(error) => return Err(refuse(format!("{error}; fix the file first"))),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => serde_json::Map::new(),
        Err(source) => return Err(ConfigError::Read { file, source }),
    };
    root.insert(key.to_string(), value);
    let text =
        serde_json::to_string_pretty(&Value::Object(root)).map_err(|e| refuse(e.to_string()))?;
    // Never write a file the next start would refuse (an error elsewhere in it stays the
    // user's to fix, with the message naming it).
    Config::parse(&text, &file).map_err(|e| refuse(format!("{e}; fix the file first")))?;
    crate::store::atomic::write_atomic(&path, format!("{text}\n").as_bytes())
        .map_err(|source| ConfigError::Read { file, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, "config.json").map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_notify_everything_but_subagent_finishes() {
        let c = parse("{}").unwrap();
        assert_eq!(c.notifications, NotificationsConfig::default());
        assert!(c.notifications.enabled && c.notifications.finished);
        assert!(!c.notifications.subagent_finished);
        let c =
            parse(r#"{"notifications": {"finished": false, "subagentFinished": true}}"#).unwrap();
        assert!(c.notifications.enabled && !c.notifications.finished);
        assert!(c.notifications.subagent_finished && c.notifications.error);
    }

    #[test]
    fn mistakes_name_the_field() {
        assert_eq!(
            parse(r#"{"notifications": {"enabled": "yes"}}"#).unwrap_err(),
            "config.json: notifications.enabled: invalid type: string \"yes\", expected a boolean"
        );
        let e = parse(r#"{"notifications": {"sound": true}}"#).unwrap_err();
        assert!(e.contains("notifications.sound: unknown field"), "{e}");
        let e = parse(r#"{"notifications": true}"#).unwrap_err();
        assert_eq!(
            e,
            "config.json: notifications: invalid type: boolean `true`, expected an object"
        );
    }

    #[test]
    fn round_trips_as_the_file_spells_it() {
        let c = NotificationsConfig {
            subagent_finished: true,
            ..NotificationsConfig::default()
        };
        let v = serde_json::to_value(c).unwrap();
        assert_eq!(v["subagentFinished"], true);
        assert_eq!(serde_json::from_value::<NotificationsConfig>(v).unwrap(), c);
    }

    #[test]
    fn writing_sets_only_its_key_and_keeps_the_rest() {
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
        write_notifications(dir.path(), off).unwrap();
        let config = Config::load(dir.path()).unwrap();
        assert_eq!(config.notifications, off);
        assert_eq!(config.storage.timeline_max_bytes, 100_000);
        assert_eq!(config.mcp.port, Some(0));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.find("storage") < text.find("notifications"), "{text}");
    }

    #[test]
    fn writing_creates_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        write_notifications(dir.path(), NotificationsConfig::default()).unwrap();
        assert_eq!(
            Config::load(dir.path()).unwrap().notifications,
            NotificationsConfig::default()
        );
    }

    #[test]
    fn writing_leaves_a_broken_file_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = Config::path(dir.path());
        for text in ["{not json", "[1]", r#"{"mcp": {"port": "x"}}"#] {
            std::fs::write(&path, text).unwrap();
            let error =
                write_notifications(dir.path(), NotificationsConfig::default()).unwrap_err();
            assert!(error.to_string().contains("fix the file"), "{error}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
    }
}
