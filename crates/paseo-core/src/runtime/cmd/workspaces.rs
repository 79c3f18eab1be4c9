//! The workspace commands: registering what the handle checked on disk, and archiving.

use std::path::Path;

use super::super::actor::Actor;
use super::super::durable::Durable;
use super::super::events::WorkspaceSnapshot;
use super::super::RuntimeError;
use crate::model::{
    AgentId, ProjectRecord, Timestamp, WorkspaceId, WorkspaceKind, WorkspaceRecord,
};
use crate::workspaces::{self, worktree::CreatedWorktree, RepoInfo};

impl Actor {
    /// The unarchived workspace open on `dir` itself (a worktree's is its own), if any: what a
    /// directory's reuse (one workspace per directory) joins.
    pub(super) fn open_directory_workspace(&self, dir: &Path) -> Option<&WorkspaceRecord> {
        let cwd = dir.display().to_string();
        self.engine
            .workspaces()
            .find(|w| !w.is_archived() && w.cwd == cwd && w.kind != WorkspaceKind::Worktree)
    }

    /// A workspace for `dir`; with `reuse`, an unarchived one for the same directory is
    /// returned instead of a new one.
    pub(super) fn register_directory(
        &mut self,
        dir: &Path,
        repo: Option<RepoInfo>,
        reuse: bool,
    ) -> WorkspaceRecord {
        if let Some(w) = self.open_directory_workspace(dir).filter(|_| reuse) {
            return w.clone();
        }
        let projects: Vec<ProjectRecord> = self.engine.projects().cloned().collect();
        let (ws, project) =
            workspaces::directory_workspace_with(dir, repo, &projects, Timestamp::now());
        self.engine.upsert_workspace(ws.clone(), project);
        self.apply();
        ws
    }

    pub(super) fn register_worktree(
        &mut self,
        created: &CreatedWorktree,
        created_by: Option<AgentId>,
        request: Option<String>,
    ) -> Result<WorkspaceSnapshot, RuntimeError> {
        // An agent's worktree counts against its create rate (SPEC 14), in this same step.
        if let Some(c) = created_by {
            self.check_limits(c, false)?;
            self.create_rate
                .take(c, Timestamp::now(), self.limits.create_per_minute)?;
        }
        let (ws, project) = self.worktree_record(created, created_by, request);
        self.engine.upsert_workspace(ws.clone(), project);
        self.apply();
        Ok(WorkspaceSnapshot::of(&self.engine, &ws))
    }

    /// The workspace (and project, if new) for a worktree just made, not registered yet.
    pub(super) fn worktree_record(
        &self,
        created: &CreatedWorktree,
        created_by: Option<AgentId>,
        request: Option<String>,
    ) -> (WorkspaceRecord, Option<ProjectRecord>) {
        let projects: Vec<ProjectRecord> = self.engine.projects().cloned().collect();
        workspaces::worktree_workspace(created, &projects, created_by, request, Timestamp::now())
    }

    pub(super) fn rename_workspace(
        &mut self,
        id: &WorkspaceId,
        name: Option<String>,
    ) -> Result<WorkspaceSnapshot, RuntimeError> {
        self.engine.rename_workspace(id, name)?;
        self.apply();
        let ws = self
            .engine
            .workspace(id)
            .ok_or_else(|| crate::engine::EngineError::UnknownWorkspace(id.clone()))?;
        Ok(WorkspaceSnapshot::of(&self.engine, ws))
    }

    pub(super) fn archive_workspace(
        &mut self,
        id: &WorkspaceId,
        even_if_running: bool,
    ) -> Result<(Vec<AgentId>, Durable), RuntimeError> {
        let archived = self.engine.archive_workspace(id, even_if_running)?;
        self.apply();
        let cause = self
            .engine
            .workspace(id)
            .map(|w| format!("workspace {}", w.display_name))
            .unwrap_or_default();
        self.remove_worktree_later(id, &archived, &cause, archived.clone());
        let d = self.durable(&archived);
        Ok((archived, d))
    }
}
