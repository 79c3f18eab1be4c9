//! Git worktrees under `$PASEO_HOME/worktrees/<repo-hash>/<slug>`, made and removed with the
//! git CLI. The branch always outlives its worktree.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use super::gitcli::repo_hash;
use super::gitcli::{self, Cmd, Hooks};
use super::{git, repo_info, run_git, trash, RepoInfo, WorkspaceError};
use crate::model::tagged::tagged;
use crate::store::Layout;

// The one type the API's requests, the MCP tools' `target` (its doc comments are their
// served schema's) and the runtime share.
/// What a new worktree checks out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorktreeTarget {
    /// Create the new branch `newBranch` from `base` (default: the repository's HEAD).
    BranchOff(BranchOff),
    /// Check out the existing branch `branch` (it must not be checked out anywhere else).
    CheckoutBranch(CheckoutBranch),
}

// Read kind first, so an error in its fields has its path (`target.newBranch`).
tagged!(WorktreeTarget {
    "branch-off" => BranchOff(BranchOff),
    "checkout-branch" => CheckoutBranch(CheckoutBranch),
});

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BranchOff {
    pub new_branch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = null))]
    pub base: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckoutBranch {
    pub branch: String,
}

impl WorktreeTarget {
    /// A new branch `new_branch` from `base` (default: HEAD).
    pub fn branch_off(new_branch: impl Into<String>, base: Option<&str>) -> Self {
        WorktreeTarget::BranchOff(BranchOff {
            new_branch: new_branch.into(),
            base: base.map(Into::into),
        })
    }

    /// The existing branch `branch`.
    pub fn checkout(branch: impl Into<String>) -> Self {
        WorktreeTarget::CheckoutBranch(CheckoutBranch {
            branch: branch.into(),
        })
    }

    pub fn branch(&self) -> &str {
        match self {
            WorktreeTarget::BranchOff(b) => &b.new_branch,
            WorktreeTarget::CheckoutBranch(c) => &c.branch,
        }
    }
}

/// What a worktree branch is compared with and merged into (the Changes feature).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseRef {
    /// The local branch it came from, when it came from one (`main`); `None` for a tag or a
    /// commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit the worktree's branch started at.
    pub commit: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedWorktree {
    pub path: PathBuf,
    pub branch: String,
    /// The repository it was made from.
    pub repo: RepoInfo,
    /// What it branched off: recorded at creation for a new branch; for an existing branch
    /// checked out, the best guess ([`guess_base`]), if any.
    pub base: Option<BaseRef>,
}

/// A sensible base for a branch whose base was not recorded, in the checkout `top`: the first
/// local branch other than its own among origin's default branch, `init.defaultBranch`, the
/// branch of the repository's main checkout, `main` and `master`; the commit is its merge base
/// with HEAD. `None` when no candidate shares history with HEAD.
pub fn guess_base(top: &Path) -> Result<Option<BaseRef>, gitcli::GitError> {
    let own = gitcli::current_branch(top)?;
    let mut candidates: Vec<String> = Vec::new();
    if let Some(r) = Cmd::git(top)
        .args([
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
        ])
        .query()?
    {
        candidates.extend(r.strip_prefix("origin/").map(str::to_string));
    }
    candidates.extend(
        Cmd::git(top)
            .args(["config", "--get", "init.defaultBranch"])
            .query()?,
    );
    // `git worktree list` names the main checkout first.
    candidates.extend(gitcli::worktrees(top)?.into_iter().next().and_then(|w| w.1));
    candidates.extend(["main".to_string(), "master".to_string()]);
    let head = gitcli::resolve(top, "HEAD")?;
    for c in candidates {
        if Some(&c) == own.as_ref() || c.starts_with('-') {
            continue;
        }
        let (Some(tip), Some(head)) = (
            gitcli::resolve(top, &format!("refs/heads/{c}"))?,
            head.as_deref(),
        ) else {
            continue;
        };
        if let Some(commit) = gitcli::merge_base(top, head, &tip)? {
            return Ok(Some(BaseRef {
                branch: Some(c),
                commit,
            }));
        }
    }
    Ok(None)
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
    Ok(gitcli::branch_exists(repo, branch)?)
}

/// Where `branch` is checked out, if anywhere.
fn checked_out_at(repo: &Path, branch: &str) -> Result<Option<String>, WorkspaceError> {
    Ok(gitcli::checked_out_at(repo, branch)?.map(|p| p.display().to_string()))
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
        WorktreeTarget::BranchOff(BranchOff { new_branch, base }) => {
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
        WorktreeTarget::CheckoutBranch(CheckoutBranch { branch }) => {
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
        WorktreeTarget::BranchOff(BranchOff { new_branch, base }) => {
            let mut args = vec!["worktree", "add", "--quiet", "-b", new_branch.as_str(), &p];
            if let Some(b) = base {
                args.push(b);
            }
            Cmd::git(&main).args(&args).writes(&parent).run()?;
        }
        WorktreeTarget::CheckoutBranch(CheckoutBranch { branch }) => {
            Cmd::git(&main)
                .args(["worktree", "add", "--quiet", &p, branch])
                .writes(&parent)
                .run()?;
        }
    }
    let path = path.canonicalize().unwrap_or(path);
    let base = match target {
        WorktreeTarget::BranchOff(BranchOff { base, .. }) => {
            // The new branch starts where HEAD is now, whatever `base` named.
            let commit = gitcli::resolve(&path, "HEAD")?.unwrap_or_default();
            let branch = match base {
                Some(b) => branch_exists(&main, b)?.then(|| b.clone()),
                None => gitcli::current_branch(&main)?,
            };
            Some(BaseRef { branch, commit })
        }
        WorktreeTarget::CheckoutBranch(_) => guess_base(&path).ok().flatten(),
    };
    Ok(CreatedWorktree {
        path,
        branch,
        repo: info,
        base,
    })
}

/// `path` if it is strictly inside the worktrees folder (canonical when it exists); the app
/// never re-adds or removes anything else.
fn inside_worktrees(layout: &Layout, path: &str, verb: &str) -> Result<PathBuf, WorkspaceError> {
    let root = layout.worktrees_dir();
    let canon_root = root.canonicalize().unwrap_or_else(|_| root.clone());
    let p = Path::new(path);
    let canon = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let ok = p.is_absolute()
        && !p.components().any(|c| matches!(c, Component::ParentDir))
        && [&root, &canon_root]
            .iter()
            .any(|r| canon.starts_with(r) && canon != **r);
    if ok {
        Ok(canon)
    } else {
        Err(WorkspaceError::Invalid {
            field: "workspace".into(),
            message: format!(
                "{path} is not inside the worktrees folder {}; refusing to {verb} it",
                root.display()
            ),
        })
    }
}

/// Puts a removed worktree back at `path` with its kept `branch` (restoring its agents), then
/// what was left in it when it was removed (ignored files) from the trash, if its entry is
/// still there (SPEC 15): the branch brings the tracked content, snapshot included; from the
/// trash comes only what the branch does not have, never over a file of the branch. A
/// worktree already back on disk only gets the trash's part (a restore that stopped there
/// and is tried again).
pub fn readd(layout: &Layout, repo: &str, path: &str, branch: &str) -> Result<(), WorkspaceError> {
    let p = inside_worktrees(layout, path, "restore")?;
    // Blocking: called off the async threads (a removal holds it only while it moves a folder).
    let _changing = CHANGING.blocking_lock();
    if !p.is_dir() {
        add_back(repo, &p, branch)?;
    }
    let p = p.canonicalize().unwrap_or(p);
    if let Some(entry) = trash::find(layout, &p) {
        trash::restore_into(&entry, &p).map_err(|e| {
            WorkspaceError::Io(format!(
                "the worktree {} is back from its branch, but its ignored files could not be \
                 put back from the trash ({}): {e}",
                p.display(),
                entry.dir.display()
            ))
        })?;
    }
    Ok(())
}

fn add_back(repo: &str, p: &Path, branch: &str) -> Result<(), WorkspaceError> {
    validate_branch("workspace.branch", branch)?;
    let repo = Path::new(repo);
    // git may still list it, if forgetting it failed when it was removed.
    gitcli::forget_worktree(repo, p)?;
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
    let mut add = Cmd::git(repo)
        .args(["worktree", "add", "--quiet"])
        .arg(p)
        .arg(branch);
    if let Some(parent) = p.parent() {
        add = add.writes(parent);
    }
    add.run()?;
    Ok(())
}

/// The snapshot commit's message (SPEC 15): `cause` says what was archived, e.g. the agent's
/// title or `workspace feat-x`.
pub fn snapshot_message(path: &Path, cause: &str) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    // One line, bounded: the title comes from a user or an agent.
    let cause: String = cause.split_whitespace().collect::<Vec<_>>().join(" ");
    let cause = match cause.chars().count() {
        0 => "an untitled agent".to_string(),
        n if n > 120 => cause.chars().take(119).collect::<String>() + "…",
        _ => cause,
    };
    format!(
        "Paseo: work left in {name} when {cause} was archived\n\n\
         Paseo committed what was left uncommitted in the worktree {} before removing it, so\n\
         nothing is lost: restoring the archived agent checks this branch out there again.\n",
        path.display()
    )
}

/// Held while a worktree's folder moves to the trash or comes back ([`snapshot_and_remove`] by
/// a removal, [`readd`] by a restore): the two never interleave, so a restore never re-adds a
/// worktree git still half lists, nor finds a trash entry half written, and git is never asked
/// to forget one worktree twice at once.
pub static CHANGING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What [`snapshot_and_remove`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    /// The snapshot commit, if there was anything to commit.
    pub snapshot: Option<String>,
    /// The trash entry holding what was left (ignored files), if the directory was there.
    pub trash: Option<PathBuf>,
}

/// Removes the worktree at `path` (made from `repo`) without ever losing work in it (SPEC 15):
/// first its uncommitted changes and untracked, non-ignored files are committed on `branch`
/// as one snapshot commit (no hooks, no signing, author from git config or Paseo); then, once
/// git reports nothing but ignored files left, the directory is moved whole into the data
/// root's trash (see [`trash`]) and git forgets that worktree, and no other. Nothing is
/// deleted and `--force` is never used. On any error before the move the worktree is kept as
/// it is. Refuses any path outside the worktrees folder. The branch is kept.
pub fn snapshot_and_remove(
    layout: &Layout,
    repo: &str,
    path: &str,
    branch: Option<&str>,
    message: &str,
) -> Result<Removed, WorkspaceError> {
    let canon = inside_worktrees(layout, path, "remove")?;
    let repo_dir = Path::new(repo);
    let mut removed = Removed::default();
    if canon.exists() {
        let kept = |message: String| WorkspaceError::Snapshot {
            path: path.to_string(),
            message,
        };
        // A folder git no longer sees as this worktree would let git find an enclosing
        // repository (a dotfiles repository around the data root, say) and commit there.
        let top = gitcli::toplevel(&canon).map_err(|e| kept(e.to_string()))?;
        if top
            .as_deref()
            .map(|t| t.canonicalize().unwrap_or_else(|_| t.to_path_buf()))
            != Some(canon.clone())
        {
            return Err(kept("it is not a git worktree any more".into()));
        }
        removed.snapshot = gitcli::commit_all(&canon, message, Hooks::Skip, branch)
            .map_err(|e| kept(e.to_string()))?;
        may_leave(&canon, path)?;
        let manifest = trash::Manifest {
            worktree: canon.display().to_string(),
            repo: repo.to_string(),
            branch: branch.map(str::to_string),
            snapshot: removed.snapshot.clone(),
            trashed_at: crate::model::Timestamp::now(),
            restored_at: None,
        };
        removed.trash = Some(trash::put(layout, &canon, &manifest)?.dir);
        // The directory is safe in the trash whatever git says now; a worktree git still
        // lists is forgotten before a restore re-adds it.
        if let Err(e) = gitcli::forget_worktree(repo_dir, &canon) {
            tracing::warn!(path, error = %e, "git could not forget the worktree moved to the trash");
        }
        return Ok(removed);
    }
    gitcli::forget_worktree(repo_dir, &canon)?;
    Ok(removed)
}

/// Refuses to move a worktree whose move would lose something git keeps outside it, or that
/// git would not forget, as `git worktree remove` (without `--force`) would: anything but
/// ignored files left after the snapshot, a lock, initialized submodules (their git data lives
/// in the worktree's admin folder, which the prune deletes).
fn may_leave(canon: &Path, path: &str) -> Result<(), WorkspaceError> {
    let refuse = |message: String| WorkspaceError::NotRemoved {
        path: path.to_string(),
        message,
    };
    let left = Cmd::git(canon)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .args([
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--ignore-submodules=none",
        ])
        .run()?;
    if !left.trim().is_empty() {
        let files: Vec<&str> = left
            .lines()
            .take(20)
            .map(|l| l.get(3..).unwrap_or(l))
            .collect();
        return Err(refuse(format!(
            "files changed after the snapshot: {}",
            files.join(", ")
        )));
    }
    let admin = Cmd::git(canon)
        .args(["rev-parse", "--absolute-git-dir"])
        .run()?;
    let admin = PathBuf::from(admin.trim());
    if admin.join("locked").exists() {
        return Err(refuse(
            "it is locked (git worktree lock); unlock it to let it go".into(),
        ));
    }
    if admin.join("modules").exists() {
        return Err(refuse(
            "it has initialized submodules, whose git data would go with it".into(),
        ));
    }
    Ok(())
}

/// Undoes [`create`] for an agent that could not be created: the worktree was made a moment ago
/// and nothing has run in it, so it goes, and so does its branch when `create` made it
/// (`new_branch`), leaving the repository as it was. A branch that moved since is kept.
pub fn discard(
    layout: &Layout,
    created: &CreatedWorktree,
    new_branch: bool,
) -> Result<(), WorkspaceError> {
    let path = created.path.display().to_string();
    let canon = inside_worktrees(layout, &path, "remove")?;
    let repo = created.repo.common_root.as_path();
    if canon.exists() {
        Cmd::git(repo)
            .args(["worktree", "remove", "--force"])
            .arg(&canon)
            // Its folder, not the tree itself: a tree bound into the box cannot be removed.
            .writes(canon.parent().unwrap_or(&canon))
            .run()?;
    }
    gitcli::forget_worktree(repo, &canon)?;
    let unmoved = created.base.as_ref().is_some_and(|b| {
        gitcli::resolve(repo, &created.branch).ok().flatten() == Some(b.commit.clone())
    });
    if new_branch && unmoved {
        run_git(repo, &["branch", "-D", &created.branch])?;
    }
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
        assert_eq!(t, WorktreeTarget::branch_off("x", Some("main")));
        let t: WorktreeTarget =
            serde_json::from_str(r#"{"kind":"checkout-branch","branch":"dev"}"#).unwrap();
        assert_eq!(t.branch(), "dev");
        assert!(serde_json::from_str::<WorktreeTarget>(r#"{"kind":"nope"}"#).is_err());
    }
}
