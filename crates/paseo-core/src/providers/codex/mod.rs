//! The `codex` provider: one long-lived `codex app-server` process per agent session, spoken to
//! in JSON-RPC over stdio (newline-delimited JSON, no `jsonrpc` field required).
//!
//! Why app-server rather than `codex exec --json`: exec runs one process per turn and has no
//! control channel (SIGINT kills it without a final event), while app-server keeps the thread
//! loaded between turns, interrupts a turn with `turn/interrupt` (answered by `turn/completed`
//! with status `interrupted`), resumes a stored thread with `thread/resume`, and asks for
//! approvals as JSON-RPC requests we can surface as permission requests.
//!
//! Flow: `initialize` → `initialized` → `thread/start` (or `thread/resume` with the stored
//! thread id) → `SessionId(thread id)` + `Ready`; each turn is `turn/start`, its items arrive
//! as `item/started` / `item/completed` notifications, and `turn/completed` ends it. The app's
//! MCP server is injected with `-c mcp_servers.paseo.url=...` and the agent's token travels in
//! `PASEO_MCP_TOKEN` (`bearer_token_env_var`).
//!
//! This file is the provider (info, argv, start); [`protocol`] is the pure state machine the
//! shared [`StdioSession`] runs, and [`items`] maps Codex's items to timeline items.

pub mod items;
pub mod protocol;
#[cfg(test)]
mod tests;

use super::stdio::StdioSession;
use super::{
    Configured, EventSink, McpAccess, Provider, ProviderError, ProviderInfo, SessionSpec,
    SessionStart, MCP_SERVER_NAME,
};
use crate::config::ProviderConfig;
pub use protocol::{CodexStream, ThreadParams};

/// What the CLI is called in messages.
const CLI: &str = "Codex";

/// Approval policies Codex accepts as an agent's `mode`.
pub const APPROVAL_POLICIES: [&str; 3] = ["untrusted", "on-request", "never"];

pub struct CodexProvider {
    base: Configured,
}

impl CodexProvider {
    pub fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        CodexProvider {
            base: Configured::new(id, config),
        }
    }
}

/// The full argv: the prefix, `app-server`, and the MCP injection.
pub fn codex_argv(prefix: &[String], mcp: Option<&McpAccess>) -> Vec<String> {
    let mut argv = prefix.to_vec();
    argv.push("app-server".into());
    if let Some(mcp) = mcp {
        let url = serde_json::to_string(&mcp.url).unwrap_or_default();
        for kv in [
            format!("mcp_servers.{MCP_SERVER_NAME}.url={url}"),
            // Codex refuses inline tokens; it reads this variable, which the session sets.
            format!("mcp_servers.{MCP_SERVER_NAME}.bearer_token_env_var=\"PASEO_MCP_TOKEN\""),
            // The app's own tools run without Codex's approval, as Claude's allowedTools do: the
            // app guards them itself (SPEC 14 held turns). Without it, approval `never` refuses
            // every call ("requires approval, but approval policy is never").
            format!("mcp_servers.{MCP_SERVER_NAME}.default_tools_approval_mode=\"approve\""),
        ] {
            argv.push("-c".into());
            argv.push(kv);
        }
    }
    argv
}

/// The agent's `mode` must be an approval policy Codex knows (or unset).
fn check_mode(spec: &SessionSpec) -> Result<(), ProviderError> {
    match spec.config.mode.as_deref().filter(|m| !m.is_empty()) {
        Some(mode) if !APPROVAL_POLICIES.contains(&mode) => Err(ProviderError::Invalid(format!(
            "unknown Codex mode {mode:?} (expected one of {})",
            APPROVAL_POLICIES.join(", ")
        ))),
        _ => Ok(()),
    }
}

/// A contained Codex agent's own layer over the user's `CODEX_HOME` (see
/// [`crate::providers::process::Layer`]).
pub fn state_layer(user: std::path::PathBuf) -> crate::providers::process::Layer<'static> {
    crate::providers::process::Layer {
        var: "CODEX_HOME",
        user,
        shared: &["sessions", "archived_sessions", "auth.json"],
        copies: &[("config.toml", "")],
        read_only: &["rules", "AGENTS.md", "prompts", "skills"],
        dropped: &[".env"],
        made: &["log", "tmp"],
        seed: None,
    }
}

impl Provider for CodexProvider {
    fn info(&self) -> ProviderInfo {
        let reason = self.base.cli(CLI, "codex", &self.base.env()).err();
        self.base.info("codex", CLI, reason, true)
    }

    fn start(&self, spec: SessionSpec, sink: EventSink) -> SessionStart {
        let base = self.base.clone();
        Box::pin(async move {
            let (prefix, mut env) = base.cli_launch(CLI, "codex", &spec)?;
            // Its login from the user's environment, when that is how they log in.
            env.keep = &["OPENAI_API_KEY", "CODEX_API_KEY"];
            // Its login, config and threads: $CODEX_HOME, else ~/.codex. A contained agent
            // gets its own layer over them (SPEC 16b): the user's config, rules, prompts and
            // skills stay the user's, and no `.env` of its own outlives its session.
            if let Some(user) = env.dir_or_home("CODEX_HOME", ".codex") {
                let layer = state_layer(user);
                env.cli_layer(spec.agent_id, &layer)
                    .map_err(|source| ProviderError::Spawn {
                        what: format!("{CLI}: its own layer over the CLI's state"),
                        source,
                    })?;
            }
            check_mode(&spec)?;
            let argv = codex_argv(&prefix, spec.mcp.as_ref());
            let stream = CodexStream::new(ThreadParams::from_spec(&spec));
            StdioSession::start(CLI, &argv, &spec.cwd, &env, stream, sink).await
        })
    }
}
