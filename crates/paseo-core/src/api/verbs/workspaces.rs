//! Workspaces: adding, naming and removing them, and git worktrees made as workspaces.

use serde::{Deserialize, Serialize};

use super::{Ctx, Verb};
use crate::api::Response;
use crate::model::WorkspaceId;
use crate::runtime::{Caller, RuntimeError};
use crate::workspaces::worktree::WorktreeTarget;

/// A workspace for a folder (the one already there for it, if any).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddWorkspace {
    pub path: String,
    /// Added on that configured host, its directory (SPEC 17); absent: this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for AddWorkspace {
    const KIND: &'static str = "addWorkspace";
    const USER_ONLY: bool = true;
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Workspace(Box::new(
            rt.add_workspace(self.path).await?,
        )))
    }
}

/// Names a workspace; an empty name clears it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenameWorkspace {
    pub workspace_id: WorkspaceId,
    pub name: String,
}

impl Verb for RenameWorkspace {
    const KIND: &'static str = "renameWorkspace";
    const USER_ONLY: bool = true;
    fn workspaces(&self) -> Vec<(&'static str, &WorkspaceId)> {
        vec![("workspaceId", &self.workspace_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Workspace(Box::new(
            rt.rename_workspace(self.workspace_id, &self.name).await?,
        )))
    }
}

/// Archives (removes) a workspace; refused (`busy`) while agents run in it unless
/// `evenIfRunning`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchiveWorkspace {
    pub workspace_id: WorkspaceId,
    #[serde(default)]
    pub even_if_running: bool,
}

impl Verb for ArchiveWorkspace {
    const KIND: &'static str = "archiveWorkspace";
    const USER_ONLY: bool = true;
    fn workspaces(&self) -> Vec<(&'static str, &WorkspaceId)> {
        vec![("workspaceId", &self.workspace_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::AgentIds(
            rt.archive_workspace(self.workspace_id, self.even_if_running)
                .await?,
        ))
    }
}

/// A git worktree workspace of the repository containing `repo` (default for an agent: its own
/// cwd).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWorktree {
    #[serde(default)]
    pub repo: Option<String>,
    pub target: WorktreeTarget,
    #[serde(default)]
    pub request_id: Option<String>,
    /// Made on that configured host, of its repository (SPEC 17); absent: this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for CreateWorktree {
    const KIND: &'static str = "createWorktree";
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, caller: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Workspace(Box::new(
            rt.create_worktree(caller, self.repo, self.target, self.request_id)
                .await?,
        )))
    }
}
