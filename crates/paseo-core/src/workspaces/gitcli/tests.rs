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

#[test]
fn the_guards_read_follows_every_change_of_the_repositorys_config() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().canonicalize().unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    let names = |o: Vec<(String, String)>| o.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
    assert_eq!(
        names(guard::overrides(&repo, false)),
        ["core.hooksPath", "core.fsmonitor"]
    );
    // Planted after a read: the next command sees it, whatever was read before.
    git(&["config", "filter.x=y.clean", "touch planted"]);
    let now = names(guard::overrides(&repo, false));
    assert!(now.contains(&"filter.x=y.clean".to_string()), "{now:?}");
    assert!(now.contains(&"filter.x=y.required".to_string()), "{now:?}");
    // And through an include, which is never taken from the last read.
    std::fs::write(
        repo.join("extra.cfg"),
        "[diff \"d\"]\n\ttextconv = touch planted\n",
    )
    .unwrap();
    git(&["config", "include.path", "../extra.cfg"]);
    let now = names(guard::overrides(&repo, false));
    assert!(now.contains(&"diff.d.textconv".to_string()), "{now:?}");
    std::fs::write(
        repo.join("extra.cfg"),
        "[merge \"m\"]\n\tdriver = touch planted\n",
    )
    .unwrap();
    let now = names(guard::overrides(&repo, false));
    assert!(now.contains(&"merge.m.driver".to_string()), "{now:?}");
}
