//! The provider seam: how the runtime starts agent sessions and hears back from them.
//!
//! A [`Provider`] starts a [`Session`] for one agent. The session's methods never block: they hand
//! work to the session's own tasks, and everything the session has to say (ready, timeline items,
//! turn outcomes, permission requests, the process dying) comes back as [`ProviderEvent`]s through
//! the [`EventSink`] it was given. The sink is bounded, so a process that floods output is slowed
//! down by backpressure instead of growing memory.
//!
//! The providers: [`shell`] and [`command`] run one process per turn ([`oneshot`]); [`claude`]
//! and [`codex`] keep one CLI process per session and speak its JSON-lines protocol over stdio
//! ([`stdio`], with a pure parser per CLI in `claude/protocol.rs` and `codex/protocol.rs`).
//! [`process`] spawns and stops process groups; [`output`] carries output to the sink, styled
//! by [`ansi`].

pub mod ansi;
pub mod claude;
pub mod codex;
pub mod command;
pub mod groups;
pub mod oneshot;
pub mod output;
mod pgroup;
pub mod process;
pub mod redact;
pub mod secret_file;
pub mod shell;
pub mod stdio;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::config::{Config, ProviderConfig, ProviderKind};
use crate::model::{AgentConfig, AgentId, NewItem};
use process::AgentEnv;
// The turn and permission vocabulary lives in the model; providers speak it under these names.
pub use crate::model::{LastRun, PermissionRequest, TurnInput, TurnOutcome, TurnUsage};

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("provider {provider:?} is unavailable: {reason}")]
    Unavailable { provider: String, reason: String },
    #[error("unknown provider {0:?}")]
    Unknown(String),
    #[error("could not start {what}: {source}")]
    Spawn {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the agent session has ended")]
    SessionGone,
    #[error("{0}")]
    Protocol(String),
    #[error("{0}")]
    Invalid(String),
}

/// The MCP server name agents see (`mcp__paseo__<tool>`).
pub const MCP_SERVER_NAME: &str = "paseo";

/// How an agent reaches the app's MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpAccess {
    pub url: String,
    pub token: String,
    /// The names of the tools the server serves (read from the server's own tool list, so a
    /// new tool is pre-approved for Claude Code the day it is served: SPEC 9).
    pub tools: std::sync::Arc<[String]>,
    /// A folder only the user can enter (0700) where a provider whose CLI takes its MCP
    /// configuration from a file writes it (0600), so the token never appears on a command line
    /// (SPEC 14). The file is the session's: it is removed when the session ends.
    pub config_dir: PathBuf,
}

/// Everything a provider needs to start (or resume) one agent's session.
#[derive(Clone, Debug)]
pub struct SessionSpec {
    pub agent_id: AgentId,
    pub provider: String,
    pub cwd: PathBuf,
    pub config: AgentConfig,
    /// The provider session id to resume (from the record's `persistence`), if any.
    pub resume: Option<String>,
    /// Extra environment for the agent's processes (on top of the provider's config `env`).
    pub env: BTreeMap<String, String>,
    /// The MCP server and this agent's bearer token, once the MCP server runs.
    pub mcp: Option<McpAccess>,
    /// Where the agent's process groups are recorded while they run (crash cleanup).
    pub groups: Option<groups::GroupRecorder>,
    /// The box every process of the session runs in (SPEC 16); `None`: unconfined, by the
    /// user's choice. A provider adds its CLI's own state to it before it spawns.
    pub sandbox: Option<crate::sandbox::Plan>,
}

/// What a session reports. Turn events refer to the turn most recently sent.
#[derive(Clone, Debug, PartialEq)]
pub enum ProviderEvent {
    /// The session is ready for turns. Providers that know their session id up front (claude,
    /// codex) report `SessionId` before `Ready`; the others never have one.
    Ready,
    /// The provider's own session id, to store in `persistence` for resume.
    SessionId(String),
    /// Timeline content, batched.
    Items(Vec<NewItem>),
    /// The latest assistant text (or output tail) of the current turn: what `wait_for_agent`
    /// returns as `lastMessage`. Sent at least once per turn before its `TurnEnded` (empty
    /// when the turn produced no text).
    LastMessage(String),
    /// What the current turn consumed, as the CLI reported it; sent before its `TurnEnded`
    /// (claude, codex).
    Usage(TurnUsage),
    /// How the current turn's process ran; sent before its `TurnEnded` (shell, command).
    Run(LastRun),
    TurnEnded(TurnOutcome),
    Permission(PermissionRequest),
    /// The provider resolved a pending permission request on its own (e.g. it was canceled).
    PermissionResolved {
        request_id: String,
    },
    /// Status of an MCP server as the provider sees it, sent when it changes. Claude Code says
    /// `connected` / `failed` / `pending` / `needs-auth`; Codex `starting` / `ready` / `failed` /
    /// `cancelled`. `failed` for the `paseo` server means the agent cannot orchestrate.
    McpStatus {
        server: String,
        status: String,
    },
    /// The session's process is gone (or the session cannot go on, e.g. a thread that cannot
    /// be resumed). `message` says why (exit code or signal, and the end of its stderr). If a
    /// turn was running, `TurnEnded(Failed)` with the same message comes first, so every turn
    /// still ends exactly once; pending permission requests are reported resolved before that.
    /// Not sent after `close`.
    Exited {
        message: String,
    },
}

/// The channel a session reports through. Bounded: `send` waits when the runtime is behind.
#[derive(Clone, Debug)]
pub struct EventSink {
    agent_id: AgentId,
    generation: u64,
    tx: mpsc::Sender<SinkMessage>,
    /// Takes the app's tokens out of everything reported (see [`redact`]).
    redactor: Option<Arc<dyn redact::Redact>>,
}

/// What travels from sessions to the runtime: the agent, the session generation (so a stale
/// session's events are ignored), and the event.
#[derive(Debug)]
pub struct SinkMessage {
    pub agent_id: AgentId,
    pub generation: u64,
    pub event: ProviderEvent,
}

impl EventSink {
    pub fn new(agent_id: AgentId, generation: u64, tx: mpsc::Sender<SinkMessage>) -> Self {
        EventSink {
            agent_id,
            generation,
            tx,
            redactor: None,
        }
    }
    /// The sink that redacts every event with `r` before it reaches the runtime.
    pub fn with_redactor(mut self, r: Arc<dyn redact::Redact>) -> Self {
        self.redactor = Some(r);
        self
    }
    pub fn redactor(&self) -> Option<Arc<dyn redact::Redact>> {
        self.redactor.clone()
    }
    pub fn agent_id(&self) -> AgentId {
        self.agent_id
    }
    /// Sends one event; returns false when the runtime is gone (the session should wind down).
    pub async fn send(&self, mut event: ProviderEvent) -> bool {
        // The one place every provider's events pass: tokens never reach a timeline, a record
        // or an event (SPEC 16).
        if let Some(r) = &self.redactor {
            event.redact(&**r);
        }
        self.tx
            .send(SinkMessage {
                agent_id: self.agent_id,
                generation: self.generation,
                event,
            })
            .await
            .is_ok()
    }
}

/// What the UI and the MCP server show about a provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    pub id: String,
    pub label: String,
    /// `shell`, `command`, `claude` or `codex`.
    pub kind: String,
    pub available: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether its agents read prompts (and so receive finish notices as turn input). A shell
    /// agent cannot: its notices are only recorded in its timeline.
    pub reads_prompts: bool,
    /// Models the UI offers (free text is accepted too).
    pub models: Vec<String>,
    /// Its agents run outside the sandbox (config.json `providers.<id>.unconfined`).
    pub unconfined: bool,
}

/// What every provider is built from: its id and its configuration, and what follows from them
/// alone (its environments, its argv prefix, its info, its errors).
#[derive(Clone)]
struct Configured {
    id: String,
    config: ProviderConfig,
}

impl Configured {
    fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        Configured {
            id: id.into(),
            config,
        }
    }

    /// The environment programs are looked up in before any session: the provider's `env` over
    /// the app's.
    fn env(&self) -> AgentEnv {
        AgentEnv {
            set: self.config.env.clone(),
            ..AgentEnv::default()
        }
    }

    /// The environment of one session's processes.
    fn session_env(&self, spec: &SessionSpec) -> AgentEnv {
        let mut env = AgentEnv::new(
            spec.agent_id,
            &self.config.env,
            &spec.env,
            spec.mcp.as_ref(),
        );
        env.groups = spec.groups.clone().map(|g| (spec.agent_id, g));
        env.sandbox = spec.sandbox.clone().map(std::sync::Arc::new);
        env
    }

    /// The configured argv prefix, else `program` alone.
    fn command_or(&self, program: &str) -> Vec<String> {
        self.config
            .command
            .clone()
            .unwrap_or_else(|| vec![program.to_string()])
    }

    /// The provider's info; it is available unless there is a `reason` it is not.
    fn info(
        &self,
        kind: &str,
        label: &str,
        reason: Option<String>,
        reads_prompts: bool,
    ) -> ProviderInfo {
        ProviderInfo {
            id: self.id.clone(),
            label: self.config.label.clone().unwrap_or_else(|| label.into()),
            kind: kind.into(),
            available: reason.is_none(),
            reason,
            reads_prompts,
            models: self.config.models.clone(),
            unconfined: self.config.unconfined,
        }
    }

    /// The argv prefix of the agent CLI called `cli` (e.g. "Claude Code"): the configured
    /// command, else `program`. `Err` says why it cannot run: it is not installed.
    fn cli(&self, cli: &str, program: &str, env: &AgentEnv) -> Result<Vec<String>, String> {
        let prefix = self.command_or(program);
        match process::find_argv0(&prefix, env) {
            Ok(_) => Ok(prefix),
            Err(reason) => Err(format!("{cli} is not installed: {reason}")),
        }
    }

    /// What a session of the agent CLI `cli` starts from: the argv prefix of its installed
    /// program and the session's environment.
    fn cli_launch(
        &self,
        cli: &str,
        program: &str,
        spec: &SessionSpec,
    ) -> Result<(Vec<String>, AgentEnv), ProviderError> {
        let env = self.session_env(spec);
        let prefix = self
            .cli(cli, program, &env)
            .map_err(|reason| self.unavailable(reason))?;
        Ok((prefix, env))
    }

    /// Refuses a session: the provider cannot run, for `reason`.
    fn unavailable(&self, reason: String) -> ProviderError {
        ProviderError::Unavailable {
            provider: self.id.clone(),
            reason,
        }
    }
}

/// Locks a session's shared state. A session task that panicked while holding the lock must not
/// make every later call on the session panic too, so a poisoned lock is used as it is.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What [`Provider::start`] returns.
pub type SessionStart = BoxFuture<'static, Result<Box<dyn Session>, ProviderError>>;

/// A live session of one agent. Its methods must be called from within a tokio runtime (they
/// hand work to tasks of their own and never block).
pub trait Session: Send {
    /// Starts a turn with this input. The turn's events follow through the sink.
    fn send(&mut self, input: TurnInput) -> Result<(), ProviderError>;
    /// Asks the provider to stop the current turn; it answers with `TurnEnded(Canceled)`.
    fn interrupt(&mut self) -> Result<(), ProviderError>;
    /// Answers a permission request surfaced with `ProviderEvent::Permission`.
    fn respond_permission(&mut self, request_id: &str, allow: bool) -> Result<(), ProviderError>;
    /// Stops the session: the whole process tree is terminated (SIGTERM, grace, SIGKILL) and
    /// reaped. Resolves once nothing of it is left. It does not wait for the sink to be
    /// drained, so the runtime may await it from the task that drains the sink.
    fn close(self: Box<Self>) -> BoxFuture<'static, ()>;
}

/// A kind of agent.
pub trait Provider: Send + Sync {
    fn info(&self) -> ProviderInfo;
    /// Starts a session. Resolves once the process runs (or failed to start); readiness and
    /// everything after comes through `sink`.
    fn start(
        &self,
        spec: SessionSpec,
        sink: EventSink,
    ) -> BoxFuture<'static, Result<Box<dyn Session>, ProviderError>>;
}

/// The providers the app offers, by id.
#[derive(Clone, Default)]
pub struct ProviderRegistry {
    providers: BTreeMap<String, std::sync::Arc<dyn Provider>>,
    /// The configuration of each provider that has one: how the user launches it decides its
    /// agents' power (SPEC 14) and containment (SPEC 16).
    configs: BTreeMap<String, ProviderConfig>,
}

impl ProviderRegistry {
    pub fn new() -> Self {
        Self::default()
    }
    /// The providers a configuration defines: the built-in `shell`, `claude` and `codex` (with
    /// the user's overrides) and every user-defined provider.
    pub fn from_config(config: &Config) -> Self {
        let mut reg = Self::new();
        for (id, pc) in &config.providers {
            let provider: Arc<dyn Provider> = match pc.kind {
                ProviderKind::Shell => Arc::new(shell::ShellProvider::new(id, pc.clone())),
                ProviderKind::Command => Arc::new(command::CommandProvider::new(id, pc.clone())),
                ProviderKind::Claude => Arc::new(claude::ClaudeProvider::new(id, pc.clone())),
                ProviderKind::Codex => Arc::new(codex::CodexProvider::new(id, pc.clone())),
            };
            reg.insert_configured(id.clone(), provider, pc.clone());
        }
        reg
    }
    pub fn insert(&mut self, id: impl Into<String>, provider: std::sync::Arc<dyn Provider>) {
        let id = id.into();
        self.configs.remove(&id);
        self.providers.insert(id, provider);
    }
    /// A provider with the configuration it was built from.
    pub fn insert_configured(
        &mut self,
        id: impl Into<String>,
        provider: std::sync::Arc<dyn Provider>,
        config: ProviderConfig,
    ) {
        let id = id.into();
        self.providers.insert(id.clone(), provider);
        self.configs.insert(id, config);
    }
    /// The configuration provider `id` was built from, if it was.
    pub fn config(&self, id: &str) -> Option<&ProviderConfig> {
        self.configs.get(id)
    }
    /// What the power rule reads of each provider in `infos` (SPEC 14): its kind, its
    /// configured `command` and `env` values, and whether it is configured `unconfined`.
    pub fn trust(&self, infos: &[ProviderInfo]) -> BTreeMap<String, crate::model::ProviderTrust> {
        infos
            .iter()
            .map(|i| {
                let config = self.configs.get(&i.id);
                let launch = config
                    .map(|c| {
                        let command = c.command.iter().flatten().cloned();
                        command.chain(c.env.values().cloned()).collect()
                    })
                    .unwrap_or_default();
                let trust = crate::model::ProviderTrust {
                    kind: crate::model::ProviderKind::parse(&i.kind),
                    launch,
                    unconfined: config.is_some_and(|c| c.unconfined),
                };
                (i.id.clone(), trust)
            })
            .collect()
    }
    pub fn get(&self, id: &str) -> Option<std::sync::Arc<dyn Provider>> {
        self.providers.get(id).cloned()
    }
    pub fn infos(&self) -> Vec<ProviderInfo> {
        self.providers.values().map(|p| p.info()).collect()
    }
    /// The provider for a new agent: it must exist and be available.
    pub fn resolve(&self, id: &str) -> Result<std::sync::Arc<dyn Provider>, ProviderError> {
        let p = self
            .get(id)
            .ok_or_else(|| ProviderError::Unknown(id.to_string()))?;
        let info = p.info();
        if !info.available {
            return Err(ProviderError::Unavailable {
                provider: id.to_string(),
                reason: info.reason.unwrap_or_else(|| "not available".into()),
            });
        }
        Ok(p)
    }
}
