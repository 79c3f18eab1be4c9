//! The schedules as the verbs see and change them (SPEC 20): the scheduler's current list and
//! the last ledger it wrote, for `listSchedules`; saves, pauses and removals written to
//! config.json (each entry checked as the file's are) and taken by the scheduler at once; "Run
//! now" handed to it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{Local, Utc};
use serde_json::Value;
use tokio::sync::Notify;

use super::Ledger;
use crate::api::{ApiError, ScheduleView, Schedules};
use crate::config::{self, Config};
use crate::model::schedule::{upcoming, words, Schedule};

/// Shared by the scheduler's task and the server's schedule verbs.
pub struct Book {
    home: PathBuf,
    state: Mutex<State>,
    /// Wakes the scheduler: the list changed, or a run was asked for.
    pub(super) wake: Notify,
}

struct State {
    schedules: Vec<Schedule>,
    /// config.json's entries of `schedules` as they were when `schedules` was read: read at
    /// the first `listSchedules` (not at start), then with every change written.
    entries: Option<Vec<Value>>,
    ledger: Ledger,
    run_now: Vec<String>,
}

/// Whether `entry` is the schedule named `name`.
fn named(entry: &Value, name: &str) -> bool {
    entry.get("name").and_then(Value::as_str) == Some(name)
}

fn unknown(name: &str) -> ApiError {
    ApiError {
        code: "not_found".into(),
        message: format!("name: no schedule named {name:?}"),
        field: Some("name".into()),
    }
}

impl Book {
    pub fn new(home: PathBuf, schedules: Vec<Schedule>) -> Arc<Book> {
        Arc::new(Book {
            home,
            state: Mutex::new(State {
                schedules,
                entries: None,
                ledger: Ledger::default(),
                run_now: Vec::new(),
            }),
            wake: Notify::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn schedules(&self) -> Vec<Schedule> {
        self.state().schedules.clone()
    }

    pub(super) fn take_run_now(&self) -> Vec<String> {
        std::mem::take(&mut self.state().run_now)
    }

    /// A run asked for that could not start yet (its schedule has a fire in flight).
    pub(super) fn run_later(&self, name: String) {
        self.state().run_now.push(name);
    }

    pub(super) fn set_ledger(&self, ledger: &Ledger) {
        self.state().ledger = ledger.clone();
    }

    /// Writes `entries` as config.json's schedules and takes them (what the file now says).
    fn write(&self, entries: Vec<Value>) -> Result<(), ApiError> {
        config::schedules::write(&self.home, entries.clone())
            .map_err(|e| ApiError::new("config", e.to_string()))?;
        let config =
            Config::load(&self.home).map_err(|e| ApiError::new("config", e.to_string()))?;
        let mut state = self.state();
        state.schedules = config.schedules;
        state.entries = Some(entries);
        drop(state);
        self.wake.notify_one();
        Ok(())
    }

    fn find(&self, entries: &[Value], name: &str) -> Result<usize, ApiError> {
        entries
            .iter()
            .position(|e| named(e, name))
            .ok_or_else(|| unknown(name))
    }
}

impl Schedules for Book {
    fn list(&self) -> Vec<ScheduleView> {
        let mut state = self.state();
        let entries = state
            .entries
            .get_or_insert_with(|| config::schedules::entries(&self.home))
            .clone();
        let now = Utc::now();
        state
            .schedules
            .iter()
            .map(|s| {
                let seen = state.ledger.schedules.get(&s.name);
                let anchor = seen.map_or(now, |e| e.first_seen);
                ScheduleView {
                    name: s.name.clone(),
                    entry: entries
                        .iter()
                        .find(|e| named(e, &s.name))
                        .cloned()
                        .unwrap_or(Value::Null),
                    words: words(&s.when, &Local),
                    paused: s.paused,
                    next: upcoming(&s.when, now, anchor, &Local, 3),
                    last: seen.and_then(|e| e.last.clone()),
                }
            })
            .collect()
    }

    fn save(&self, entry: Value, replaces: Option<&str>) -> Result<(), ApiError> {
        // The providers as the running app reads the file (leniently), without setting a bad
        // file aside again: the write below refuses a file that does not parse.
        let text = std::fs::read_to_string(Config::path(&self.home)).unwrap_or_default();
        let file = Config::path(&self.home).display().to_string();
        let providers = Config::parse_lenient(if text.is_empty() { "{}" } else { &text }, &file)
            .map(|l| l.config.providers)
            .unwrap_or_else(|_| Config::default().providers);
        let checked =
            config::schedules::check_entry(&entry, &providers).map_err(|(field, message)| {
                let field = if field.is_empty() {
                    "schedule".to_string()
                } else {
                    format!("schedule.{field}")
                };
                ApiError {
                    code: "invalid".into(),
                    message: format!("{field}: {message}"),
                    field: Some(field),
                }
            })?;
        let mut entries = config::schedules::entries(&self.home);
        let replaced = replaces.map(|r| self.find(&entries, r)).transpose()?;
        let clash = entries
            .iter()
            .enumerate()
            .any(|(i, e)| Some(i) != replaced && named(e, &checked.name));
        if clash {
            return Err(ApiError {
                code: "conflict".into(),
                message: format!(
                    "schedule.name: a schedule named {:?} exists already",
                    checked.name
                ),
                field: Some("schedule.name".into()),
            });
        }
        match replaced {
            Some(i) => entries[i] = entry,
            None => entries.push(entry),
        }
        self.write(entries)
    }

    fn remove(&self, name: &str) -> Result<(), ApiError> {
        let mut entries = config::schedules::entries(&self.home);
        let i = self.find(&entries, name)?;
        entries.remove(i);
        self.write(entries)
    }

    fn pause(&self, name: &str, paused: bool) -> Result<(), ApiError> {
        let mut entries = config::schedules::entries(&self.home);
        let i = self.find(&entries, name)?;
        match entries[i].as_object_mut() {
            Some(o) if paused => {
                o.insert("paused".into(), Value::Bool(true));
            }
            Some(o) => {
                o.remove("paused");
            }
            None => return Err(ApiError::new("config", "the schedule is not an object")),
        }
        self.write(entries)
    }

    fn run_now(&self, name: &str) -> Result<(), ApiError> {
        let mut state = self.state();
        if !state.schedules.iter().any(|s| s.name == name) {
            return Err(unknown(name));
        }
        state.run_now.push(name.to_string());
        drop(state);
        self.wake.notify_one();
        Ok(())
    }
}
