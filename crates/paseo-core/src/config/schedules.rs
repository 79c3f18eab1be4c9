//! `"schedules"` in config.json (SPEC 20): recurring work, each
//! `{"name", "cron" | "every" | "at", "provider", "prompt", "workspace", "model"?, "mode"?,
//! "budget"?, "autoArchive"?, "overlap"?, "paused"?}`. Read one by one: a bad schedule is named
//! by its path (`schedules[1].cron`) and costs only itself (the tolerant reader leaves it out,
//! `tolerant.rs`), never the others.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::read::{self, Object};
use super::ProviderConfig;
use crate::model::schedule::{Overlap, Schedule, ScheduleWorkspace, When};
use crate::model::tagged::tagged;
use crate::model::Budget;

/// The longest schedule name: it is a label value and shown in rows.
const MAX_NAME: usize = 64;

/// A schedule as the file spells it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Entry {
    name: String,
    #[serde(default)]
    cron: Option<String>,
    #[serde(default)]
    every: Option<String>,
    #[serde(default)]
    at: Option<String>,
    provider: String,
    prompt: String,
    workspace: WorkspaceEntry,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    budget: Option<Value>,
    #[serde(default)]
    auto_archive: bool,
    #[serde(default)]
    overlap: Option<String>,
    #[serde(default)]
    paused: bool,
}

enum WorkspaceEntry {
    Directory(DirectoryEntry),
    Existing(ExistingEntry),
    Worktree(WorktreeEntry),
}

tagged!(WorkspaceEntry {
    "directory" => Directory(DirectoryEntry),
    "existing" => Existing(ExistingEntry),
    "worktree" => Worktree(WorktreeEntry),
});

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DirectoryEntry {
    path: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExistingEntry {
    workspace_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorktreeEntry {
    repo: String,
    #[serde(default)]
    base: Option<String>,
}

/// The file's `schedules`, each checked; `null` entries are what the tolerant reader left of a
/// bad one. On error: the path at fault (`schedules[1].every`) and why.
pub(super) fn checked(
    entries: &[Value],
    providers: &BTreeMap<String, ProviderConfig>,
) -> Result<Vec<Schedule>, (String, String)> {
    let mut out: Vec<Schedule> = Vec::with_capacity(entries.len());
    for (i, value) in entries.iter().enumerate() {
        if value.is_null() {
            continue;
        }
        let at = |field: &str| format!("schedules[{i}].{field}");
        let Object(entry) = read::read::<Object<Entry>>(value).map_err(|(path, why)| {
            let path = if path == "(top level)" {
                format!("schedules[{i}]")
            } else {
                at(&path)
            };
            (path, why)
        })?;
        let s = entry
            .into_schedule(providers)
            .map_err(|(f, why)| (at(&f), why))?;
        if out.iter().any(|o| o.name == s.name) {
            return Err((
                at("name"),
                format!("a second schedule named {:?}: names must be unique", s.name),
            ));
        }
        out.push(s);
    }
    Ok(out)
}

impl Entry {
    fn into_schedule(
        self,
        providers: &BTreeMap<String, ProviderConfig>,
    ) -> Result<Schedule, (String, String)> {
        let field = |f: &str, why: String| (f.to_string(), why);
        let name = self.name;
        if name.trim().is_empty()
            || name.trim() != name
            || name.chars().count() > MAX_NAME
            || name.chars().any(|c| c.is_control())
        {
            return Err(field(
                "name",
                format!("expected 1 to {MAX_NAME} characters, no control characters, no leading or trailing spaces"),
            ));
        }
        let when = When::one_of(
            self.cron.as_deref(),
            self.every.as_deref(),
            self.at.as_deref(),
        )
        .map_err(|(f, why)| field(f, why))?;
        if !providers.contains_key(&self.provider) {
            let known: Vec<&str> = providers.keys().map(String::as_str).collect();
            return Err(field(
                "provider",
                format!(
                    "no provider {:?} (configured: {})",
                    self.provider,
                    known.join(", ")
                ),
            ));
        }
        if self.prompt.trim().is_empty() {
            return Err(field("prompt", "the prompt is empty".into()));
        }
        let workspace = match self.workspace {
            WorkspaceEntry::Directory(d) => {
                existing_dir(&d.path).map_err(|w| field("workspace.path", w))?;
                ScheduleWorkspace::Directory { path: d.path }
            }
            WorkspaceEntry::Existing(e) => {
                if e.workspace_id.trim().is_empty() {
                    return Err(field(
                        "workspace.workspaceId",
                        "the workspace id is empty".into(),
                    ));
                }
                ScheduleWorkspace::Existing {
                    workspace_id: e.workspace_id,
                }
            }
            WorkspaceEntry::Worktree(w) => {
                existing_dir(&w.repo).map_err(|why| field("workspace.repo", why))?;
                ScheduleWorkspace::Worktree {
                    repo: w.repo,
                    base: w.base.filter(|b| !b.trim().is_empty()),
                }
            }
        };
        let budget = self
            .budget
            .map(|b| Budget::parse(&b, "budget"))
            .transpose()?
            .filter(|b| !b.is_empty());
        let overlap = match self.overlap {
            Some(o) => o.parse::<Overlap>().map_err(|w| field("overlap", w))?,
            None => Overlap::default(),
        };
        Ok(Schedule {
            name,
            when,
            provider: self.provider,
            prompt: self.prompt,
            workspace,
            model: self.model.filter(|m| !m.trim().is_empty()),
            mode: self.mode.filter(|m| !m.trim().is_empty()),
            budget,
            auto_archive: self.auto_archive,
            overlap,
            paused: self.paused,
        })
    }
}

/// One entry as the schedule verbs give it (`saveSchedule`): checked as the file's are, against
/// the configured providers; an error is the field at fault (`cron`, `workspace.path`) and why.
pub fn check_entry(
    entry: &Value,
    providers: &BTreeMap<String, ProviderConfig>,
) -> Result<Schedule, (String, String)> {
    let strip = |(path, why): (String, String)| {
        let field = path
            .strip_prefix("schedules[0]")
            .map(|f| f.trim_start_matches('.').to_string())
            .unwrap_or(path);
        (field, why)
    };
    let mut v = checked(std::slice::from_ref(entry), providers).map_err(strip)?;
    if entry.is_null() || v.is_empty() {
        return Err((String::new(), "expected a schedule object".into()));
    }
    Ok(v.remove(0))
}

/// config.json's `schedules` as written (an entry that is not valid included), for the verbs
/// that change one of them and keep the rest as they are.
pub fn entries(paseo_home: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(super::Config::path(paseo_home)).unwrap_or_default();
    serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get("schedules").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

/// Sets `schedules` in config.json (the rest kept; a file that does not parse is left for the
/// user to fix, as every write of the app's).
pub fn write(paseo_home: &Path, entries: Vec<Value>) -> Result<(), super::ConfigError> {
    super::notifications::write_key(paseo_home, "schedules", Value::Array(entries))
}

/// An absolute path to a directory that exists now.
fn existing_dir(path: &str) -> Result<(), String> {
    let p = Path::new(path);
    if !p.is_absolute() {
        return Err(format!("{path:?} is not an absolute path"));
    }
    if !p.is_dir() {
        return Err(format!("{path:?} does not exist or is not a directory"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::model::schedule::{Overlap, ScheduleWorkspace, When};

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(text, "config.json").map_err(|e| e.to_string())
    }

    fn with(schedules: &str) -> String {
        format!(r#"{{"schedules": {schedules}}}"#)
    }

    #[test]
    fn schedules_are_read_with_every_field() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let c = parse(&with(&format!(
            r#"[{{"name": "nightly", "cron": "0 7 * * *", "provider": "shell", "prompt": "make check",
                 "workspace": {{"kind": "directory", "path": "{d}"}}, "budget": {{"treeTokens": 1000}},
                 "autoArchive": true, "overlap": "queue", "paused": true}},
                {{"name": "often", "every": "15m", "provider": "claude", "prompt": "triage",
                 "workspace": {{"kind": "worktree", "repo": "{d}", "base": "main"}}, "model": "opus"}},
                {{"name": "once", "at": "2026-12-24T07:00:00+01:00", "provider": "shell", "prompt": "x",
                 "workspace": {{"kind": "existing", "workspaceId": "w1"}}}}]"#
        )))
        .unwrap();
        let [n, o, a] = &c.schedules[..] else {
            panic!("{:?}", c.schedules)
        };
        assert_eq!(n.when, When::cron("0 7 * * *").unwrap());
        assert_eq!(n.overlap, Overlap::Queue);
        assert!(n.paused && n.auto_archive);
        assert_eq!(n.budget.unwrap().tree_tokens, Some(1000));
        assert_eq!(o.model.as_deref(), Some("opus"));
        assert_eq!(
            o.workspace,
            ScheduleWorkspace::Worktree {
                repo: d.to_string(),
                base: Some("main".into())
            }
        );
        assert_eq!(o.overlap, Overlap::Skip);
        assert_eq!(
            a.workspace,
            ScheduleWorkspace::Existing {
                workspace_id: "w1".into()
            }
        );
        assert!(parse("{}").unwrap().schedules.is_empty());
    }

    #[test]
    fn a_bad_schedule_is_refused_with_its_field_named() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let ws = format!(r#"{{"kind": "directory", "path": "{d}"}}"#);
        let cases = [
            (format!(r#"{{"name": "a", "every": "30s", "provider": "shell", "prompt": "x", "workspace": {ws}}}"#), "schedules[0].every: \"30s\" is under one minute"),
            (format!(r#"{{"name": "a", "cron": "0 0 31 2 *", "provider": "shell", "prompt": "x", "workspace": {ws}}}"#), "schedules[0].cron: \"0 0 31 2 *\" never fires"),
            (format!(r#"{{"name": "a", "provider": "shell", "prompt": "x", "workspace": {ws}}}"#), "schedules[0].cron: missing"),
            (format!(r#"{{"name": "a", "every": "1h", "at": "2026-12-24T07:00:00Z", "provider": "shell", "prompt": "x", "workspace": {ws}}}"#), "schedules[0].cron: give only one"),
            (format!(r#"{{"name": "a", "every": "1h", "provider": "nope", "prompt": "x", "workspace": {ws}}}"#), "schedules[0].provider: no provider \"nope\""),
            (format!(r#"{{"name": "a", "every": "1h", "provider": "shell", "prompt": " ", "workspace": {ws}}}"#), "schedules[0].prompt: the prompt is empty"),
            (r#"{"name": "a", "every": "1h", "provider": "shell", "prompt": "x", "workspace": {"kind": "directory", "path": "/no/such/dir"}}"#.to_string(), "schedules[0].workspace.path: \"/no/such/dir\" does not exist"),
            (format!(r#"{{"name": "a", "every": "1h", "provider": "shell", "prompt": "x", "workspace": {ws}, "when": "now"}}"#), "schedules[0].when: unknown field `when`"),
            (format!(r#"{{"name": "a", "every": "1h", "provider": "shell", "prompt": "x", "workspace": {ws}, "overlap": "later"}}"#), "schedules[0].overlap: \"later\""),
            (r#"{"name": "a", "every": "1h", "provider": "shell", "prompt": "x", "workspace": {"kind": "cloud"}}"#.to_string(), "schedules[0].workspace.kind: unknown variant `cloud`"),
            (format!(r#"{{"name": "", "every": "1h", "provider": "shell", "prompt": "x", "workspace": {ws}}}"#), "schedules[0].name: expected 1 to 64"),
        ];
        for (entry, want) in cases {
            let got = parse(&with(&format!("[{entry}]"))).unwrap_err();
            assert!(
                got.starts_with(&format!("config.json: {want}")),
                "{got}\nwanted: {want}"
            );
        }
        let twice = format!(
            r#"[{{"name": "a", "every": "1h", "provider": "shell", "prompt": "x", "workspace": {ws}}},
                {{"name": "a", "every": "2h", "provider": "shell", "prompt": "y", "workspace": {ws}}}]"#
        );
        assert!(parse(&with(&twice))
            .unwrap_err()
            .contains("schedules[1].name: a second schedule named \"a\""));
    }

    #[test]
    fn a_bad_schedule_costs_only_itself_when_the_app_starts() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let ws = format!(r#"{{"kind": "directory", "path": "{d}"}}"#);
        let text = format!(
            r#"{{"schedules": [
                {{"name": "bad", "every": "10s", "provider": "shell", "prompt": "x", "workspace": {ws}}},
                {{"name": "good", "every": "1h", "provider": "shell", "prompt": "y", "workspace": {ws}}},
                {{"name": "worse", "cron": "nope", "provider": "shell", "prompt": "z", "workspace": {ws}}}
            ], "limits": {{"maxLiveAgents": 3}}}}"#
        );
        let read = Config::parse_lenient(&text, "config.json").unwrap();
        let names: Vec<&str> = read
            .config
            .schedules
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, ["good"]);
        assert_eq!(read.config.limits.max_live_agents, 3);
        let notices: Vec<String> = read.problems.iter().map(|p| p.notice()).collect();
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices[0].starts_with("config.json: schedules[0].every: \"10s\" is under one minute; this schedule is left out, the rest of the file applies"), "{notices:?}");
        assert!(
            notices[1].starts_with("config.json: schedules[2].cron:"),
            "{notices:?}"
        );
    }
}
