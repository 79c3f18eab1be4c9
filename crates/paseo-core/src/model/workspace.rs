//! Workspaces and projects (SPEC 1): the registries in `$PASEO_HOME/projects/`.

use serde::{Deserialize, Serialize};

use super::ids::{AgentId, Extra, ProjectId, Timestamp, WorkspaceId};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceKind {
    Directory,
    LocalCheckout,
    Worktree,
}

/// One workspace, in `$PASEO_HOME/projects/workspaces.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceRecord {
    pub workspace_id: WorkspaceId,
    pub project_id: ProjectId,
    pub cwd: String,
    pub kind: WorkspaceKind,
    #[serde(default)]
    pub display_name: String,
    /// What the user (or the agent whose request created it) calls it, so workspaces that
    /// share a directory are told apart. Absent in registries written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<Timestamp>,
    /// Worktrees: the repository root the worktree was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Worktrees and checkouts: the branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Worktrees: the agent whose request created it, if an agent did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by_agent_id: Option<AgentId>,
    /// Worktrees: the request that created it (the tool call or UI gesture).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by_request: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl WorkspaceRecord {
    /// A workspace with no worktree facts and no archive date.
    pub fn new(
        workspace_id: WorkspaceId,
        project_id: ProjectId,
        cwd: String,
        kind: WorkspaceKind,
        display_name: String,
        now: Timestamp,
    ) -> WorkspaceRecord {
        WorkspaceRecord {
            workspace_id,
            project_id,
            cwd,
            kind,
            display_name,
            name: None,
            created_at: now,
            updated_at: now,
            archived_at: None,
            repo: None,
            branch: None,
            created_by_agent_id: None,
            created_by_request: None,
            extra: Extra::new(),
        }
    }

    pub fn is_archived(&self) -> bool {
        self.archived_at.is_some()
    }
}

/// The longest workspace name, in characters.
pub const MAX_WORKSPACE_NAME: usize = 100;

/// A workspace name as stored: trimmed, one line, at most [`MAX_WORKSPACE_NAME`] characters;
/// empty means none (the workspace is called by its branch or folder again).
pub fn clean_workspace_name(name: &str) -> Result<Option<String>, String> {
    let name = name.trim();
    if name.chars().any(char::is_control) {
        return Err("must be one line of text".into());
    }
    if name.chars().count() > MAX_WORKSPACE_NAME {
        return Err(format!("longer than {MAX_WORKSPACE_NAME} characters"));
    }
    Ok((!name.is_empty()).then(|| name.to_string()))
}

/// A project: the git repository (or plain directory) that workspaces belong to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectRecord {
    pub project_id: ProjectId,
    #[serde(default)]
    pub display_name: String,
    /// The key that groups workspaces: the remote URL when there is one, else the repository
    /// root, else the directory.
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_root: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_url: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(flatten)]
    pub extra: Extra,
}

/// How much an agent changed on disk, as its Changes view counts it (shown in the track and the
/// workspace home). Not stored: counted again when its turns end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeCounts {
    pub files: u64,
    pub additions: u64,
    pub deletions: u64,
}
