use super::*;

#[test]
fn timeouts_stop_the_whole_group_and_output_is_bounded() {
    let d = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let e = Cmd::program("sh", d.path())
        .args(["-c", "sleep 30 & sleep 30"])
        .timeout(Duration::from_millis(200))
        .output()
        .unwrap_err();
    assert!(matches!(e, GitError::Timeout { .. }), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10));
    let e = Cmd::program("sh", d.path())
        .args(["-c", "yes"])
        .max_output(1 << 20)
        .output()
        .unwrap_err();
    assert!(matches!(e, GitError::TooLarge { .. }), "{e}");
    let e = Cmd::program("/nonexistent/paseo-gh", d.path())
        .output()
        .unwrap_err();
    assert_eq!(e.to_string(), "paseo-gh is not installed (or not on PATH)");
    let o = Cmd::program("sh", d.path())
        .args(["-c", "cat; echo oops >&2; exit 3"])
        .stdin("in")
        .output()
        .unwrap();
    assert!(!o.success);
    assert_eq!(o.text(), "in");
    assert_eq!(o.message(), "oops");
}

#[test]
fn command_names_read_well() {
    let c = Cmd::git(Path::new("/")).args(["worktree", "remove", "/x"]);
    assert_eq!(c.command_name(), "worktree remove");
    let c = Cmd::git(Path::new("/"))
        .config("a.b=c")
        .args(["commit", "--quiet"]);
    assert_eq!(c.command_name(), "commit");
    assert_eq!(c.argv()[..4], ["git", "-C", "/", "-c"]);
}
