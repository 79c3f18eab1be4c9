//! The MCP tools (SPEC 8): each maps its input to one runtime request for the authenticated
//! caller (the runtime's policy decides what the caller may do and what it gets by default)
//! and answers with structured content plus a short text summary.
//!
//! Every failure a caller can cause (bad input, unknown ids, authorization, refused runtime
//! requests) is a tool error result (`isError`) whose message starts with the offending field's
//! path; protocol errors are left for what is not the caller's input.

mod handlers;
mod output;

use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};

use super::input::{
    input_schema, AgentInput, Args, ChangesInput, CreateAgentInput, CreateWorktreeInput, ListInput,
    SendPromptInput, WaitInput,
};
use crate::server::Server;
use output::{caller, finish};
pub use output::{
    ArchiveOutput, CancelOutput, CreatedOutput, ListOutput, PromptOutput, WaitOutput,
    WorktreeOutput,
};

/// The server name agents see (`mcp__paseo__<tool>`).
pub const SERVER_NAME: &str = "paseo";

/// How long a foreground `send_agent_prompt` waits for the turn before answering `timedOut`.
pub const FOREGROUND_WAIT: Duration = Duration::from_secs(300);

/// Longest `lastMessage` returned (the tail is kept: that is where a turn's result is).
pub(crate) const LAST_MESSAGE_CHARS: usize = 4_000;

const INSTRUCTIONS: &str = "Paseo runs and supervises coding agents. Use create_agent to start a \
subagent (relationship {kind: subagent}) or a detached agent, in your workspace \
({kind: current}) or a new directory or git worktree. Creation returns at once; unless you pass \
notifyOnFinish: false you receive a notice as your next turn when its first turn ends. \
wait_for_agent, get_agent and list_agents read any agent; send_agent_prompt, cancel_agent and \
archive_agent act on yourself, your descendants and agents you created.";

/// The MCP service: one per request (stateless HTTP), cheap to make.
#[derive(Clone)]
pub struct PaseoTools {
    pub(crate) rt: Server,
    tool_router: ToolRouter<PaseoTools>,
}

impl PaseoTools {
    pub fn new(rt: Server) -> Self {
        PaseoTools {
            rt,
            tool_router: Self::tool_router(),
        }
    }

    /// The names of the tools served, in name order: the one list of the app's own tools.
    pub fn served() -> Vec<String> {
        Self::tool_router()
            .list_all()
            .into_iter()
            .map(|t| t.name.into_owned())
            .collect()
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
        run!("wait_for_agent", ctx, args, |c, input| self
            .do_wait(c, input))
    }

    /// Returns one agent: its record's fields plus parentAgentId and its live status.
    #[tool(name = "get_agent",
        input_schema = input_schema::<AgentInput>(), annotations(read_only_hint = true))]
    async fn get_agent(
        &self,
        Parameters(args): Parameters<Args<AgentInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("get_agent", ctx, args, |c, input| self.do_get(c, input))
    }

    /// What an agent changed on disk: the files with +/- counts (a worktree against the base it
    /// was branched from, a directory or checkout against HEAD; untracked files count as
    /// added), and with `path` one file's diff, a page of lines at a time. Review a subagent's
    /// work before you merge it.
    #[tool(name = "get_agent_changes",
        input_schema = input_schema::<ChangesInput>(), annotations(read_only_hint = true))]
    async fn get_agent_changes(
        &self,
        Parameters(args): Parameters<Args<ChangesInput>>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        run!("get_agent_changes", ctx, args, |c, input| self
            .do_changes(c, input))
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
        run!("list_agents", ctx, args, |c, input| self.do_list(c, input))
    }

    /// Interrupts an agent's current turn (yourself, a descendant or an agent you created) and
    /// returns its status once the turn has ended. A turn held for the user's approval is
    /// canceled at once, never run.
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
