//! Workspaces and projects: which directory an agent works in, which git repository (project)
//! it belongs to, git worktrees (see [`worktree`]) and what an agent changed in its workspace
//! (see [`changes`]).
//!
//! Everything here is I/O at the edge (the file system and the `git` CLI); the engine only
//! stores the records these functions produce.

pub mod changes;
pub mod gitcli;
pub mod reach;
pub mod trash;
pub mod worktree;

use std::path::{Path, PathBuf};

use gitcli::{Cmd, GitError};

use crate::model::{
    ProjectId, ProjectRecord, Timestamp, WorkspaceId, WorkspaceKind, WorkspaceRecord,
};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WorkspaceError {
    #[error("{field}: the path must be absolute (got {path:?})")]
    NotAbsolute { field: String, path: String },
    #[error("{field}: {path} does not exist")]
    Missing { field: String, path: String },
    #[error("{field}: {path} is not a directory")]
    NotADirectory { field: String, path: String },
    #[error("{field}: {path} is outside the workspace {workspace} ({root})")]
    OutsideWorkspace {
        field: String,
        path: String,
        workspace: String,
        root: String,
    },
    #[error("{field}: {path} is not inside a git repository")]
    NotARepository { field: String, path: String },
    #[error("git is not installed (or not on PATH)")]
    GitMissing,
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    #[error("git {command} failed: {message}")]
    Git { command: String, message: String },
    /// The snapshot commit before a removal failed (SPEC 15): the worktree was kept.
    #[error("the work left in {path} could not be committed: {message}")]
    Snapshot { path: String, message: String },
    /// A worktree was kept where it is instead of going to the trash (SPEC 15).
    #[error("the worktree {path} was not removed: {message}")]
    NotRemoved { path: String, message: String },
    #[error("{0}")]
    Io(String),
}

impl WorkspaceError {
    /// The input at fault, by its path, when the error names one.
    pub fn field(&self) -> Option<&str> {
        match self {
            WorkspaceError::NotAbsolute { field, .. }
            | WorkspaceError::Missing { field, .. }
            | WorkspaceError::NotADirectory { field, .. }
            | WorkspaceError::OutsideWorkspace { field, .. }
            | WorkspaceError::NotARepository { field, .. }
            | WorkspaceError::Invalid { field, .. } => Some(field),
            WorkspaceError::Git { .. }
            | WorkspaceError::GitMissing
            | WorkspaceError::Snapshot { .. }
            | WorkspaceError::NotRemoved { .. }
            | WorkspaceError::Io(_) => None,
        }
    }
}

impl From<GitError> for WorkspaceError {
    fn from(e: GitError) -> Self {
        match e {
            GitError::Missing { .. } => WorkspaceError::GitMissing,
            GitError::Failed {
                command, message, ..
            } => WorkspaceError::Git { command, message },
            GitError::Timeout { ref command, .. } | GitError::TooLarge { ref command, .. } => {
                WorkspaceError::Git {
                    command: command.clone(),
                    message: e.to_string(),
                }
            }
            GitError::Refused(message) => WorkspaceError::Invalid {
                field: "workspace".into(),
                message,
            },
            GitError::Io { message, .. } => {
                WorkspaceError::Io(format!("cannot run git: {message}"))
            }
        }
    }
}

/// What git says about a directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepoInfo {
    /// The top of the working tree containing the directory.
    pub root: PathBuf,
    /// The main repository's working tree (differs from `root` inside a linked worktree).
    pub common_root: PathBuf,
    pub remote_url: Option<String>,
    pub branch: Option<String>,
}

/// Runs git with `args` in `dir`; `Ok(None)` when git ran and failed (e.g. not a repository).
pub fn git(dir: &Path, args: &[&str]) -> Result<Option<String>, WorkspaceError> {
    Ok(Cmd::git(dir)
        .args(args)
        .query()?
        .map(|s| s.trim().to_string()))
}

/// Runs git with `args` in `dir`; its failure is an error carrying git's own message.
fn run_git(dir: &Path, args: &[&str]) -> Result<(), WorkspaceError> {
    Cmd::git(dir).args(args).run()?;
    Ok(())
}

/// Git facts about `dir`, or `None` when it is not in a repository (or git is missing).
pub fn repo_info(dir: &Path) -> Option<RepoInfo> {
    let root = git(dir, &["rev-parse", "--show-toplevel"]).ok()??;
    let common = git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .ok()
    .flatten()
    .map(PathBuf::from);
    // The common dir is `<main worktree>/.git` for ordinary repositories.
    let common_root = common
        .as_deref()
        .and_then(|c| {
            if c.file_name().is_some_and(|n| n == ".git") {
                c.parent().map(Path::to_path_buf)
            } else {
                None
            }
        })
        .unwrap_or_else(|| PathBuf::from(&root));
    let remote_url = git(dir, &["remote", "get-url", "origin"])
        .ok()
        .flatten()
        .filter(|s| !s.is_empty());
    let branch = git(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .ok()
        .flatten()
        .filter(|s| !s.is_empty());
    Some(RepoInfo {
        root: PathBuf::from(root),
        common_root,
        remote_url,
        branch,
    })
}

/// Checks that `path` is an absolute, existing directory and returns its canonical form.
pub fn existing_dir(field: &str, path: &str) -> Result<PathBuf, WorkspaceError> {
    let p = Path::new(path);
    if !p.is_absolute() {
        return Err(WorkspaceError::NotAbsolute {
            field: field.into(),
            path: path.into(),
        });
    }
    let canon = p.canonicalize().map_err(|_| WorkspaceError::Missing {
        field: field.into(),
        path: path.into(),
    })?;
    if !canon.is_dir() {
        return Err(WorkspaceError::NotADirectory {
            field: field.into(),
            path: path.into(),
        });
    }
    Ok(canon)
}

/// Checks that `cwd` is an existing directory inside the workspace's directory.
pub fn cwd_inside(field: &str, cwd: &str, ws: &WorkspaceRecord) -> Result<PathBuf, WorkspaceError> {
    let c = existing_dir(field, cwd)?;
    let root = Path::new(&ws.cwd)
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from(&ws.cwd));
    if !c.starts_with(&root) {
        return Err(WorkspaceError::OutsideWorkspace {
            field: field.into(),
            path: cwd.into(),
            workspace: ws.workspace_id.to_string(),
            root: ws.cwd.clone(),
        });
    }
    Ok(c)
}

fn base_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// The project key of a directory: the remote URL when there is one, else the repository
/// root, else the directory itself.
pub fn project_key(dir: &Path, repo: Option<&RepoInfo>) -> (String, String) {
    match repo {
        Some(r) => {
            let name = base_name(&r.common_root);
            match &r.remote_url {
                Some(u) => (u.clone(), name),
                None => (r.common_root.display().to_string(), name),
            }
        }
        None => (dir.display().to_string(), base_name(dir)),
    }
}

/// Finds the project for `dir` among `existing`, or makes a new one.
pub fn project_for(
    dir: &Path,
    repo: Option<&RepoInfo>,
    existing: &[ProjectRecord],
    now: Timestamp,
) -> (ProjectRecord, bool) {
    let (key, name) = project_key(dir, repo);
    if let Some(p) = existing.iter().find(|p| p.key == key) {
        return (p.clone(), false);
    }
    (
        ProjectRecord {
            project_id: ProjectId::new(),
            display_name: name,
            key,
            repo_root: repo.map(|r| r.common_root.display().to_string()),
            remote_url: repo.and_then(|r| r.remote_url.clone()),
            created_at: now,
            updated_at: now,
            extra: Default::default(),
        },
        true,
    )
}

/// A new workspace for a directory: `local_checkout` at the root of a git working tree,
/// `directory` otherwise. Returns the project too when it is new.
pub fn directory_workspace(
    dir: &Path,
    existing_projects: &[ProjectRecord],
    now: Timestamp,
) -> (WorkspaceRecord, Option<ProjectRecord>) {
    directory_workspace_with(dir, repo_info(dir), existing_projects, now)
}

/// The same from git facts already gathered (pure: the runtime gathers them off its thread).
pub fn directory_workspace_with(
    dir: &Path,
    repo: Option<RepoInfo>,
    existing_projects: &[ProjectRecord],
    now: Timestamp,
) -> (WorkspaceRecord, Option<ProjectRecord>) {
    let (project, fresh) = project_for(dir, repo.as_ref(), existing_projects, now);
    let is_checkout = repo.as_ref().is_some_and(|r| r.root == dir);
    let display_name = match (&repo, is_checkout) {
        (Some(r), true) => r.branch.clone().unwrap_or_else(|| base_name(dir)),
        _ => base_name(dir),
    };
    let kind = if is_checkout {
        WorkspaceKind::LocalCheckout
    } else {
        WorkspaceKind::Directory
    };
    let cwd = dir.display().to_string();
    let ws = WorkspaceRecord {
        repo: repo.as_ref().map(|r| r.root.display().to_string()),
        branch: repo.as_ref().and_then(|r| r.branch.clone()),
        ..WorkspaceRecord::new(
            WorkspaceId::new(),
            project.project_id.clone(),
            cwd,
            kind,
            display_name,
            now,
        )
    };
    (ws, fresh.then_some(project))
}

/// The workspace record of a worktree just created (pure).
pub fn worktree_workspace(
    created: &worktree::CreatedWorktree,
    existing_projects: &[ProjectRecord],
    created_by: Option<crate::model::AgentId>,
    request: Option<String>,
    now: Timestamp,
) -> (WorkspaceRecord, Option<ProjectRecord>) {
    let (project, fresh) = project_for(
        &created.repo.common_root,
        Some(&created.repo),
        existing_projects,
        now,
    );
    let cwd = created.path.display().to_string();
    let ws = WorkspaceRecord {
        repo: Some(created.repo.common_root.display().to_string()),
        branch: Some(created.branch.clone()),
        created_by_agent_id: created_by,
        created_by_request: request,
        extra: base_extra(created.base.as_ref()),
        ..WorkspaceRecord::new(
            WorkspaceId::new(),
            project.project_id.clone(),
            cwd,
            WorkspaceKind::Worktree,
            created.branch.clone(),
            now,
        )
    };
    (ws, fresh.then_some(project))
}

/// The JSON keys a worktree's base is recorded under in its workspace record. They live in the
/// record's open `extra` map until the model gets typed fields; fields with these JSON names
/// will read what is recorded now.
pub const BASE_BRANCH_KEY: &str = "baseBranch";
pub const BASE_COMMIT_KEY: &str = "baseCommit";

fn base_extra(base: Option<&worktree::BaseRef>) -> crate::model::Extra {
    let mut extra = crate::model::Extra::new();
    if let Some(b) = base {
        if let Some(branch) = &b.branch {
            extra.insert(BASE_BRANCH_KEY.into(), branch.clone().into());
        }
        if !b.commit.is_empty() {
            extra.insert(BASE_COMMIT_KEY.into(), b.commit.clone().into());
        }
    }
    extra
}

/// The base recorded for a worktree workspace when it was created, if any.
pub fn recorded_base(ws: &WorkspaceRecord) -> Option<worktree::BaseRef> {
    let text = |k: &str| {
        ws.extra
            .get(k)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Some(worktree::BaseRef {
        branch: text(BASE_BRANCH_KEY),
        commit: text(BASE_COMMIT_KEY)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn plain_directory_and_checkout_and_subdirectory() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let plain = root.join("plain");
        std::fs::create_dir(&plain).unwrap();
        let (ws, p) = directory_workspace(&plain, &[], Timestamp::now());
        assert_eq!(ws.kind, WorkspaceKind::Directory);
        assert_eq!(p.as_ref().unwrap().key, plain.display().to_string());

        let repo = root.join("repo");
        std::fs::create_dir(&repo).unwrap();
        sh(&repo, &["init", "-q", "-b", "main"]);
        sh(&repo, &["commit", "-q", "--allow-empty", "-m", "c"]);
        let (ws, p) = directory_workspace(&repo, &[], Timestamp::now());
        assert_eq!(ws.kind, WorkspaceKind::LocalCheckout);
        assert_eq!(ws.branch.as_deref(), Some("main"));
        let p = p.unwrap();
        assert_eq!(p.key, repo.display().to_string());

        // A subdirectory belongs to the same project.
        let sub = repo.join("src");
        std::fs::create_dir(&sub).unwrap();
        let (ws2, p2) = directory_workspace(&sub, std::slice::from_ref(&p), Timestamp::now());
        assert!(p2.is_none());
        assert_eq!(ws2.project_id, p.project_id);
        assert_eq!(ws2.kind, WorkspaceKind::Directory);

        // With a remote, the remote URL is the key.
        sh(
            &repo,
            &["remote", "add", "origin", "https://example.com/app.git"],
        );
        let (_, p3) = directory_workspace(&repo, &[], Timestamp::now());
        assert_eq!(p3.unwrap().key, "https://example.com/app.git");
    }

    #[test]
    fn path_validation_names_the_field() {
        let d = tempfile::tempdir().unwrap();
        let e = existing_dir("workspace.source.path", "rel/dir").unwrap_err();
        assert!(e.to_string().starts_with("workspace.source.path:"), "{e}");
        let missing = d.path().join("nope");
        assert!(matches!(
            existing_dir("x", missing.to_str().unwrap()),
            Err(WorkspaceError::Missing { .. })
        ));
        let f = d.path().join("file");
        std::fs::write(&f, b"").unwrap();
        assert!(matches!(
            existing_dir("x", f.to_str().unwrap()),
            Err(WorkspaceError::NotADirectory { .. })
        ));
        let now = Timestamp::now();
        let (ws, _) = directory_workspace(&d.path().canonicalize().unwrap(), &[], now);
        let inner = d.path().join("in");
        std::fs::create_dir(&inner).unwrap();
        assert!(cwd_inside("workspace.cwd", inner.to_str().unwrap(), &ws).is_ok());
        let e = cwd_inside("workspace.cwd", "/", &ws).unwrap_err();
        assert!(matches!(e, WorkspaceError::OutsideWorkspace { .. }));
    }
}
