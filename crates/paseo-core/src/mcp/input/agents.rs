//! The inputs of the tools that read or act on existing agents, and of `create_worktree`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::create::trim_base;
use super::fields::{agent_id, non_empty, some_agent_id, text, wait_seconds, whole};
use super::{FieldError, Input, MAX_LIST_LIMIT, R};
use crate::model::{AgentId, Status, WorkspaceId};
use crate::workspaces::changes::MAX_PAGE_LINES;
use crate::workspaces::worktree::WorktreeTarget;

/// Input of `send_agent_prompt`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendPromptInput {
    /// The agent to prompt (a UUID).
    #[serde(deserialize_with = "agent_id")]
    #[schemars(with = "String")]
    pub agent_id: AgentId,
    #[serde(deserialize_with = "non_empty")]
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

impl Input for SendPromptInput {}

/// Input of `wait_for_agent`.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitInput {
    /// The agent to wait for (a UUID).
    #[serde(deserialize_with = "agent_id")]
    #[schemars(with = "String")]
    pub agent_id: AgentId,
    /// How long to wait at most, in seconds (default 30, at most 600).
    #[serde(default, deserialize_with = "wait_seconds")]
    #[schemars(range(min = 0, max = 600))]
    pub timeout_seconds: Option<f64>,
}

impl Input for WaitInput {}

/// Input of `get_agent`, `cancel_agent` and `archive_agent`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentInput {
    /// The agent (a UUID).
    #[serde(deserialize_with = "agent_id")]
    #[schemars(with = "String")]
    pub agent_id: AgentId,
}

impl Input for AgentInput {}

/// Input of `get_agent_changes`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangesInput {
    /// The agent (a UUID).
    #[serde(deserialize_with = "agent_id")]
    #[schemars(with = "String")]
    pub agent_id: AgentId,
    /// One changed file (its path now, or before a rename): its diff comes back too.
    #[serde(default, deserialize_with = "text")]
    pub path: Option<String>,
    /// With `path`: the first diff line of the page (default 0).
    #[serde(default, deserialize_with = "whole::<_, 0, { u32::MAX as u64 }>")]
    pub offset: Option<u64>,
    /// With `path`: lines in the page (default 1,000, at most 5,000).
    #[serde(default, deserialize_with = "whole::<_, 1, { MAX_PAGE_LINES as u64 }>")]
    pub limit: Option<u64>,
}

impl Input for ChangesInput {
    fn check(self) -> R<Self> {
        if self.path.is_none() {
            for (field, given) in [("offset", self.offset), ("limit", self.limit)] {
                if given.is_some() {
                    return Err(FieldError::new(
                        field,
                        "goes with path (a page of one file's diff)",
                    ));
                }
            }
        }
        Ok(self)
    }
}

/// A status filter value.
// The schema's items only: the input reads `Status` itself, the same five words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
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
    #[serde(default, deserialize_with = "some_agent_id")]
    #[schemars(with = "Option<String>")]
    pub parent_agent_id: Option<AgentId>,
    /// Only agents of this workspace.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub workspace_id: Option<WorkspaceId>,
    /// Only agents with one of these live statuses.
    // Left out, an `Option` is `None` all the same; `serde(default)` would have the schema say
    // `"default": null` here, where it never did (a `Status` can be written, a `StatusInput` not).
    #[schemars(with = "Option<Vec<StatusInput>>")]
    pub statuses: Option<Vec<Status>>,
    /// Only agents with every one of these labels, e.g. `{"schedule": "nightly"}` for a
    /// schedule's runs.
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    /// At most this many agents, oldest first (default 200, at most 10,000); `total` counts
    /// every match.
    #[serde(default, deserialize_with = "whole::<_, 0, MAX_LIST_LIMIT>")]
    #[schemars(range(min = 0, max = 10000))]
    pub limit: Option<u64>,
    /// Only the agents of this configured host (config.json `hosts`); default this machine's
    /// and every connected host's. Only the user's token may name one.
    #[serde(default, deserialize_with = "text")]
    pub host: Option<String>,
}

impl Input for ListInput {}

/// Input of `create_worktree`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWorktreeInput {
    /// An absolute path inside the git repository (default: the caller's cwd; required for a
    /// user-token session).
    #[serde(default, deserialize_with = "text")]
    pub repo: Option<String>,
    pub target: WorktreeTarget,
}

impl Input for CreateWorktreeInput {
    fn check(mut self) -> R<Self> {
        trim_base(&mut self.target);
        Ok(self)
    }
}
