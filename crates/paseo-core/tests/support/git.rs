//! Git for the tests' own setup and checks: runs `git -C dir`, fails the test on error, and
//! commits as a fixed test identity unless the repository's config names one.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::providers::shell::ShellProvider;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::RuntimeOptions;
use paseo_core::server::Runtime;

/// Standard output of a git command that must succeed.
pub fn git_raw(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The same, as trimmed text.
pub fn git(dir: &Path, args: &[&str]) -> String {
    String::from_utf8_lossy(&git_raw(dir, args))
        .trim()
        .to_string()
}

/// A repository at `repo` on branch `main` with one commit of `README` ("hello").
pub fn init_repo(repo: &Path) {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "first"]);
}

/// A runtime on the data root `home` with only the built-in shell provider (`shell`).
pub async fn shell_runtime(home: &Path) -> Runtime {
    shell_runtime_with(home, |_| {}).await
}

/// [`shell_runtime`] with its options changed by `change` (limits, budgets…).
pub async fn shell_runtime_with(home: &Path, change: impl FnOnce(&mut RuntimeOptions)) -> Runtime {
    let mut reg = ProviderRegistry::new();
    reg.insert(
        "shell",
        Arc::new(ShellProvider::new(
            "shell",
            ProviderConfig::new(ProviderKind::Shell),
        )),
    );
    let mut opts = RuntimeOptions::new(home, reg);
    change(&mut opts);
    Runtime::start(opts, None).await.unwrap()
}
