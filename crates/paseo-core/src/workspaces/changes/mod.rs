//! The Changes core: what an agent changed in its workspace (files, +/- counts, one
//! file's diff in pages) and what the user can do with it (commit all, merge into the base,
//! discard with a snapshot first, open a pull request through `gh`). The runtime commands, the
//! MCP tool and the UI sit on top of these functions.
//!
//! What is compared:
//! - a worktree: its working tree against the merge base of HEAD and the base it was created
//!   from (the base branch's tip when that branch still exists, else the recorded commit), so
//!   the list is what a merge would bring: commits on the branch, uncommitted changes and
//!   untracked files, and nothing the base gained since;
//! - a directory or a local checkout: the working tree of its repository against HEAD.
//!
//! Untracked, non-ignored files count as added, without touching the user's index: the index
//! is copied to a temporary file, `git add --all` runs on the copy (`GIT_INDEX_FILE`) and the
//! copy is diffed. So counts are exactly `git diff --numstat`'s (after `git add --all`), renames
//! are found even for a file moved without `git mv`, and an agent's own git never sees a lock.
//!
//! Why the git CLI and not gix or git2: no C library and no large dependency tree in the app;
//! the exact behavior of the user's own git (their config, attributes, filters, rename
//! detection, `--numstat` counting); and fast enough. Measured on the shared 2-core machine
//! under load (`cargo test -p paseo-core --test suite changes::a_ten_thousand -- --nocapture`, debug
//! and release builds alike, as git's processes dominate): with a new 10,000-line file and
//! 1,000 hunks in another, the file list takes 40-75 ms and a 500-line page of the 10,000-line
//! diff 40-80 ms on average. Each call stages and diffs afresh (no cache to go stale while an
//! agent writes); the parsing is a small part of it.
//!
//! Every path from a caller must be one of the changed files, and is passed after `--` with
//! literal pathspecs, so a path can never become a git option or pattern.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::gitcli::GitError;

use super::worktree::BaseRef;
use super::WorkspaceError;
use crate::model::{WorkspaceKind, WorkspaceRecord};

/// Most lines one page of a diff may hold.
pub const MAX_PAGE_LINES: usize = 5_000;
/// The most output one git command of a read of changes may print (the file list, one file's
/// diff): well under the 64 MiB any app git may print, so a read's memory stays small.
pub const MAX_READ_OUTPUT: usize = 8 << 20;
/// Longest commit message accepted (bytes).
pub const MAX_MESSAGE_BYTES: usize = 64 << 10;
/// Files named in an error message before "and N more".
const LISTED_FILES: usize = 10;

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ChangesError {
    #[error("{path} is not inside a git repository")]
    NotARepository { path: String },
    #[error("{path}: not one of the changed files")]
    NotChanged { path: String },
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    #[error("no base branch found for {path} (no origin HEAD, main checkout branch, main or master to compare with)")]
    NoBase { path: String },
    #[error("the base commit {commit} is not in the repository any more")]
    BaseMissing { commit: String },
    #[error("nothing to commit: the working tree has no changes")]
    NothingToCommit,
    #[error("{path} has uncommitted changes ({}); commit them first", list(.files))]
    Uncommitted { path: String, files: Vec<String> },
    #[error("the base branch {branch} is checked out at {at} with uncommitted changes ({}); commit or stash them there first", list(.files))]
    BaseCheckoutDirty {
        branch: String,
        at: String,
        files: Vec<String>,
    },
    /// A conflicting merge, aborted (`git merge --abort`): the base is as it was.
    #[error("merging into {base} stopped on conflicts in {}; the merge was aborted and nothing changed", list(.files))]
    MergeConflict {
        base: String,
        files: Vec<String>,
        /// What git said.
        message: String,
    },
    /// A merge would write into a checkout where another agent works (SPEC 15).
    #[error("{branch} is checked out at {at}, where {} {} a turn running; stop {} turn first (the agent stays resumable), then merge into {branch}", list(.agents), if .agents.len() == 1 { "has" } else { "have" }, if .agents.len() == 1 { "its" } else { "each" })]
    CheckoutInUse {
        branch: String,
        at: String,
        /// Each agent by its name, quoted.
        agents: Vec<String>,
    },
    /// Git would silently replace files it does not track there (ignored ones, a `.env`).
    #[error("merging into {base} would overwrite files in {at} that git does not track ({}); move them away first", list(.files))]
    WouldOverwrite {
        base: String,
        at: String,
        files: Vec<String>,
    },
    #[error("pull requests are unavailable: {reason}")]
    GhUnavailable { reason: String },
    /// Git printed more than one read of changes may hold (a huge diff or file list).
    #[error("{what} is larger than {} MiB, more than one read of changes returns; look at it in the working tree with git", .limit >> 20)]
    TooLarge { what: String, limit: usize },
    /// Too many reads of changes run at once.
    #[error("busy: {running} reads of changes were running and none finished within {waited_secs} s; try again shortly")]
    Busy { running: usize, waited_secs: u64 },
    /// Git's (or gh's) own error text.
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("{0}")]
    Io(String),
}

impl From<WorkspaceError> for ChangesError {
    fn from(e: WorkspaceError) -> Self {
        match e {
            WorkspaceError::Invalid { field, message } => ChangesError::Invalid { field, message },
            WorkspaceError::GitMissing => GitError::Missing {
                program: "git".into(),
            }
            .into(),
            other => ChangesError::Io(other.to_string()),
        }
    }
}

fn list(files: &[String]) -> String {
    let mut s = files
        .iter()
        .take(LISTED_FILES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > LISTED_FILES {
        s += &format!(" and {} more", files.len() - LISTED_FILES);
    }
    s
}

/// What the working tree is compared with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compare {
    /// HEAD (a directory or a local checkout).
    Head,
    /// The merge base with a worktree's base.
    Base(BaseRef),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileStatus {
    #[serde(rename = "A")]
    Added,
    #[serde(rename = "M")]
    Modified,
    #[serde(rename = "D")]
    Deleted,
    #[serde(rename = "R")]
    Renamed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangedFile {
    /// The path now (relative to the repository root, `/`-separated as git prints it).
    pub path: String,
    /// Renames: the path before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub status: FileStatus,
    /// Lines added and removed, as `git diff --numstat` counts them; `None` for binary files.
    pub additions: Option<u64>,
    pub deletions: Option<u64>,
    pub binary: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub files: usize,
    pub additions: u64,
    pub deletions: u64,
    /// How many of the files are binary (not in the line counts).
    pub binary: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeSet {
    /// The top of the working tree the paths are relative to.
    pub root: String,
    /// The branch HEAD is on (`None` when detached).
    pub branch: Option<String>,
    /// HEAD's commit (`None` in a repository without commits).
    pub head: Option<String>,
    /// The worktree base asked for, if any.
    pub base: Option<BaseRef>,
    /// The commit (or the empty tree) the working tree was compared with.
    pub from: String,
    pub files: Vec<ChangedFile>,
    pub totals: Totals,
}

/// A window of a diff's lines (hunk headers not counted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub offset: usize,
    pub limit: usize,
}

impl Default for Page {
    fn default() -> Self {
        Page {
            offset: 0,
            limit: 1_000,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineKind {
    Add,
    Remove,
    Context,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    pub kind: LineKind,
    /// The line's number before (context and removed lines).
    pub old_line: Option<u32>,
    /// The line's number after (context and added lines).
    pub new_line: Option<u32>,
    /// The line without its leading marker and newline (invalid UTF-8 replaced).
    pub text: String,
    /// Git's "\ No newline at end of file" follows this line.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_newline: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// The whole hunk's ranges, as in its `@@ -a,b +c,d @@` header, even when a page holds
    /// only part of it.
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    /// What follows the header's second `@@` (git's function context), trimmed.
    pub section: String,
    pub lines: Vec<DiffLine>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    pub file: ChangedFile,
    /// Binary files have no hunks.
    pub binary: bool,
    /// The hunks that have lines in this page, holding only those lines.
    pub hunks: Vec<Hunk>,
    /// Lines in the whole diff (all hunks).
    pub total_lines: usize,
    pub offset: usize,
    /// Where the next page starts, when there is more.
    pub next_offset: Option<usize>,
}

mod actions;
mod pr;
mod read;
#[cfg(test)]
mod tests;

pub use actions::*;
pub use pr::*;
pub use read::{changes, compare_for, file_diff, find_base};
