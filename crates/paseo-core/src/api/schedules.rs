//! The schedules as the API's verbs see them (SPEC 20): what `listSchedules` answers and the
//! changes the schedule verbs ask of whatever runs them ([`crate::schedules`], above the API:
//! it fires through the server).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ApiError;
use crate::model::schedule::Outcome;

/// One schedule in `listSchedules`: config.json's entry as written (what Edit starts from),
/// its `when` in words, its next due times and what the last one gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleView {
    pub name: String,
    /// The entry as config.json has it.
    pub entry: Value,
    /// "every day at 07:00", "every 15 minutes", "once, on 24 Dec 2026 at 07:00".
    pub words: String,
    pub paused: bool,
    /// The next three due times (none for a past `at`; a paused schedule's are shown too).
    pub next: Vec<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<Outcome>,
}

/// The schedules as the verbs change them. Every change is written to config.json (refused,
/// with the field named, when the entry is bad) and taken by the scheduler at once.
pub trait Schedules: Send + Sync {
    fn list(&self) -> Vec<ScheduleView>;
    /// Adds `entry`, or puts it in place of the schedule named `replaces`.
    fn save(&self, entry: Value, replaces: Option<&str>) -> Result<(), ApiError>;
    fn remove(&self, name: &str) -> Result<(), ApiError>;
    fn pause(&self, name: &str, paused: bool) -> Result<(), ApiError>;
    /// Starts a run now (recorded as a due time of now), whatever its schedule says.
    fn run_now(&self, name: &str) -> Result<(), ApiError>;
}
