//! The inputs of the tools that read or act on existing agents, and of `create_worktree`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::create::parse_target;
use super::walker::*;
use super::{FieldError, Input, MAX_LIST_LIMIT, MAX_WAIT_SECONDS, R};
use crate::model::{AgentId, Status, WorkspaceId};
use crate::workspaces::worktree::WorktreeTarget;

/// Input of `send_agent_prompt`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendPromptInput {
    /// The agent to prompt (a UUID).
    #[schemars(with = "String")]
    pub agent_id: AgentId,
    pub prompt: String,
    /// Return at once (default for agent-scoped callers) instead of waiting (bounded) for the
    /// turn to end and returning its last message.
    #[serde(default)]
    pub background: Option<bool>,
    /// Report the turn's end to the caller as its next turn (default: true for agent-scoped
    /// background prompts, false otherwise).
    #[serde(default)]
    pub notify_on_finish: Option<bool>,
}

impl Input for SendPromptInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(
            v,
            "",
            &["agentId", "prompt", "background", "notifyOnFinish"],
        )?;
        Ok(SendPromptInput {
            agent_id: o.req_agent_id("agentId")?,
            prompt: o.req_str("prompt")?.to_string(),
            background: o.opt_bool("background")?,
            notify_on_finish: o.opt_bool("notifyOnFinish")?,
        })
    }
}

/// Input of `wait_for_agent`.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitInput {
    /// The agent to wait for (a UUID).
    #[schemars(with = "String")]
    pub agent_id: AgentId,
    /// How long to wait at most, in seconds (default 30, at most 600).
    #[serde(default)]
    #[schemars(range(min = 0, max = 600))]
    pub timeout_seconds: Option<f64>,
}

impl Input for WaitInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(v, "", &["agentId", "timeoutSeconds"])?;
        let agent_id = o.req_agent_id("agentId")?;
        let t = o.opt_f64("timeoutSeconds")?;
        if let Some(t) = t {
            if !(0.0..=MAX_WAIT_SECONDS).contains(&t) {
                return Err(FieldError::new(
                    "timeoutSeconds",
                    format!("must be between 0 and {MAX_WAIT_SECONDS}, got {t}"),
                ));
            }
        }
        Ok(WaitInput {
            agent_id,
            timeout_seconds: t,
        })
    }
}

/// Input of `get_agent`, `cancel_agent` and `archive_agent`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentInput {
    /// The agent (a UUID).
    #[schemars(with = "String")]
    pub agent_id: AgentId,
}

impl Input for AgentInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(v, "", &["agentId"])?;
        Ok(AgentInput {
            agent_id: o.req_agent_id("agentId")?,
        })
    }
}

/// Input of `get_agent_changes`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangesInput {
    /// The agent (a UUID).
    #[schemars(with = "String")]
    pub agent_id: AgentId,
    /// One changed file (its path now, or before a rename): its diff comes back too.
    #[serde(default)]
    pub path: Option<String>,
    /// With `path`: the first diff line of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// With `path`: lines in the page (default 1,000, at most 5,000).
    #[serde(default)]
    pub limit: Option<u64>,
}

impl Input for ChangesInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(v, "", &["agentId", "path", "offset", "limit"])?;
        let input = ChangesInput {
            agent_id: o.req_agent_id("agentId")?,
            path: o.opt_text("path")?,
            offset: o.opt_u64("offset", u32::MAX as u64)?,
            limit: o.opt_u64("limit", crate::workspaces::changes::MAX_PAGE_LINES as u64)?,
        };
        if input.path.is_none() {
            for f in ["offset", "limit"] {
                if o.get(f).is_some() {
                    return Err(FieldError::new(
                        f,
                        "goes with path (a page of one file's diff)",
                    ));
                }
            }
        }
        if input.limit == Some(0) {
            return Err(FieldError::new("limit", "must be at least 1"));
        }
        Ok(input)
    }
}

/// A status filter value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusInput {
    Initializing,
    Idle,
    Running,
    Error,
    Closed,
}

/// Input of `list_agents`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListInput {
    /// Include archived agents (default false).
    #[serde(default)]
    pub include_archived: Option<bool>,
    /// Only the children of this agent.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub parent_agent_id: Option<AgentId>,
    /// Only agents of this workspace.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub workspace_id: Option<WorkspaceId>,
    /// Only agents with one of these live statuses.
    #[serde(default)]
    pub statuses: Option<Vec<StatusInput>>,
    /// At most this many agents, oldest first (default 200, at most 10,000); `total` counts
    /// every match.
    #[serde(default)]
    #[schemars(range(min = 0, max = 10000))]
    pub limit: Option<u64>,
    /// Only the agents of this configured host (config.json `hosts`); default this machine's
    /// and every connected host's. Only the user's token may name one.
    #[serde(default)]
    pub host: Option<String>,
}

impl ListInput {
    pub fn statuses(&self) -> Option<Vec<Status>> {
        self.statuses.as_ref().map(|v| {
            v.iter()
                .map(|s| match s {
                    StatusInput::Initializing => Status::Initializing,
                    StatusInput::Idle => Status::Idle,
                    StatusInput::Running => Status::Running,
                    StatusInput::Error => Status::Error,
                    StatusInput::Closed => Status::Closed,
                })
                .collect()
        })
    }
}

impl Input for ListInput {
    fn parse(v: &Value) -> R<Self> {
        // No arguments at all is a plain "list everything".
        let empty = Value::Object(Map::new());
        let v = if v.is_null() { &empty } else { v };
        let o = Obj::new(
            v,
            "",
            &[
                "includeArchived",
                "parentAgentId",
                "workspaceId",
                "statuses",
                "limit",
                "host",
            ],
        )?;
        let workspace_id = match o.opt_str("workspaceId")? {
            None => None,
            Some(s) => Some(
                s.parse::<WorkspaceId>()
                    .map_err(|e| FieldError::new("workspaceId", e.to_string()))?,
            ),
        };
        let statuses = match o.get("statuses") {
            None => None,
            Some(Value::Array(items)) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let field = format!("statuses[{i}]");
                    let s = item.as_str().ok_or_else(|| {
                        FieldError::new(
                            &field,
                            format!("must be a status string, got {}", describe(item)),
                        )
                    })?;
                    let st = match s {
                        "initializing" => StatusInput::Initializing,
                        "idle" => StatusInput::Idle,
                        "running" => StatusInput::Running,
                        "error" => StatusInput::Error,
                        "closed" => StatusInput::Closed,
                        other => {
                            return Err(FieldError::new(
                                &field,
                                format!("unknown status {other:?}; expected one of: initializing, idle, running, error, closed"),
                            ))
                        }
                    };
                    out.push(st);
                }
                Some(out)
            }
            Some(other) => {
                return Err(FieldError::new(
                    "statuses",
                    format!("must be an array of statuses, got {}", describe(other)),
                ))
            }
        };
        Ok(ListInput {
            include_archived: o.opt_bool("includeArchived")?,
            parent_agent_id: o.opt_agent_id("parentAgentId")?,
            workspace_id,
            statuses,
            limit: o.opt_u64("limit", MAX_LIST_LIMIT)?,
            host: o.opt_text("host")?,
        })
    }
}

/// Input of `create_worktree`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWorktreeInput {
    /// An absolute path inside the git repository (default: the caller's cwd; required for a
    /// user-token session).
    #[serde(default)]
    pub repo: Option<String>,
    pub target: WorktreeTarget,
}

impl Input for CreateWorktreeInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(v, "", &["repo", "target"])?;
        Ok(CreateWorktreeInput {
            repo: o.opt_text("repo")?,
            target: parse_target(o.req("target")?, "target")?,
        })
    }
}
