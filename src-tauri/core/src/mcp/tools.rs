//! The MCP tools (SPEC 8): thin handlers that check the caller, map the input to a runtime
//! request, and answer with structured content plus a short text summary.
//!
//! Every failure a caller can cause (bad input, unknown ids, authorization, refused runtime
//! requests) is a tool error result (`isError`) whose message starts with the offending field's
//! path; protocol errors are left for what is not the caller's input.

use std::time::Duration;

use axum::http::request::Parts;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::input::{
    input_schema, AgentInput, Args, CreateAgentInput, CreateWorktreeInput, FieldError, ListInput,
    Relationship, SendPromptInput, SourceInput, WaitInput, WorkspaceInput, DEFAULT_LIST_LIMIT,
    DEFAULT_WAIT_SECONDS,
};
use super::tokens::Caller;
use crate::engine::{EngineError, ListFilter};
use crate::model::{AgentId, Status, TurnOrigin, WorkspaceId};
use crate::providers::ProviderError;
use crate::runtime::{AgentSnapshot, CreateAgent, RuntimeError, RuntimeHandle, WorkspaceTarget};
use crate::workspaces::WorkspaceError;

/// The server name agents see (`mcp__paseo__<tool>`).
pub const SERVER_NAME: &str = "paseo";

/// How long a foreground `send_agent_prompt` waits for the turn before answering `timedOut`.
pub const FOREGROUND_WAIT: Duration = Duration::from_secs(300);

/// Longest `lastMessage` returned (the tail is kept: that is where a turn's result is).
const LAST_MESSAGE_CHARS: usize = 4_000;

const INSTRUCTIONS: &str = "Paseo runs and supervises coding agents. Use create_agent to start a \
subagent (relationship {kind: subagent}) or a detached agent, in your workspace \
({kind: current}) or a new directory or git worktree. Creation returns at once; unless you pass \
notifyOnFinish: false you receive a notice as your next turn when its first turn ends. \
wait_for_agent, get_agent and list_agents read any agent; send_agent_prompt, cancel_agent and \
archive_agent act on yourself, your descendants and agents you created.";

/// The MCP service: one per request (stateless HTTP), cheap to make.
#[derive(Clone)]
pub struct PaseoTools {
    rt: RuntimeHandle,
    tool_router: ToolRouter<PaseoTools>,
}

impl PaseoTools {
    pub fn new(rt: RuntimeHandle) -> Self {
        PaseoTools {
            rt,
            tool_router: Self::tool_router(),
        }
    }
}

// ------------------------------------------------------------------ outputs

/// Output of `create_agent`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedOutput {
    pub agent_id: String,
    pub workspace_id: String,
    pub cwd: String,
    /// `initializing` at first: the first prompt runs in the background.
    pub status: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<String>,
}

/// Output of `send_agent_prompt`.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptOutput {
    pub agent_id: String,
    pub status: String,
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
    pub status: String,
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
    pub status: String,
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
    pub agents: Vec<AgentSnapshot>,
    pub total: usize,
}

// ------------------------------------------------------------------ helpers

type ToolResult = Result<CallToolResult, FieldError>;

fn ok(summary: String, value: impl Serialize) -> ToolResult {
    let value = serde_json::to_value(value)
        .map_err(|e| FieldError::new("", format!("cannot encode the result: {e}")))?;
    // The JSON goes in a text block too: some clients show the model only `content`.
    let json = value.to_string();
    let mut r =
        CallToolResult::success(vec![ContentBlock::text(summary), ContentBlock::text(json)]);
    r.structured_content = Some(value);
    Ok(r)
}

fn finish(tool: &str, caller: Option<Caller>, r: ToolResult) -> Result<CallToolResult, ErrorData> {
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
fn caller(ctx: &RequestContext<RoleServer>) -> Result<Caller, FieldError> {
    ctx.extensions
        .get::<Parts>()
        .and_then(|p| p.extensions.get::<Caller>())
        .copied()
        .ok_or_else(|| FieldError::new("", "unauthenticated request"))
}

/// A runtime refusal as a tool error. Messages that already start with a field path (the
/// runtime's validation and the workspace checks) keep it; the rest get `field`.
fn rt_err(e: RuntimeError, field: &str) -> FieldError {
    let msg = e.to_string();
    let has_field = matches!(
        &e,
        RuntimeError::Invalid { .. }
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

fn status(s: Status) -> String {
    s.as_str().to_string()
}

fn tail(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        s.to_string()
    } else {
        let t: String = s.chars().skip(n - max).collect();
        format!("…{t}")
    }
}

fn excerpt(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut e: String = one.chars().take(200).collect();
    if one.chars().count() > 200 {
        e.push('…');
    }
    e
}

/// What an agent-scoped caller is, for defaults.
struct CallerInfo {
    workspace: Option<WorkspaceId>,
    cwd: String,
    provider: String,
    model: Option<String>,
    mode: Option<String>,
}

impl PaseoTools {
    async fn caller_info(&self, id: AgentId) -> Result<CallerInfo, FieldError> {
        self.rt
            .query(move |e| {
                e.agent(id).map(|a| CallerInfo {
                    workspace: a.record.workspace_id.clone(),
                    cwd: a.record.cwd.clone(),
                    provider: a.record.provider.clone(),
                    model: a.record.config.model.clone(),
                    mode: a.record.config.mode.clone(),
                })
            })
            .await
            .map_err(|e| rt_err(e, ""))?
            .ok_or_else(|| FieldError::new("", format!("the calling agent {id} no longer exists")))
    }

    /// The authorization rule: an agent may prompt, cancel or archive only itself, its
    /// descendants and agents it created. The user may act on any agent.
    async fn may_mutate(
        &self,
        caller: Caller,
        target: AgentId,
        verb: &str,
    ) -> Result<(), FieldError> {
        let (exists, allowed) = self
            .rt
            .query(move |e| {
                let exists = e.agent(target).is_some();
                let allowed = match caller {
                    Caller::User => true,
                    Caller::Agent(c) => e.may_mutate(c, target),
                };
                (exists, allowed)
            })
            .await
            .map_err(|e| rt_err(e, ""))?;
        if !exists {
            return Err(FieldError::new(
                "agentId",
                format!("unknown agent {target}"),
            ));
        }
        if !allowed {
            let Caller::Agent(c) = caller else {
                return Ok(());
            };
            return Err(FieldError::new(
                "agentId",
                format!(
                    "agent {c} may not {verb} agent {target}: an agent may {verb} only itself, \
                     its descendants and agents it created"
                ),
            ));
        }
        Ok(())
    }

    async fn do_create_agent(&self, caller: Caller, input: CreateAgentInput) -> ToolResult {
        let me = match caller {
            Caller::Agent(id) => Some((id, self.caller_info(id).await?)),
            Caller::User => None,
        };
        let parent = match (input.relationship, &me) {
            (Relationship::Subagent, Some((id, _))) => Some(*id),
            (Relationship::Subagent, None) => {
                return Err(FieldError::new(
                    "relationship.kind",
                    "\"subagent\" needs an agent-scoped session (the agent's own token); a \
                     user-token session can only create detached agents",
                ))
            }
            (Relationship::Detached, _) => None,
        };
        let notify = match (input.notify_on_finish, &me) {
            (Some(false), _) => None,
            (_, Some((id, _))) => Some(*id),
            (Some(true), None) => {
                return Err(FieldError::new(
                    "notifyOnFinish",
                    "a user-token session is not an agent and cannot be notified",
                ))
            }
            (None, None) => None,
        };
        let workspace = match input.workspace {
            WorkspaceInput::Current { cwd } => {
                let Some((_, info)) = &me else {
                    return Err(FieldError::new(
                        "workspace.kind",
                        "\"current\" needs an agent-scoped session (the agent's own token); a \
                         user-token session must create a workspace",
                    ));
                };
                let Some(id) = info.workspace.clone() else {
                    return Err(FieldError::new(
                        "workspace.kind",
                        "the calling agent has no workspace",
                    ));
                };
                WorkspaceTarget::Existing {
                    id,
                    cwd: Some(cwd.unwrap_or_else(|| info.cwd.clone())),
                }
            }
            WorkspaceInput::Create { source } => match source {
                SourceInput::Directory { path } => WorkspaceTarget::Directory { path },
                SourceInput::Worktree { repo, target } => {
                    let repo = match (repo, &me) {
                        (Some(r), _) => r,
                        (None, Some((_, info))) => info.cwd.clone(),
                        (None, None) => {
                            return Err(FieldError::new(
                                "workspace.source.repo",
                                "is required for a user-token session (there is no caller cwd \
                                 to default to)",
                            ))
                        }
                    };
                    WorkspaceTarget::Worktree {
                        repo,
                        target: target.into_target(),
                    }
                }
            },
        };
        // A new agent of the caller's own provider inherits its mode, and its model unless one
        // is given (subagents and detached agents alike): "another one like me".
        let same = me
            .as_ref()
            .filter(|(_, info)| info.provider == input.provider)
            .map(|(_, info)| info);
        let model = input
            .model
            .clone()
            .or_else(|| same.and_then(|i| i.model.clone()));
        let mode = same.and_then(|i| i.mode.clone());
        let mut req = CreateAgent::new(&input.provider, workspace);
        req.title = input.title;
        req.model = model;
        req.mode = mode;
        req.initial_prompt = Some(input.initial_prompt);
        req.parent = parent;
        req.created_by = me.as_ref().map(|(id, _)| *id);
        req.notify = notify;
        req.auto_archive = input.auto_archive.unwrap_or(false);
        req.labels = input.labels.unwrap_or_default();
        req.request = Some(format!("mcp:create_agent:{}", uuid::Uuid::new_v4()));
        let snap = self.rt.create(req).await.map_err(|e| {
            let field = match &e {
                RuntimeError::Engine(
                    EngineError::UnknownWorkspace(_) | EngineError::WorkspaceArchived(_),
                ) => "workspace",
                _ => "",
            };
            rt_err(e, field)
        })?;
        let out = CreatedOutput {
            agent_id: snap.id().to_string(),
            workspace_id: snap
                .record
                .workspace_id
                .as_ref()
                .map(|w| w.to_string())
                .unwrap_or_default(),
            cwd: snap.record.cwd.clone(),
            status: status(snap.status),
            title: snap.record.title.clone(),
            parent_agent_id: snap.parent_agent_id.map(|p| p.to_string()),
        };
        let mut summary = format!(
            "Created {} agent {} \"{}\" in {} (workspace {}); status {}. Its first prompt runs in \
             the background.",
            input.provider, out.agent_id, out.title, out.cwd, out.workspace_id, out.status
        );
        if notify.is_some() {
            summary.push_str(" You will get a notice as your next turn when that turn ends.");
        }
        ok(summary, out)
    }

    async fn do_send_prompt(&self, caller: Caller, input: SendPromptInput) -> ToolResult {
        let id = input.agent_id;
        self.may_mutate(caller, id, "prompt").await?;
        let agent_scoped = matches!(caller, Caller::Agent(_));
        let background = input.background.unwrap_or(agent_scoped);
        let notify = match (input.notify_on_finish, caller) {
            (Some(false), _) => None,
            (Some(true), Caller::Agent(c)) => Some(c),
            (None, Caller::Agent(c)) if background => Some(c),
            (None, _) => None,
            (Some(true), Caller::User) => {
                return Err(FieldError::new(
                    "notifyOnFinish",
                    "a user-token session is not an agent and cannot be notified",
                ))
            }
        };
        let origin = match caller {
            Caller::Agent(c) => TurnOrigin::Agent(c),
            Caller::User => TurnOrigin::User,
        };
        // When `prompt` returns, the turn is running (or queued behind a resume, status
        // initializing), so `wait` cannot mistake the idle state before it for its end.
        let snap = self
            .rt
            .prompt(id, input.prompt, origin, notify)
            .await
            .map_err(|e| rt_err(e, "agentId"))?;
        if background {
            let out = PromptOutput {
                agent_id: id.to_string(),
                status: status(snap.status),
                background: true,
                last_message: None,
                timed_out: None,
            };
            let mut summary = format!("Prompt sent to agent {id}; it is {}.", out.status);
            if notify.is_some() {
                summary.push_str(" You will get a notice as your next turn when the turn ends.");
            }
            return ok(summary, out);
        }
        let w = self
            .rt
            .wait(id, FOREGROUND_WAIT)
            .await
            .map_err(|e| rt_err(e, "agentId"))?;
        let last = w
            .agent
            .record
            .last_message
            .as_deref()
            .map(|m| tail(m, LAST_MESSAGE_CHARS));
        let summary = if w.timed_out {
            format!(
                "Agent {id} is still {} after {} s; use wait_for_agent to keep waiting.",
                status(w.agent.status),
                FOREGROUND_WAIT.as_secs()
            )
        } else {
            format!(
                "Agent {id} is {}. Last message: {}",
                status(w.agent.status),
                excerpt(last.as_deref().unwrap_or("(none)"))
            )
        };
        ok(
            summary,
            PromptOutput {
                agent_id: id.to_string(),
                status: status(w.agent.status),
                background: false,
                last_message: last,
                timed_out: Some(w.timed_out),
            },
        )
    }

    async fn do_wait(&self, input: WaitInput) -> ToolResult {
        let id = input.agent_id;
        let secs = input.timeout_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
        let w = self
            .rt
            .wait(id, Duration::from_secs_f64(secs))
            .await
            .map_err(|e| rt_err(e, "agentId"))?;
        let last = w
            .agent
            .record
            .last_message
            .as_deref()
            .map(|m| tail(m, LAST_MESSAGE_CHARS));
        let pending = w
            .agent
            .pending_permission
            .as_ref()
            .and_then(|p| serde_json::to_value(p).ok());
        let mut summary = format!("Agent {id} is {}", status(w.agent.status));
        if w.timed_out {
            summary.push_str(&format!(" (still going after {secs} s)"));
        }
        if pending.is_some() {
            summary.push_str("; it waits for a permission answer from the user");
        }
        if let Some(m) = &last {
            summary.push_str(&format!(". Last message: {}", excerpt(m)));
        }
        ok(
            summary,
            WaitOutput {
                agent_id: id.to_string(),
                status: status(w.agent.status),
                last_message: last,
                timed_out: w.timed_out,
                pending_permission: pending,
            },
        )
    }

    async fn do_get(&self, input: AgentInput) -> ToolResult {
        let snap = self
            .rt
            .get(input.agent_id)
            .await
            .map_err(|e| rt_err(e, "agentId"))?;
        let mut summary = format!(
            "Agent {} \"{}\" ({}) is {}",
            snap.id(),
            snap.record.title,
            snap.record.provider,
            status(snap.status)
        );
        if snap.record.is_archived() {
            summary.push_str(" and archived");
        }
        if let Some(p) = snap.parent_agent_id {
            summary.push_str(&format!("; parent {p}"));
        }
        ok(summary, snap)
    }

    async fn do_list(&self, input: ListInput) -> ToolResult {
        // Unknown ids are refused rather than answered with an empty list (SPEC 11).
        let (p, w) = (input.parent_agent_id, input.workspace_id.clone());
        let (parent_known, ws_known) = self
            .rt
            .query(move |e| {
                (
                    p.is_none_or(|p| e.agent(p).is_some()),
                    w.as_ref().is_none_or(|w| e.workspace(w).is_some()),
                )
            })
            .await
            .map_err(|e| rt_err(e, ""))?;
        if !parent_known {
            if let Some(p) = input.parent_agent_id {
                return Err(FieldError::new(
                    "parentAgentId",
                    format!("unknown agent {p}"),
                ));
            }
        }
        if !ws_known {
            if let Some(w) = &input.workspace_id {
                return Err(FieldError::new(
                    "workspaceId",
                    format!("unknown workspace {w}"),
                ));
            }
        }
        let filter = ListFilter {
            include_archived: input.include_archived.unwrap_or(false),
            parent: input.parent_agent_id,
            workspace: input.workspace_id.clone(),
            statuses: input.statuses(),
        };
        let limit = input.limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
        let (agents, total) = self
            .rt
            .list(filter, limit)
            .await
            .map_err(|e| rt_err(e, ""))?;
        let mut summary = format!("{} of {total} matching agents", agents.len());
        for a in agents.iter().take(20) {
            summary.push_str(&format!(
                "\n- {} \"{}\" {} {}",
                a.id(),
                a.record.title,
                a.record.provider,
                status(a.status)
            ));
        }
        if agents.len() > 20 {
            summary.push_str("\n- …");
        }
        ok(summary, ListOutput { agents, total })
    }

    async fn do_cancel(&self, caller: Caller, input: AgentInput) -> ToolResult {
        let id = input.agent_id;
        self.may_mutate(caller, id, "cancel").await?;
        let s = self.rt.cancel(id).await.map_err(|e| rt_err(e, "agentId"))?;
        ok(
            format!("Agent {id} is {}.", status(s)),
            CancelOutput {
                agent_id: id.to_string(),
                status: status(s),
            },
        )
    }

    async fn do_archive(&self, caller: Caller, input: AgentInput) -> ToolResult {
        let id = input.agent_id;
        self.may_mutate(caller, id, "archive").await?;
        let ids = self
            .rt
            .archive(id)
            .await
            .map_err(|e| rt_err(e, "agentId"))?;
        let archived: Vec<String> = ids.iter().map(|a| a.to_string()).collect();
        let summary = if archived.is_empty() {
            format!("Agent {id} was already archived.")
        } else {
            format!(
                "Archived {} agent(s): {}",
                archived.len(),
                archived.join(", ")
            )
        };
        ok(summary, ArchiveOutput { archived })
    }

    async fn do_create_worktree(&self, caller: Caller, input: CreateWorktreeInput) -> ToolResult {
        let (created_by, repo) = match caller {
            Caller::Agent(id) => {
                let repo = match input.repo {
                    Some(r) => r,
                    None => self.caller_info(id).await?.cwd,
                };
                (Some(id), repo)
            }
            Caller::User => match input.repo {
                Some(r) => (None, r),
                None => {
                    return Err(FieldError::new(
                        "repo",
                        "is required for a user-token session (there is no caller cwd to \
                         default to)",
                    ))
                }
            },
        };
        let ws = self
            .rt
            .create_worktree(
                repo,
                input.target.into_target(),
                created_by,
                Some(format!("mcp:create_worktree:{}", uuid::Uuid::new_v4())),
            )
            .await
            .map_err(|e| rt_err(e, ""))?;
        let out = WorktreeOutput {
            workspace_id: ws.record.workspace_id.to_string(),
            cwd: ws.record.cwd.clone(),
            branch: ws.record.branch.clone().unwrap_or_default(),
        };
        ok(
            format!(
                "Created worktree {} on branch {} (workspace {}).",
                out.cwd, out.branch, out.workspace_id
            ),
            out,
        )
    }
}

/// Parses the input and runs `f` with the authenticated caller; every refusal is a tool error.
macro_rules! run {
    ($tool:literal, $ctx:expr, $args:expr, |$caller:ident, $input:ident| $body:expr) => {{
        let c = caller(&$ctx);
        let r = match (c.clone(), $args.parse()) {
            (Err(e), _) | (_, Err(e)) => Err(e),
            (Ok($caller), Ok($input)) => $body.await,
        };
        finish($tool, c.ok(), r)
    }};
}

#[tool_router]
impl PaseoTools {
    /// Creates an agent (a subagent of the caller or a detached root agent) in the caller's
    /// workspace or a new directory or git worktree workspace. Returns at once with the new
    /// agent's id, workspace and cwd; its first prompt runs in the background.
    #[tool(
        name = "create_agent",
        input_schema = input_schema::<CreateAgentInput>(),
        output_schema = schema_for_output::<CreatedOutput>()
    )]
    async fn create_agent(
        &self,
        Parameters(args): Parameters<Args<CreateAgentInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("create_agent", ctx, args, |c, input| self
            .do_create_agent(c, input))
    }

    /// Sends a prompt to an agent (yourself, a descendant or an agent you created). In the
    /// background by default for agents (you get a notice when the turn ends); with
    /// background: false it waits for the turn (up to 300 s) and returns its last message.
    #[tool(
        name = "send_agent_prompt",
        input_schema = input_schema::<SendPromptInput>(),
        output_schema = schema_for_output::<PromptOutput>()
    )]
    async fn send_agent_prompt(
        &self,
        Parameters(args): Parameters<Args<SendPromptInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("send_agent_prompt", ctx, args, |c, input| self
            .do_send_prompt(c, input))
    }

    /// Waits until an agent is neither initializing nor running, or needs a permission
    /// (timeoutSeconds: default 30, at most 600). Returns its status and last message.
    #[tool(
        name = "wait_for_agent",
        input_schema = input_schema::<WaitInput>(),
        output_schema = schema_for_output::<WaitOutput>(),
        annotations(read_only_hint = true)
    )]
    async fn wait_for_agent(
        &self,
        Parameters(args): Parameters<Args<WaitInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("wait_for_agent", ctx, args, |_c, input| self.do_wait(input))
    }

    /// Returns one agent: its record's fields plus parentAgentId and its live status.
    #[tool(name = "get_agent",
        input_schema = input_schema::<AgentInput>(), annotations(read_only_hint = true))]
    async fn get_agent(
        &self,
        Parameters(args): Parameters<Args<AgentInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("get_agent", ctx, args, |_c, input| self.do_get(input))
    }

    /// Lists agents, oldest first, filtered by parent, workspace and status (archived ones
    /// only with includeArchived). limit: default 200, at most 10,000; total counts every match.
    #[tool(name = "list_agents",
        input_schema = input_schema::<ListInput>(), annotations(read_only_hint = true))]
    async fn list_agents(
        &self,
        Parameters(args): Parameters<Args<ListInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("list_agents", ctx, args, |_c, input| self.do_list(input))
    }

    /// Interrupts an agent's current turn (yourself, a descendant or an agent you created) and
    /// returns its status once the turn has ended.
    #[tool(
        name = "cancel_agent",
        input_schema = input_schema::<AgentInput>(),
        output_schema = schema_for_output::<CancelOutput>()
    )]
    async fn cancel_agent(
        &self,
        Parameters(args): Parameters<Args<AgentInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("cancel_agent", ctx, args, |c, input| self
            .do_cancel(c, input))
    }

    /// Archives an agent (yourself, a descendant or an agent you created) and, recursively,
    /// its subagents: their processes are stopped and they leave every list. Returns once the
    /// archive is durable. Detached agents it created are not archived.
    #[tool(
        name = "archive_agent",
        input_schema = input_schema::<AgentInput>(),
        output_schema = schema_for_output::<ArchiveOutput>(),
        annotations(destructive_hint = true)
    )]
    async fn archive_agent(
        &self,
        Parameters(args): Parameters<Args<AgentInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("archive_agent", ctx, args, |c, input| self
            .do_archive(c, input))
    }

    /// Creates a git worktree workspace under $PASEO_HOME/worktrees from the repository
    /// containing `repo` (default: your cwd): a new branch (branch-off) or an existing one
    /// (checkout-branch). Returns the workspace id, its cwd and the branch.
    #[tool(
        name = "create_worktree",
        input_schema = input_schema::<CreateWorktreeInput>(),
        output_schema = schema_for_output::<WorktreeOutput>()
    )]
    async fn create_worktree(
        &self,
        Parameters(args): Parameters<Args<CreateWorktreeInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("create_worktree", ctx, args, |c, input| self
            .do_create_worktree(c, input))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for PaseoTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
