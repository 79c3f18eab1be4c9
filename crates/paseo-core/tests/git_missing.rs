//! Without git on PATH, worktree creation says so (its own test binary: it empties PATH).

use paseo_core::store::Layout;
use paseo_core::workspaces::worktree::{self, WorktreeTarget};
use paseo_core::workspaces::WorkspaceError;

#[test]
fn worktree_creation_reports_missing_git() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty-bin");
    std::fs::create_dir(&empty).unwrap();
    // The only test in this binary, so changing PATH affects nothing else.
    unsafe { std::env::set_var("PATH", &empty) };
    let target = WorktreeTarget::branch_off("x", None);
    let e = worktree::create(
        &Layout::new(dir.path()),
        "workspace.source",
        dir.path().to_str().unwrap(),
        &target,
    )
    .unwrap_err();
    assert_eq!(e, WorkspaceError::GitMissing);
    assert_eq!(e.to_string(), "git is not installed (or not on PATH)");
}
