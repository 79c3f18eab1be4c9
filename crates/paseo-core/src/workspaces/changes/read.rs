//! Reading what changed: the base to compare with, the staged copy of the index, the file list
//! and one file's diff in pages.

use std::path::{Path, PathBuf};

use super::*;
use crate::workspaces::gitcli::{self, Cmd};
use crate::workspaces::worktree::{self, BaseRef};

// ---------------------------------------------------------------------- what to compare

/// What a workspace's Changes compare: a worktree its recorded base (else the best guess,
/// else HEAD), anything else HEAD.
pub fn compare_for(ws: &WorkspaceRecord) -> Compare {
    match ws.kind {
        WorkspaceKind::Worktree => crate::workspaces::recorded_base(ws)
            .or_else(|| find_base(Path::new(&ws.cwd)).ok())
            .map_or(Compare::Head, Compare::Base),
        _ => Compare::Head,
    }
}

/// A sensible base for a branch whose base was not recorded ([`worktree::guess_base`]).
pub fn find_base(dir: &Path) -> Result<BaseRef, ChangesError> {
    let top = top(dir)?;
    worktree::guess_base(&top)?.ok_or_else(|| ChangesError::NoBase {
        path: dir.display().to_string(),
    })
}

pub(super) fn top(dir: &Path) -> Result<PathBuf, ChangesError> {
    let not_repo = || ChangesError::NotARepository {
        path: dir.display().to_string(),
    };
    if !dir.is_dir() {
        return Err(not_repo());
    }
    gitcli::toplevel(dir)?.ok_or_else(not_repo)
}

/// The commit to diff against for `cmp`.
pub(super) fn from_commit(
    top: &Path,
    cmp: &Compare,
    head: Option<&str>,
) -> Result<String, ChangesError> {
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
                Some(h) => Ok(gitcli::merge_base(top, h, &target)?.unwrap_or(target)),
                None => Ok(target),
            }
        }
    }
}

// ---------------------------------------------------------------------- the staged copy

/// The working tree staged into a private copy of the index.
pub(super) struct Staged {
    pub(super) top: PathBuf,
    pub(super) head: Option<String>,
    pub(super) branch: Option<String>,
    pub(super) from: String,
    // Holds the temporary index; removed on drop.
    pub(super) _tmp: tempfile::TempDir,
    pub(super) index: PathBuf,
}

impl Staged {
    pub(super) fn new(dir: &Path, cmp: &Compare) -> Result<Staged, ChangesError> {
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
    pub(super) fn git(&self) -> Cmd {
        Cmd::git(&self.top)
            .config("core.splitIndex=false")
            .config("core.fsmonitor=false")
            .config("diff.suppressBlankEmpty=false")
            .env("GIT_INDEX_FILE", &self.index)
            .writes(self._tmp.path())
            .env("GIT_OPTIONAL_LOCKS", "0")
            .literal_paths()
    }

    pub(super) fn diff(&self) -> Cmd {
        self.git().max_output(MAX_READ_OUTPUT).args([
            "diff",
            "--cached",
            "--find-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--no-relative",
        ])
    }

    pub(super) fn files(&self) -> Result<Vec<ChangedFile>, ChangesError> {
        let out = self
            .diff()
            .args(["--raw", "--numstat", "-z", &self.from])
            .run_raw()
            .map_err(|e| too_large(e, "the list of changed files"))?;
        Ok(parse_raw_numstat(&out))
    }
}

/// A read over [`MAX_READ_OUTPUT`] is refused with what was too large, not a git error.
fn too_large(e: GitError, what: &str) -> ChangesError {
    match e {
        GitError::TooLarge { limit, .. } => ChangesError::TooLarge {
            what: what.to_string(),
            limit,
        },
        e => e.into(),
    }
}

/// Copies an index with its modification time: git trusts an entry's cached stats only when
/// the file is older than the index, so a copy stamped "now" would hide a same-size edit made in
/// the second the index was written (git's "racy clean" check).
pub(super) fn copy_index(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(from, to)?;
    let mtime = std::fs::metadata(from)?.modified()?;
    std::fs::File::options()
        .write(true)
        .open(to)?
        .set_modified(mtime)
}

/// Parses `git diff --raw --numstat -z`: the raw records first, then the numstat records, in
/// the same order.
pub(super) fn parse_raw_numstat(out: &[u8]) -> Vec<ChangedFile> {
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

pub(super) fn totals(files: &[ChangedFile]) -> Totals {
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
    let out = c
        .run_raw()
        .map_err(|e| too_large(e, &format!("the diff of {}", file.path)))?;
    let patch = parse_patch(&out);
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

pub(super) struct Patch {
    pub(super) binary: bool,
    pub(super) hunks: Vec<Hunk>,
}

/// Parses one file's unified diff (`git diff` output).
pub(super) fn parse_patch(out: &[u8]) -> Patch {
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
pub(super) fn parse_hunk_header(rest: &[u8]) -> Option<Hunk> {
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
