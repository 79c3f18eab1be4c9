//! The Changes core on real git repositories in temp dirs: an agent-like sequence of
//! edits, additions, deletions and a rename in a worktree, checked against git's own
//! `--numstat`; paging a 10,000-line diff; commit, merge (fast-forward, merge commit, conflict,
//! refusals), discard with its snapshot, and the `gh` commands.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use paseo_core::model::{Timestamp, WorkspaceKind};
use paseo_core::server::Runtime;
use paseo_core::store::Layout;
use paseo_core::workspaces::changes::{
    self, ChangesError, Compare, FileStatus, GhStatus, LineKind, MergeKind, Page, PullRequest,
};
use paseo_core::workspaces::worktree::{self, BaseRef, CreatedWorktree, WorktreeTarget};
use paseo_core::workspaces::{self, gitcli::GitError};

use crate::support;
use support::git::{git, git_raw};

fn write(dir: &Path, path: &str, text: impl AsRef<[u8]>) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn numbered(n: usize, f: impl Fn(usize) -> String) -> String {
    (1..=n).map(|i| f(i) + "\n").collect()
}

/// A repository (`main`) and a worktree on branch `agent` made by the app's own code.
struct Fx {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    wt: PathBuf,
    created: CreatedWorktree,
}

impl Fx {
    fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let repo = root.join("app");
        std::fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        git(&repo, &["config", "user.name", "Repo Owner"]);
        git(&repo, &["config", "user.email", "owner@example.com"]);
        write(&repo, "README", "hello\nworld\n");
        write(&repo, ".gitignore", "*.log\n");
        write(
            &repo,
            "src/a.rs",
            numbered(20, |i| format!("fn a{i}() {{}}")),
        );
        write(&repo, "old.txt", numbered(30, |i| format!("kept line {i}")));
        write(&repo, "gone.txt", "to be deleted\n");
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "first"]);
        let layout = Layout::new(root.join("home"));
        let created = worktree::create(
            &layout,
            "",
            repo.to_str().unwrap(),
            &WorktreeTarget::branch_off("agent", None),
        )
        .unwrap();
        Fx {
            _dir: dir,
            wt: created.path.clone(),
            repo,
            created,
        }
    }

    fn base(&self) -> Compare {
        Compare::Base(self.created.base.clone().unwrap())
    }

    /// What an agent does: a commit on its branch, then uncommitted edits, a deletion, a file
    /// moved without `git mv`, new files (one binary) and an ignored log.
    fn agent_work(&self) {
        let wt = &self.wt;
        write(
            wt,
            "src/a.rs",
            numbered(20, |i| format!("fn a{i}() {{ {i} }}")),
        );
        git(wt, &["commit", "-q", "-am", "agent: bodies"]);
        write(wt, "README", "hello\nthere\nworld\n");
        std::fs::remove_file(wt.join("gone.txt")).unwrap();
        std::fs::create_dir_all(wt.join("docs")).unwrap();
        std::fs::rename(wt.join("old.txt"), wt.join("docs/moved.txt")).unwrap();
        write(wt, "new dir/new file.txt", "one\ntwo\nthree\n");
        write(wt, "img.bin", [0u8, 1, 2, 3, 0, 255, 254, 0]);
        write(wt, "build.log", "noise\n");
    }
}

/// `git diff --numstat -z` after `git add --all`, as `path -> (additions, deletions)`.
fn git_numstat(dir: &Path, from: &str) -> BTreeMap<String, (Option<u64>, Option<u64>)> {
    git(dir, &["add", "--all"]);
    let out = git_raw(dir, &["diff", "--cached", "--numstat", "-z", "-M", from]);
    let mut map = BTreeMap::new();
    let mut tokens = out
        .split(|b| *b == 0)
        .map(|t| String::from_utf8_lossy(t).into_owned());
    while let Some(t) = tokens.next() {
        if t.is_empty() {
            continue;
        }
        let mut f = t.splitn(3, '\t');
        let a = f.next().unwrap().parse().ok();
        let d = f.next().unwrap().parse().ok();
        let mut path = f.next().unwrap().to_string();
        if path.is_empty() {
            tokens.next();
            path = tokens.next().unwrap();
        }
        map.insert(path, (a, d));
    }
    map
}

#[test]
fn worktrees_record_their_base_and_a_missing_one_is_found() {
    let f = Fx::new();
    let main = git(&f.repo, &["rev-parse", "main"]);
    assert_eq!(
        f.created.base,
        Some(BaseRef {
            branch: Some("main".into()),
            commit: main.clone()
        })
    );
    // The workspace record carries it, and the Changes compare with it.
    let (ws, _) = workspaces::worktree_workspace(&f.created, &[], None, None, Timestamp::now());
    assert_eq!(ws.kind, WorkspaceKind::Worktree);
    assert_eq!(workspaces::recorded_base(&ws), f.created.base);
    assert_eq!(changes::compare_for(&ws), f.base());
    // Nothing recorded: the merge base with the default branch.
    write(&f.wt, "x", "x\n");
    git(&f.wt, &["add", "x"]);
    git(&f.wt, &["commit", "-q", "-m", "x"]);
    write(&f.repo, "y", "y\n");
    git(&f.repo, &["add", "y"]);
    git(&f.repo, &["commit", "-q", "-m", "y"]);
    assert_eq!(
        changes::find_base(&f.wt).unwrap(),
        BaseRef {
            branch: Some("main".into()),
            commit: main
        }
    );
    // The main checkout itself has no other branch to compare with.
    assert!(matches!(
        changes::find_base(&f.repo),
        Err(ChangesError::NoBase { .. })
    ));
    // A worktree of an existing branch gets the found base at creation.
    git(&f.repo, &["branch", "dev"]);
    let layout = Layout::new(f.wt.parent().unwrap().parent().unwrap().parent().unwrap());
    let dev = worktree::create(
        &layout,
        "",
        f.repo.to_str().unwrap(),
        &WorktreeTarget::checkout("dev"),
    )
    .unwrap();
    assert_eq!(
        dev.base,
        Some(BaseRef {
            branch: Some("main".into()),
            commit: git(&f.repo, &["rev-parse", "main"])
        })
    );
}

#[test]
fn the_file_list_and_counts_match_git_numstat() {
    let f = Fx::new();
    f.agent_work();
    // The base moves on meanwhile: none of that is the agent's change.
    write(&f.repo, "later.txt", "on main\n");
    git(&f.repo, &["add", "later.txt"]);
    git(&f.repo, &["commit", "-q", "-m", "later"]);
    let status_before = git(&f.wt, &["status", "--porcelain"]);

    let set = changes::changes(&f.wt, &f.base()).unwrap();
    assert_eq!(set.branch.as_deref(), Some("agent"));
    assert_eq!(set.from, f.created.base.as_ref().unwrap().commit);
    // The user's index was not touched.
    assert_eq!(git(&f.wt, &["status", "--porcelain"]), status_before);
    assert_eq!(git(&f.wt, &["diff", "--cached", "--name-only"]), "");

    let by: BTreeMap<&str, _> = set.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let names: Vec<&str> = by.keys().copied().collect();
    assert_eq!(
        names,
        [
            "README",
            "docs/moved.txt",
            "gone.txt",
            "img.bin",
            "new dir/new file.txt",
            "src/a.rs"
        ]
    );
    assert_eq!(by["README"].status, FileStatus::Modified);
    assert_eq!(
        by["src/a.rs"].status,
        FileStatus::Modified,
        "committed on the branch"
    );
    assert_eq!(by["gone.txt"].status, FileStatus::Deleted);
    assert_eq!(
        by["new dir/new file.txt"].status,
        FileStatus::Added,
        "untracked"
    );
    let moved = by["docs/moved.txt"];
    assert_eq!(moved.status, FileStatus::Renamed);
    assert_eq!(moved.old_path.as_deref(), Some("old.txt"));
    let bin = by["img.bin"];
    assert!(bin.binary && bin.additions.is_none() && bin.deletions.is_none());
    assert!(
        !by.contains_key("build.log"),
        "ignored files are not changes"
    );
    assert!(
        !by.contains_key("later.txt"),
        "the base's own progress is not"
    );

    // Exactly git's numbers.
    let theirs = git_numstat(&f.wt, &set.from);
    let ours: BTreeMap<String, _> = set
        .files
        .iter()
        .map(|f| (f.path.clone(), (f.additions, f.deletions)))
        .collect();
    assert_eq!(ours, theirs);
    let adds: u64 = theirs.values().filter_map(|v| v.0).sum();
    let dels: u64 = theirs.values().filter_map(|v| v.1).sum();
    assert_eq!(
        (
            set.totals.files,
            set.totals.additions,
            set.totals.deletions,
            set.totals.binary
        ),
        (6, adds, dels, 1)
    );
}

#[test]
fn a_directory_or_checkout_compares_with_head() {
    let f = Fx::new();
    write(&f.repo, "README", "changed\n");
    write(&f.repo, "fresh.txt", "a\nb\n");
    // From a subdirectory too: the whole working tree, paths from its root.
    let set = changes::changes(&f.repo.join("src"), &Compare::Head).unwrap();
    assert_eq!(set.base, None);
    assert_eq!(set.from, git(&f.repo, &["rev-parse", "HEAD"]));
    let got: Vec<_> = set
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status, f.additions, f.deletions))
        .collect();
    assert_eq!(
        got,
        [
            ("README", FileStatus::Modified, Some(1), Some(2)),
            ("fresh.txt", FileStatus::Added, Some(2), Some(0)),
        ]
    );
    // Not a repository.
    let plain = f.repo.parent().unwrap().join("plain");
    std::fs::create_dir(&plain).unwrap();
    assert!(matches!(
        changes::changes(&plain, &Compare::Head),
        Err(ChangesError::NotARepository { .. })
    ));
    // A repository without commits: everything is added.
    let empty = f.repo.parent().unwrap().join("empty");
    std::fs::create_dir(&empty).unwrap();
    git(&empty, &["init", "-q"]);
    write(&empty, "a.txt", "1\n");
    let set = changes::changes(&empty, &Compare::Head).unwrap();
    assert_eq!(set.head, None);
    assert_eq!(set.files[0].status, FileStatus::Added);
}

#[test]
fn one_file_diff_is_parsed_into_hunks_with_line_numbers() {
    let f = Fx::new();
    f.agent_work();
    let d = changes::file_diff(&f.wt, &f.base(), "README", Page::default()).unwrap();
    assert!(!d.binary);
    assert_eq!(d.total_lines, 3);
    assert_eq!(d.next_offset, None);
    let h = &d.hunks[0];
    assert_eq!(
        (h.old_start, h.old_lines, h.new_start, h.new_lines),
        (1, 2, 1, 3)
    );
    let lines: Vec<_> = h
        .lines
        .iter()
        .map(|l| (l.kind, l.old_line, l.new_line, l.text.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (LineKind::Context, Some(1), Some(1), "hello"),
            (LineKind::Add, None, Some(2), "there"),
            (LineKind::Context, Some(2), Some(3), "world"),
        ]
    );
    // A removal, and a page of one line in the middle.
    write(
        &f.wt,
        "src/a.rs",
        numbered(19, |i| format!("fn a{i}() {{ {i} }}")),
    );
    let d = changes::file_diff(
        &f.wt,
        &f.base(),
        "src/a.rs",
        Page {
            offset: 1,
            limit: 1,
        },
    )
    .unwrap();
    assert_eq!(d.next_offset, Some(2));
    let l = &d.hunks[0].lines;
    assert_eq!(l.len(), 1);
    // Against the base every line changed: removals (old 1..20) come first.
    assert_eq!(
        (l[0].kind, l[0].old_line, l[0].new_line),
        (LineKind::Remove, Some(2), None)
    );
    assert_eq!(l[0].text, "fn a2() {}");
    // A rename, asked for by either path.
    for p in ["docs/moved.txt", "old.txt"] {
        let d = changes::file_diff(&f.wt, &f.base(), p, Page::default()).unwrap();
        assert_eq!(d.file.status, FileStatus::Renamed);
        assert_eq!(d.file.old_path.as_deref(), Some("old.txt"));
        assert_eq!(d.total_lines, 0, "an exact rename has no lines");
    }
    let d = changes::file_diff(&f.wt, &f.base(), "img.bin", Page::default()).unwrap();
    assert!(d.binary && d.hunks.is_empty());
    let d = changes::file_diff(&f.wt, &f.base(), "new dir/new file.txt", Page::default()).unwrap();
    assert_eq!(d.hunks[0].lines.len(), 3);
    assert!(d.hunks[0].lines.iter().all(|l| l.kind == LineKind::Add));
    let d = changes::file_diff(&f.wt, &f.base(), "gone.txt", Page::default()).unwrap();
    assert_eq!(d.hunks[0].lines[0].kind, LineKind::Remove);
}

#[test]
fn paths_outside_the_change_set_are_refused_and_odd_names_stay_names() {
    let f = Fx::new();
    f.agent_work();
    write(&f.wt, "-n", "dash\n");
    write(&f.wt, "*.txt", "star\n");
    for bad in [
        "src",
        "build.log",
        "--output=/tmp/paseo-pwned",
        "../README",
        "/etc/passwd",
        ":(glob)**",
        "*",
        "",
    ] {
        let e = changes::file_diff(&f.wt, &f.base(), bad, Page::default()).unwrap_err();
        assert_eq!(e, ChangesError::NotChanged { path: bad.into() }, "{bad}");
    }
    assert!(!Path::new("/tmp/paseo-pwned").exists());
    // Files whose names look like options or patterns are diffed as themselves.
    let d = changes::file_diff(&f.wt, &f.base(), "-n", Page::default()).unwrap();
    assert_eq!(d.hunks[0].lines[0].text, "dash");
    let d = changes::file_diff(&f.wt, &f.base(), "*.txt", Page::default()).unwrap();
    assert_eq!(d.total_lines, 1);
    assert_eq!(d.hunks[0].lines[0].text, "star");
    // A page has limits.
    for limit in [0, changes::MAX_PAGE_LINES + 1] {
        let e =
            changes::file_diff(&f.wt, &f.base(), "README", Page { offset: 0, limit }).unwrap_err();
        assert!(matches!(e, ChangesError::Invalid { ref field, .. } if field == "limit"));
    }
}

#[test]
fn a_ten_thousand_line_diff_pages_correctly() {
    let f = Fx::new();
    write(
        &f.repo,
        "big.txt",
        numbered(10_000, |i| format!("line {i}")),
    );
    git(&f.repo, &["add", "big.txt"]);
    git(&f.repo, &["commit", "-q", "-m", "big"]);
    git(&f.wt, &["merge", "-q", "--ff-only", "main"]);
    // A new file of 10,000 lines, and every 10th line of a 10,000-line file changed.
    write(
        &f.wt,
        "huge.txt",
        numbered(10_000, |i| format!("added {i}")),
    );
    write(
        &f.wt,
        "big.txt",
        numbered(10_000, |i| {
            if i % 10 == 0 {
                format!("LINE {i}")
            } else {
                format!("line {i}")
            }
        }),
    );

    let t = Instant::now();
    let set = changes::changes(&f.wt, &Compare::Head).unwrap();
    let list_ms = t.elapsed().as_millis();
    let by: BTreeMap<&str, _> = set.files.iter().map(|f| (f.path.as_str(), f)).collect();
    assert_eq!(by["huge.txt"].additions, Some(10_000));
    assert_eq!(
        (by["big.txt"].additions, by["big.txt"].deletions),
        (Some(1_000), Some(1_000))
    );

    // The added file, in pages of 500.
    let mut texts = Vec::new();
    let mut offset = 0;
    let mut pages = 0;
    let mut page_ms = Vec::new();
    loop {
        let t = Instant::now();
        let d = changes::file_diff(
            &f.wt,
            &Compare::Head,
            "huge.txt",
            Page { offset, limit: 500 },
        )
        .unwrap();
        page_ms.push(t.elapsed().as_millis());
        pages += 1;
        assert_eq!(d.total_lines, 10_000);
        assert_eq!(d.offset, offset);
        for h in &d.hunks {
            assert_eq!(
                (h.new_start, h.new_lines),
                (1, 10_000),
                "the whole hunk's header"
            );
            for l in &h.lines {
                assert_eq!(l.kind, LineKind::Add);
                assert_eq!(l.new_line, Some(texts.len() as u32 + 1));
                texts.push(l.text.clone());
            }
        }
        match d.next_offset {
            Some(n) => {
                assert_eq!(n, offset + 500);
                offset = n;
            }
            None => break,
        }
    }
    assert_eq!(pages, 20);
    assert_eq!(texts.len(), 10_000);
    assert!(texts
        .iter()
        .enumerate()
        .all(|(i, t)| *t == format!("added {}", i + 1)));
    // Past the end: an empty page.
    let d = changes::file_diff(
        &f.wt,
        &Compare::Head,
        "huge.txt",
        Page {
            offset: 10_000,
            limit: 10,
        },
    )
    .unwrap();
    assert!(d.hunks.is_empty() && d.next_offset.is_none());

    // 1,000 hunks, pages cutting through them: every line exactly once, numbers right.
    let mut seen = 0;
    let mut offset = 0;
    let mut total;
    let mut hunk_starts = std::collections::BTreeSet::new();
    loop {
        let d = changes::file_diff(
            &f.wt,
            &Compare::Head,
            "big.txt",
            Page { offset, limit: 777 },
        )
        .unwrap();
        total = d.total_lines;
        for h in &d.hunks {
            hunk_starts.insert(h.old_start);
            for l in &h.lines {
                seen += 1;
                match l.kind {
                    LineKind::Remove => assert_eq!(l.text, format!("line {}", l.old_line.unwrap())),
                    LineKind::Add => assert_eq!(l.text, format!("LINE {}", l.new_line.unwrap())),
                    LineKind::Context => {
                        assert_eq!(l.old_line, l.new_line);
                        assert_eq!(l.text, format!("line {}", l.old_line.unwrap()));
                    }
                }
            }
        }
        match d.next_offset {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(hunk_starts.len(), 1_000);
    assert_eq!(seen, total);
    // 3 context, 1 removed, 1 added, 3 context; the last change has no context after it.
    assert_eq!(total, 999 * 8 + 5);
    let mean = page_ms.iter().sum::<u128>() / page_ms.len() as u128;
    eprintln!(
        "10,000-line diff: list {list_ms} ms; a 500-line page {mean} ms on average (min {}, max {})",
        page_ms.iter().min().unwrap(),
        page_ms.iter().max().unwrap()
    );
}

#[test]
fn commit_all_commits_everything_with_the_users_hooks() {
    let f = Fx::new();
    f.agent_work();
    let hooks = f.repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let hook = hooks.join("pre-commit");
    // The user's hook runs (it leaves a mark) and can refuse.
    std::fs::write(
        &hook,
        "#!/bin/sh\ntouch \"$(git rev-parse --git-common-dir)/hook-ran\"\n[ ! -f \"$(git rev-parse --git-common-dir)/refuse\" ] || { echo 'lint failed: fix it' >&2; exit 1; }\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(f.repo.join(".git/refuse"), "").unwrap();
    let e = changes::commit_all(&f.wt, "Agent work").unwrap_err();
    assert!(
        matches!(&e, ChangesError::Git(GitError::Failed { message, .. }) if message.contains("lint failed: fix it")),
        "{e}"
    );
    std::fs::remove_file(f.repo.join(".git/refuse")).unwrap();

    let before = git(&f.wt, &["rev-parse", "HEAD"]);
    let c = changes::commit_all(&f.wt, "Agent work\n\nAll of it.").unwrap();
    assert!(f.repo.join(".git/hook-ran").exists());
    assert_eq!(git(&f.wt, &["rev-parse", "agent"]), c);
    assert_eq!(git(&f.wt, &["rev-parse", "HEAD~1"]), before);
    assert_eq!(
        git(&f.wt, &["log", "-1", "--format=%s|%an", "agent"]),
        "Agent work|Repo Owner"
    );
    assert_eq!(git(&f.wt, &["status", "--porcelain"]), "");
    assert_eq!(
        git(&f.wt, &["show", "--format=", "--name-status", "-M", "HEAD"]),
        "M\tREADME\nR100\told.txt\tdocs/moved.txt\nD\tgone.txt\nA\timg.bin\nA\tnew dir/new file.txt"
    );
    assert!(
        f.wt.join("build.log").exists(),
        "ignored files stay, uncommitted"
    );
    assert_eq!(
        changes::commit_all(&f.wt, "again").unwrap_err(),
        ChangesError::NothingToCommit
    );
    assert!(matches!(
        changes::commit_all(&f.wt, "  \n").unwrap_err(),
        ChangesError::Invalid { .. }
    ));
}

/// The worktree's branch with one committed change to `file`.
fn commit_on_branch(f: &Fx, file: &str, text: &str) -> String {
    write(&f.wt, file, text);
    git(&f.wt, &["add", file]);
    git(&f.wt, &["commit", "-q", "-m", &format!("agent: {file}")]);
    git(&f.wt, &["rev-parse", "HEAD"])
}

#[test]
fn merge_fast_forwards_into_the_main_checkout() {
    let f = Fx::new();
    let tip = commit_on_branch(&f, "feature.txt", "new\n");
    let m = changes::merge_into_base(&f.wt, "main").unwrap();
    assert_eq!(m.kind, MergeKind::FastForward);
    assert_eq!(m.commit, tip);
    assert_eq!(m.merged_in.as_deref(), Some(f.repo.to_str().unwrap()));
    assert_eq!(git(&f.repo, &["rev-parse", "main"]), tip);
    // The main checkout's files follow.
    assert_eq!(
        std::fs::read_to_string(f.repo.join("feature.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(git(&f.repo, &["status", "--porcelain"]), "");
    // Again: nothing left to merge, and nothing left in the Changes.
    assert_eq!(
        changes::merge_into_base(&f.wt, "main").unwrap().kind,
        MergeKind::UpToDate
    );
    assert!(changes::changes(&f.wt, &f.base()).unwrap().files.is_empty());
}

#[test]
fn merge_makes_a_merge_commit_when_the_base_moved_on() {
    let f = Fx::new();
    let tip = commit_on_branch(&f, "feature.txt", "new\n");
    write(&f.repo, "other.txt", "on main\n");
    git(&f.repo, &["add", "other.txt"]);
    git(&f.repo, &["commit", "-q", "-m", "main moves"]);
    let main_before = git(&f.repo, &["rev-parse", "main"]);
    let m = changes::merge_into_base(&f.wt, "main").unwrap();
    assert_eq!(m.kind, MergeKind::MergeCommit);
    assert_eq!(git(&f.repo, &["rev-parse", "main"]), m.commit);
    assert_eq!(
        git(&f.repo, &["log", "-1", "--format=%P|%s|%an", "main"]),
        format!("{main_before} {tip}|Merge branch 'agent' into main|Repo Owner")
    );
    assert!(f.repo.join("feature.txt").exists() && f.repo.join("other.txt").exists());
}

#[test]
fn a_conflicting_merge_is_aborted_and_names_the_files() {
    let f = Fx::new();
    commit_on_branch(&f, "README", "agent's words\n");
    commit_on_branch(&f, "clean.txt", "no conflict here\n");
    write(&f.repo, "README", "user's words\n");
    git(&f.repo, &["commit", "-q", "-am", "user edits README"]);
    let main_before = git(&f.repo, &["rev-parse", "main"]);
    let e = changes::merge_into_base(&f.wt, "main").unwrap_err();
    match &e {
        ChangesError::MergeConflict {
            base,
            files,
            message,
        } => {
            assert_eq!(base, "main");
            assert_eq!(files, &["README".to_string()]);
            assert!(message.contains("CONFLICT"), "{message}");
        }
        other => panic!("{other}"),
    }
    assert!(e
        .to_string()
        .contains("conflicts in README; the merge was aborted"));
    // Left exactly as before.
    assert_eq!(git(&f.repo, &["rev-parse", "main"]), main_before);
    assert_eq!(git(&f.repo, &["status", "--porcelain"]), "");
    assert!(!f.repo.join(".git/MERGE_HEAD").exists());
    assert_eq!(
        std::fs::read_to_string(f.repo.join("README")).unwrap(),
        "user's words\n"
    );
    assert!(!f.repo.join("clean.txt").exists());
}

#[test]
fn merge_refuses_dirty_trees_and_uses_a_temporary_worktree_when_the_base_is_not_checked_out() {
    let f = Fx::new();
    let tip = commit_on_branch(&f, "feature.txt", "new\n");
    // Uncommitted work in the worktree would not be merged.
    write(&f.wt, "loose.txt", "x\n");
    let e = changes::merge_into_base(&f.wt, "main").unwrap_err();
    assert!(
        matches!(&e, ChangesError::Uncommitted { files, .. } if files == &["loose.txt".to_string()]),
        "{e}"
    );
    std::fs::remove_file(f.wt.join("loose.txt")).unwrap();
    // The user's own uncommitted work in the main checkout is not mixed with a merge.
    write(&f.repo, "README", "user is typing\n");
    let e = changes::merge_into_base(&f.wt, "main").unwrap_err();
    assert!(
        matches!(&e, ChangesError::BaseCheckoutDirty { branch, files, .. } if branch == "main" && files == &["README".to_string()]),
        "{e}"
    );
    assert!(e.to_string().contains("commit or stash them there first"));
    assert_eq!(
        git(&f.repo, &["rev-parse", "main"]),
        f.created.base.as_ref().unwrap().commit
    );
    // The main checkout on another branch (with its edit): the merge happens elsewhere.
    git(&f.repo, &["checkout", "-q", "-b", "mine"]);
    let m = changes::merge_into_base(&f.wt, "main").unwrap();
    assert_eq!(
        (m.kind, m.merged_in.as_deref()),
        (MergeKind::FastForward, None)
    );
    assert_eq!(git(&f.repo, &["rev-parse", "main"]), tip);
    assert_eq!(git(&f.repo, &["branch", "--show-current"]), "mine");
    assert_eq!(
        std::fs::read_to_string(f.repo.join("README")).unwrap(),
        "user is typing\n"
    );
    assert_eq!(
        git(&f.repo, &["worktree", "list"]).lines().count(),
        2,
        "temporary tree gone"
    );
    // Bad bases.
    for (base, field) in [
        ("nope", "baseBranch"),
        ("agent", "baseBranch"),
        ("-x", "baseBranch"),
    ] {
        let e = changes::merge_into_base(&f.wt, base).unwrap_err();
        assert!(
            matches!(&e, ChangesError::Invalid { field: f, .. } if f == field),
            "{base}: {e}"
        );
    }
}

#[test]
fn discard_keeps_a_reachable_snapshot_then_cleans() {
    let f = Fx::new();
    f.agent_work();
    let head = git(&f.wt, &["rev-parse", "HEAD"]);
    let d = changes::discard(&f.wt, "Paseo: changes discarded from Test agent")
        .unwrap()
        .unwrap();
    // The tree is back at HEAD; ignored files stay; the branch did not move.
    assert_eq!(git(&f.wt, &["status", "--porcelain"]), "");
    assert!(!f.wt.join("new dir").exists() && !f.wt.join("img.bin").exists());
    assert!(f.wt.join("old.txt").exists() && f.wt.join("gone.txt").exists());
    assert!(f.wt.join("build.log").exists());
    assert_eq!(git(&f.wt, &["rev-parse", "HEAD"]), head);
    // The snapshot is a commit on HEAD, reachable from its ref, holding everything.
    assert!(d.reference.starts_with("refs/paseo/discarded/"));
    assert_eq!(git(&f.repo, &["rev-parse", &d.reference]), d.commit);
    assert_eq!(
        git(&f.repo, &["rev-parse", &format!("{}^", d.commit)]),
        head
    );
    assert_eq!(
        git(
            &f.repo,
            &["show", &format!("{}:new dir/new file.txt", d.reference)]
        ),
        "one\ntwo\nthree"
    );
    assert_eq!(
        git(&f.repo, &["show", "--format=%s", "--name-status", "-M", &d.reference]),
        "Paseo: changes discarded from Test agent\n\nM\tREADME\nR100\told.txt\tdocs/moved.txt\nD\tgone.txt\nA\timg.bin\nA\tnew dir/new file.txt"
    );
    // A gc keeps it.
    git(&f.repo, &["gc", "-q", "--prune=now"]);
    assert_eq!(git(&f.repo, &["cat-file", "-t", &d.commit]), "commit");
    // The files come back from it.
    git(
        &f.wt,
        &[
            "restore",
            &format!("--source={}", d.reference),
            "--worktree",
            "--",
            ".",
        ],
    );
    assert!(f.wt.join("new dir/new file.txt").exists());
    git(&f.wt, &["reset", "-q", "--hard"]);
    git(&f.wt, &["clean", "-qfd"]);
    // Nothing to discard.
    assert_eq!(changes::discard(&f.wt, "again").unwrap(), None);
}

#[test]
fn pull_requests_say_why_they_are_unavailable_and_what_they_would_run() {
    let f = Fx::new();
    commit_on_branch(&f, "feature.txt", "new\n");
    let gh = changes::Gh::with_program("/nonexistent/bin/gh");
    assert_eq!(
        gh.status(&f.wt),
        GhStatus::Unavailable {
            reason: "the GitHub CLI (gh) is not installed".into()
        }
    );
    let pr = PullRequest {
        title: "--web Agent's work".into(),
        body: "Made by an agent.\n--draft".into(),
        base: "main".into(),
        head: "agent".into(),
        draft: false,
    };
    // No remote to push to.
    let e = gh.pr_commands(&f.wt, &pr).unwrap_err();
    assert!(e.to_string().contains("no remote \"origin\""), "{e}");
    git(
        &f.repo,
        &["remote", "add", "origin", "https://example.invalid/app.git"],
    );
    let cmds = gh.pr_commands(&f.wt, &pr).unwrap();
    let wt = f.wt.display().to_string();
    assert_eq!(
        cmds.push,
        [
            "git",
            "-C",
            &wt,
            "push",
            "--set-upstream",
            "origin",
            "refs/heads/agent:refs/heads/agent"
        ]
    );
    assert_eq!(
        cmds.create,
        [
            "/nonexistent/bin/gh",
            "pr",
            "create",
            "--base=main",
            "--head=agent",
            "--title=--web Agent's work",
            "--body=Made by an agent.\n--draft",
        ]
    );
    // Unavailable: nothing is pushed, the reason is given.
    let e = gh.create_pr(&f.wt, &pr).unwrap_err();
    assert_eq!(
        e,
        ChangesError::GhUnavailable {
            reason: "the GitHub CLI (gh) is not installed".into()
        }
    );
    let upstream = Command::new("git")
        .arg("-C")
        .arg(&f.repo)
        .args(["config", "--get", "branch.agent.remote"])
        .output()
        .unwrap();
    assert!(!upstream.status.success(), "nothing was pushed");
    for bad in [
        PullRequest {
            title: " ".into(),
            ..pr.clone()
        },
        PullRequest {
            title: "a\nb".into(),
            ..pr.clone()
        },
        PullRequest {
            head: "-x".into(),
            ..pr.clone()
        },
        PullRequest {
            head: "no-such".into(),
            ..pr.clone()
        },
    ] {
        assert!(matches!(
            gh.pr_commands(&f.wt, &bad),
            Err(ChangesError::Invalid { .. })
        ));
    }
}

#[test]
fn a_merge_never_overwrites_files_git_does_not_track_in_the_base_checkout() {
    let f = Fx::new();
    // The user's own ignored file in the main checkout, and the agent's branch tracking one at
    // the same path: git would replace the user's without a word.
    write(&f.repo, "secret.log", "the user's\n");
    write(&f.wt, "secret.log", "the agent's\n");
    git(&f.wt, &["add", "-f", "secret.log"]);
    git(&f.wt, &["commit", "-q", "-m", "agent: track secret.log"]);
    let main_before = git(&f.repo, &["rev-parse", "main"]);
    let e = changes::merge_into_base(&f.wt, "main").unwrap_err();
    assert!(
        matches!(&e, ChangesError::WouldOverwrite { files, at, .. }
            if files == &["secret.log".to_string()] && at == f.repo.to_str().unwrap()),
        "{e}"
    );
    assert!(e.to_string().contains("secret.log"), "{e}");
    assert!(e.to_string().contains("move them away first"), "{e}");
    assert_eq!(git(&f.repo, &["rev-parse", "main"]), main_before);
    assert_eq!(
        std::fs::read_to_string(f.repo.join("secret.log")).unwrap(),
        "the user's\n"
    );
    // Moved away, the merge goes through.
    std::fs::rename(f.repo.join("secret.log"), f.repo.join("../secret.log.mine")).unwrap();
    let m = changes::merge_into_base(&f.wt, "main").unwrap();
    assert_eq!(m.kind, MergeKind::FastForward);
}

// ------------------------------------------------- the actions through the runtime (SPEC 15)

use paseo_core::model::Status;
use paseo_core::runtime::{CreateAgent, WorkspaceTarget};
use std::time::Duration;
use support::Door;

const T: Duration = Duration::from_secs(30);

async fn runtime_beside(f: &Fx) -> Runtime {
    let rt = support::git::shell_runtime(&f.repo.parent().unwrap().join("rt-home")).await;
    rt.handle.deliver_pending().await.unwrap();
    rt
}

fn shell_agent(ws: WorkspaceTarget, title: &str, script: &str) -> CreateAgent {
    let mut c = CreateAgent::new("shell", ws);
    c.initial_prompt = Some(script.into());
    c.title = Some(title.into());
    c
}

async fn until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + T;
    while !ok() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn discard_stops_every_agent_in_the_checkout_first_and_keeps_their_last_writes() {
    let f = Fx::new();
    let rt = runtime_beside(&f).await;
    let h = rt.handle();
    let here = WorkspaceTarget::directory(f.repo.display().to_string());
    // One agent writing a line every 20 ms, another one idling in the same checkout.
    let writer = h
        .create(shell_agent(
            here.clone(),
            "Writer",
            "i=0; while true; do i=$((i+1)); echo $i >> writes.txt; sleep 0.02; done",
        ))
        .await
        .unwrap();
    let other = h
        .create(shell_agent(here, "Other", "sleep 30"))
        .await
        .unwrap();
    let writes = f.repo.join("writes.txt");
    until("the writer never wrote", || {
        std::fs::read_to_string(&writes).is_ok_and(|t| t.lines().count() >= 5)
    })
    .await;
    // The Changes view knows who works there, for the confirm.
    let seen = h.agent_changes(writer.id()).await.unwrap();
    let mut listed: Vec<_> = seen.checkout_agents.iter().map(|a| a.agent_id).collect();
    listed.sort();
    let mut both = vec![writer.id(), other.id()];
    both.sort();
    assert_eq!(listed, both);

    let d = h
        .discard_agent_changes(writer.id())
        .await
        .unwrap()
        .expect("something to discard");
    for id in [writer.id(), other.id()] {
        assert_eq!(h.get(id).await.unwrap().status, Status::Closed);
    }
    // Nothing writes there any more: the reset stays a reset.
    assert!(!writes.exists());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !writes.exists(),
        "an agent was still writing in the checkout"
    );
    // Every line the writer wrote is in the snapshot, in order, none missing.
    let kept = git(&f.repo, &["show", &format!("{}:writes.txt", d.reference)]);
    let lines: Vec<u64> = kept.lines().map(|l| l.parse().unwrap()).collect();
    assert!(lines.len() >= 5, "{kept}");
    assert_eq!(lines, (1..=lines.len() as u64).collect::<Vec<_>>());
    rt.shutdown().await;
}

#[tokio::test]
async fn merge_is_refused_while_another_agent_works_in_the_base_checkout() {
    let f = Fx::new();
    let rt = runtime_beside(&f).await;
    let h = rt.handle();
    let kid = h
        .create(shell_agent(
            WorkspaceTarget::worktree(
                Some(f.repo.display().to_string()),
                WorktreeTarget::branch_off("feat", None),
            ),
            "Kid",
            "echo new > feature.txt && git add feature.txt && git commit -qm feature && echo done",
        ))
        .await
        .unwrap();
    assert_eq!(
        h.wait(kid.id(), T).await.unwrap().agent.status,
        Status::Idle
    );
    let tip = git(Path::new(kid.record.cwd.as_str()), &["rev-parse", "HEAD"]);
    let main_worker = h
        .create(shell_agent(
            WorkspaceTarget::directory(f.repo.display().to_string()),
            "Main worker",
            "sleep 30",
        ))
        .await
        .unwrap();
    let main_before = git(&f.repo, &["rev-parse", "main"]);
    // The view knows before it asks: who works where the base is checked out.
    let seen = h.agent_changes(kid.id()).await.unwrap();
    assert_eq!(seen.base_checkout.as_deref(), f.repo.to_str());
    let names: Vec<&str> = seen
        .merge_blockers
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, ["Main worker"]);
    let e = h.merge_agent_changes(kid.id()).await.unwrap_err();
    assert_eq!(e.code(), "busy", "{e}");
    let msg = e.to_string();
    assert!(msg.contains("\"Main worker\" has a turn running"), "{msg}");
    assert!(
        !msg.contains(&main_worker.id().to_string()),
        "no raw id: {msg}"
    );
    assert!(msg.contains(f.repo.to_str().unwrap()), "{msg}");
    // Nothing happened: the base did not move, nobody was stopped.
    assert_eq!(git(&f.repo, &["rev-parse", "main"]), main_before);
    assert!(!f.repo.join("feature.txt").exists());
    assert_eq!(
        h.get(main_worker.id()).await.unwrap().status,
        Status::Running
    );
    assert_eq!(h.get(kid.id()).await.unwrap().status, Status::Idle);
    // Once that agent stopped, the merge goes through, and the kid's own checkout was stopped
    // first.
    h.stop(main_worker.id()).await.unwrap();
    let m = h.merge_agent_changes(kid.id()).await.unwrap();
    assert_eq!(m.kind, MergeKind::FastForward);
    assert_eq!(git(&f.repo, &["rev-parse", "main"]), tip);
    assert_eq!(h.get(kid.id()).await.unwrap().status, Status::Closed);
    rt.shutdown().await;
}
