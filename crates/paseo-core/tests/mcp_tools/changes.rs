//! `get_agent_changes`: a lead agent reviews what a subagent changed in its worktree
//! before merging it: files with counts as git counts them, one file's diff in pages, and clear
//! errors for paths that did not change.

use super::*;
use crate::support::Door;

#[tokio::test]
async fn a_lead_reads_its_subagents_changes_and_diffs() {
    let h = Harness::start().await;
    let r = repo(&h);
    std::fs::write(r.join("keep.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(r.join("gone.txt"), "bye\n").unwrap();
    std::fs::write(r.join("old-name.txt"), "same content here\nline two\n").unwrap();
    git(&r, &["add", "-A"]);
    git(&r, &["commit", "-q", "-m", "files"]);
    let lead = h.root("ok lead").await;
    let c = h.as_agent(lead.id()).await;
    let out = ok(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok working",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "worktree", "repo": r.display().to_string(),
                   "target": {"kind": "branch-off", "newBranch": "feat/x"}}}}),
    )
    .await;
    let kid = id_of(&out);
    h.idle(kid).await;
    let wt = std::path::PathBuf::from(out["cwd"].as_str().unwrap());
    // What the subagent did: an edit, a new file, a deletion, a rename, and a commit of part.
    std::fs::write(wt.join("keep.txt"), "one\nTWO\nthree\nfour\n").unwrap();
    git(&wt, &["commit", "-q", "-am", "edit keep"]);
    std::fs::write(wt.join("new.txt"), "a\nb\n").unwrap();
    std::fs::remove_file(wt.join("gone.txt")).unwrap();
    std::fs::rename(wt.join("old-name.txt"), wt.join("new-name.txt")).unwrap();

    let v = ok(&c, "get_agent_changes", json!({"agentId": kid.to_string()})).await;
    assert_eq!(v["baseBranch"], "main");
    assert_eq!(v["workspaceKind"], "worktree");
    let files: Vec<(String, String, Value, Value)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
                f["additions"].clone(),
                f["deletions"].clone(),
            )
        })
        .collect();
    let expect = [
        ("gone.txt", "D", json!(0), json!(1)),
        ("keep.txt", "M", json!(2), json!(1)),
        ("new-name.txt", "R", json!(0), json!(0)),
        ("new.txt", "A", json!(2), json!(0)),
    ];
    for (path, status, add, del) in expect {
        assert!(
            files.contains(&(path.into(), status.into(), add.clone(), del.clone())),
            "{path} {status} +{add} -{del} in {files:?}"
        );
    }
    assert_eq!(v["totals"]["files"], 4);
    assert_eq!(v["totals"]["additions"], 4);
    assert_eq!(v["totals"]["deletions"], 2);

    // One file's diff, in pages.
    let d = ok(
        &c,
        "get_agent_changes",
        json!({"agentId": kid.to_string(), "path": "keep.txt", "limit": 2}),
    )
    .await;
    let diff = &d["diff"];
    assert_eq!(diff["totalLines"], 5, "{diff}");
    assert_eq!(diff["nextOffset"], 2);
    let lines = &diff["hunks"][0]["lines"];
    assert_eq!(lines.as_array().unwrap().len(), 2);

    // Paths that did not change, and pages without a path, are refused by name.
    let e = err(
        &c,
        "get_agent_changes",
        json!({"agentId": kid.to_string(), "path": "../../etc/passwd"}),
    )
    .await;
    assert!(e.contains("not one of the changed files"), "{e}");
    let e = err(
        &c,
        "get_agent_changes",
        json!({"agentId": kid.to_string(), "offset": 3}),
    )
    .await;
    assert!(e.starts_with("offset:"), "{e}");
    h.stop().await;
}

/// A subagent in its own worktree off `r`, idle; its client and the worktree.
async fn kid_in_worktree(h: &Harness, branch: &str) -> (Client, AgentId, std::path::PathBuf) {
    let r = repo(h);
    let lead = h.root("ok lead").await;
    let c = h.as_agent(lead.id()).await;
    let out = ok(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok working",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "worktree", "repo": r.display().to_string(),
                   "target": {"kind": "branch-off", "newBranch": branch}}}}),
    )
    .await;
    let kid = id_of(&out);
    h.idle(kid).await;
    let wt = std::path::PathBuf::from(out["cwd"].as_str().unwrap());
    (c, kid, wt)
}

/// The git processes running with `-C <dir>` right now.
fn gits_in(dir: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
                return false;
            };
            let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
            args.first().is_some_and(|a| a.ends_with(b"git"))
                && args
                    .windows(2)
                    .any(|w| w[0] == b"-C" && w[1] == dir.as_bytes())
        })
        .count()
}

/// SPEC 8 reads for anyone, bounded: many concurrent `get_agent_changes` calls run git at most
/// `CHANGES_CONCURRENCY` at a time; the rest wait their turn (or, past `CHANGES_WAIT`, are
/// refused as busy).
#[tokio::test]
async fn concurrent_reads_of_changes_run_git_a_few_at_a_time() {
    use paseo_core::runtime::CHANGES_CONCURRENCY;
    let h = Harness::start().await;
    let (c, kid, wt) = kid_in_worktree(&h, "feat/many").await;
    // Enough untracked files that each read takes a while (git adds them to a staged index).
    for i in 0..1_000 {
        std::fs::write(wt.join(format!("f{i}.txt")), format!("line {i}\n")).unwrap();
    }
    let dir = wt.display().to_string();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (stop, dir) = (stop.clone(), dir.clone());
        std::thread::spawn(move || {
            let mut most = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                most = most.max(gits_in(&dir));
                std::thread::sleep(Duration::from_millis(2));
            }
            most
        })
    };
    let calls = (0..24).map(|_| {
        let c = &c;
        async move { call(c, "get_agent_changes", json!({"agentId": kid.to_string()})).await }
    });
    let results = futures::future::join_all(calls).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let most = sampler.join().unwrap();
    // On a loaded machine the last ones may wait longer than a read waits: they are refused
    // as busy, by name, never run alongside.
    let mut answered = 0;
    for r in &results {
        if r.is_error == Some(true) {
            let e = text(r);
            assert!(e.contains("busy: 4 reads of changes were running"), "{e}");
        } else {
            assert_eq!(
                r.structured_content.as_ref().unwrap()["totals"]["files"],
                1_000
            );
            answered += 1;
        }
    }
    assert!(answered >= CHANGES_CONCURRENCY, "{answered} answered");
    assert!(most >= 1, "the sampler saw git run");
    assert!(
        most <= CHANGES_CONCURRENCY,
        "{most} git processes ran at once in {dir}; the bound is {CHANGES_CONCURRENCY}"
    );
    h.stop().await;
}

/// A diff larger than one read may return is refused with the cap named (docs/mcp.md), and the
/// file list still answers.
#[tokio::test]
async fn a_diff_larger_than_a_read_may_return_is_refused_naming_the_cap() {
    let h = Harness::start().await;
    let (c, kid, wt) = kid_in_worktree(&h, "feat/big").await;
    let line = "x".repeat(99) + "\n";
    std::fs::write(wt.join("big.txt"), line.repeat(90_000)).unwrap();
    let v = ok(&c, "get_agent_changes", json!({"agentId": kid.to_string()})).await;
    assert_eq!(v["totals"]["files"], 1);
    let r = call(
        &c,
        "get_agent_changes",
        json!({"agentId": kid.to_string(), "path": "big.txt"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    let e = text(&r);
    assert!(
        e.contains("the diff of big.txt is larger than 8 MiB"),
        "{e}"
    );
    h.stop().await;
}

/// "Open in editor" never hands an agent's file to a generic opener: without `$VISUAL` it says
/// how to set one.
#[tokio::test]
async fn open_in_editor_without_visual_asks_for_it_and_opens_nothing() {
    if std::env::var_os("VISUAL").is_some() {
        // Only this test in this binary reads it.
        std::env::remove_var("VISUAL");
    }
    let h = Harness::start().await;
    let (_c, kid, wt) = kid_in_worktree(&h, "feat/open").await;
    std::fs::write(
        wt.join("run.desktop"),
        "[Desktop Entry]\nExec=touch pwned\n",
    )
    .unwrap();
    let e = h
        .h()
        .open_in_editor(kid, Some("run.desktop".into()))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("set $VISUAL to your editor"), "{e}");
    let e = h
        .h()
        .open_in_editor(kid, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("set $VISUAL"), "{e}");
    h.stop().await;
}
