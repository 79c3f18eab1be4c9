//! The input of `create_agent`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::fields::{non_empty, text, trimmed};
use super::{Input, R};
use crate::model::tagged::tagged;
use crate::model::{Budget, WorkspaceId};
use crate::workspaces::worktree::WorktreeTarget;

/// Who the new agent belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Relationship {
    /// A subagent of the caller: it carries the parent label, shows in the caller's track and
    /// is archived with it. Needs an agent-scoped session.
    Subagent,
    /// A root agent: no parent label; the caller's archive leaves it alone.
    Detached,
}

// Every union here is read kind first, so an error inside it keeps its path.
tagged!(Relationship {
    "subagent" => Subagent,
    "detached" => Detached,
});

/// Where the new agent works.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WorkspaceInput {
    /// The caller's workspace, in the caller's cwd or in `cwd` (an absolute path inside the
    /// workspace). Needs an agent-scoped session.
    Current(CurrentInput),
    /// A new workspace.
    Create(CreateInput),
    /// A workspace that exists (its id from `list_agents`, `create_agent` or the app), so a
    /// script need not make one per call. An agent may name only a workspace inside its
    /// own reach (SPEC 14).
    Existing(ExistingInput),
}

tagged!(WorkspaceInput {
    "current" => Current(CurrentInput),
    "create" => Create(CreateInput),
    "existing" => Existing(ExistingInput),
});

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CurrentInput {
    #[serde(default, deserialize_with = "text")]
    pub cwd: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInput {
    pub source: SourceInput,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExistingInput {
    #[schemars(with = "String")]
    pub workspace_id: WorkspaceId,
}

/// What a new workspace is made from.
#[derive(Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SourceInput {
    /// An existing directory (absolute path).
    Directory(DirectoryInput),
    /// A new git worktree under `$PASEO_HOME/worktrees/` of the repository containing `repo`
    /// (an absolute path; default: the caller's cwd; required for a user-token session).
    Worktree(WorktreeInput),
}

tagged!(SourceInput {
    "directory" => Directory(DirectoryInput),
    "worktree" => Worktree(WorktreeInput),
});

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirectoryInput {
    #[serde(deserialize_with = "non_empty")]
    pub path: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorktreeInput {
    #[serde(default, deserialize_with = "text")]
    pub repo: Option<String>,
    pub target: WorktreeTarget,
}

/// Input of `create_agent`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateAgentInput {
    /// The provider id: `claude`, `codex`, `shell`, or a configured command provider.
    #[serde(deserialize_with = "non_empty")]
    pub provider: String,
    /// The model (provider-specific). Default: the caller's model when the provider is the
    /// caller's, else the provider's default.
    #[serde(default, deserialize_with = "text")]
    pub model: Option<String>,
    /// A short title (default: the first line of the prompt).
    #[serde(default, deserialize_with = "text")]
    pub title: Option<String>,
    /// The first prompt; it runs in the background.
    #[serde(deserialize_with = "non_empty")]
    pub initial_prompt: String,
    pub relationship: Relationship,
    pub workspace: WorkspaceInput,
    /// Whether the first turn's end is reported to the caller as its next turn (default true
    /// for agent-scoped callers; a user-token session cannot be notified).
    #[serde(default)]
    pub notify_on_finish: Option<bool>,
    /// Archive the agent (and a worktree this call created) after its first turn ends.
    #[serde(default)]
    pub auto_archive: Option<bool>,
    /// Run the new agent outside the sandbox (default false). An agent asking for it from
    /// inside the sandbox has its first turn held until the user allows it.
    #[serde(default)]
    pub unconfined: Option<bool>,
    /// Extra labels (string to string).
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    /// A budget for the new agent's tree (SPEC 18): `treeTokens` and/or `treeCostUsd`, each at
    /// most what your own tree has left (more is an error naming the field; nothing is
    /// created). A detached agent you create counts against your tree anyway.
    #[serde(default)]
    pub budget: Option<Budget>,
    /// The configured host (config.json `hosts`) to run it on; default this machine. Only
    /// the user's token may name one.
    #[serde(default, deserialize_with = "text")]
    pub host: Option<String>,
}

impl Input for CreateAgentInput {
    fn check(mut self) -> R<Self> {
        if let WorkspaceInput::Create(CreateInput {
            source: SourceInput::Worktree(w),
        }) = &mut self.workspace
        {
            trim_base(&mut w.target);
        }
        Ok(self)
    }
}

/// A blank `base` is no base, as for every optional string of the tools: the `WorktreeTarget`
/// the API shares reads it as written.
pub(super) fn trim_base(target: &mut WorktreeTarget) {
    if let WorktreeTarget::BranchOff(b) = target {
        b.base = trimmed(b.base.take());
    }
}
