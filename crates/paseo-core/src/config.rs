//! The user's configuration file, `$PASEO_HOME/config.json`: which providers exist, how their
//! binaries are launched, the MCP server's port, and storage bounds.
//!
//! A missing file means defaults. Anything wrong in the file is an error that names the file and
//! the field path (`config.json: providers.mybot.command: expected a non-empty array of strings`),
//! so the user can fix it. [`Config::parse`] refuses such a file; a start reads it leniently
//! ([`Config::parse_lenient`]): what is wrong is left out and reported, the rest applies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::store::{quarantine, Layout};

mod hosts;
mod limits;
mod notifications;
mod read;
mod sandbox;
mod storage;
pub mod template;
mod tolerant;
pub use hosts::{check as check_host, write_hosts, Host};
pub use limits::Limits;
pub use notifications::{write_notifications, NotificationsConfig};
pub use sandbox::{EngineChoice, SandboxConfig, DEFAULT_HIDE};
pub use storage::{StorageConfig, DEFAULT_TRASH_DAYS, MAX_TRASH_DAYS, MIN_TIMELINE_BYTES};
pub use tolerant::{Lenient, Problem};

/// What Settings opens when there is no `config.json` yet: nothing set (every key keeps its
/// default, as with no file), and a note listing the keys with their defaults, so the user sees
/// what can go there without the docs at hand.
pub const STARTER: &str = r#"{
  "$comment": [
    "Paseo's settings. Put here only what you change: every key left out keeps its default.",
    "The keys, each optional (defaults shown):",
    "  \"limits\": {\"maxLiveAgents\": 50, \"maxDepth\": 8, \"createPerMinute\": 30}",
    "  \"budget\": {\"treeTokens\": 200000, \"treeCostUsd\": 5}  (none by default: a cap on every new root agent's tree)",
    "  \"notifications\": {\"enabled\": true, \"permission\": true, \"error\": true, \"finished\": true, \"subagentFinished\": false}",
    "  \"sandbox\": {\"enabled\": true, \"network\": true, \"hide\": [\"~/.ssh\", \"…paths no agent may read\"]}",
    "  \"providers\": {\"claude\": {\"command\": [\"/opt/bin/claude-wrapper\"], \"env\": {\"ANTHROPIC_BASE_URL\": \"http://127.0.0.1:4000\"}}, \"mybot\": {\"kind\": \"command\", \"command\": [\"mybot\", \"{prompt}\"]}}",
    "  \"hosts\": [{\"name\": \"box\", \"ssh\": \"me@box\"}]",
    "  \"storage\": {\"timelineMaxBytes\": 67108864, \"trashDays\": 7}",
    "  \"mcp\": {\"port\": 7777}  (none by default: a free port)   \"startTimeoutSecs\": 60",
    "Every key in detail: docs/providers.md and docs/data-model.md in Paseo's source.",
    "A mistake costs only its own setting: the app says which and keeps the rest."
  ]
}
"#;

/// The ids of the providers that exist without any configuration.
pub const BUILTIN_PROVIDERS: [(&str, ProviderKind); 3] = [
    ("shell", ProviderKind::Shell),
    ("claude", ProviderKind::Claude),
    ("codex", ProviderKind::Codex),
];

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: invalid JSON: {message}")]
    Json { file: String, message: String },
    #[error("{file}: {path}: {message}")]
    Field {
        file: String,
        path: String,
        message: String,
    },
}

pub use crate::model::ProviderKind;

/// One provider's settings after validation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub label: Option<String>,
    /// The argv prefix that replaces the default binary (for `command`: the whole template).
    pub command: Option<Vec<String>>,
    /// `command` providers: write the prompt to stdin instead of substituting `{prompt}`.
    pub stdin: bool,
    /// `command` providers: whether the agent reads its prompts (and so receives finish notices
    /// as turn input). Defaults to `stdin`.
    pub reads_prompts: Option<bool>,
    pub env: BTreeMap<String, String>,
    pub models: Vec<String>,
    /// `unconfined`: its agents run outside the sandbox (SPEC 16), the user's choice.
    pub unconfined: bool,
}

impl ProviderConfig {
    pub fn new(kind: ProviderKind) -> Self {
        ProviderConfig {
            kind,
            label: None,
            command: None,
            stdin: false,
            reads_prompts: None,
            env: BTreeMap::new(),
            models: Vec::new(),
            unconfined: false,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    #[serde(deserialize_with = "port")]
    pub port: Option<u16>,
}

fn port<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u16>, D::Error> {
    read::whole(d, .., "expected a port number (0 to 65535)").map(Some)
}

/// How long a provider session may take to become ready unless `startTimeoutSecs` says.
pub const DEFAULT_START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// The longest `startTimeoutSecs` accepted (an hour).
const MAX_START_TIMEOUT_SECS: u64 = 3600;

/// The whole configuration. `providers` always holds the built-in providers (possibly
/// overridden) plus the user's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub providers: BTreeMap<String, ProviderConfig>,
    pub mcp: McpConfig,
    pub storage: StorageConfig,
    pub limits: Limits,
    /// `budget` (SPEC 18): every new root agent's budget.
    pub budget: Option<crate::model::Budget>,
    pub notifications: NotificationsConfig,
    pub sandbox: SandboxConfig,
    /// `startTimeoutSecs`: the bound of every provider session's start (SPEC 11).
    pub start_timeout: std::time::Duration,
    /// `hosts`: other machines reached with the user's ssh (SPEC 17).
    pub hosts: Vec<Host>,
}

impl Default for Config {
    fn default() -> Self {
        let providers = BUILTIN_PROVIDERS
            .iter()
            .map(|(id, kind)| (id.to_string(), ProviderConfig::new(*kind)))
            .collect();
        Config {
            providers,
            mcp: McpConfig::default(),
            storage: StorageConfig::default(),
            limits: Default::default(),
            budget: None,
            notifications: NotificationsConfig::default(),
            sandbox: SandboxConfig::default(),
            start_timeout: DEFAULT_START_TIMEOUT,
            hosts: Vec::new(),
        }
    }
}

impl Config {
    /// The configuration file of a data root.
    pub fn path(paseo_home: &Path) -> PathBuf {
        paseo_home.join("config.json")
    }

    /// Loads `$PASEO_HOME/config.json`; a missing file gives the defaults.
    pub fn load(paseo_home: &Path) -> Result<Config, ConfigError> {
        let path = Self::path(paseo_home);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(source) => Err(ConfigError::Read {
                file: path.display().to_string(),
                source,
            }),
        }
    }

    /// Loads the configuration a start runs with, and the notices (also logged) to show. An
    /// unknown key is a warning and an invalid value costs only its own setting, named by its
    /// path; the rest of the file applies (SPEC 11: one typo, or a key a newer version wrote,
    /// must not take every provider's `command`, the port and the limits with it). A file that
    /// cannot be used at all (unreadable, not JSON, not an object) does not lock the user out:
    /// the defaults run and a copy of the file goes to `quarantine/` (when its bytes can be
    /// read). The file itself stays for the user to fix: the app never rewrites a bad file (the
    /// only write, the ☰ menu's notification toggle, refuses one).
    pub fn load_or_default(paseo_home: &Path) -> (Config, Vec<String>) {
        let path = Self::path(paseo_home);
        let file = path.display().to_string();
        let read = match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse_lenient(&text, &file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return (Config::default(), vec![])
            }
            Err(source) => Err(ConfigError::Read { file, source }),
        };
        let error = match read {
            Ok(Lenient { config, problems }) => {
                let notices = problems
                    .iter()
                    .map(|p| {
                        let notice = p.notice();
                        if p.unknown {
                            tracing::warn!("{notice}");
                        } else {
                            tracing::error!("{notice}");
                        }
                        notice
                    })
                    .collect();
                return (config, notices);
            }
            Err(e) => e,
        };
        let layout = Layout::new(paseo_home);
        let aside = match quarantine::set_aside(&layout, &path, &error.to_string(), true) {
            Ok(q) => format!("a copy is in {}", q.to),
            Err(m) => m,
        };
        let notice = format!("{error} (using the default configuration; {aside})");
        tracing::error!("{notice}");
        (Config::default(), vec![notice])
    }

    /// Parses the text of a configuration file; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let root: Value = serde_json::from_str(text).map_err(|e| ConfigError::Json {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        Self::parse_value(&root, file)
    }

    /// [`Config::parse`] of the file's JSON; the first problem is the error.
    fn parse_value(root: &Value, file: &str) -> Result<Config, ConfigError> {
        let p = Parser { file };
        let root = p.object(root, "(top level)")?;
        let mut config = Config::default();
        for (key, value) in root {
            match key.as_str() {
                "providers" => {
                    let providers = p.object(value, "providers")?;
                    for (id, entry) in providers {
                        let path = format!("providers.{id}");
                        if !valid_provider_id(id) {
                            return Err(p.err(
                                &path,
                                "invalid provider id: expected 1 to 64 letters, digits, '-' or '_'",
                            ));
                        }
                        let builtin = BUILTIN_PROVIDERS
                            .iter()
                            .find(|(b, _)| b == id)
                            .map(|(_, k)| *k);
                        let parsed = p.provider(entry, &path, builtin)?;
                        config.providers.insert(id.clone(), parsed);
                    }
                }
                "mcp" => config.mcp = p.section(value, "mcp")?,
                "storage" => config.storage = p.section(value, "storage")?,
                "limits" => config.limits = p.section(value, "limits")?,
                "budget" => {
                    config.budget = Some(
                        crate::model::Budget::parse(value, "budget")
                            .map_err(|(path, message)| p.err(&path, &message))?,
                    )
                    .filter(|b| !b.is_empty());
                }
                "notifications" => config.notifications = p.section(value, "notifications")?,
                "sandbox" => config.sandbox = p.section(value, "sandbox")?,
                "hosts" => {
                    config.hosts = hosts::parse_hosts(value)
                        .map_err(|(path, message)| p.err(&path, &message))?;
                }
                // A note for whoever edits the file (the starter file's key list): any value.
                "$comment" => {}
                "startTimeoutSecs" => {
                    let what =
                        format!("expected a number of seconds, 1 to {MAX_START_TIMEOUT_SECS}");
                    let secs = value
                        .as_u64()
                        .filter(|n| (1..=MAX_START_TIMEOUT_SECS).contains(n))
                        .ok_or_else(|| p.err("startTimeoutSecs", &what))?;
                    config.start_timeout = std::time::Duration::from_secs(secs);
                }
                other => {
                    return Err(p.err(
                        other,
                        "unknown field (expected providers, mcp, storage, limits, budget, \
                         notifications, sandbox, startTimeoutSecs or hosts)",
                    ))
                }
            }
        }
        Ok(config)
    }
}

fn valid_provider_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

struct Parser<'a> {
    file: &'a str,
}

impl Parser<'_> {
    /// Reads the section `key` of the file with its type's `Deserialize`.
    fn section<T: for<'v> Deserialize<'v>>(&self, v: &Value, key: &str) -> Result<T, ConfigError> {
        match read::read::<read::Object<T>>(v) {
            Ok(read::Object(section)) => Ok(section),
            Err((path, message)) if path.is_empty() => Err(self.err(key, &message)),
            Err((path, message)) => Err(self.err(&format!("{key}.{path}"), &message)),
        }
    }

    fn err(&self, path: &str, message: &str) -> ConfigError {
        ConfigError::Field {
            file: self.file.to_string(),
            path: path.to_string(),
            message: message.to_string(),
        }
    }

    fn object<'v>(&self, v: &'v Value, path: &str) -> Result<&'v Map<String, Value>, ConfigError> {
        v.as_object()
            .ok_or_else(|| self.err(path, "expected an object"))
    }

    fn string(&self, v: &Value, path: &str) -> Result<String, ConfigError> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| self.err(path, "expected a string"))
    }

    fn strings(&self, v: &Value, path: &str, non_empty: bool) -> Result<Vec<String>, ConfigError> {
        let what = if non_empty {
            "expected a non-empty array of strings"
        } else {
            "expected an array of strings"
        };
        let arr = v.as_array().ok_or_else(|| self.err(path, what))?;
        if non_empty && arr.is_empty() {
            return Err(self.err(path, what));
        }
        arr.iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| self.err(path, what))
    }

    fn provider(
        &self,
        v: &Value,
        path: &str,
        builtin: Option<ProviderKind>,
    ) -> Result<ProviderConfig, ConfigError> {
        let obj = self.object(v, path)?;
        let kind = match obj.get("kind") {
            Some(k) => {
                let s = self.string(k, &format!("{path}.kind"))?;
                let kind = ProviderKind::parse(&s).ok_or_else(|| {
                    self.err(
                        &format!("{path}.kind"),
                        &format!(
                            "unknown kind {s:?} (expected \"shell\", \"command\", \"claude\" or \"codex\")"
                        ),
                    )
                })?;
                if let Some(b) = builtin {
                    if b != kind {
                        return Err(self.err(
                            &format!("{path}.kind"),
                            &format!(
                                "the built-in provider is of kind {:?}; use another id for a {:?} provider",
                                b.as_str(),
                                kind.as_str()
                            ),
                        ));
                    }
                }
                kind
            }
            None => builtin.ok_or_else(|| {
                self.err(
                    &format!("{path}.kind"),
                    "missing (expected \"shell\", \"command\", \"claude\" or \"codex\")",
                )
            })?,
        };
        let mut cfg = ProviderConfig::new(kind);
        for (key, value) in obj {
            let field = format!("{path}.{key}");
            match key.as_str() {
                "kind" => {}
                "label" => cfg.label = Some(self.string(value, &field)?),
                "command" => {
                    let argv = self.strings(value, &field, true)?;
                    if argv[0].trim().is_empty() {
                        return Err(self.err(&format!("{field}[0]"), "the program is empty"));
                    }
                    cfg.command = Some(argv);
                }
                "stdin" => {
                    cfg.stdin = value
                        .as_bool()
                        .ok_or_else(|| self.err(&field, "expected true or false"))?
                }
                "readsPrompts" => {
                    cfg.reads_prompts = Some(
                        value
                            .as_bool()
                            .ok_or_else(|| self.err(&field, "expected true or false"))?,
                    )
                }
                "env" => {
                    let env = self.object(value, &field)?;
                    for (k, v) in env {
                        let p = format!("{field}.{k}");
                        if k.is_empty() || k.contains('=') || k.contains('\0') {
                            return Err(self.err(&p, "invalid variable name"));
                        }
                        let s = self.string(v, &p)?;
                        if s.contains('\0') {
                            return Err(self.err(&p, "contains a NUL character"));
                        }
                        cfg.env.insert(k.clone(), s);
                    }
                }
                "models" => cfg.models = self.strings(value, &field, false)?,
                "unconfined" => {
                    cfg.unconfined = value
                        .as_bool()
                        .ok_or_else(|| self.err(&field, "expected true or false"))?
                }
                other => {
                    return Err(self.err(
                        &format!("{path}.{other}"),
                        "unknown field (expected kind, label, command, stdin, readsPrompts, env, models or unconfined)",
                    ))
                }
            }
        }
        match (&cfg.command, kind) {
            (None, ProviderKind::Command) => {
                return Err(self.err(
                    &format!("{path}.command"),
                    "expected a non-empty array of strings",
                ))
            }
            (Some(argv), ProviderKind::Command) => template::check_template(argv)
                .map_err(|(i, m)| self.err(&format!("{path}.command[{i}]"), &m))?,
            _ => {}
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests;
