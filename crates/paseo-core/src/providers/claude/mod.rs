//! The `claude` provider: one long-lived Claude Code process per agent session, spoken to in
//! stream-json (`claude -p --input-format stream-json --output-format stream-json --verbose`).
//!
//! Prompts go to stdin as `user` lines; interrupts and permission answers travel on the same
//! stdin as control messages (`--permission-prompt-tool stdio` makes the CLI ask us through
//! `control_request`s of subtype `can_use_tool`). The first start passes `--session-id` with a
//! fresh UUID, later starts `--resume` it. The app's MCP server is injected with `--mcp-config`
//! naming a private file that holds the URL and the agent's bearer token (never the JSON itself:
//! the command line is readable by every local user), and its tools are pre-approved with `--allowedTools`, so orchestration never waits on a
//! permission prompt. Every session gets an explicit `--permission-mode`, loads only the user's
//! settings (`--setting-sources user`) and only the app's MCP server (`--strict-mcp-config`):
//! nothing in the agent's cwd can grant it permissions or hooks (SPEC 14).
//!
//! This file is the provider (info, argv, start); [`protocol`] is the pure parser the shared
//! [`StdioSession`] runs.

pub mod protocol;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use serde_json::json;

use super::secret_file::{SecretFile, WithSecrets};
use super::stdio::StdioSession;
use super::{
    Configured, EventSink, McpAccess, Provider, ProviderError, ProviderInfo, SessionSpec,
    SessionStart, MCP_SERVER_NAME,
};
use crate::config::ProviderConfig;
use crate::model::power::CLAUDE_ASKING_MODE;
pub use protocol::ClaudeStream;

/// What the CLI is called in messages.
const CLI: &str = "Claude Code";

pub struct ClaudeProvider {
    base: Configured,
}

impl ClaudeProvider {
    pub fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        ClaudeProvider {
            base: Configured::new(id, config),
        }
    }
}

/// How the session is identified on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaudeSessionArg {
    /// A new session with this id (`--session-id`).
    New(String),
    /// An existing session (`--resume`).
    Resume(String),
}

impl ClaudeSessionArg {
    pub fn id(&self) -> &str {
        match self {
            ClaudeSessionArg::New(id) | ClaudeSessionArg::Resume(id) => id,
        }
    }
}

/// The `--mcp-config` JSON that injects the app's MCP server (written to the session's secret
/// file, see [`SecretFile`]).
pub fn mcp_config_json(mcp: &McpAccess) -> String {
    json!({
        "mcpServers": {
            MCP_SERVER_NAME: {
                "type": "http",
                "url": mcp.url,
                "headers": {"Authorization": format!("Bearer {}", mcp.token)},
                "alwaysLoad": true,
            }
        }
    })
    .to_string()
}

/// The full argv for a session; `mcp_config` is the file holding [`mcp_config_json`] when the
/// session gets the app's MCP server.
pub fn claude_argv(
    prefix: &[String],
    spec: &SessionSpec,
    session: &ClaudeSessionArg,
    mcp_config: Option<&Path>,
) -> Vec<String> {
    let mut argv: Vec<String> = prefix.to_vec();
    let mut push = |a: &str| argv.push(a.to_string());
    push("-p");
    push("--input-format");
    push("stream-json");
    push("--output-format");
    push("stream-json");
    push("--permission-prompt-tool");
    push("stdio");
    match session {
        ClaudeSessionArg::New(id) => {
            push("--session-id");
            push(id);
        }
        ClaudeSessionArg::Resume(id) => {
            push("--resume");
            push(id);
        }
    }
    if let Some(model) = spec.config.model.as_deref().filter(|m| !m.is_empty()) {
        push("--model");
        push(model);
    }
    // Always a mode: without one the user's `permissions.defaultMode` (say bypassPermissions
    // in ~/.claude/settings.json) would decide for an agent the power rule counts as asking
    // (SPEC 14).
    let mode = spec.config.mode.as_deref().filter(|m| !m.is_empty());
    push("--permission-mode");
    push(mode.unwrap_or(CLAUDE_ASKING_MODE));
    // Settings an agent can write never widen an agent's mode (SPEC 14): the project's
    // `.claude/settings.json`, `.claude/settings.local.json` and `.mcp.json` live in the agent's
    // cwd, where it (or another agent) writes, and could allow any tool or run a hook before
    // the first turn. Only the user's own settings load, and only the MCP servers given here.
    push("--setting-sources");
    push("user");
    push("--strict-mcp-config");
    if let Some(sp) = spec
        .config
        .system_prompt
        .as_deref()
        .filter(|m| !m.is_empty())
    {
        push("--append-system-prompt");
        push(sp);
    }
    if let Some(file) = mcp_config {
        // Both options take several values; the flag after each ends its list.
        push("--mcp-config");
        push(&file.to_string_lossy());
        push("--allowedTools");
        let tools: Vec<String> = spec
            .mcp
            .iter()
            .flat_map(|m| m.tools.iter())
            .map(|t| format!("mcp__{MCP_SERVER_NAME}__{t}"))
            .collect();
        push(&tools.join(","));
    }
    push("--verbose");
    argv
}

/// A contained Claude Code agent's own layer over the user's state folder `user` (see
/// [`crate::providers::process::Layer`]), its `.claude.json` seeded from `json`.
pub fn state_layer(
    user: PathBuf,
    json: Option<PathBuf>,
) -> crate::providers::process::Layer<'static> {
    crate::providers::process::Layer {
        var: "CLAUDE_CONFIG_DIR",
        user,
        shared: &["projects", ".credentials.json"],
        copies: &[("settings.json", "{}\n"), ("settings.local.json", "{}\n")],
        read_only: &[
            "plugins",
            "commands",
            "agents",
            "skills",
            "hooks",
            "output-styles",
            "CLAUDE.md",
        ],
        dropped: &[],
        made: &[
            "todos",
            "statsig",
            "shell-snapshots",
            "session-env",
            "file-history",
            "debug",
            "ide",
            "plans",
        ],
        seed: json.map(|j| (j, ".claude.json")),
    }
}

impl Provider for ClaudeProvider {
    fn info(&self) -> ProviderInfo {
        let reason = self.base.cli(CLI, "claude", &self.base.env()).err();
        let mut info = self.base.info("claude", CLI, reason, true);
        if info.models.is_empty() {
            info.models = vec!["sonnet".into(), "opus".into(), "haiku".into()];
        }
        info
    }

    fn start(&self, spec: SessionSpec, sink: EventSink) -> SessionStart {
        let base = self.base.clone();
        Box::pin(async move {
            let (prefix, mut env) = base.cli_launch(CLI, "claude", &spec)?;
            // Its login from the user's environment, when that is how they log in.
            env.keep = &[
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "CLAUDE_CODE_OAUTH_TOKEN",
            ];
            // Its login, settings and transcripts: $CLAUDE_CONFIG_DIR (which then also holds
            // .claude.json), else ~/.claude and ~/.claude.json. A contained agent gets its
            // own layer over them (SPEC 16b): the user's settings, plugins, hooks, commands,
            // skills and MCP servers stay the user's, and its own `.claude.json` is its own.
            let user_dir = env.dir_or_home("CLAUDE_CONFIG_DIR", ".claude");
            let user_json = match env.get("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
                Some(dir) => Some(Path::new(&dir).join(".claude.json")),
                None => env
                    .get("HOME")
                    .filter(|h| !h.is_empty())
                    .map(|h| Path::new(&h).join(".claude.json")),
            };
            if let Some(user) = user_dir {
                let layer = state_layer(user, user_json);
                env.cli_layer(spec.agent_id, &layer)
                    .map_err(|source| ProviderError::Spawn {
                        what: format!("{CLI}: its own layer over the CLI's state"),
                        source,
                    })?;
            }
            let session = match spec.resume.as_deref().filter(|s| !s.is_empty()) {
                Some(id) => ClaudeSessionArg::Resume(id.to_string()),
                None => ClaudeSessionArg::New(uuid::Uuid::new_v4().to_string()),
            };
            let secret = match &spec.mcp {
                Some(mcp) => {
                    let name =
                        format!("claude-mcp-{}-{}.json", spec.agent_id, uuid::Uuid::new_v4());
                    let file =
                        SecretFile::write(&mcp.config_dir, &name, mcp_config_json(mcp).as_bytes())
                            .map_err(|source| ProviderError::Spawn {
                                what: format!(
                                    "{CLI}: its MCP configuration in {}",
                                    mcp.config_dir.display()
                                ),
                                source,
                            })?;
                    env.expose(file.path());
                    Some(file)
                }
                None => None,
            };
            let argv = claude_argv(&prefix, &spec, &session, secret.as_ref().map(|f| f.path()));
            let resumed = matches!(session, ClaudeSessionArg::Resume(_));
            let stream = ClaudeStream::new(Some(session.id().to_string())).resumed(resumed);
            let started = StdioSession::start(CLI, &argv, &spec.cwd, &env, stream, sink).await?;
            Ok(WithSecrets::wrap(started, secret.into_iter().collect()))
        })
    }
}
