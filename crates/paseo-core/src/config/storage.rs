//! `"storage"` in config.json: bounds on what the data root keeps. Parsed here with the rest
//! of the file.

use serde::{Deserialize, Deserializer};

use super::read::whole;

/// Bounds on what the data root keeps (`"storage"` in config.json).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct StorageConfig {
    /// `timelineMaxBytes`: one agent's timeline on disk; past it the oldest items are dropped
    /// behind a marker.
    #[serde(deserialize_with = "timeline_bytes")]
    pub timeline_max_bytes: u64,
    /// `trashDays`: how many days what is left of a removed worktree (its ignored files) stays
    /// in the data root's trash before a start purges it (SPEC 15).
    #[serde(deserialize_with = "trash_days")]
    pub trash_days: u32,
}

/// The smallest timeline bound accepted.
pub const MIN_TIMELINE_BYTES: u64 = 64 << 10;
/// How long a trash entry is kept unless config.json says (`storage.trashDays`).
pub const DEFAULT_TRASH_DAYS: u32 = 7;
/// The longest `trashDays` accepted (ten years: a typo of a huge number would otherwise keep
/// everything for ever without saying so).
pub const MAX_TRASH_DAYS: u32 = 3650;

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            timeline_max_bytes: crate::store::timeline::DEFAULT_MAX_BYTES,
            trash_days: DEFAULT_TRASH_DAYS,
        }
    }
}

fn timeline_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    whole(
        d,
        MIN_TIMELINE_BYTES..,
        format_args!("expected a number of bytes, at least {MIN_TIMELINE_BYTES}"),
    )
}

fn trash_days<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    whole(
        d,
        ..=u64::from(MAX_TRASH_DAYS),
        format_args!("expected a whole number of days, 0 to {MAX_TRASH_DAYS}"),
    )
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, "config.json").map_err(|e| e.to_string())
    }

    #[test]
    fn trash_days_default_to_seven_and_take_a_whole_number() {
        assert_eq!(parse("{}").unwrap().storage.trash_days, 7);
        let c = parse(r#"{"storage": {"trashDays": 30, "timelineMaxBytes": 1048576}}"#).unwrap();
        assert_eq!(c.storage.trash_days, 30);
        assert_eq!(c.storage.timeline_max_bytes, 1 << 20);
        assert_eq!(
            parse(r#"{"storage": {"trashDays": 0}}"#)
                .unwrap()
                .storage
                .trash_days,
            0
        );
        for bad in ["-1", "1.5", "\"7\"", "3651", "null", "99999999999"] {
            let err = parse(&format!(r#"{{"storage": {{"trashDays": {bad}}}}}"#)).unwrap_err();
            assert!(
                err.starts_with(
                    "config.json: storage.trashDays: expected a whole number of days, 0 to 3650"
                ),
                "{bad}: {err}"
            );
        }
    }
}
