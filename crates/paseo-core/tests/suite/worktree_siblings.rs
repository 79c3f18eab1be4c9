//! One worktree going never breaks its siblings (SPEC 15): with two and three worktree agents
//! of one repository, each way a worktree goes (autoArchive, archive, Remove…, Discard,
//! merge then Remove…, restore) leaves every other worktree listed by git and working, a
//! running agent among them; the same with an agent of its own in the main checkout. Real
//! git, real shell agents, contained as a user's are (bubblewrap here).
//!
//! Before the fix, the app's git ran `git worktree prune` in a box that hid the data root,
//! where the worktrees live: git saw every sibling's folder as gone and forgot them all.

use std::path::PathBuf;
use std::time::Duration;

use paseo_core::model::{AgentId, Status};
use paseo_core::runtime::{Caller, CreateAgent, WorkspaceTarget};
use paseo_core::server::{Runtime, Server};
use paseo_core::workspaces::worktree::WorktreeTarget;

use crate::support;
use support::git::{git, init_repo, shell_runtime};
use support::Door;

const T: Duration = Duration::from_secs(30);
const COMMIT: &str = "git -c user.name=t -c user.email=t@example.com commit -qm";

struct Fx {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    rt: Runtime,
    /// The agent of the main checkout, when the case has one.
    main_agent: Option<AgentId>,
}

struct Wt {
    id: AgentId,
    path: PathBuf,
}

impl Fx {
    async fn new(main_agent: bool) -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let repo = root.join("app");
        init_repo(&repo);
        let rt = shell_runtime(&root.join("home")).await;
        let mut f = Fx {
            _dir: dir,
            repo,
            rt,
            main_agent: None,
        };
        if main_agent {
            let h = f.h();
            let a = h
                .create(shell(
                    WorkspaceTarget::directory(f.repo()),
                    "echo main agent here",
                ))
                .await
                .unwrap();
            assert_eq!(h.wait(a.id(), T).await.unwrap().agent.status, Status::Idle);
            f.main_agent = Some(a.id());
        }
        f
    }
    fn h(&self) -> Server {
        self.rt.handle()
    }
    fn repo(&self) -> String {
        self.repo.display().to_string()
    }

    /// A worktree agent on a new branch `branch` running `script`.
    async fn worktree_agent(&self, branch: &str, script: &str, auto_archive: bool) -> Wt {
        let mut c = shell(
            WorkspaceTarget::worktree(Some(self.repo()), WorktreeTarget::branch_off(branch, None)),
            script,
        );
        c.auto_archive = auto_archive;
        c.title = Some(branch.into());
        let a = self.h().create(c).await.unwrap();
        Wt {
            id: a.id(),
            path: PathBuf::from(&a.record.cwd),
        }
    }

    /// `n` siblings: the first runs for the whole test, the others made a commit and are idle.
    async fn siblings(&self, n: usize) -> Vec<Wt> {
        let mut out = Vec::new();
        for i in 0..n {
            let script = if i == 0 {
                "touch started; sleep 120".to_string()
            } else {
                format!("echo {i} > s{i}.txt && git add s{i}.txt && {COMMIT} s{i}")
            };
            let w = self
                .worktree_agent(&format!("sib-{i}"), &script, false)
                .await;
            if i == 0 {
                until(|| w.path.join("started").exists(), "the running sibling").await;
            } else {
                let s = self.h().wait(w.id, T).await.unwrap().agent.status;
                assert_eq!(s, Status::Idle, "sibling {i}");
            }
            out.push(w);
        }
        out
    }

    fn listed(&self) -> String {
        git(&self.repo, &["worktree", "list", "--porcelain"])
    }

    /// Every sibling is still a worktree git lists and works in, its agent as it was: the
    /// first still running, the others able to commit again and to show their changes.
    async fn siblings_work(&self, siblings: &[Wt], case: &str) {
        let h = self.h();
        let listed = self.listed();
        for (i, w) in siblings.iter().enumerate() {
            let p = w.path.display().to_string();
            assert!(
                listed.contains(&format!("worktree {p}\n")),
                "{case}: git forgot sibling {i} ({p}):\n{listed}"
            );
            assert!(
                !listed.contains("prunable"),
                "{case}: git sees a sibling as gone:\n{listed}"
            );
            // The user's own git there.
            git(&w.path, &["status", "--porcelain"]);
            assert_eq!(
                git(&w.path, &["rev-parse", "--abbrev-ref", "HEAD"]),
                format!("sib-{i}"),
                "{case}"
            );
            let snap = h.get(w.id).await.unwrap();
            assert!(snap.record.archived_at.is_none(), "{case}: sibling {i}");
            if i == 0 {
                assert_eq!(snap.status, Status::Running, "{case}: sibling {i}");
                continue;
            }
            // Its agent commits again, and its Changes read.
            let n = format!("{case}-{i}").replace(|c: char| !c.is_ascii_alphanumeric(), "-");
            h.prompt(
                Caller::User,
                w.id,
                format!("echo again > {n}.txt && git add {n}.txt && {COMMIT} {n}"),
                Some(true),
                None,
            )
            .await
            .unwrap();
            let s = h.wait(w.id, T).await.unwrap().agent;
            assert_eq!(
                s.status,
                Status::Idle,
                "{case}: sibling {i}: {:?}",
                s.record.last_error
            );
            assert_eq!(
                git(
                    &self.repo,
                    &["log", "-1", "--format=%s", &format!("sib-{i}")]
                ),
                n,
                "{case}"
            );
            h.agent_changes(w.id).await.unwrap_or_else(|e| {
                panic!("{case}: sibling {i}'s Changes: {e}");
            });
        }
        if let Some(m) = self.main_agent {
            let s = h.get(m).await.unwrap();
            assert!(
                s.record.archived_at.is_none(),
                "{case}: the main checkout's agent"
            );
        }
    }
}

fn shell(ws: WorkspaceTarget, prompt: &str) -> CreateAgent {
    let mut c = CreateAgent::new("shell", ws);
    c.initial_prompt = Some(prompt.into());
    c
}

async fn until(mut done: impl FnMut() -> bool, what: &str) {
    let deadline = tokio::time::Instant::now() + T;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}: timed out");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Until the worktree's folder is gone and git no longer lists it.
async fn until_removed(f: &Fx, w: &Wt) {
    let p = format!("worktree {}\n", w.path.display());
    until(
        || !w.path.exists() && !f.listed().contains(&p),
        "the worktree's removal",
    )
    .await;
}

/// The way a worktree goes, on `x` (made by the caller as the way needs).
#[derive(Clone, Copy, Debug)]
enum Way {
    AutoArchive,
    Archive,
    Remove,
    Discard,
    MergeThenRemove,
    Restore,
}

async fn case(way: Way, siblings: usize, main_agent: bool) {
    let f = Fx::new(main_agent).await;
    let h = f.h();
    let sibs = f.siblings(siblings).await;
    let name = format!("{way:?} with {siblings} siblings, main agent {main_agent}");
    match way {
        Way::AutoArchive => {
            let x = f
                .worktree_agent("x", "echo x > x.txt && echo left > left.txt", true)
                .await;
            until_removed(&f, &x).await;
            assert!(h.get(x.id).await.unwrap().record.archived_at.is_some());
        }
        Way::Archive => {
            let x = f.worktree_agent("x", "echo x > x.txt", false).await;
            h.wait(x.id, T).await.unwrap();
            h.archive(Caller::User, x.id).await.unwrap();
        }
        Way::Remove => {
            let x = f.worktree_agent("x", "echo x > x.txt", false).await;
            h.wait(x.id, T).await.unwrap();
            let ws = h.get(x.id).await.unwrap().record.workspace_id.unwrap();
            h.archive_workspace(ws, true).await.unwrap();
            until_removed(&f, &x).await;
        }
        Way::Discard => {
            let x = f
                .worktree_agent("x", "echo x > x.txt && echo more >> README", false)
                .await;
            h.wait(x.id, T).await.unwrap();
            let d = h.discard_agent_changes(x.id).await.unwrap();
            assert!(d.is_some(), "{name}: nothing discarded");
            assert!(!x.path.join("x.txt").exists());
        }
        Way::MergeThenRemove => {
            let x = f
                .worktree_agent(
                    "x",
                    &format!("echo x > x.txt && git add x.txt && {COMMIT} x"),
                    false,
                )
                .await;
            assert_eq!(h.wait(x.id, T).await.unwrap().agent.status, Status::Idle);
            // Merged into `main` where it is checked out (the main checkout) or, with the main
            // checkout on another branch, through a checkout made for the merge.
            if !main_agent {
                git(&f.repo, &["checkout", "-q", "-b", "elsewhere"]);
            }
            h.merge_agent_changes(x.id).await.unwrap();
            assert!(git(&f.repo, &["ls-tree", "--name-only", "main"]).contains("x.txt"));
            let ws = h.get(x.id).await.unwrap().record.workspace_id.unwrap();
            h.archive_workspace(ws, true).await.unwrap();
            until_removed(&f, &x).await;
        }
        Way::Restore => {
            let x = f.worktree_agent("x", "echo x > x.txt", false).await;
            h.wait(x.id, T).await.unwrap();
            let ws = h.get(x.id).await.unwrap().record.workspace_id.unwrap();
            h.archive_workspace(ws, true).await.unwrap();
            until_removed(&f, &x).await;
            h.restore(x.id, false).await.unwrap();
            assert!(
                x.path.join("x.txt").exists(),
                "{name}: restored without its work"
            );
            assert!(f
                .listed()
                .contains(&format!("worktree {}\n", x.path.display())));
            git(&x.path, &["status", "--porcelain"]);
        }
    }
    f.siblings_work(&sibs, &name).await;
    f.rt.shutdown().await;
}

#[tokio::test]
async fn auto_archive_leaves_siblings_working() {
    case(Way::AutoArchive, 1, false).await;
    case(Way::AutoArchive, 2, false).await;
    case(Way::AutoArchive, 2, true).await;
}

#[tokio::test]
async fn archive_leaves_siblings_working() {
    case(Way::Archive, 2, false).await;
    case(Way::Archive, 2, true).await;
}

#[tokio::test]
async fn remove_leaves_siblings_working() {
    case(Way::Remove, 1, false).await;
    case(Way::Remove, 2, false).await;
    case(Way::Remove, 2, true).await;
}

#[tokio::test]
async fn discard_leaves_siblings_working() {
    case(Way::Discard, 2, false).await;
    case(Way::Discard, 2, true).await;
}

#[tokio::test]
async fn merge_then_remove_leaves_siblings_working() {
    case(Way::MergeThenRemove, 2, false).await;
    case(Way::MergeThenRemove, 2, true).await;
}

#[tokio::test]
async fn restore_leaves_siblings_working() {
    case(Way::Restore, 2, false).await;
    case(Way::Restore, 2, true).await;
}

/// A worktree git forgets is only the one removed, even when another's folder is out of the
/// app's sight: a sibling made by the user's own git in a folder the box hides.
#[tokio::test]
async fn a_sibling_in_a_hidden_folder_is_not_forgotten() {
    let f = Fx::new(false).await;
    let hidden = f.repo.parent().unwrap().join("home").join("user-worktree");
    git(
        &f.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "mine",
            hidden.to_str().unwrap(),
        ],
    );
    let x = f.worktree_agent("x", "echo x > x.txt", true).await;
    until_removed(&f, &x).await;
    assert!(
        f.listed()
            .contains(&format!("worktree {}\n", hidden.display())),
        "{}",
        f.listed()
    );
    git(&hidden, &["status", "--porcelain"]);
    f.rt.shutdown().await;
}

/// The app's own git sees the repository's worktrees in the data root as they are (a prune
/// there, or the one `git gc` runs after a commit, must not take them for gone), and still
/// nothing else of the data root.
#[tokio::test]
async fn the_apps_git_sees_the_repositorys_worktrees_and_nothing_else_of_the_data_root() {
    use paseo_core::workspaces::gitcli::Cmd;
    let f = Fx::new(false).await;
    let sibs = f.siblings(2).await;
    let boxed = Cmd::git(&f.repo)
        .args(["worktree", "list", "--porcelain"])
        .run()
        .unwrap();
    for w in &sibs {
        assert!(boxed.contains(&format!("worktree {}\n", w.path.display())));
    }
    assert!(!boxed.contains("prunable"), "{boxed}");
    // The data root's secrets stay out of sight of the same box.
    let home = f.repo.parent().unwrap().join("home");
    let token = home.join("mcp-token");
    std::fs::write(&token, "secret").unwrap();
    let peek = Cmd::program("cat", &f.repo).arg(&token).output().unwrap();
    assert!(peek.success, "cat runs unboxed here: only git is boxed");
    let boxed_cat = |file: &std::path::Path| {
        let o = Cmd::git(&f.repo)
            .args(["-c", "alias.peek=!cat"])
            .arg("peek")
            .arg(file)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(boxed_cat(&f.repo.join("README")), "hello\n");
    assert_eq!(
        boxed_cat(&token),
        "",
        "the app's git box read the user token"
    );
    f.rt.shutdown().await;
}
