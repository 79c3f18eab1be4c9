//! `get_agent_changes` (issue 15): a lead agent reviews what a subagent changed in its worktree
//! before merging it: files with counts as git counts them, one file's diff in pages, and clear
//! errors for paths that did not change.

use super::*;

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
