//! Starting from a configuration file that is partly wrong (SPEC 11: bad input loses nothing).
//! The strict parser ([`Config::parse_value`]) stays the one judge of what is valid, and names
//! the first problem by its path; what that path names is taken out of the file's JSON and the
//! rest is judged again. So an unknown key (a typo, or a key a newer version writes) costs only
//! itself, and an invalid value only its own setting, which keeps its default.

use serde_json::{Map, Value};

use super::{Config, ConfigError};

/// A configuration read with what could not be used in it.
#[derive(Debug)]
pub struct Lenient {
    pub config: Config,
    /// One line per problem, naming the file and the path (for the log and the windows).
    pub problems: Vec<Problem>,
}

/// One part of the file that was left out.
#[derive(Debug)]
pub struct Problem {
    pub error: ConfigError,
    /// An unknown key (a warning: nothing the user set was lost) rather than an invalid value.
    pub unknown: bool,
    /// What was left out, as a path.
    pub dropped: String,
}

impl Problem {
    /// The line the log keeps and the windows show.
    pub fn notice(&self) -> String {
        let path = match &self.error {
            ConfigError::Field { path, .. } => setting_of(path),
            _ => "",
        };
        if self.dropped.starts_with("schedules[") {
            format!(
                "{}; this schedule is left out, the rest of the file applies",
                self.error
            )
        } else if self.unknown {
            format!("{}; ignored, the rest of the file applies", self.error)
        } else if self.dropped == path {
            format!(
                "{}; this setting keeps its default, the rest of the file applies",
                self.error
            )
        } else {
            format!(
                "{}; {} is ignored, the rest of the file applies",
                self.error, self.dropped
            )
        }
    }
}

impl Config {
    /// [`Config::parse`], leaving out what is wrong instead of refusing the file. Only a file
    /// that is not JSON, or not an object, is refused.
    pub fn parse_lenient(text: &str, file: &str) -> Result<Lenient, ConfigError> {
        let mut root: Value = serde_json::from_str(text).map_err(|e| ConfigError::Json {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        let mut problems = Vec::new();
        loop {
            let error = match Config::parse_value(&root, file) {
                Ok(config) => return Ok(Lenient { config, problems }),
                Err(e) => e,
            };
            let (path, unknown) = match &error {
                ConfigError::Field { path, message, .. } => (
                    setting_of(path).to_string(),
                    message.starts_with("unknown field"),
                ),
                _ => return Err(error),
            };
            // Each round takes something out of the file, so this ends.
            match root.as_object_mut().and_then(|o| remove(o, &path)) {
                Some(dropped) => problems.push(Problem {
                    error,
                    unknown,
                    dropped,
                }),
                None => return Err(error),
            }
        }
    }
}

/// The setting a problem's path lies in: an array is one setting (`sandbox.hide[1]` →
/// `sandbox.hide`).
fn setting_of(path: &str) -> &str {
    // The hosts are one setting: a bad entry leaves them all out rather than shifting the
    // others' places (`hosts[1].name`).
    if path.starts_with("hosts[") {
        return "hosts";
    }
    // A schedule is one setting of its own (SPEC 20): a bad one leaves only itself out
    // (`schedules[1].cron` → `schedules[1]`).
    if path.starts_with("schedules[") {
        return path.find(']').map_or(path, |end| &path[..=end]);
    }
    let mut p = path;
    while let Some(open) = p.strip_suffix(']').and_then(|s| s.rfind('[')) {
        p = &p[..open];
    }
    p
}

/// Removes what `path` names from `obj` and returns the path removed. A path that names
/// nothing there (a missing required field) removes the entry that needed it. Keys may contain
/// dots (an `env` variable's name), so the longest key that starts the path is taken.
fn remove(obj: &mut Map<String, Value>, path: &str) -> Option<String> {
    // One schedule is left as `null` where it was, so the others keep their places (and the
    // paths their problems are named by); the reader skips it.
    if let Some(i) = path
        .strip_prefix("schedules[")
        .and_then(|r| r.strip_suffix(']'))
        .and_then(|i| i.parse::<usize>().ok())
    {
        let entry = obj.get_mut("schedules")?.as_array_mut()?.get_mut(i)?;
        if entry.is_null() {
            return None;
        }
        *entry = Value::Null;
        return Some(path.to_string());
    }
    let key = obj
        .keys()
        .filter(|k| {
            path == k.as_str()
                || path
                    .strip_prefix(k.as_str())
                    .is_some_and(|r| r.starts_with('.'))
        })
        .max_by_key(|k| k.len())?
        .clone();
    if path == key {
        obj.remove(&key);
        return Some(key);
    }
    let inner = obj.get_mut(&key)?.as_object_mut();
    match inner.and_then(|o| remove(o, &path[key.len() + 1..])) {
        Some(r) => Some(format!("{key}.{r}")),
        None => {
            obj.remove(&key);
            Some(key)
        }
    }
}
