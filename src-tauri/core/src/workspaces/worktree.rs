//! Git worktrees under `$PASEO_HOME/worktrees/<repo-hash>/<slug>`, made and removed with the
//! git CLI. The branch always outlives its worktree.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{git, repo_info, run_git, RepoInfo, WorkspaceError};
use crate::store::Layout;

/// What a new worktree checks out (shared by `create_worktree` and `create_agent`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum WorktreeTarget {
    /// A new branch `newBranch` from `base` (default: the repository's HEAD).
    #[serde(rename_all = "camelCase")]
    BranchOff {
        new_branch: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<String>,
    },
    /// An existing branch, not checked out anywhere else.
    CheckoutBranch { branch: String },
}

impl WorktreeTarget {
    pub fn branch(&self) -> &str {
        match self {
            WorktreeTarget::BranchOff { new_branch, .. } => new_branch,
            WorktreeTarget::CheckoutBranch { branch } => branch,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedWorktree {
    pub path: PathBuf,
    pub branch: String,
    /// The repository it was made from.
    pub repo: RepoInfo,
}

/// A stable short hash (FNV-1a 64) of the repository path: the folder that groups its
/// worktrees. Stable across builds, unlike std's hasher.
pub fn repo_hash(repo_root: &Path) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in repo_root.to_string_lossy().as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")[..12].to_string()
}

/// The folder name for a branch: `feat/login` → `feat-login`.
pub fn slug(branch: &str) -> String {
    let s: String = branch
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches(|c| c == '-' || c == '.').to_string();
    if s.is_empty() {
        "worktree".into()
    } else {
        s.chars().take(80).collect()
    }
}

/// Checks a branch name with our rules and git's own (`git check-ref-format --branch`).
pub fn validate_branch(field: &str, name: &str) -> Result<(), WorkspaceError> {
    let bad = |m: &str| {
        Err(WorkspaceError::Invalid {
            field: field.into(),
            message: m.into(),
        })
    };
    if name.trim().is_empty() {
        return bad("the branch name is empty");
    }
    if name.len() > 200 {
        return bad("the branch name is longer than 200 characters");
    }
    if name.starts_with('-') {
        return bad("a branch name cannot start with '-'");
    }
    match git(Path::new("."), &["check-ref-format", "--branch", name])? {
        Some(_) => Ok(()),
        None => Err(WorkspaceError::Invalid {
            field: field.into(),
            message: format!("{name:?} is not a valid git branch name"),
        }),
    }
}

fn branch_exists(repo: &Path, branch: &str) -> Result<bool, WorkspaceError> {
    Ok(git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )?
    .is_some())
}

/// Where `branch` is checked out, if anywhere.
fn checked_out_at(repo: &Path, branch: &str) -> Result<Option<String>, WorkspaceError> {
    let list = git(repo, &["worktree", "list", "--porcelain"])?.unwrap_or_default();
    let want = format!("branch refs/heads/{branch}");
    let mut current = None;
    for line in list.lines() {
        if let Some(p) = line.strip_prefix("worktree ") {
            current = Some(p.to_string());
        } else if line == want {
            return Ok(current);
        }
    }
    Ok(None)
}

/// Creates a worktree of the repository containing `repo` for `target`. `field` prefixes the
/// field paths in errors (e.g. `workspace.source`).
pub fn create(
    layout: &Layout,
    field: &str,
    repo: &str,
    target: &WorktreeTarget,
) -> Result<CreatedWorktree, WorkspaceError> {
    let join = |name: &str| {
        if field.is_empty() {
            name.to_string()
        } else {
            format!("{field}.{name}")
        }
    };
    let repo_field = join("repo");
    let dir = super::existing_dir(&repo_field, repo)?;
    // Distinguish "git missing" from "not a repository".
    git(&dir, &["--version"])?;
    let info = repo_info(&dir).ok_or_else(|| WorkspaceError::NotARepository {
        field: repo_field.clone(),
        path: repo.to_string(),
    })?;
    let main = info.common_root.clone();
    let branch = target.branch().to_string();
    match target {
        WorktreeTarget::BranchOff { new_branch, base } => {
            let f = join("target.newBranch");
            validate_branch(&f, new_branch)?;
            if branch_exists(&main, new_branch)? {
                return Err(WorkspaceError::Invalid {
                    field: f,
                    message: format!("branch {new_branch:?} already exists"),
                });
            }
            if let Some(b) = base {
                let ok = !b.trim().is_empty()
                    && !b.starts_with('-')
                    && git(
                        &main,
                        &[
                            "rev-parse",
                            "--verify",
                            "--quiet",
                            &format!("{b}^{{commit}}"),
                        ],
                    )?
                    .is_some();
                if !ok {
                    return Err(WorkspaceError::Invalid {
                        field: join("target.base"),
                        message: format!("{b:?} is not a commit, branch or tag of this repository"),
                    });
                }
            } else if git(
                &main,
                &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            )?
            .is_none()
            {
                return Err(WorkspaceError::Invalid {
                    field: join("target.base"),
                    message: "the repository has no commits yet; give a base".into(),
                });
            }
        }
        WorktreeTarget::CheckoutBranch { branch } => {
            let f = join("target.branch");
            validate_branch(&f, branch)?;
            if !branch_exists(&main, branch)? {
                return Err(WorkspaceError::Invalid {
                    field: f,
                    message: format!("branch {branch:?} does not exist"),
                });
            }
            if let Some(at) = checked_out_at(&main, branch)? {
                return Err(WorkspaceError::Invalid {
                    field: f,
                    message: format!("branch {branch:?} is already checked out at {at}"),
                });
            }
        }
    }
    let parent = layout.worktrees_dir().join(repo_hash(&main));
    std::fs::create_dir_all(&parent)
        .map_err(|e| WorkspaceError::Io(format!("cannot create {}: {e}", parent.display())))?;
    let base_slug = slug(&branch);
    let mut path = parent.join(&base_slug);
    let mut n = 2;
    while path.exists() {
        path = parent.join(format!("{base_slug}-{n}"));
        n += 1;
    }
    let p = path.display().to_string();
    match target {
        WorktreeTarget::BranchOff { new_branch, base } => {
            let mut args = vec!["worktree", "add", "--quiet", "-b", new_branch.as_str(), &p];
            if let Some(b) = base {
                args.push(b);
            }
            run_git(&main, &args)?;
        }
        WorktreeTarget::CheckoutBranch { branch } => {
            run_git(&main, &["worktree", "add", "--quiet", &p, branch])?;
        }
    }
    let path = path.canonicalize().unwrap_or(path);
    Ok(CreatedWorktree {
        path,
        branch,
        repo: info,
    })
}

/// Puts a removed worktree back at `path` with its kept `branch` (restoring its agents).
pub fn readd(layout: &Layout, repo: &str, path: &str, branch: &str) -> Result<(), WorkspaceError> {
    let root = layout.worktrees_dir();
    let p = Path::new(path);
    if !p.is_absolute() || !p.starts_with(&root) {
        return Err(WorkspaceError::Invalid {
            field: "workspace".into(),
            message: format!(
                "{path} is not inside the worktrees folder {}",
                root.display()
            ),
        });
    }
    if p.is_dir() {
        return Ok(());
    }
    let repo = Path::new(repo);
    run_git(repo, &["worktree", "prune"])?;
    if !branch_exists(repo, branch)? {
        return Err(WorkspaceError::Invalid {
            field: "workspace.branch".into(),
            message: format!("branch {branch:?} no longer exists; the worktree cannot be restored"),
        });
    }
    if let Some(at) = checked_out_at(repo, branch)? {
        return Err(WorkspaceError::Invalid {
            field: "workspace.branch".into(),
            message: format!(
                "branch {branch:?} is checked out at {at}; the worktree cannot be restored"
            ),
        });
    }
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| WorkspaceError::Io(format!("cannot create {}: {e}", parent.display())))?;
    }
    run_git(repo, &["worktree", "add", "--quiet", path, branch])
}

/// Removes the worktree at `path` (made from `repo`) with git, then prunes. `force` also
/// discards uncommitted changes in it. Refuses any path outside the worktrees root. The branch
/// is kept.
pub fn remove(layout: &Layout, repo: &str, path: &str, force: bool) -> Result<(), WorkspaceError> {
    let root = layout.worktrees_dir();
    let root = root.canonicalize().unwrap_or(root);
    let p = Path::new(path);
    let canon = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if !p.is_absolute() || !canon.starts_with(&root) || canon == root {
        return Err(WorkspaceError::Invalid {
            field: "workspace".into(),
            message: format!(
                "{path} is not inside the worktrees folder {}; refusing to remove it",
                root.display()
            ),
        });
    }
    let repo = Path::new(repo);
    if canon.exists() {
        let mut args = vec!["worktree", "remove"];
        if force {
            args.push("--force");
        }
        let c = canon.display().to_string();
        args.push(&c);
        run_git(repo, &args)?;
    }
    run_git(repo, &["worktree", "prune"])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_hashes_are_stable_and_safe() {
        assert_eq!(slug("feat/login"), "feat-login");
        assert_eq!(slug("../../x"), "x");
        assert_eq!(slug("///"), "worktree");
        assert_eq!(
            repo_hash(Path::new("/src/app")),
            repo_hash(Path::new("/src/app"))
        );
        assert_ne!(
            repo_hash(Path::new("/src/app")),
            repo_hash(Path::new("/src/api"))
        );
        assert_eq!(repo_hash(Path::new("/src/app")).len(), 12);
    }

    #[test]
    fn branch_names_are_validated() {
        assert!(validate_branch("f", "feat/login").is_ok());
        for bad in ["", "-x", "a..b", "a b", "a~1", "x.lock", "a:b"] {
            let e = validate_branch("t.newBranch", bad).unwrap_err();
            assert!(e.to_string().starts_with("t.newBranch:"), "{bad}: {e}");
        }
    }

    #[test]
    fn target_json_shape() {
        let t: WorktreeTarget =
            serde_json::from_str(r#"{"kind":"branch-off","newBranch":"x","base":"main"}"#).unwrap();
        assert_eq!(
            t,
            WorktreeTarget::BranchOff {
                new_branch: "x".into(),
                base: Some("main".into())
            }
        );
        let t: WorktreeTarget =
            serde_json::from_str(r#"{"kind":"checkout-branch","branch":"dev"}"#).unwrap();
        assert_eq!(t.branch(), "dev");
        assert!(serde_json::from_str::<WorktreeTarget>(r#"{"kind":"nope"}"#).is_err());
    }
}
