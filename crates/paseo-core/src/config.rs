//! The user's configuration file, `$PASEO_HOME/config.json`: which providers exist, how their
//! binaries are launched, the MCP server's port, and storage bounds.
//!
//! A missing file means defaults. Anything wrong in the file is an error that names the file and
//! the field path (`config.json: providers.mybot.command: expected a non-empty array of strings`),
//! so the user can fix it. [`Config::parse`] refuses such a file; a start reads it leniently
//! ([`Config::parse_lenient`]): what is wrong is left out and reported, the rest applies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::model::Budget;
use crate::store::{quarantine, Layout};
use read::Object;

mod hosts;
mod limits;
mod notifications;
mod read;
mod sandbox;
pub mod schedules;
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
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);
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
    pub start_timeout: Duration,
    /// `hosts`: other machines reached with the user's ssh (SPEC 17).
    pub hosts: Vec<Host>,
    /// `schedules`: recurring work (SPEC 20).
    pub schedules: Vec<crate::model::schedule::Schedule>,
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
            schedules: Vec::new(),
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
        let field = |(path, message)| ConfigError::Field {
            file: file.to_string(),
            path,
            message,
        };
        let Object(f) = read::read::<Object<File>>(root).map_err(field)?;
        f.into_config().map_err(field)
    }
}

/// config.json as written: every key may be left out, and then keeps its default.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct File {
    providers: Object<BTreeMap<ProviderId, Object<ProviderEntry>>>,
    mcp: Object<McpConfig>,
    storage: Object<StorageConfig>,
    limits: Object<Limits>,
    /// Read by [`Budget::parse`], which `create_agent`'s input shares.
    #[serde(deserialize_with = "read::some")]
    budget: Option<Value>,
    notifications: Object<NotificationsConfig>,
    sandbox: Object<SandboxConfig>,
    #[serde(deserialize_with = "start_timeout")]
    start_timeout_secs: Option<Duration>,
    hosts: Vec<Object<hosts::Entry>>,
    /// Each read on its own (`schedules.rs`), so a bad one costs only itself.
    schedules: Vec<Value>,
    /// A note for whoever edits the file (the starter file's key list): any value.
    #[serde(rename = "$comment")]
    _comment: IgnoredAny,
}

fn start_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    read::whole(
        d,
        1..=MAX_START_TIMEOUT_SECS,
        format_args!("expected a number of seconds, 1 to {MAX_START_TIMEOUT_SECS}"),
    )
    .map(|secs| Some(Duration::from_secs(secs)))
}

impl File {
    /// The configuration the file describes, once the rules that span fields hold; an error
    /// is the path at fault and why.
    fn into_config(self) -> Result<Config, (String, String)> {
        let mut providers = Config::default().providers;
        for (ProviderId(id), Object(entry)) in self.providers.0 {
            let provider = entry.into_provider(&id)?;
            providers.insert(id, provider);
        }
        let budget = self
            .budget
            .map(|b| Budget::parse(&b, "budget"))
            .transpose()?;
        Ok(Config {
            mcp: self.mcp.0,
            storage: self.storage.0,
            limits: self.limits.0,
            budget: budget.filter(|b| !b.is_empty()),
            notifications: self.notifications.0,
            sandbox: self.sandbox.0,
            start_timeout: self.start_timeout_secs.unwrap_or(DEFAULT_START_TIMEOUT),
            hosts: hosts::checked(self.hosts)?,
            schedules: schedules::checked(&self.schedules, &providers)?,
            providers,
        })
    }
}

/// A provider as the file spells it: its kind may be left to the built-in provider of its id.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct ProviderEntry {
    #[serde(deserialize_with = "kind")]
    kind: Option<ProviderKind>,
    #[serde(deserialize_with = "read::some")]
    label: Option<String>,
    #[serde(deserialize_with = "read::argv")]
    command: Option<Vec<String>>,
    stdin: bool,
    #[serde(deserialize_with = "read::some")]
    reads_prompts: Option<bool>,
    env: Object<BTreeMap<String, String>>,
    models: Vec<String>,
    unconfined: bool,
}

fn kind<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ProviderKind>, D::Error> {
    read::name(d).map(Some)
}

impl ProviderEntry {
    /// The provider `id` this entry configures, once the rules that span its fields hold; an
    /// error is the path at fault and why.
    fn into_provider(self, id: &str) -> Result<ProviderConfig, (String, String)> {
        let at = format!("providers.{id}");
        let path = |field: &str| format!("{at}.{field}");
        let builtin = BUILTIN_PROVIDERS
            .iter()
            .find(|(b, _)| *b == id)
            .map(|(_, k)| *k);
        let kind = match (self.kind, builtin) {
            (Some(kind), Some(b)) if kind != b => Err(format!(
                "the built-in provider is of kind {:?}; use another id for a {:?} provider",
                b.as_str(),
                kind.as_str()
            )),
            (Some(kind), _) | (None, Some(kind)) => Ok(kind),
            (None, None) => {
                Err(r#"missing (expected "shell", "command", "claude" or "codex")"#.into())
            }
        }
        .map_err(|why| (path("kind"), why))?;
        if let Some(argv) = &self.command {
            read::check_program(argv, &at)?;
        }
        if kind == ProviderKind::Command {
            let Some(argv) = &self.command else {
                return Err((path("command"), read::ARGV.to_string()));
            };
            template::check_template(argv)
                .map_err(|(i, why)| (path(&format!("command[{i}]")), why))?;
        }
        for (name, value) in &self.env.0 {
            let why = if name.is_empty() || name.contains(['=', '\0']) {
                "invalid variable name"
            } else if value.contains('\0') {
                "contains a NUL character"
            } else {
                continue;
            };
            return Err((path(&format!("env.{name}")), why.to_string()));
        }
        Ok(ProviderConfig {
            kind,
            label: self.label,
            command: self.command,
            stdin: self.stdin,
            reads_prompts: self.reads_prompts,
            env: self.env.0,
            models: self.models,
            unconfined: self.unconfined,
        })
    }
}

/// A key of `providers`. Checked as the key is read, so that a bad id is named before
/// anything inside its entry (`providers.a/b`).
#[derive(PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(try_from = "String")]
struct ProviderId(String);

impl TryFrom<String> for ProviderId {
    type Error = &'static str;

    fn try_from(id: String) -> Result<Self, Self::Error> {
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
        let valid = (1..=64).contains(&id.len()) && id.bytes().all(word);
        valid
            .then_some(ProviderId(id))
            .ok_or("invalid provider id: expected 1 to 64 letters, digits, '-' or '_'")
    }
}

#[cfg(test)]
mod tests;
