//! What the app asks git about a repository, and the one commit routine (the snapshot before a
//! worktree is removed, SPEC 15, and the Changes feature's "Commit all").

use std::path::{Path, PathBuf};

use super::{Cmd, GitError, FALLBACK_EMAIL, FALLBACK_NAME};

// ---------------------------------------------------------------------- repository facts

/// The top of the working tree containing `dir`, or `None` outside a repository.
pub fn toplevel(dir: &Path) -> Result<Option<PathBuf>, GitError> {
    Ok(Cmd::git(dir)
        .args(["rev-parse", "--show-toplevel"])
        .query()?
        .map(PathBuf::from))
}

/// The branch HEAD is on (`None` when detached).
pub fn current_branch(dir: &Path) -> Result<Option<String>, GitError> {
    Ok(Cmd::git(dir)
        .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
        .query()?
        .filter(|s| !s.is_empty()))
}

/// The best common ancestor of commits `a` and `b` (`None` when they share no history).
pub fn merge_base(dir: &Path, a: &str, b: &str) -> Result<Option<String>, GitError> {
    Cmd::git(dir).args(["merge-base", a, b]).query()
}

/// The commit `rev` names, if it names one.
pub fn resolve(dir: &Path, rev: &str) -> Result<Option<String>, GitError> {
    if rev.starts_with('-') {
        return Ok(None);
    }
    Ok(Cmd::git(dir)
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("{rev}^{{commit}}"))
        .query()?
        .filter(|s| !s.is_empty()))
}

/// Whether the local branch `name` exists.
pub fn branch_exists(dir: &Path, name: &str) -> Result<bool, GitError> {
    Ok(resolve(dir, &format!("refs/heads/{name}"))?.is_some())
}

/// Where each branch is checked out: `(worktree path, branch)` for every worktree on a branch.
pub fn worktrees(dir: &Path) -> Result<Vec<(PathBuf, Option<String>)>, GitError> {
    let list = Cmd::git(dir)
        .args(["worktree", "list", "--porcelain", "-z"])
        .run_raw()?;
    let mut out = Vec::new();
    for field in list.split(|b| *b == 0) {
        let field = String::from_utf8_lossy(field);
        if let Some(p) = field.strip_prefix("worktree ") {
            out.push((PathBuf::from(p), None));
        } else if let Some(b) = field.strip_prefix("branch refs/heads/") {
            if let Some(last) = out.last_mut() {
                last.1 = Some(b.to_string());
            }
        }
    }
    Ok(out)
}

/// Makes git forget the one worktree at `path`, whose folder is gone (moved to the trash, or
/// removed with git), and nothing else. `git worktree prune` would forget every worktree whose
/// folder it cannot see at that moment, a sibling in a folder hidden from the app's git box
/// or on a drive not mounted, and break it (SPEC 15: one worktree's removal never touches
/// another's). A worktree git does not list, or whose folder is there, is left alone.
pub fn forget_worktree(dir: &Path, path: &Path) -> Result<(), GitError> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Ok(());
    }
    let Some((listed, _)) = worktrees(dir)?
        .into_iter()
        .skip(1) // the main checkout, which is never forgotten
        .find(|(p, _)| same_place(p, path))
    else {
        return Ok(());
    };
    // With its folder gone, `worktree remove` only deletes git's record of it.
    Cmd::git(dir)
        .args(["worktree", "remove"])
        .arg(&listed)
        .run()?;
    Ok(())
}

/// Whether two paths name one place, either of which may be gone: the same folder (resolved
/// where it exists) and the same last name.
fn same_place(a: &Path, b: &Path) -> bool {
    let key = |p: &Path| {
        let parent = p
            .parent()
            .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.into()));
        (parent, p.file_name().map(|n| n.to_os_string()))
    };
    a == b || key(a) == key(b)
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

/// Where `branch` is checked out, if anywhere.
pub fn checked_out_at(dir: &Path, branch: &str) -> Result<Option<PathBuf>, GitError> {
    Ok(worktrees(dir)?
        .into_iter()
        .find(|(_, b)| b.as_deref() == Some(branch))
        .map(|(p, _)| p))
}

/// Environment that makes git commit as "Paseo" for each identity (author, committer) the
/// repository's config does not name. `user.useConfigOnly` stops git from guessing one from
/// the host name, so a configured identity is used and nothing else is made up.
pub fn identity_env(dir: &Path) -> Result<Vec<(String, String)>, GitError> {
    let mut env = Vec::new();
    for who in ["AUTHOR", "COMMITTER"] {
        let known = Cmd::git(dir)
            .config("user.useConfigOnly=true")
            .args(["var", &format!("GIT_{who}_IDENT")])
            .query()?
            .is_some();
        if !known {
            env.push((format!("GIT_{who}_NAME"), FALLBACK_NAME.to_string()));
            env.push((format!("GIT_{who}_EMAIL"), FALLBACK_EMAIL.to_string()));
        }
    }
    Ok(env)
}

// ---------------------------------------------------------------------- the commit routine

/// Whether a commit runs the repository's hooks and signing setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hooks {
    /// The snapshot before removal: no hook (`core.hooksPath=/dev/null` and `--no-verify`), no
    /// signing (`--no-gpg-sign`: a pinentry could wait forever, a missing key would fail it),
    /// no fsmonitor daemon. Nothing in the repository's config can block or stall it.
    Skip,
    /// A commit the user asked for: their hooks and signing apply, as in their own git.
    Run,
}

/// Commits everything in the working tree of `dir` (changes, deletions and untracked files
/// that are not ignored) as one commit on the branch HEAD is on. Returns the new commit, or
/// `None` when there was nothing to commit. Refuses a detached HEAD (the commit would belong
/// to no branch) and, when `branch` is given, a HEAD on any other branch.
pub fn commit_all(
    dir: &Path,
    message: &str,
    hooks: Hooks,
    branch: Option<&str>,
) -> Result<Option<String>, GitError> {
    match (current_branch(dir)?, branch) {
        (None, _) => {
            return Err(GitError::Refused(format!(
                "HEAD is detached in {}: a commit there would be on no branch",
                dir.display()
            )))
        }
        (Some(on), Some(want)) if on != want => {
            return Err(GitError::Refused(format!(
                "{} is on branch {on:?}, not on its own branch {want:?}",
                dir.display()
            )))
        }
        _ => {}
    }
    let base = |c: Cmd| match hooks {
        Hooks::Skip => c
            .config("core.hooksPath=/dev/null")
            .config("core.fsmonitor=false"),
        Hooks::Run => c.with_hooks(),
    };
    base(Cmd::git(dir)).args(["add", "--all"]).run()?;
    let staged = base(Cmd::git(dir))
        .args(["diff", "--cached", "--quiet", "--no-ext-diff"])
        .output()?;
    if staged.success {
        return Ok(None);
    }
    let mut commit = base(Cmd::git(dir))
        .envs(&identity_env(dir)?)
        .args(["commit", "--quiet", "--file=-"])
        .stdin(message.as_bytes().to_vec());
    if hooks == Hooks::Skip {
        commit = commit.args(["--no-verify", "--no-gpg-sign"]);
    }
    commit.run()?;
    Cmd::git(dir).args(["rev-parse", "HEAD"]).run().map(Some)
}
