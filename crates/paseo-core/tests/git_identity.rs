//! A repository whose user has no git identity: the snapshot before a worktree is removed is
//! authored by Paseo (SPEC 15). Its own test binary: it hides the machine's global and system
//! git config from the whole process.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use paseo_core::runtime::{CreateAgent, WorkspaceTarget};
use paseo_core::workspaces::worktree::WorktreeTarget;

mod support;
use support::git::{git, init_repo, shell_runtime};
use support::Door;

#[tokio::test]
async fn without_a_git_identity_the_snapshot_is_authored_by_paseo() {
    // The only test in this binary, so the environment changes affect nothing else.
    unsafe {
        std::env::set_var("GIT_CONFIG_GLOBAL", "/dev/null");
        std::env::set_var("GIT_CONFIG_NOSYSTEM", "1");
        for v in ["NAME", "EMAIL"] {
            std::env::remove_var(format!("GIT_AUTHOR_{v}"));
            std::env::remove_var(format!("GIT_COMMITTER_{v}"));
        }
        std::env::remove_var("EMAIL");
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let repo = root.join("app");
    init_repo(&repo);
    // Git itself finds no identity here.
    let who = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["-c", "user.useConfigOnly=true", "var", "GIT_AUTHOR_IDENT"])
        .output()
        .unwrap();
    assert!(!who.status.success());

    let rt = shell_runtime(&root.join("home")).await;
    let h = rt.handle();
    let mut c = CreateAgent::new(
        "shell",
        WorkspaceTarget::worktree(
            Some(repo.display().to_string()),
            WorktreeTarget::branch_off("anon", None),
        ),
    );
    c.initial_prompt = Some("echo notes > notes.txt".into());
    c.title = Some("Anonymous".into());
    c.auto_archive = true;
    let a = h.create(c).await.unwrap();
    let path = PathBuf::from(&a.record.cwd);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while path.exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "worktree not removed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        git(&repo, &["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", "anon"]),
        "Paseo <paseo@localhost>|Paseo <paseo@localhost>|Paseo: work left in anon when Anonymous was archived"
    );
    assert_eq!(
        git(&repo, &["show", "--format=", "--name-only", "anon"]),
        "notes.txt"
    );
    rt.shutdown().await;
}
