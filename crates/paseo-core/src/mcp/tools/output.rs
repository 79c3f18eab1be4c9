//! What the tools answer: the structured outputs (their schemas are the tools' output schemas),
//! the text summary beside them, and runtime refusals as tool errors naming the field.

use axum::http::request::Parts;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::super::input::FieldError;
use crate::api::Caller;
use crate::model::Status;
use crate::providers::ProviderError;
use crate::runtime::RuntimeError;
use crate::workspaces::WorkspaceError;

/// Output of `create_agent`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedOutput {
    pub agent_id: String,
    pub workspace_id: String,
    pub cwd: String,
    /// `initializing` at first: the first prompt runs in the background.
    pub status: Status,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<String>,
}

/// Output of `send_agent_prompt`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptOutput {
    pub agent_id: String,
    pub status: Status,
    pub background: bool,
    /// Foreground only: the last message of the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_message: Option<String>,
    /// Foreground only: whether the turn was still going when the wait ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
}

/// Output of `wait_for_agent`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WaitOutput {
    pub agent_id: String,
    pub status: Status,
    /// The last assistant text of its latest turn (the output tail for shell agents).
    pub last_message: Option<String>,
    pub timed_out: bool,
    /// Present when the agent waits for a permission answer from the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_permission: Option<Value>,
}

/// Output of `cancel_agent`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelOutput {
    pub agent_id: String,
    pub status: Status,
}

/// Output of `archive_agent`.
#[derive(Serialize, JsonSchema)]
pub struct ArchiveOutput {
    /// The agent and its cascade (an agent already archived gives an empty list).
    pub archived: Vec<String>,
}

/// Output of `create_worktree`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeOutput {
    pub workspace_id: String,
    pub cwd: String,
    pub branch: String,
}

/// Output of `list_agents`.
#[derive(Serialize)]
pub struct ListOutput {
    pub agents: Vec<ListEntry>,
    pub total: usize,
    /// Each workspace's folder, said once: an entry of that workspace without its own `cwd`
    /// works there (a 10,000-agent listing would otherwise carry the same long folder 10,000
    /// times).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub cwds: std::collections::BTreeMap<String, String>,
}

impl ListOutput {
    /// The listing with each workspace's most common folder moved into `cwds` (the first seen
    /// wins a tie); an entry in another folder of it keeps its own `cwd`.
    pub fn folded(mut agents: Vec<ListEntry>, total: usize) -> ListOutput {
        use std::collections::BTreeMap;
        let mut seen: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
        for e in &agents {
            let Some(ws) = &e.agent.workspace_id else {
                continue;
            };
            let folders = seen.entry(ws.to_string()).or_default();
            match folders.iter_mut().find(|(c, _)| *c == e.agent.cwd) {
                Some((_, n)) => *n += 1,
                None => folders.push((e.agent.cwd.clone(), 1)),
            }
        }
        let cwds: BTreeMap<String, String> = seen
            .into_iter()
            .filter_map(|(ws, folders)| {
                let mut best: Option<(String, usize)> = None;
                for (c, n) in folders {
                    if best.as_ref().is_none_or(|(_, m)| n > *m) {
                        best = Some((c, n));
                    }
                }
                best.map(|(c, _)| (ws, c))
            })
            .collect();
        for e in &mut agents {
            if let Some(ws) = &e.agent.workspace_id {
                if cwds.get(&ws.to_string()) == Some(&e.agent.cwd) {
                    e.agent.cwd.clear();
                }
            }
        }
        ListOutput {
            agents,
            total,
            cwds,
        }
    }
}

/// One agent of `list_agents`: its summary, and the host holding it (absent: this machine).
#[derive(Serialize)]
pub struct ListEntry {
    #[serde(flatten)]
    pub agent: crate::runtime::AgentSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

pub(super) type ToolResult = Result<CallToolResult, FieldError>;

/// Results larger than this carry their JSON only as structured content (a 10,000-agent listing
/// would otherwise travel twice); the text summary says so.
const TEXT_COPY_MAX: usize = 256 << 10;

pub(super) fn ok(summary: String, value: impl Serialize) -> ToolResult {
    let value = serde_json::to_value(value)
        .map_err(|e| FieldError::new("", format!("cannot encode the result: {e}")))?;
    // The JSON goes in a text block too: some clients show the model only `content`.
    let json = value.to_string();
    let blocks = if json.len() <= TEXT_COPY_MAX {
        vec![ContentBlock::text(summary), ContentBlock::text(json)]
    } else {
        vec![ContentBlock::text(format!(
            "{summary}\n(The full result, {} KiB of JSON, is in structuredContent.)",
            json.len() >> 10
        ))]
    };
    let mut r = CallToolResult::success(blocks);
    r.structured_content = Some(value);
    Ok(r)
}

pub(super) fn finish(
    tool: &str,
    caller: Option<Caller>,
    r: ToolResult,
) -> Result<CallToolResult, ErrorData> {
    match r {
        Ok(r) => {
            tracing::debug!(tool, ?caller, "MCP tool call done");
            Ok(r)
        }
        Err(e) => {
            tracing::info!(tool, ?caller, "MCP tool call refused: {e}");
            Ok(CallToolResult::error(vec![ContentBlock::text(
                e.to_string(),
            )]))
        }
    }
}

/// The caller the HTTP layer authenticated (see `super::authenticate`).
pub(super) fn caller(ctx: &RequestContext<RoleServer>) -> Result<Caller, FieldError> {
    ctx.extensions
        .get::<Parts>()
        .and_then(|p| p.extensions.get::<Caller>())
        .copied()
        .ok_or_else(|| FieldError::new("", "unauthenticated request"))
}

/// A runtime refusal as a tool error. Messages that already start with a field path (the
/// runtime's validation and the workspace checks) keep it; the rest get `field`.
pub(super) fn rt_err(e: RuntimeError, field: &str) -> FieldError {
    let msg = e.to_string();
    let has_field = matches!(
        &e,
        RuntimeError::Invalid { .. }
            | RuntimeError::At { .. }
            | RuntimeError::Forbidden { .. }
            | RuntimeError::Workspace(
                WorkspaceError::NotAbsolute { .. }
                    | WorkspaceError::Missing { .. }
                    | WorkspaceError::NotADirectory { .. }
                    | WorkspaceError::OutsideWorkspace { .. }
                    | WorkspaceError::NotARepository { .. }
                    | WorkspaceError::Invalid { .. }
            )
    );
    if has_field {
        // `create_worktree` validates with an empty prefix (".repo", ".target.newBranch").
        return FieldError::new("", msg.trim_start_matches('.'));
    }
    let field = match &e {
        RuntimeError::Provider(ProviderError::Unknown(_) | ProviderError::Unavailable { .. }) => {
            "provider"
        }
        _ => field,
    };
    FieldError::new(field, msg)
}

pub(super) fn tail(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        s.to_string()
    } else {
        let t: String = s.chars().skip(n - max).collect();
        format!("…{t}")
    }
}

pub(super) fn excerpt(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut e: String = one.chars().take(200).collect();
    if one.chars().count() > 200 {
        e.push('…');
    }
    e
}
