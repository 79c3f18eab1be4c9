//! The Changes core (issue 15): what an agent changed in its workspace (files, +/- counts, one
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
//! under load (`cargo test -p paseo-core --test changes a_ten_thousand -- --nocapture`, debug
//! and release builds alike, as git's processes dominate): with a new 10,000-line file and
//! 1,000 hunks in another, the file list takes 40-75 ms and a 500-line page of the 10,000-line
//! diff 40-80 ms on average. Each call stages and diffs afresh (no cache to go stale while an
//! agent writes); the parsing is a small part of it.
//!
//! Every path from a caller must be one of the changed files, and is passed after `--` with
//! literal pathspecs, so a path can never become a git option or pattern.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::gitcli::{self, Cmd, GitError, Hooks};
use super::worktree::{validate_branch, BaseRef};
use super::WorkspaceError;
use crate::model::{WorkspaceKind, WorkspaceRecord};

/// Most lines one page of a diff may hold.
pub const MAX_PAGE_LINES: usize = 5_000;
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
    #[error("pull requests are unavailable: {reason}")]
    GhUnavailable { reason: String },
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

// ---------------------------------------------------------------------- what to compare

/// What a workspace's Changes compare: a worktree its recorded base (else the best guess,
/// else HEAD), anything else HEAD.
pub fn compare_for(ws: &WorkspaceRecord) -> Compare {
    match ws.kind {
        WorkspaceKind::Worktree => super::recorded_base(ws)
            .or_else(|| find_base(Path::new(&ws.cwd)).ok())
            .map_or(Compare::Head, Compare::Base),
        _ => Compare::Head,
    }
}

/// A sensible base for a branch whose base was not recorded: the first local branch other than
/// its own among origin's default branch, `init.defaultBranch`, the branch of the repository's
/// main checkout, `main` and `master`; the commit is its merge base with HEAD.
pub fn find_base(dir: &Path) -> Result<BaseRef, ChangesError> {
    let top = top(dir)?;
    let own = gitcli::current_branch(&top)?;
    let mut candidates: Vec<String> = Vec::new();
    if let Some(r) = Cmd::git(&top)
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
        Cmd::git(&top)
            .args(["config", "--get", "init.defaultBranch"])
            .query()?,
    );
    // `git worktree list` names the main checkout first.
    candidates.extend(
        gitcli::worktrees(&top)?
            .into_iter()
            .next()
            .and_then(|w| w.1),
    );
    candidates.extend(["main".to_string(), "master".to_string()]);
    let head = gitcli::resolve(&top, "HEAD")?;
    for c in candidates {
        if Some(&c) == own.as_ref() || c.starts_with('-') {
            continue;
        }
        let (Some(tip), Some(head)) = (
            gitcli::resolve(&top, &format!("refs/heads/{c}"))?,
            head.as_deref(),
        ) else {
            continue;
        };
        if let Some(commit) = merge_base(&top, head, &tip)? {
            return Ok(BaseRef {
                branch: Some(c),
                commit,
            });
        }
    }
    Err(ChangesError::NoBase {
        path: dir.display().to_string(),
    })
}

fn merge_base(top: &Path, a: &str, b: &str) -> Result<Option<String>, ChangesError> {
    Ok(Cmd::git(top).args(["merge-base", a, b]).query()?)
}

fn top(dir: &Path) -> Result<PathBuf, ChangesError> {
    let not_repo = || ChangesError::NotARepository {
        path: dir.display().to_string(),
    };
    if !dir.is_dir() {
        return Err(not_repo());
    }
    gitcli::toplevel(dir)?.ok_or_else(not_repo)
}

/// The commit to diff against for `cmp`.
fn from_commit(top: &Path, cmp: &Compare, head: Option<&str>) -> Result<String, ChangesError> {
    match (cmp, head) {
        (Compare::Head, Some(h)) => Ok(h.to_string()),
        // No commits yet: everything is new, compared with the empty tree.
        (Compare::Head, None) => Ok(Cmd::git(top).args(["mktree"]).stdin("").run()?),
        (Compare::Base(b), _) => {
            let tip = match &b.branch {
                Some(br) if !br.starts_with('-') => {
                    gitcli::resolve(top, &format!("refs/heads/{br}"))?
                }
                _ => None,
            };
            let target = match tip {
                Some(t) => t,
                None => {
                    gitcli::resolve(top, &b.commit)?.ok_or_else(|| ChangesError::BaseMissing {
                        commit: b.commit.clone(),
                    })?
                }
            };
            match head {
                Some(h) => Ok(merge_base(top, h, &target)?.unwrap_or(target)),
                None => Ok(target),
            }
        }
    }
}

// ---------------------------------------------------------------------- the staged copy

/// The working tree staged into a private copy of the index.
struct Staged {
    top: PathBuf,
    head: Option<String>,
    branch: Option<String>,
    from: String,
    // Holds the temporary index; removed on drop.
    _tmp: tempfile::TempDir,
    index: PathBuf,
}

impl Staged {
    fn new(dir: &Path, cmp: &Compare) -> Result<Staged, ChangesError> {
        let top = top(dir)?;
        let head = gitcli::resolve(&top, "HEAD")?;
        let branch = gitcli::current_branch(&top)?;
        let from = from_commit(&top, cmp, head.as_deref())?;
        let tmp = tempfile::Builder::new()
            .prefix("paseo-changes-")
            .tempdir()
            .map_err(|e| ChangesError::Io(format!("cannot make a temporary index: {e}")))?;
        let index = tmp.path().join("index");
        let s = Staged {
            top,
            head,
            branch,
            from,
            _tmp: tmp,
            index,
        };
        let real = Cmd::git(&s.top)
            .args(["rev-parse", "--path-format=absolute", "--git-path", "index"])
            .run()?;
        // The copy keeps the index's file stats, so only changed files are hashed again.
        let copied = Path::new(&real).is_file() && copy_index(Path::new(&real), &s.index).is_ok();
        if !copied || s.git().args(["add", "--all"]).run().is_err() {
            // No index, or one a copy cannot use (a split index): start from HEAD instead.
            let _ = std::fs::remove_file(&s.index);
            if let Some(h) = &s.head {
                s.git().args(["read-tree", h.as_str()]).run()?;
            }
            s.git().args(["add", "--all"]).run()?;
        }
        Ok(s)
    }

    /// git on the private index; read-only for the repository's own index and refs.
    fn git(&self) -> Cmd {
        Cmd::git(&self.top)
            .config("core.splitIndex=false")
            .config("core.fsmonitor=false")
            .config("diff.suppressBlankEmpty=false")
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .literal_paths()
    }

    fn diff(&self) -> Cmd {
        self.git().args([
            "diff",
            "--cached",
            "--find-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--no-relative",
        ])
    }

    fn files(&self) -> Result<Vec<ChangedFile>, ChangesError> {
        let out = self
            .diff()
            .args(["--raw", "--numstat", "-z", &self.from])
            .run_raw()?;
        Ok(parse_raw_numstat(&out))
    }
}

/// Copies an index with its modification time: git trusts an entry's cached stats only when
/// the file is older than the index, so a copy stamped "now" would hide a same-size edit made in
/// the second the index was written (git's "racy clean" check).
fn copy_index(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(from, to)?;
    let mtime = std::fs::metadata(from)?.modified()?;
    std::fs::File::options()
        .write(true)
        .open(to)?
        .set_modified(mtime)
}

/// Parses `git diff --raw --numstat -z`: the raw records first, then the numstat records, in
/// the same order.
fn parse_raw_numstat(out: &[u8]) -> Vec<ChangedFile> {
    let mut tokens = out
        .split(|b| *b == 0)
        .map(|t| String::from_utf8_lossy(t).into_owned());
    let mut files: Vec<ChangedFile> = Vec::new();
    let mut counts: Vec<(Option<u64>, Option<u64>)> = Vec::new();
    while let Some(t) = tokens.next() {
        if let Some(raw) = t.strip_prefix(':') {
            let letter = raw
                .split(' ')
                .nth(4)
                .and_then(|s| s.chars().next())
                .unwrap_or('M');
            let two = matches!(letter, 'R' | 'C');
            let first = tokens.next().unwrap_or_default();
            let (old_path, path) = if two {
                (Some(first), tokens.next().unwrap_or_default())
            } else {
                (None, first)
            };
            let status = match letter {
                'A' | 'C' => FileStatus::Added,
                'D' => FileStatus::Deleted,
                'R' => FileStatus::Renamed,
                _ => FileStatus::Modified,
            };
            files.push(ChangedFile {
                path,
                old_path,
                status,
                additions: None,
                deletions: None,
                binary: false,
            });
        } else if !t.is_empty() {
            let mut f = t.splitn(3, '\t');
            let num = |s: Option<&str>| s.and_then(|s| s.parse::<u64>().ok());
            let (a, d) = (num(f.next()), num(f.next()));
            // A rename's numstat names its two paths in the next two tokens.
            if f.next().is_some_and(str::is_empty) {
                tokens.next();
                tokens.next();
            }
            counts.push((a, d));
        }
    }
    for (f, (a, d)) in files.iter_mut().zip(counts) {
        f.binary = a.is_none() || d.is_none();
        if !f.binary {
            f.additions = a;
            f.deletions = d;
        }
    }
    files
}

fn totals(files: &[ChangedFile]) -> Totals {
    Totals {
        files: files.len(),
        additions: files.iter().filter_map(|f| f.additions).sum(),
        deletions: files.iter().filter_map(|f| f.deletions).sum(),
        binary: files.iter().filter(|f| f.binary).count(),
    }
}

// ---------------------------------------------------------------------- reading

/// The changed files of the working tree containing `dir`, with counts and totals.
pub fn changes(dir: &Path, cmp: &Compare) -> Result<ChangeSet, ChangesError> {
    let s = Staged::new(dir, cmp)?;
    let files = s.files()?;
    Ok(ChangeSet {
        root: s.top.display().to_string(),
        branch: s.branch.clone(),
        head: s.head.clone(),
        base: match cmp {
            Compare::Base(b) => Some(b.clone()),
            Compare::Head => None,
        },
        from: s.from.clone(),
        totals: totals(&files),
        files,
    })
}

/// One changed file's diff (`path`: its path now or, for a rename, before), parsed into hunks,
/// one page of lines at a time. Any other path is refused.
pub fn file_diff(
    dir: &Path,
    cmp: &Compare,
    path: &str,
    page: Page,
) -> Result<FileDiff, ChangesError> {
    if page.limit == 0 || page.limit > MAX_PAGE_LINES {
        return Err(ChangesError::Invalid {
            field: "limit".into(),
            message: format!("must be between 1 and {MAX_PAGE_LINES}"),
        });
    }
    let s = Staged::new(dir, cmp)?;
    let file = s
        .files()?
        .into_iter()
        .find(|f| f.path == path || f.old_path.as_deref() == Some(path))
        .ok_or_else(|| ChangesError::NotChanged { path: path.into() })?;
    let mut c = s
        .diff()
        .args(["--unified=3", &s.from, "--"])
        .arg(&file.path);
    if let Some(old) = &file.old_path {
        c = c.arg(old);
    }
    let patch = parse_patch(&c.run_raw()?);
    let total_lines = patch.hunks.iter().map(|h| h.lines.len()).sum();
    let end = page.offset.saturating_add(page.limit);
    let mut hunks = Vec::new();
    let mut at = 0usize;
    for mut h in patch.hunks {
        let n = h.lines.len();
        let (lo, hi) = (page.offset.max(at), end.min(at + n));
        if lo < hi {
            h.lines = h.lines.drain(lo - at..hi - at).collect();
            hunks.push(h);
        }
        at += n;
    }
    Ok(FileDiff {
        binary: file.binary || patch.binary,
        file,
        hunks,
        total_lines,
        offset: page.offset,
        next_offset: (end < total_lines).then_some(end),
    })
}

struct Patch {
    binary: bool,
    hunks: Vec<Hunk>,
}

/// Parses one file's unified diff (`git diff` output).
fn parse_patch(out: &[u8]) -> Patch {
    let mut p = Patch {
        binary: false,
        hunks: Vec::new(),
    };
    // Lines still expected in the current hunk (old side, new side) and the next numbers.
    let (mut left_old, mut left_new) = (0u32, 0u32);
    let (mut old_no, mut new_no) = (0u32, 0u32);
    let mut body = out.split(|b| *b == b'\n').peekable();
    while let Some(raw) = body.next() {
        if raw.is_empty() && body.peek().is_none() {
            break;
        }
        let in_hunk = left_old > 0 || left_new > 0;
        if !in_hunk {
            if let Some(h) = raw.strip_prefix(b"@@ ").and_then(parse_hunk_header) {
                (left_old, left_new) = (h.old_lines, h.new_lines);
                (old_no, new_no) = (h.old_start, h.new_start);
                p.hunks.push(h);
            } else if raw.starts_with(b"Binary files ") || raw == b"GIT binary patch" {
                p.binary = true;
            } else if raw.starts_with(b"\\") {
                if let Some(l) = p.hunks.last_mut().and_then(|h| h.lines.last_mut()) {
                    l.no_newline = true;
                }
            }
            continue;
        }
        let (marker, text) = match raw.split_first() {
            Some((m, rest)) => (*m, rest),
            // An empty context line (some configs drop its leading space).
            None => (b' ', &[][..]),
        };
        let text = String::from_utf8_lossy(text).into_owned();
        let line = match marker {
            b'+' => {
                left_new = left_new.saturating_sub(1);
                new_no += 1;
                DiffLine {
                    kind: LineKind::Add,
                    old_line: None,
                    new_line: Some(new_no - 1),
                    text,
                    no_newline: false,
                }
            }
            b'-' => {
                left_old = left_old.saturating_sub(1);
                old_no += 1;
                DiffLine {
                    kind: LineKind::Remove,
                    old_line: Some(old_no - 1),
                    new_line: None,
                    text,
                    no_newline: false,
                }
            }
            b'\\' => {
                if let Some(l) = p.hunks.last_mut().and_then(|h| h.lines.last_mut()) {
                    l.no_newline = true;
                }
                continue;
            }
            _ => {
                left_old = left_old.saturating_sub(1);
                left_new = left_new.saturating_sub(1);
                old_no += 1;
                new_no += 1;
                DiffLine {
                    kind: LineKind::Context,
                    old_line: Some(old_no - 1),
                    new_line: Some(new_no - 1),
                    text,
                    no_newline: false,
                }
            }
        };
        if let Some(h) = p.hunks.last_mut() {
            h.lines.push(line);
        }
    }
    p
}

/// `-a,b +c,d @@ section` (after the leading `@@ `).
fn parse_hunk_header(rest: &[u8]) -> Option<Hunk> {
    let rest = String::from_utf8_lossy(rest);
    let (ranges, section) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(' ')?;
    let range = |r: &str, sign: char| -> Option<(u32, u32)> {
        let r = r.strip_prefix(sign)?;
        match r.split_once(',') {
            Some((s, n)) => Some((s.parse().ok()?, n.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (old_start, old_lines) = range(old, '-')?;
    let (new_start, new_lines) = range(new, '+')?;
    Some(Hunk {
        old_start,
        old_lines,
        new_start,
        new_lines,
        section: section.trim().to_string(),
        lines: Vec::new(),
    })
}

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
        .run()?;
    let r = merge_in(&wt, base_branch, &branch, &tip);
    // Only this checkout made for the merge is removed: after a merge or an abort it holds
    // nothing but committed history, so `--force` loses nothing (it covers files a hook left).
    let removed = Cmd::git(&top)
        .args(["worktree", "remove", "--force"])
        .arg(&wt)
        .run();
    if let Err(e) = removed {
        tracing::warn!(error = %e, path = %wt.display(), "temporary merge worktree not removed");
    }
    let _ = Cmd::git(&top).args(["worktree", "prune"]).run();
    r
}

fn merge_in(at: &Path, base: &str, branch: &str, tip: &str) -> Result<Merged, ChangesError> {
    let before = gitcli::resolve(at, "HEAD")?;
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

// ---------------------------------------------------------------------- pull requests

/// Whether pull requests can be opened from the app.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum GhStatus {
    Ready,
    Unavailable { reason: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequest {
    pub title: String,
    #[serde(default)]
    pub body: String,
    /// The branch to merge into (the worktree's base).
    pub base: String,
    /// The branch with the work (pushed first).
    pub head: String,
    #[serde(default)]
    pub draft: bool,
}

/// The two commands a pull request takes: push the branch, then `gh pr create`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrCommands {
    pub push: Vec<String>,
    pub create: Vec<String>,
}

/// The GitHub CLI.
#[derive(Clone, Debug)]
pub struct Gh {
    program: PathBuf,
}

impl Default for Gh {
    fn default() -> Self {
        Gh {
            program: PathBuf::from("gh"),
        }
    }
}

impl Gh {
    /// `gh` at another place (tests, or a configured path).
    pub fn with_program(program: impl Into<PathBuf>) -> Gh {
        Gh {
            program: program.into(),
        }
    }

    fn cmd(&self, dir: &Path) -> Cmd {
        Cmd::program(&self.program, dir)
    }

    /// Installed and signed in (`gh auth status`), or why not.
    pub fn status(&self, dir: &Path) -> GhStatus {
        let o = self
            .cmd(dir)
            .args(["auth", "status"])
            .timeout(Duration::from_secs(30))
            .output();
        match o {
            Ok(o) if o.success => GhStatus::Ready,
            Ok(o) => GhStatus::Unavailable {
                reason: format!("gh is not signed in to GitHub: {}", o.message()),
            },
            Err(GitError::Missing { .. }) => GhStatus::Unavailable {
                reason: "the GitHub CLI (gh) is not installed".into(),
            },
            Err(e) => GhStatus::Unavailable {
                reason: e.to_string(),
            },
        }
    }

    /// What [`Gh::create_pr`] runs, checked: the push of `head` to its remote (its upstream's,
    /// else `origin`) and `gh pr create` with every value in `--flag=value` form, so no title
    /// or branch can read as an option.
    pub fn pr_commands(&self, dir: &Path, pr: &PullRequest) -> Result<PrCommands, ChangesError> {
        let top = top(dir)?;
        if pr.title.trim().is_empty() || pr.title.contains(['\n', '\0']) {
            return Err(ChangesError::Invalid {
                field: "title".into(),
                message: "must be one non-empty line".into(),
            });
        }
        if pr.body.contains('\0') || pr.body.len() > MAX_MESSAGE_BYTES {
            return Err(ChangesError::Invalid {
                field: "body".into(),
                message: format!("must be text of at most {MAX_MESSAGE_BYTES} bytes"),
            });
        }
        validate_branch("base", &pr.base)?;
        validate_branch("head", &pr.head)?;
        if !gitcli::branch_exists(&top, &pr.head)? {
            return Err(ChangesError::Invalid {
                field: "head".into(),
                message: format!("branch {:?} does not exist", pr.head),
            });
        }
        let remote = Cmd::git(&top)
            .args(["config", "--get", &format!("branch.{}.remote", pr.head)])
            .query()?
            .filter(|r| !r.is_empty() && !r.starts_with('-') && r != ".")
            .unwrap_or_else(|| "origin".into());
        if Cmd::git(&top)
            .args(["remote", "get-url", &remote])
            .query()?
            .is_none()
        {
            return Err(ChangesError::Invalid {
                field: "head".into(),
                message: format!("the repository has no remote {remote:?} to push the branch to"),
            });
        }
        let refspec = format!("refs/heads/{0}:refs/heads/{0}", pr.head);
        let push = Cmd::git(&top)
            .args(["push", "--set-upstream", &remote, &refspec])
            .argv();
        let mut create = self
            .cmd(&top)
            .args(["pr", "create"])
            .arg(format!("--base={}", pr.base))
            .arg(format!("--head={}", pr.head))
            .arg(format!("--title={}", pr.title))
            .arg(format!("--body={}", pr.body));
        if pr.draft {
            create = create.arg("--draft");
        }
        Ok(PrCommands {
            push,
            create: create.argv(),
        })
    }

    /// Pushes the branch and opens the pull request; returns what gh printed (its URL).
    /// Unavailable (with the reason) when gh is missing or not signed in.
    pub fn create_pr(&self, dir: &Path, pr: &PullRequest) -> Result<String, ChangesError> {
        let plan = self.pr_commands(dir, pr)?;
        if let GhStatus::Unavailable { reason } = self.status(dir) {
            return Err(ChangesError::GhUnavailable { reason });
        }
        let top = top(dir)?;
        let run = |argv: &[String], program: &Path| {
            Cmd::program(program, &top)
                .args(&argv[1..])
                .timeout(Duration::from_secs(300))
                .run()
        };
        run(&plan.push, Path::new("git"))?;
        Ok(run(&plan.create, &self.program)?.trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_numstat_records_pair_up() {
        let out = b":000000 100644 0000000 2478dab A\0bin\0:100644 100644 de98044 a7bc997 M\0f\0:100644 100644 587be6b 587be6b R100\0g\0h\0-\t-\tbin\x002\t1\tf\x000\t0\t\0g\0h\0";
        let files = parse_raw_numstat(out);
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].path, "bin");
        assert!(files[0].binary && files[0].additions.is_none());
        assert_eq!(files[0].status, FileStatus::Added);
        assert_eq!((files[1].additions, files[1].deletions), (Some(2), Some(1)));
        assert_eq!(files[2].status, FileStatus::Renamed);
        assert_eq!(files[2].old_path.as_deref(), Some("g"));
        assert_eq!(files[2].path, "h");
        assert_eq!((files[2].additions, files[2].deletions), (Some(0), Some(0)));
        let t = totals(&files);
        assert_eq!((t.files, t.additions, t.deletions, t.binary), (3, 2, 1, 1));
    }

    #[test]
    fn hunks_are_numbered_and_no_newline_is_marked() {
        let diff = b"diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@ fn x()\n a\n-b\n+B\n\n\\ No newline at end of file\n@@ -10 +10,2 @@\n z\n+y\n";
        let p = parse_patch(diff);
        assert!(!p.binary);
        assert_eq!(p.hunks.len(), 2);
        let h = &p.hunks[0];
        assert_eq!(
            (h.old_start, h.old_lines, h.new_start, h.new_lines),
            (1, 3, 1, 3)
        );
        assert_eq!(h.section, "fn x()");
        let kinds: Vec<_> = h.lines.iter().map(|l| l.kind).collect();
        use LineKind::*;
        assert_eq!(kinds, [Context, Remove, Add, Context]);
        assert_eq!(h.lines[1].old_line, Some(2));
        assert_eq!(h.lines[2].new_line, Some(2));
        assert_eq!(
            (h.lines[3].old_line, h.lines[3].new_line),
            (Some(3), Some(3))
        );
        assert!(h.lines[3].no_newline && h.lines[3].text.is_empty());
        let h = &p.hunks[1];
        assert_eq!((h.old_lines, h.new_lines), (1, 2));
        assert_eq!(h.lines[1].new_line, Some(11));
        let p = parse_patch(b"diff --git a/b b/b\nBinary files a/b and b/b differ\n");
        assert!(p.binary && p.hunks.is_empty());
    }

    #[test]
    fn error_lists_are_bounded() {
        let files: Vec<String> = (0..25).map(|i| format!("f{i}")).collect();
        let e = ChangesError::Uncommitted {
            path: "/w".into(),
            files,
        };
        assert!(
            e.to_string()
                .ends_with("f9 and 15 more); commit them first"),
            "{e}"
        );
    }
}
