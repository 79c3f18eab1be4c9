//! `"notifications"` in config.json: whether the desktop app raises desktop notifications, and
//! for which events. Parsed here with the rest of the file; the desktop crate decides and sends.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which desktop notifications the app raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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

const FIELDS: &str = "enabled, permission, error, finished or subagentFinished";

impl NotificationsConfig {
    /// Reads the `notifications` object; absent fields keep their defaults. On error: the field
    /// path and what was wrong.
    pub fn parse(value: &Value) -> Result<Self, (String, String)> {
        let object = value.as_object().ok_or_else(|| {
            (
                "notifications".to_string(),
                "expected an object".to_string(),
            )
        })?;
        let mut config = NotificationsConfig::default();
        for (key, value) in object {
            let path = format!("notifications.{key}");
            let slot = match key.as_str() {
                "enabled" => &mut config.enabled,
                "permission" => &mut config.permission,
                "error" => &mut config.error,
                "finished" => &mut config.finished,
                "subagentFinished" => &mut config.subagent_finished,
                _ => return Err((path, format!("unknown field (expected {FIELDS})"))),
            };
            *slot = value
                .as_bool()
                .ok_or_else(|| (path, "expected true or false".to_string()))?;
        }
        Ok(config)
    }
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
            "config.json: notifications.enabled: expected true or false"
        );
        let e = parse(r#"{"notifications": {"sound": true}}"#).unwrap_err();
        assert!(e.contains("notifications.sound: unknown field"), "{e}");
        let e = parse(r#"{"notifications": true}"#).unwrap_err();
        assert_eq!(e, "config.json: notifications: expected an object");
    }

    #[test]
    fn round_trips_as_the_file_spells_it() {
        let c = NotificationsConfig {
            subagent_finished: true,
            ..NotificationsConfig::default()
        };
        let v = serde_json::to_value(c).unwrap();
        assert_eq!(v["subagentFinished"], true);
        assert_eq!(NotificationsConfig::parse(&v).unwrap(), c);
    }
}
