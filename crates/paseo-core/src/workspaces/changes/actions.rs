//! What the user can do with the changes: commit all, merge into the base, discard (snapshot
//! first).

use std::path::Path;

use super::read::{top, Staged};
use super::*;
use crate::workspaces::gitcli::{self, Cmd, Hooks};
use crate::workspaces::worktree::validate_branch;

// ---------------------------------------------------------------------- actions

fn check_message(field: &str, message: &str) -> Result<(), ChangesError> {
    let bad = |m: &str| {
        Err(ChangesError::Invalid {
            field: field.into(),
            message: m.into(),
        })
    };
    if message.trim().is_empty() {
        return bad("the message is empty");
    }
    if message.len() > MAX_MESSAGE_BYTES {
        return bad(&format!(
            "the message is longer than {MAX_MESSAGE_BYTES} bytes"
        ));
    }
    if message.contains('\0') {
        return bad("the message contains a NUL character");
    }
    Ok(())
}

/// Commits everything in the working tree containing `dir` (changes, deletions, untracked
/// files that are not ignored) on the branch HEAD is on. The same routine as the snapshot
/// before a worktree is removed, except that this is the user's own commit, so the
/// repository's hooks (pre-commit, commit-msg…) and signing config apply, as with their git;
/// a hook that refuses makes this fail with the hook's output. Returns the new commit.
pub fn commit_all(dir: &Path, message: &str) -> Result<String, ChangesError> {
    check_message("message", message)?;
    let top = top(dir)?;
    gitcli::commit_all(&top, message, Hooks::Run, None)?.ok_or(ChangesError::NothingToCommit)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergeKind {
    FastForward,
    MergeCommit,
    /// The base already had everything.
    UpToDate,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Merged {
    pub kind: MergeKind,
    pub base_branch: String,
    /// The base branch's commit now.
    pub commit: String,
    /// The checkout the merge ran in; `None` when it ran in a temporary worktree because the
    /// base branch was not checked out anywhere.
    pub merged_in: Option<String>,
}

/// Changed paths in a working tree (`git status`), untracked ones included unless `tracked_only`.
fn dirty_files(dir: &Path, tracked_only: bool) -> Result<Vec<String>, ChangesError> {
    let mut c = Cmd::git(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .args(["status", "--porcelain", "-z"]);
    if tracked_only {
        c = c.arg("--untracked-files=no");
    }
    let out = c.run_raw()?;
    let mut files = Vec::new();
    let mut tokens = out.split(|b| *b == 0);
    while let Some(t) = tokens.next() {
        if t.len() < 4 {
            continue;
        }
        // A rename's entry is followed by its old path.
        if matches!(t[0], b'R' | b'C') {
            tokens.next();
        }
        files.push(String::from_utf8_lossy(&t[3..]).into_owned());
    }
    Ok(files)
}

/// Merges the branch checked out at `dir` (a worktree) into `base_branch`: a fast-forward when
/// possible, else a merge commit, as the user's git config says (`merge.ff`).
///
/// Where it runs: in the checkout that has the base branch checked out (usually the
/// repository's main checkout), which must have no uncommitted changes to tracked files (a
/// merge there, and its abort, must not mix with the user's own work: refused, not stashed).
/// When the base branch is checked out nowhere, in a temporary worktree made for the merge and
/// removed after, so the user's main checkout on another branch is never switched or touched.
/// The branch's own worktree must have no uncommitted changes (they would not be merged:
/// refused, "commit them first"). A conflict aborts the merge (`git merge --abort`), leaving
/// the base exactly as it was, and the error names the conflicting files. Hooks run (a merge
/// the user asked for); the identity is the repository's, else Paseo.
pub fn merge_into_base(dir: &Path, base_branch: &str) -> Result<Merged, ChangesError> {
    let top = top(dir)?;
    let branch = gitcli::current_branch(&top)?.ok_or_else(|| ChangesError::Invalid {
        field: "dir".into(),
        message: format!("HEAD is detached in {}: no branch to merge", top.display()),
    })?;
    validate_branch("baseBranch", base_branch)?;
    if !gitcli::branch_exists(&top, base_branch)? {
        return Err(ChangesError::Invalid {
            field: "baseBranch".into(),
            message: format!("branch {base_branch:?} does not exist"),
        });
    }
    if base_branch == branch {
        return Err(ChangesError::Invalid {
            field: "baseBranch".into(),
            message: format!("{base_branch:?} is the branch being merged"),
        });
    }
    let files = dirty_files(&top, false)?;
    if !files.is_empty() {
        return Err(ChangesError::Uncommitted {
            path: top.display().to_string(),
            files,
        });
    }
    let tip = gitcli::resolve(&top, &format!("refs/heads/{branch}"))?.unwrap_or_default();
    if let Some(at) = gitcli::checked_out_at(&top, base_branch)? {
        let files = dirty_files(&at, true)?;
        if !files.is_empty() {
            return Err(ChangesError::BaseCheckoutDirty {
                branch: base_branch.into(),
                at: at.display().to_string(),
                files,
            });
        }
        let mut m = merge_in(&at, base_branch, &branch, &tip)?;
        m.merged_in = Some(at.display().to_string());
        return Ok(m);
    }
    let tmp = tempfile::Builder::new()
        .prefix("paseo-merge-")
        .tempdir()
        .map_err(|e| ChangesError::Io(format!("cannot make a temporary worktree: {e}")))?;
    let wt = tmp.path().join("tree");
    Cmd::git(&top)
        .args(["worktree", "add", "--quiet"])
        .arg(&wt)
        .arg(base_branch)
        .writes(tmp.path())
        .run()?;
    let r = merge_in(&wt, base_branch, &branch, &tip);
    // Only this checkout made for the merge is removed: after a merge or an abort it holds
    // nothing but committed history, so `--force` loses nothing (it covers files a hook left).
    let removed = Cmd::git(&top)
        .args(["worktree", "remove", "--force"])
        .arg(&wt)
        .writes(tmp.path())
        .run();
    if let Err(e) = removed {
        tracing::warn!(error = %e, path = %wt.display(), "temporary merge worktree not removed");
    }
    // The folder goes with `tmp`; git must then forget it (it alone: a prune would forget
    // every worktree it cannot see).
    drop(tmp);
    if let Err(e) = gitcli::forget_worktree(&top, &wt) {
        tracing::warn!(error = %e, path = %wt.display(), "git could not forget the merge worktree");
    }
    r
}

/// The paths the merge would create in the checkout `at` that already exist there, untracked:
/// git refuses to overwrite untracked files but silently replaces ignored ones (a user's
/// `.env`, say), so both are refused here before git runs. A path the branch has and HEAD does
/// not is the only kind a merge creates.
fn would_overwrite(at: &Path, tip: &str) -> Result<Vec<String>, ChangesError> {
    let added = Cmd::git(at)
        .args([
            "diff",
            "--name-only",
            "--no-renames",
            "--diff-filter=A",
            "-z",
            "HEAD",
            tip,
        ])
        .run_raw()?;
    Ok(added
        .split(|b| *b == 0)
        .filter(|t| !t.is_empty())
        .map(|t| String::from_utf8_lossy(t).into_owned())
        .filter(|p| std::fs::symlink_metadata(at.join(p)).is_ok())
        .collect())
}

fn merge_in(at: &Path, base: &str, branch: &str, tip: &str) -> Result<Merged, ChangesError> {
    let before = gitcli::resolve(at, "HEAD")?;
    let files = would_overwrite(at, tip)?;
    if !files.is_empty() {
        return Err(ChangesError::WouldOverwrite {
            base: base.into(),
            at: at.display().to_string(),
            files,
        });
    }
    let merge = Cmd::git(at)
        .envs(&gitcli::identity_env(at)?)
        .args(["merge", "--no-edit", "-m"])
        .arg(format!("Merge branch '{branch}' into {base}"))
        .arg(format!("refs/heads/{branch}"))
        .timeout(Duration::from_secs(600));
    let o = merge.output()?;
    if !o.success {
        let conflicts = Cmd::git(at)
            .args(["diff", "--name-only", "--diff-filter=U", "-z"])
            .run_raw()
            .unwrap_or_default();
        let files: Vec<String> = conflicts
            .split(|b| *b == 0)
            .filter(|t| !t.is_empty())
            .map(|t| String::from_utf8_lossy(t).into_owned())
            .collect();
        if gitcli::resolve(at, "MERGE_HEAD")?.is_some() {
            Cmd::git(at).args(["merge", "--abort"]).run()?;
        }
        return Err(if files.is_empty() {
            merge.failed(&o).into()
        } else {
            ChangesError::MergeConflict {
                base: base.into(),
                files,
                message: o.message(),
            }
        });
    }
    let after = gitcli::resolve(at, "HEAD")?.unwrap_or_default();
    let kind = if Some(&after) == before.as_ref() {
        MergeKind::UpToDate
    } else if after == tip {
        MergeKind::FastForward
    } else {
        MergeKind::MergeCommit
    };
    Ok(Merged {
        kind,
        base_branch: base.into(),
        commit: after,
        merged_in: None,
    })
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Discarded {
    /// The snapshot commit holding what was discarded (parent: HEAD).
    pub commit: String,
    /// The ref that keeps it reachable: `refs/paseo/discarded/<UTC time>-<commit>`. Get the
    /// files back with `git restore --source=<ref> --worktree -- .` (or `git checkout <ref> -- .`).
    pub reference: String,
}

/// Discards the uncommitted changes and untracked, non-ignored files of the working tree
/// containing `dir`, back to HEAD (commits on the branch stay), after keeping them (SPEC 15):
/// they are first written as one snapshot commit (`message`; parent HEAD; author from git
/// config, else Paseo; no hooks, no signing) kept by a ref under `refs/paseo/discarded/`, then
/// `git reset --hard` and `git clean -d --force` (not `-x`: ignored files stay). Nothing to
/// discard gives `None`. Stop the agent first: what it writes in between is not in the
/// snapshot.
pub fn discard(dir: &Path, message: &str) -> Result<Option<Discarded>, ChangesError> {
    check_message("message", message)?;
    let s = Staged::new(dir, &Compare::Head)?;
    let head = s.head.clone().ok_or_else(|| ChangesError::Invalid {
        field: "dir".into(),
        message: format!(
            "{} has no commits yet: nothing to go back to",
            s.top.display()
        ),
    })?;
    if s.files()?.is_empty() {
        return Ok(None);
    }
    let tree = s.git().args(["write-tree"]).run()?;
    let commit = Cmd::git(&s.top)
        .envs(&gitcli::identity_env(&s.top)?)
        .args([
            "commit-tree",
            "--no-gpg-sign",
            "-p",
            &head,
            "-F",
            "-",
            &tree,
        ])
        .stdin(message.as_bytes().to_vec())
        .run()?;
    let short: String = commit.chars().take(12).collect();
    let reference = format!(
        "refs/paseo/discarded/{}-{short}",
        chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ")
    );
    // The empty old value: the ref must not exist yet.
    Cmd::git(&s.top)
        .args([
            "update-ref",
            "--create-reflog",
            "-m",
            "paseo: discarded changes",
        ])
        .args([&reference, &commit, ""])
        .run()?;
    Cmd::git(&s.top)
        .args(["reset", "--hard", "--quiet", "HEAD"])
        .run()?;
    Cmd::git(&s.top)
        .args(["clean", "-d", "--force", "--quiet"])
        .run()?;
    Ok(Some(Discarded { commit, reference }))
}
