//! The Changes view in the real webview: a shell agent edits, adds and deletes files
//! in a git checkout, and the view lists them with the counts `git diff --numstat` gives; a file
//! shows its diff; Commit all, Discard (kept in a snapshot ref first) and, for a subagent in its
//! own worktree, Merge into the base, each after a native confirm, checked in git.

use crate::common::{tid, Answer, App, Harness};

use crate::helpers::*;
use std::path::Path;
use std::process::Command;

/// `git diff --numstat` of everything in the working tree against HEAD (untracked files
/// included, through a copy of the index so the checkout is untouched): path → (+, −).
fn numstat(dir: &Path) -> Vec<(String, String, String)> {
    let index = tempfile::NamedTempFile::new().unwrap();
    std::fs::copy(dir.join(".git/index"), index.path()).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .env("GIT_INDEX_FILE", index.path())
            .current_dir(dir)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["add", "-A"]);
    let mut rows: Vec<(String, String, String)> = run(&["diff", "--cached", "--numstat", "HEAD"])
        .lines()
        .map(|l| {
            let mut p = l.split('\t');
            let (a, d, f) = (p.next().unwrap(), p.next().unwrap(), p.next().unwrap());
            (f.to_string(), a.to_string(), d.to_string())
        })
        .collect();
    rows.sort();
    rows
}

/// The rows of the view: (path, +, −), sorted.
async fn shown(app: &App) -> Vec<(String, String, String)> {
    let v = app
        .execute(
            "return [...document.querySelectorAll('[data-testid=\"changes-file\"]')].map(li => \
             [li.dataset.path, li.querySelector('.add')?.textContent ?? '', li.querySelector('.del')?.textContent ?? '']);",
            vec![],
        )
        .await;
    let mut rows: Vec<(String, String, String)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().trim_start_matches('+').to_string(),
                r[2].as_str().unwrap().trim_start_matches('−').to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[tokio::test]
async fn review_commit_discard_and_merge_from_the_changes_view() {
    // The user's editor: a script that notes what it was asked to open.
    let tools = tempfile::tempdir().unwrap();
    let opened = tools.path().join("opened");
    let editor = tools.path().join("editor");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{}'\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let h = Harness::builder("changes_view")
        .env("VISUAL", &format!("{} --new-window", editor.display()))
        .build();
    let app = h.launch_ready(&[]).await;
    let repo = h.work_dir("repo");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("keep.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(repo.join("gone.txt"), "bye\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "start"]);

    // An agent edits, adds and deletes in the checkout.
    let editor = app
        .create_shell(
            &repo,
            "editor",
            "printf 'one\\nTWO\\nthree\\nfour\\n' > keep.txt && printf 'a\\nb\\n' > new.txt && rm gone.txt && echo edited",
        )
        .await;
    let editor_id = id(&editor);
    open_root(&app, &editor).await;
    let pane = sel_pane(&editor_id);
    app.wait_for_attr(&pane, "data-status", "idle").await;
    // Counted when its turn ended: shown in the workspace home.
    app.click(&tid("tab-home")).await;
    app.wait_for_text(
        &format!(
            "[data-testid=\"workspace-agent\"][data-agent-id=\"{editor_id}\"] {}",
            tid("workspace-agent-changes")
        ),
        |t| t == "3 files +4 −2",
    )
    .await;
    open_root(&app, &editor).await;
    app.click(&tid("changes-toggle")).await;
    app.wait_count(&tid("changes-file"), 3).await;
    let want = numstat(&repo);
    assert_eq!(want.len(), 3, "{want:?}");
    assert_eq!(shown(&app).await, want, "the view counts as git does");
    app.wait_for_text(&tid("changes-summary"), |t| t.contains("3 files · +4 −2"))
        .await;
    // A shared folder: the view says the list is the folder's, not this agent's alone.
    app.wait_for_text(&tid("changes-scope"), |t| {
        t == "Changes in this folder since HEAD (branch main), whoever made them"
    })
    .await;
    // A file's diff: added and removed lines marked.
    app.click("[data-testid=\"changes-file\"][data-path=\"keep.txt\"]")
        .await;
    app.wait_for_text(&tid("changes-diff"), |t| {
        t.contains("TWO") && t.contains("four")
    })
    .await;
    let kinds = app
        .execute(
            "return [...document.querySelectorAll('[data-testid=\"changes-diff\"] .diff-line')].map(l => l.className + ':' + l.querySelector('.text').textContent);",
            vec![],
        )
        .await;
    let kinds: Vec<&str> = kinds
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"diff-line remove:two"), "{kinds:?}");
    assert!(kinds.contains(&"diff-line add:TWO"), "{kinds:?}");
    assert!(kinds.contains(&"diff-line context:one"), "{kinds:?}");
    app.screenshot("changes").await;
    // Open in editor: the selected file, with the user's $VISUAL.
    app.click(&tid("changes-open")).await;
    app.wait_for_text(&tid("changes-result"), |t| t.contains("Opened keep.txt"))
        .await;
    let seen = crate::common::poll("the editor to run", crate::common::TIMEOUT, || async {
        std::fs::read_to_string(&opened).ok()
    })
    .await;
    assert_eq!(
        seen,
        format!("--new-window\n{}\n", repo.join("keep.txt").display())
    );

    // Commit all: the message is prefilled from the agent's title and can be edited; asked
    // first, then on the branch, and the view is empty.
    let prefilled = app.prop(&tid("changes-message"), "value").await;
    assert!(
        prefilled.as_str().unwrap().starts_with("editor"),
        "{prefilled}"
    );
    app.execute(
        "const m = document.querySelector('[data-testid=\"changes-message\"]'); m.value = 'editor: keep, new, gone'; return null;",
        vec![],
    )
    .await;
    app.click(&tid("changes-commit")).await;
    // The confirm names the branch the commit lands on (its title), and its button is the
    // verb: Alt+O is the mnemonic of "C_ommit".
    h.wait_for_window("Commit to main?").await;
    h.screenshot_screen("commit-dialog");
    h.answer_dialog("Commit to main?", Answer::Keys("alt+o"))
        .await;
    app.wait_for_text(&tid("changes-result"), |t| t.contains("Committed"))
        .await;
    app.wait_for_text(&tid("changes-summary"), |t| t.contains("No changes"))
        .await;
    assert_eq!(
        git(&repo, &["log", "-1", "--format=%s"]).trim(),
        "editor: keep, new, gone"
    );
    assert!(numstat(&repo).is_empty());

    // Discard: Cancel keeps everything; OK keeps a snapshot ref, then cleans.
    std::fs::write(repo.join("scratch.txt"), "draft\n").unwrap();
    app.click(&tid("changes-refresh")).await;
    app.wait_count(&tid("changes-file"), 1).await;
    app.click(&tid("changes-discard")).await;
    h.answer_dialog("Discard the changes?", Answer::Cancel)
        .await;
    assert!(repo.join("scratch.txt").exists(), "cancel discards nothing");
    app.click(&tid("changes-discard")).await;
    h.answer_dialog("Discard the changes?", Answer::Ok).await;
    app.wait_for_text(&tid("changes-result"), |t| {
        t.contains("refs/paseo/discarded/")
    })
    .await;
    assert!(!repo.join("scratch.txt").exists());
    let kept = git(
        &repo,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/paseo/discarded/",
        ],
    );
    let kept = kept.trim();
    assert!(!kept.is_empty());
    assert_eq!(
        git(&repo, &["show", &format!("{kept}:scratch.txt")]),
        "draft\n"
    );

    // A subagent in its own worktree: its branch merges into main.
    let kid = Kid {
        worktree: Some((repo.clone(), "feat/kid".into())),
        ..kid("kid", "echo kid-work > kid.txt && git add kid.txt && git -c user.name=K -c user.email=k@example.com commit -qm 'kid work' && echo done")
    };
    let fam = family(&app, &repo, &[kid], "echo started").await;
    let kid_id = fam.kid("kid");
    open_root(&app, &fam.lead).await;
    app.wait_for_attr(&sel_row(&kid_id), "data-status", "idle")
        .await;
    // The track shows what the subagent changed (a commit on its branch).
    app.wait_for_text(
        &format!("{} {}", sel_row(&kid_id), tid("track-changes")),
        |t| t == "1 file +1 −0",
    )
    .await;
    app.click(&format!("{} {}", sel_row(&kid_id), tid("track-open")))
        .await;
    app.wait_for(&sel_pane(&kid_id)).await;
    // Changes is chosen per agent: the subagent opens on its timeline until asked.
    app.click(&format!("{} {}", sel_pane(&kid_id), tid("changes-toggle")))
        .await;
    app.wait_count(&tid("changes-file"), 1).await;
    app.wait_for_text(&tid("changes-merge"), |t| t.contains("Merge into main"))
        .await;
    app.wait_for_text(&tid("changes-scope"), |t| {
        t == "Changes in this agent's own worktree (branch feat/kid) since it branched from main"
    })
    .await;
    // No gh on this machine: Create pull request says why it is unavailable.
    app.wait_for_attr(
        &tid("changes-pr"),
        "data-unavailable",
        "the GitHub CLI (gh) is not installed",
    )
    .await;
    assert_eq!(
        app.prop(&tid("changes-pr"), "disabled").await,
        serde_json::json!(true)
    );
    app.click(&tid("changes-merge")).await;
    h.answer_dialog("Merge into main?", Answer::Ok).await;
    app.wait_for_text(&tid("changes-result"), |t| t.contains("main"))
        .await;
    assert_eq!(
        std::fs::read_to_string(repo.join("kid.txt")).unwrap(),
        "kid-work\n"
    );
    assert!(git(&repo, &["log", "-1", "--format=%s", "main"]).contains("kid work"));
}
