//! Workspaces and git worktrees through the runtime, with real git repositories in temp dirs
//! and real shell agents; removal never loses work (SPEC 15).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use paseo_core::model::{AgentId, Bucket, ItemKind, Status, WorkspaceKind};
use paseo_core::runtime::{Caller, CreateAgent, Event, WorkspaceTarget};
use paseo_core::server::{Runtime, Server};
use paseo_core::workspaces::worktree::{BaseRef, WorktreeTarget};
use paseo_core::workspaces::{self, WorkspaceError};

use crate::support;
use support::git::{git, init_repo, shell_runtime};
use support::Door;

const T: Duration = Duration::from_secs(30);

struct Fx {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    rt: Runtime,
}

impl Fx {
    async fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let repo = root.join("app");
        init_repo(&repo);
        git(&repo, &["branch", "dev"]);
        git(&repo, &["tag", "v1"]);
        let home = root.join("home");
        let rt = shell_runtime(&home).await;
        rt.handle.deliver_pending().await.unwrap();
        Fx {
            _dir: dir,
            home,
            repo,
            rt,
        }
    }
    fn h(&self) -> Server {
        self.rt.handle()
    }
    fn repo(&self) -> String {
        self.repo.display().to_string()
    }
}

#[tokio::test]
async fn each_target_makes_a_worktree_under_the_data_root() {
    let f = Fx::new().await;
    let h = f.h();
    let a = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::branch_off("feat/login", None),
            None,
        )
        .await
        .unwrap();
    let path = PathBuf::from(&a.record.cwd);
    assert!(path.starts_with(f.home.join("worktrees")), "{path:?}");
    assert!(path.ends_with("feat-login"));
    assert!(path.join("README").exists());
    assert_eq!(a.record.kind, WorkspaceKind::Worktree);
    assert_eq!(a.record.branch.as_deref(), Some("feat/login"));
    assert_eq!(git(&path, &["branch", "--show-current"]), "feat/login");
    // Its base is recorded with it (for the Changes feature).
    let main = git(&f.repo, &["rev-parse", "main"]);
    assert_eq!(
        workspaces::recorded_base(&a.record),
        Some(BaseRef {
            branch: Some("main".into()),
            commit: main.clone()
        })
    );

    let b = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::branch_off("from-tag", Some("v1")),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        git(Path::new(&b.record.cwd), &["branch", "--show-current"]),
        "from-tag"
    );
    assert_eq!(
        workspaces::recorded_base(&b.record),
        Some(BaseRef {
            branch: None,
            commit: main
        })
    );

    let c = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::checkout("dev"),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        git(Path::new(&c.record.cwd), &["branch", "--show-current"]),
        "dev"
    );
    // All three belong to the repository's project.
    let snap = h.snapshot().await.unwrap();
    assert_eq!(snap.projects.len(), 1);
    assert!(snap
        .workspaces
        .iter()
        .all(|w| w.record.project_id == a.record.project_id));
    f.rt.shutdown().await;
}

#[tokio::test]
async fn each_error_is_clear_and_changes_nothing() {
    let f = Fx::new().await;
    let h = f.h();
    let err = |e: paseo_core::runtime::RuntimeError| e.to_string();
    // The branch exists.
    let e = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::branch_off("dev", None),
            None,
        )
        .await
        .unwrap_err();
    assert!(err(e).starts_with("target.newBranch: branch \"dev\" already exists"));
    // Checked out elsewhere (main is checked out in the repository itself).
    let e = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::checkout("main"),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        err(e).contains("already checked out at"),
        "checked out elsewhere"
    );
    // A missing branch, a bad name, a bad base.
    let e = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::checkout("nope"),
            None,
        )
        .await
        .unwrap_err();
    assert!(err(e).contains("does not exist"));
    let e = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::branch_off("a..b", None),
            None,
        )
        .await
        .unwrap_err();
    assert!(err(e).contains("not a valid git branch name"));
    let e = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::branch_off("x", Some("no-such-ref")),
            None,
        )
        .await
        .unwrap_err();
    assert!(err(e).contains("target.base"));
    // Not a git repository.
    let plain = f.home.parent().unwrap().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let msg = h
        .create_worktree(
            Caller::User,
            Some(plain.display().to_string()),
            WorktreeTarget::branch_off("x", None),
            None,
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("repo: ") && msg.contains("is not inside a git repository"),
        "{msg}"
    );
    // Nothing was created.
    let snap = h.snapshot().await.unwrap();
    assert!(snap.workspaces.is_empty());
    assert!(
        !f.home.join("worktrees").exists()
            || walk_dirs(&f.home.join("worktrees")).iter().all(|d| d
                .read_dir()
                .unwrap()
                .next()
                .is_none())
    );
    assert_eq!(git(&f.repo, &["worktree", "list"]).lines().count(), 1);
    f.rt.shutdown().await;
}

fn walk_dirs(p: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(p)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

fn shell(ws: WorkspaceTarget, prompt: &str) -> CreateAgent {
    let mut c = CreateAgent::new("shell", ws);
    c.initial_prompt = Some(prompt.into());
    c
}

#[tokio::test]
async fn archiving_a_worktree_archives_its_agents_removes_it_keeps_the_branch_and_restores() {
    let f = Fx::new().await;
    let h = f.h();
    let w = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::branch_off("feature", None),
            None,
        )
        .await
        .unwrap();
    let wid = w.record.workspace_id.clone();
    let path = PathBuf::from(&w.record.cwd);
    let a = h
        .create(shell(
            WorkspaceTarget::existing(wid.clone()),
            "echo work > notes.txt && git add notes.txt && git -c user.name=t -c user.email=t@t commit -qm notes",
        ))
        .await
        .unwrap();
    assert_eq!(h.wait(a.id(), T).await.unwrap().agent.status, Status::Idle);
    let b = h
        .create(shell(WorkspaceTarget::existing(wid.clone()), "sleep 30"))
        .await
        .unwrap();
    // A live agent: refused unless confirmed.
    let e = h.archive_workspace(wid.clone(), false).await.unwrap_err();
    assert_eq!(e.code(), "busy");
    assert!(path.exists());
    let archived = h.archive_workspace(wid.clone(), true).await.unwrap();
    assert_eq!(archived.len(), 2);
    for id in [a.id(), b.id()] {
        assert!(h.get(id).await.unwrap().record.archived_at.is_some());
    }
    // Removal happens once the agents' processes are gone; it is over once git forgot the
    // worktree too (the directory goes to the trash first, then git prunes).
    let deadline = tokio::time::Instant::now() + T;
    while path.exists() || git(&f.repo, &["worktree", "list"]).lines().count() > 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "worktree not removed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(git(&f.repo, &["branch", "--list", "feature"]), "feature");
    assert_eq!(
        git(&f.repo, &["worktree", "list"]).lines().count(),
        1,
        "pruned"
    );
    assert!(h.snapshot().await.unwrap().workspaces.is_empty());
    // Restorable: the worktree comes back from its branch, with the committed work.
    let restored = h.restore(a.id(), false).await.unwrap();
    assert_eq!(restored.len(), 2);
    assert!(path.join("notes.txt").exists());
    assert_eq!(h.get(a.id()).await.unwrap().status, Status::Closed);
    assert_eq!(h.snapshot().await.unwrap().workspaces.len(), 1);
    f.rt.shutdown().await;
}

#[tokio::test]
async fn auto_archive_of_an_agent_that_created_a_worktree_removes_the_worktree() {
    let f = Fx::new().await;
    let h = f.h();
    let mut c = shell(
        WorkspaceTarget::worktree(Some(f.repo()), WorktreeTarget::branch_off("auto", None)),
        // Runs until the test says go, so the other agent joins the worktree first. The go
        // file is beside the repository: the worktree's own parent is in the data root, which
        // a contained agent cannot read (SPEC 16).
        &format!(
            "while [ ! -f '{}/go-auto' ]; do sleep 0.02; done; echo done",
            f.repo.parent().unwrap().display()
        ),
    );
    c.auto_archive = true;
    let a = h.create(c).await.unwrap();
    let path = PathBuf::from(&a.record.cwd);
    assert!(path.starts_with(f.home.join("worktrees")));
    // Another agent someone else started in that worktree is archived with it.
    let other = h
        .create(shell(
            WorkspaceTarget::existing(a.record.workspace_id.clone().unwrap()),
            "sleep 30",
        ))
        .await
        .unwrap();
    std::fs::write(f.repo.parent().unwrap().join("go-auto"), b"").unwrap();
    let deadline = tokio::time::Instant::now() + T;
    // Gone once git forgot it too: the directory goes to the trash first, then git prunes.
    while path.exists() || git(&f.repo, &["worktree", "list"]).lines().count() > 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "worktree not removed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(h.get(a.id()).await.unwrap().record.archived_at.is_some());
    assert!(h
        .get(other.id())
        .await
        .unwrap()
        .record
        .archived_at
        .is_some());
    assert_eq!(git(&f.repo, &["branch", "--list", "auto"]), "auto");
    f.rt.shutdown().await;
}

/// SPEC 15: every process working in a worktree has stopped before its snapshot, the
/// archiving agent's own and those of the agents archived with the worktree. The other agent
/// writes one last file while it stops (SIGTERM, then a moment): that file is in the snapshot.
#[tokio::test]
async fn auto_archive_waits_for_every_process_in_the_worktree_before_the_snapshot() {
    let f = Fx::new().await;
    let h = f.h();
    let go = f.repo.parent().unwrap().join("go-wait");
    let mut c = shell(
        WorkspaceTarget::worktree(Some(f.repo()), WorktreeTarget::branch_off("waits", None)),
        &format!(
            "while [ ! -f '{}' ]; do sleep 0.02; done; echo done",
            go.display()
        ),
    );
    c.auto_archive = true;
    let a = h.create(c).await.unwrap();
    let path = PathBuf::from(&a.record.cwd);
    let other = h
        .create(shell(
            WorkspaceTarget::existing(a.record.workspace_id.clone().unwrap()),
            "trap 'sleep 1; echo last > last.txt; exit 0' TERM; touch started; \
             while :; do sleep 0.05; done",
        ))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + T;
    while !path.join("started").exists() {
        assert!(tokio::time::Instant::now() < deadline, "other never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    std::fs::write(&go, b"").unwrap();
    until_gone(&path).await;
    assert!(h
        .get(other.id())
        .await
        .unwrap()
        .record
        .archived_at
        .is_some());
    let snap = git(&f.repo, &["show", "--format=", "--name-only", "waits"]);
    assert!(
        snap.lines().any(|l| l == "last.txt"),
        "the last write of a stopping agent is missing from the snapshot: {snap:?}"
    );
    f.rt.shutdown().await;
}

/// A restore right after the archive (the undo toast clicked at once, an agent still stopping)
/// keeps the worktree, whichever comes first: the removal (it finds the workspace back and
/// leaves the folder alone) or the restore (it waits for the folder's move, then re-adds it).
#[tokio::test]
async fn a_restore_before_the_removal_keeps_the_worktree() {
    let f = Fx::new().await;
    let h = f.h();
    let w = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::branch_off("undo", None),
            None,
        )
        .await
        .unwrap();
    let wid = w.record.workspace_id.clone();
    let path = PathBuf::from(&w.record.cwd);
    // Slow to stop: the removal waits for it.
    let a = h
        .create(shell(
            WorkspaceTarget::existing(wid.clone()),
            "trap 'sleep 1; exit 0' TERM; touch started; while :; do sleep 0.05; done",
        ))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + T;
    while !path.join("started").exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the agent never ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.archive_workspace(wid.clone(), true).await.unwrap();
    h.restore(a.id(), false).await.unwrap();
    // Long after the agent stopped and its removal ran.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        path.join("started").exists(),
        "the restored worktree was removed"
    );
    assert!(
        git(&f.repo, &["worktree", "list"]).contains(&path.display().to_string()),
        "git forgot the restored worktree"
    );
    assert_eq!(git(&path, &["branch", "--show-current"]), "undo");
    assert!(h.get(a.id()).await.unwrap().record.archived_at.is_none());
    f.rt.shutdown().await;
}

#[tokio::test]
async fn workspaces_sharing_a_directory_have_separate_activity() {
    let f = Fx::new().await;
    let h = f.h();
    let dir = WorkspaceTarget::directory(f.repo());
    let a = h.create(shell(dir.clone(), "sleep 30")).await.unwrap();
    let b = h.create(shell(dir, "exit 3")).await.unwrap();
    assert_ne!(a.record.workspace_id, b.record.workspace_id);
    assert_eq!(a.record.cwd, b.record.cwd);
    assert_eq!(h.wait(b.id(), T).await.unwrap().agent.status, Status::Error);
    let snap = h.snapshot().await.unwrap();
    let bucket = |id| {
        snap.workspaces
            .iter()
            .find(|w| Some(&w.record.workspace_id) == id)
            .unwrap()
            .bucket
    };
    assert_eq!(
        bucket(a.record.workspace_id.as_ref()),
        Some(Bucket::Running)
    );
    assert_eq!(bucket(b.record.workspace_id.as_ref()), Some(Bucket::Failed));
    f.rt.shutdown().await;
}

async fn until_gone(path: &Path) {
    // The repository the worktree belongs to, read while it is still there: the directory goes
    // to the trash first and git forgets the worktree a moment later (SPEC 15).
    let repo = std::fs::read_to_string(path.join(".git"))
        .ok()
        .and_then(|t| {
            t.trim()
                .strip_prefix("gitdir:")
                .map(|g| g.trim().to_string())
        })
        .and_then(|g| Path::new(&g).ancestors().nth(3).map(Path::to_path_buf));
    let deadline = tokio::time::Instant::now() + T;
    let listed = |repo: &Path| git(repo, &["worktree", "list", "--porcelain"]);
    while path.exists()
        || repo
            .as_deref()
            .is_some_and(|r| listed(r).contains(&path.display().to_string()))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "worktree {} not removed",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An autoArchive shell agent in a worktree of its own, titled `title`, running `script`.
async fn auto_agent(
    h: &Server,
    repo: &str,
    branch: &str,
    title: &str,
    script: &str,
) -> (AgentId, PathBuf) {
    let mut c = shell(
        WorkspaceTarget::worktree(Some(repo.into()), WorktreeTarget::branch_off(branch, None)),
        script,
    );
    c.auto_archive = true;
    c.title = Some(title.into());
    let a = h.create(c).await.unwrap();
    (a.id(), PathBuf::from(&a.record.cwd))
}

#[tokio::test]
async fn auto_archive_commits_what_was_left_on_the_branch_and_restore_brings_it_back() {
    let f = Fx::new().await;
    let h = f.h();
    // The repository's own identity, which the snapshot must use.
    git(&f.repo, &["config", "user.name", "Repo Owner"]);
    git(&f.repo, &["config", "user.email", "owner@example.com"]);
    std::fs::write(f.repo.join(".gitignore"), "*.log\n").unwrap();
    git(&f.repo, &["add", ".gitignore"]);
    git(&f.repo, &["commit", "-q", "-m", "ignore logs"]);
    let main = git(&f.repo, &["rev-parse", "main"]);
    let (a, path) = auto_agent(
        &h,
        &f.repo(),
        "notes",
        "Write the notes",
        "echo notes > notes.txt && echo more >> README && echo noise > build.log",
    )
    .await;
    until_gone(&path).await;
    assert!(h.get(a).await.unwrap().record.archived_at.is_some());
    // One new commit on the branch, holding both changes and nothing ignored.
    assert_eq!(
        git(&f.repo, &["rev-list", "--count", &format!("{main}..notes")]),
        "1"
    );
    assert_eq!(
        git(&f.repo, &["log", "-1", "--format=%s", "notes"]),
        "Paseo: work left in notes when Write the notes was archived"
    );
    assert_eq!(
        git(
            &f.repo,
            &["log", "-1", "--format=%an <%ae>|%cn <%ce>", "notes"]
        ),
        "Repo Owner <owner@example.com>|Repo Owner <owner@example.com>"
    );
    let changed = git(&f.repo, &["show", "--format=", "--name-status", "notes"]);
    assert_eq!(changed, "M\tREADME\nA\tnotes.txt", "{changed}");
    assert_eq!(git(&f.repo, &["worktree", "list"]).lines().count(), 1);
    // Restore: the worktree comes back from the branch, snapshot included.
    h.restore(a, false).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(path.join("notes.txt")).unwrap(),
        "notes\n"
    );
    assert_eq!(
        std::fs::read_to_string(path.join("README")).unwrap(),
        "hello\nmore\n"
    );
    assert_eq!(git(&path, &["status", "--porcelain"]), "");
    assert_eq!(h.snapshot().await.unwrap().workspaces.len(), 1);
    f.rt.shutdown().await;
}

#[tokio::test]
async fn a_clean_worktree_is_removed_without_a_commit() {
    let f = Fx::new().await;
    let h = f.h();
    let main = git(&f.repo, &["rev-parse", "main"]);
    let (_, path) = auto_agent(&h, &f.repo(), "clean", "Look only", "ls").await;
    until_gone(&path).await;
    assert_eq!(git(&f.repo, &["rev-parse", "clean"]), main);
    f.rt.shutdown().await;
}

#[tokio::test]
async fn failing_hooks_and_signing_config_cannot_block_the_snapshot() {
    let f = Fx::new().await;
    let h = f.h();
    let w = h
        .create_worktree(
            Caller::User,
            Some(f.repo()),
            WorktreeTarget::branch_off("hooked", None),
            None,
        )
        .await
        .unwrap();
    let path = PathBuf::from(&w.record.cwd);
    let hooks = f.repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in ["pre-commit", "commit-msg", "prepare-commit-msg"] {
        let p = hooks.join(hook);
        std::fs::write(&p, "#!/bin/sh\necho refused by hook >&2\nexit 1\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // Signing that would fail, and would wait on a prompt if it could.
    git(&f.repo, &["config", "commit.gpgsign", "true"]);
    git(&f.repo, &["config", "gpg.program", "false"]);
    // The hook really refuses a normal commit.
    std::fs::write(path.join("work.txt"), "work\n").unwrap();
    git(&path, &["add", "work.txt"]);
    let refused = Command::new("git")
        .arg("-C")
        .arg(&path)
        .args(["commit", "-q", "-m", "x"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    // A workspace archive (no single agent caused it) snapshots and removes.
    h.archive_workspace(w.record.workspace_id.clone(), false)
        .await
        .unwrap();
    until_gone(&path).await;
    assert_eq!(
        git(&f.repo, &["log", "-1", "--format=%s%n%G?", "hooked"]),
        "Paseo: work left in hooked when workspace hooked was archived\nN"
    );
    assert_eq!(
        git(&f.repo, &["show", "--format=", "--name-only", "hooked"]),
        "work.txt"
    );
    f.rt.shutdown().await;
}

#[tokio::test]
async fn a_snapshot_that_fails_keeps_the_worktree_and_says_so_on_the_timeline_and_in_a_notice() {
    let f = Fx::new().await;
    let h = f.h();
    let mut events = h.subscribe();
    // The branch cannot move: git's own lock file for its ref is held.
    let lock = f.repo.join(".git/refs/heads/stuck.lock");
    let (a, path) = auto_agent(
        &h,
        &f.repo(),
        "stuck",
        "Stuck agent",
        &format!(
            "while [ ! -f '{}/go-stuck' ]; do sleep 0.02; done; echo notes > notes.txt",
            f.repo.parent().unwrap().display()
        ),
    )
    .await;
    std::fs::write(&lock, b"").unwrap();
    std::fs::write(f.repo.parent().unwrap().join("go-stuck"), b"").unwrap();
    let deadline = tokio::time::Instant::now() + T;
    let notice = loop {
        let ev = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("no notice")
            .unwrap();
        if let Event::Notice { message, .. } = ev {
            break message;
        }
    };
    assert!(
        notice.contains("was kept with everything in it"),
        "{notice}"
    );
    assert!(notice.contains(&path.display().to_string()), "{notice}");
    assert!(notice.contains("stuck.lock"), "git's own words: {notice}");
    // The worktree and its files are still there; nothing was committed.
    assert_eq!(
        std::fs::read_to_string(path.join("notes.txt")).unwrap(),
        "notes\n"
    );
    assert_eq!(
        git(&f.repo, &["rev-parse", "stuck"]),
        git(&f.repo, &["rev-parse", "main"])
    );
    assert!(h.get(a).await.unwrap().record.archived_at.is_some());
    // The agent's timeline says so, and the workspace stays open to retry.
    let items = h.timeline(a, 0, 100).await.unwrap();
    assert!(
        items
            .iter()
            .any(|i| i.kind == ItemKind::Error && i.text == notice),
        "{items:?}"
    );
    let snap = h.snapshot().await.unwrap();
    assert!(snap.notices.contains(&notice));
    let ws = snap
        .workspaces
        .iter()
        .find(|w| w.record.cwd == path.display().to_string())
        .expect("the workspace is back");
    // Retrying once the lock is gone snapshots and removes it.
    std::fs::remove_file(&lock).unwrap();
    h.archive_workspace(ws.record.workspace_id.clone(), false)
        .await
        .unwrap();
    until_gone(&path).await;
    assert_eq!(
        git(&f.repo, &["show", "--format=%s", "--name-only", "stuck"]),
        "Paseo: work left in stuck when workspace stuck was archived\n\nnotes.txt"
    );
    // And the agent restores into the worktree, snapshot included.
    h.restore(a, false).await.unwrap();
    assert!(path.join("notes.txt").exists());
    f.rt.shutdown().await;
}

#[test]
fn a_folder_that_is_no_worktree_any_more_is_kept_not_committed_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    // The data root lives inside another repository (a dotfiles repository, say).
    init_repo(&root);
    let layout = paseo_core::store::Layout::new(root.join("home"));
    let repo = root.join("app");
    init_repo(&repo);
    let created = workspaces::worktree::create(
        &layout,
        "",
        repo.to_str().unwrap(),
        &WorktreeTarget::branch_off("lost", None),
    )
    .unwrap();
    let path = created.path.clone();
    // Its link to the repository is gone.
    std::fs::remove_file(path.join(".git")).unwrap();
    std::fs::write(path.join("notes.txt"), "notes\n").unwrap();
    let before = git(&root, &["rev-parse", "HEAD"]);
    let e = workspaces::worktree::snapshot_and_remove(
        &layout,
        repo.to_str().unwrap(),
        path.to_str().unwrap(),
        None,
        "Paseo: work left in lost when x was archived",
    )
    .unwrap_err();
    assert!(matches!(e, WorkspaceError::Snapshot { .. }), "{e}");
    assert!(e.to_string().contains("not a git worktree any more"), "{e}");
    assert!(path.join("notes.txt").exists());
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), before);
    // And nothing outside the worktrees folder is ever touched.
    let e = workspaces::worktree::snapshot_and_remove(
        &layout,
        repo.to_str().unwrap(),
        repo.to_str().unwrap(),
        None,
        "x",
    )
    .unwrap_err();
    assert!(e.to_string().contains("refusing to remove it"), "{e}");
    assert!(repo.join("README").exists());
}

fn trash_entries(home: &Path) -> Vec<workspaces::trash::Entry> {
    workspaces::trash::entries(&paseo_core::store::Layout::new(home))
}

#[tokio::test]
async fn ignored_files_go_to_the_trash_and_come_back_with_the_restored_worktree() {
    let f = Fx::new().await;
    let h = f.h();
    std::fs::write(f.repo.join(".gitignore"), ".env\nout/\n*.log\n").unwrap();
    git(&f.repo, &["add", ".gitignore"]);
    git(&f.repo, &["commit", "-q", "-m", "ignore"]);
    let (a, path) = auto_agent(
        &h,
        &f.repo(),
        "secrets",
        "Write a report",
        "echo SECRET=1 > .env && mkdir -p out && echo findings > out/report.md \
         && echo agent-log > build.log && echo notes > notes.txt",
    )
    .await;
    until_gone(&path).await;
    // Ignored files are not in the snapshot commit, and not deleted: they are in the trash.
    let committed = git(&f.repo, &["show", "--format=", "--name-only", "secrets"]);
    assert_eq!(committed, "notes.txt");
    let entries = trash_entries(&f.home);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let e = &entries[0];
    assert!(e.dir.starts_with(f.home.join("trash")), "{:?}", e.dir);
    assert_eq!(e.manifest.worktree, path.display().to_string());
    assert_eq!(e.manifest.branch.as_deref(), Some("secrets"));
    assert_eq!(e.manifest.repo, f.repo());
    assert_eq!(
        e.manifest.snapshot.as_deref(),
        Some(git(&f.repo, &["rev-parse", "secrets"]).as_str())
    );
    assert_eq!(
        std::fs::read_to_string(e.tree().join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert_eq!(git(&f.repo, &["worktree", "list"]).lines().count(), 1);
    // Meanwhile the branch gained a tracked build.log: the restore must not overwrite it.
    let side = f.home.join("side");
    git(
        &f.repo,
        &["worktree", "add", "-q", side.to_str().unwrap(), "secrets"],
    );
    std::fs::write(side.join("build.log"), "from the branch\n").unwrap();
    git(&side, &["add", "-f", "build.log"]);
    git(&side, &["commit", "-q", "-m", "track the log"]);
    git(&f.repo, &["worktree", "remove", side.to_str().unwrap()]);

    h.restore(a, false).await.unwrap();
    let read = |p: &str| std::fs::read_to_string(path.join(p)).unwrap();
    assert_eq!(read(".env"), "SECRET=1\n");
    assert_eq!(read("out/report.md"), "findings\n");
    assert_eq!(read("notes.txt"), "notes\n");
    assert_eq!(
        read("build.log"),
        "from the branch\n",
        "the branch's file wins"
    );
    assert_eq!(git(&path, &["status", "--porcelain"]), "");
    // What the branch had stays in the trash entry, which is marked restored.
    let entries = trash_entries(&f.home);
    assert_eq!(entries.len(), 1);
    assert!(entries[0].manifest.restored_at.is_some());
    assert_eq!(
        std::fs::read_to_string(entries[0].tree().join("build.log")).unwrap(),
        "agent-log\n"
    );
    assert!(!entries[0].tree().join(".env").exists(), "moved back");
    f.rt.shutdown().await;
}

#[tokio::test]
async fn trash_entries_older_than_trash_days_are_purged_at_start() {
    use paseo_core::workspaces::trash::{self, Manifest};
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().canonicalize().unwrap().join("home");
    let layout = paseo_core::store::Layout::new(&home);
    let entry = |name: &str, days_ago: i64| {
        let wt = dir.path().join(name);
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".env"), name).unwrap();
        let m = Manifest {
            worktree: wt.display().to_string(),
            repo: "/src/app".into(),
            branch: Some(name.into()),
            snapshot: None,
            trashed_at: paseo_core::model::Timestamp::from_millis(
                paseo_core::model::Timestamp::now().millis() - days_ago * 24 * 3600 * 1000,
            ),
            restored_at: None,
        };
        trash::put(&layout, &wt, &m).unwrap().dir
    };
    let old = entry("old", 4);
    let young = entry("young", 2);
    // storage.trashDays = 3: the four-day-old entry goes, the two-day-old one stays.
    let mut opts = paseo_core::runtime::RuntimeOptions::new(
        &home,
        paseo_core::providers::ProviderRegistry::new(),
    );
    opts.trash_days = 3;
    let rt = Runtime::start(opts, None).await.unwrap();
    let deadline = tokio::time::Instant::now() + T;
    while old.exists() {
        assert!(tokio::time::Instant::now() < deadline, "old entry kept");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(young.join("tree/.env").exists());
    rt.shutdown().await;
}

#[test]
fn a_locked_worktree_is_kept_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let layout = paseo_core::store::Layout::new(root.join("home"));
    let repo = root.join("app");
    init_repo(&repo);
    let created = workspaces::worktree::create(
        &layout,
        "",
        repo.to_str().unwrap(),
        &WorktreeTarget::branch_off("locked", None),
    )
    .unwrap();
    let path = created.path.clone();
    git(&repo, &["worktree", "lock", path.to_str().unwrap()]);
    std::fs::write(path.join("notes.txt"), "notes\n").unwrap();
    let e = workspaces::worktree::snapshot_and_remove(
        &layout,
        repo.to_str().unwrap(),
        path.to_str().unwrap(),
        Some("locked"),
        "Paseo: work left in locked when x was archived",
    )
    .unwrap_err();
    assert!(matches!(e, WorkspaceError::NotRemoved { .. }), "{e}");
    assert!(e.to_string().contains("locked"), "{e}");
    assert!(e.to_string().contains(path.to_str().unwrap()), "{e}");
    // The snapshot is on the branch, and the worktree is still there, still a worktree.
    assert!(path.join("notes.txt").exists());
    assert_eq!(git(&path, &["status", "--porcelain"]), "");
    assert!(trash_entries(&root.join("home")).is_empty());
}
