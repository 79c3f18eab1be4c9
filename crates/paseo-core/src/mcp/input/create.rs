//! The input of `create_agent` and the shapes it shares with `create_worktree`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::walker::*;
use super::{FieldError, Input, R};
use crate::model::{Budget, WorkspaceId};
use crate::workspaces::worktree::WorktreeTarget;

/// Reads a worktree target at `path` (`workspace.source.target`, `target`), naming the field at
/// fault.
pub(super) fn parse_target(v: &Value, path: &str) -> R<WorktreeTarget> {
    let (kind, o) = union(
        v,
        path,
        &[
            ("branch-off", &["newBranch", "base"]),
            ("checkout-branch", &["branch"]),
        ],
    )?;
    Ok(match kind {
        "branch-off" => {
            WorktreeTarget::branch_off(o.req_str("newBranch")?, o.opt_text("base")?.as_deref())
        }
        _ => WorktreeTarget::checkout(o.req_str("branch")?),
    })
}

// ------------------------------------------------------------------ create_agent

/// Who the new agent belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Relationship {
    /// A subagent of the caller: it carries the parent label, shows in the caller's track and
    /// is archived with it. Needs an agent-scoped session.
    Subagent,
    /// A root agent: no parent label; the caller's archive leaves it alone.
    Detached,
}

/// Where the new agent works.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkspaceInput {
    /// The caller's workspace, in the caller's cwd or in `cwd` (an absolute path inside the
    /// workspace). Needs an agent-scoped session.
    Current {
        #[serde(default)]
        cwd: Option<String>,
    },
    /// A new workspace.
    Create { source: SourceInput },
    /// A workspace that exists (its id from `list_agents`, `create_agent` or the app), so a
    /// script need not make one per call. An agent may name only a workspace inside its
    /// own reach (SPEC 14).
    Existing {
        #[serde(rename = "workspaceId")]
        workspace_id: String,
    },
}

/// What a new workspace is made from.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SourceInput {
    /// An existing directory (absolute path).
    Directory { path: String },
    /// A new git worktree under `$PASEO_HOME/worktrees/` of the repository containing `repo`
    /// (an absolute path; default: the caller's cwd; required for a user-token session).
    Worktree {
        #[serde(default)]
        repo: Option<String>,
        target: WorktreeTarget,
    },
}

/// Input of `create_agent`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateAgentInput {
    /// The provider id: `claude`, `codex`, `shell`, or a configured command provider.
    pub provider: String,
    /// The model (provider-specific). Default: the caller's model when the provider is the
    /// caller's, else the provider's default.
    #[serde(default)]
    pub model: Option<String>,
    /// A short title (default: the first line of the prompt).
    #[serde(default)]
    pub title: Option<String>,
    /// The first prompt; it runs in the background.
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
    #[serde(default)]
    pub host: Option<String>,
}

impl Input for CreateAgentInput {
    fn parse(v: &Value) -> R<Self> {
        let o = Obj::new(
            v,
            "",
            &[
                "provider",
                "model",
                "title",
                "initialPrompt",
                "relationship",
                "workspace",
                "notifyOnFinish",
                "autoArchive",
                "unconfined",
                "labels",
                "budget",
                "host",
            ],
        )?;
        let provider = o.req_str("provider")?.trim().to_string();
        let model = o.opt_text("model")?;
        let title = o.opt_text("title")?;
        let initial_prompt = o.req_str("initialPrompt")?.to_string();
        let (rk, _) = union(
            o.req("relationship")?,
            "relationship",
            &[("subagent", &[]), ("detached", &[])],
        )?;
        let relationship = if rk == "subagent" {
            Relationship::Subagent
        } else {
            Relationship::Detached
        };
        let (wk, w) = union(
            o.req("workspace")?,
            "workspace",
            &[
                ("current", &["cwd"]),
                ("create", &["source"]),
                ("existing", &["workspaceId"]),
            ],
        )?;
        let workspace = if wk == "current" {
            WorkspaceInput::Current {
                cwd: w.opt_text("cwd")?,
            }
        } else if wk == "existing" {
            let id = w.req_str("workspaceId")?;
            if id.parse::<WorkspaceId>().is_err() {
                return Err(FieldError::new(
                    "workspace.workspaceId",
                    "is not a workspace id",
                ));
            }
            WorkspaceInput::Existing {
                workspace_id: id.to_string(),
            }
        } else {
            let (sk, s) = union(
                w.req("source")?,
                "workspace.source",
                &[("directory", &["path"]), ("worktree", &["repo", "target"])],
            )?;
            let source = if sk == "directory" {
                SourceInput::Directory {
                    path: s.req_str("path")?.to_string(),
                }
            } else {
                SourceInput::Worktree {
                    repo: s.opt_text("repo")?,
                    target: parse_target(s.req("target")?, "workspace.source.target")?,
                }
            };
            WorkspaceInput::Create { source }
        };
        let labels = match o.get("labels") {
            None => None,
            Some(Value::Object(m)) => {
                let mut out = BTreeMap::new();
                for (k, v) in m {
                    match v {
                        Value::String(s) => {
                            out.insert(k.clone(), s.clone());
                        }
                        other => {
                            return Err(FieldError::new(
                                format!("labels.{k}"),
                                format!("must be a string, got {}", describe(other)),
                            ))
                        }
                    }
                }
                Some(out)
            }
            Some(other) => {
                return Err(FieldError::new(
                    "labels",
                    format!("must be an object of strings, got {}", describe(other)),
                ))
            }
        };
        Ok(CreateAgentInput {
            provider,
            model,
            title,
            initial_prompt,
            relationship,
            workspace,
            notify_on_finish: o.opt_bool("notifyOnFinish")?,
            auto_archive: o.opt_bool("autoArchive")?,
            unconfined: o.opt_bool("unconfined")?,
            labels,
            budget: match o.get("budget") {
                None => None,
                Some(b) => Some(
                    Budget::parse(b, "budget")
                        .map_err(|(field, msg)| FieldError::new(field, msg))?,
                ),
            },
            host: o.opt_text("host")?,
        })
    }
}
