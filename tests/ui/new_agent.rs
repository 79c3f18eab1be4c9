//! The new-agent form and the composer: unavailable providers shown disabled with the reason, a
//! missing directory refused, a filled-in form starting a shell agent, and Send enabled only with
//! a prompt; "New worktree…": every `create_worktree` refusal shown at its field with nothing
//! changed, then an agent in a new worktree that autoArchive removes, keeping the branch.

use crate::common::{poll, tid, App, Harness, TIMEOUT};
use crate::helpers::*;
use serde_json::json;
use std::path::Path;

#[tokio::test]
async fn the_new_agent_form_shows_unavailable_providers_disabled_and_creates_an_agent() {
    let h = Harness::new("new_agent_form");
    std::fs::write(
        h.home().join("config.json"),
        r#"{"providers": {"ghost": {"kind": "command", "command": ["no-such-binary-xyz"]}}}"#,
    )
    .unwrap();
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("fresh");

    // First launch: the welcome pane offers both ways in.
    app.wait_for(&tid("welcome")).await;
    assert!(app.is_shown(&tid("welcome-add-workspace")).await);
    app.screenshot("welcome").await;
    app.click(&tid("welcome-new-agent")).await;
    app.wait_for(&tid("new-agent-form")).await;

    // The unavailable provider is there, disabled, with its reason; the shell is available.
    let ghost = "[data-testid=\"provider-option\"][data-provider=\"ghost\"]";
    app.wait_for_attr(ghost, "data-available", "false").await;
    let disabled = app.prop(&format!("{ghost} input"), "disabled").await;
    assert_eq!(disabled, json!(true));
    let reason = app
        .wait_for_text(&format!("{ghost} {}", tid("provider-reason")), |t| {
            !t.is_empty()
        })
        .await;
    assert!(reason.contains("no-such-binary-xyz"), "{reason}");
    let shell = "[data-testid=\"provider-option\"][data-provider=\"shell\"]";
    app.wait_for_attr(shell, "data-available", "true").await;
    app.screenshot("new-agent-form").await;

    // A missing directory is refused with a clear message, and nothing is created.
    app.click(&format!("{shell} input")).await;
    app.click(&tid("new-agent-submit")).await;
    app.wait_for_text(&tid("new-agent-error"), |t| t.contains("directory"))
        .await;
    assert_eq!(app.fleet_snapshot().await["agents"], json!([]));

    // Filled in: the agent starts, its tab opens, its first prompt runs, the workspace appears.
    app.type_into(&tid("new-agent-directory"), &dir.display().to_string())
        .await;
    app.type_into(&tid("new-agent-title"), "hello").await;
    app.type_into(&tid("new-agent-prompt"), "echo hi from paseo")
        .await;
    app.click(&tid("new-agent-submit")).await;
    app.wait_for(&tid("agent-pane")).await;
    app.wait_for_text(&tid("timeline"), |t| t.contains("hi from paseo"))
        .await;
    let created = app.fleet_snapshot().await["agents"][0].clone();
    assert_eq!(created["title"], json!("hello"));
    assert_eq!(created["provider"], json!("shell"));
    assert_eq!(created["cwd"], json!(dir.display().to_string()));
    app.wait_for(&sel_tab(&id(&created))).await;
    app.wait_for(&sel_ws(ws_id(&created))).await;
    app.wait_for_attr(&sel_pane(&id(&created)), "data-status", "idle")
        .await;

    // The composer: Send is disabled while empty; a prompt runs and shows in the timeline.
    let send = tid("composer-send");
    assert_eq!(app.prop(&send, "disabled").await, json!(true));
    app.type_into(&tid("composer-input"), "echo second turn")
        .await;
    assert_eq!(app.prop(&send, "disabled").await, json!(false));
    app.click(&tid("composer-send")).await;
    app.wait_for_text(&tid("timeline"), |t| t.contains("second turn"))
        .await;
    app.quit().await;
}

/// The text typed into `selector` replaces what was there.
async fn retype(app: &App, selector: &str, text: &str) {
    app.wait_for(selector)
        .await
        .clear()
        .await
        .unwrap_or_else(|e| panic!("cannot clear {selector}: {e:?}"));
    app.type_into(selector, text).await;
}

/// Clicks `selector` after scrolling it to the middle of the form (with the worktree part open
/// the form is taller than the window; the status bar would cover its last line).
async fn press(app: &App, selector: &str) {
    app.wait_for(selector).await;
    app.execute(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'center'});",
        vec![json!(selector)],
    )
    .await;
    app.click(selector).await;
}

/// Submits the form and waits for its error to contain every part of `want`; the control at
/// fault is marked invalid and has the focus.
async fn refused(app: &App, want: &[&str], at: &str) -> String {
    press(app, &tid("new-agent-submit")).await;
    let shown = app
        .wait_for_text(&tid("new-agent-error"), |t| {
            want.iter().all(|w| t.contains(w))
        })
        .await;
    app.wait_for_attr(at, "aria-invalid", "true").await;
    let focused = app
        .execute(
            "return document.activeElement === document.querySelector(arguments[0]);",
            vec![json!(at)],
        )
        .await;
    assert_eq!(focused, json!(true), "{at} should have the focus");
    shown
}

/// What a refused create must leave as it was: no agent, no worktree, the same branches and
/// workspaces.
async fn nothing_changed(h: &Harness, app: &App, repo: &Path, branches: &str, workspaces: usize) {
    let snap = app.fleet_snapshot().await;
    assert_eq!(snap["agents"], json!([]));
    assert_eq!(snap["workspaces"].as_array().unwrap().len(), workspaces);
    assert_eq!(git(repo, &["branch", "--list"]), branches);
    assert_eq!(git(repo, &["worktree", "list"]).lines().count(), 1);
    let made = std::fs::read_dir(h.home().join("worktrees"))
        .map(|d| {
            d.flatten()
                .flat_map(|e| std::fs::read_dir(e.path()))
                .flatten()
                .count()
        })
        .unwrap_or(0);
    assert_eq!(made, 0, "no worktree folder may be left");
}

#[tokio::test]
async fn the_new_agent_form_makes_a_worktree_its_agent_works_in_and_auto_archive_removes_it() {
    let h = Harness::new("new_agent_worktree");
    let app = h.launch_ready(&[]).await;
    let repo = h.work_dir("repo");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "start"]);
    git(&repo, &["branch", "existing"]);
    let plain = h.work_dir("plain");
    let release = h.work_dir("signals").join("release");
    let ws = app.add_workspace(&repo).await;
    app.click(&sel_ws(ws_id(&ws))).await;
    let branches = git(&repo, &["branch", "--list"]);

    // "New worktree…" under "Where": hidden until asked for, then the branch choices and the
    // repository it will be made from (the selected workspace's).
    app.click(&tid("new-agent")).await;
    app.wait_for(&tid("new-agent-form")).await;
    let fields = tid("new-agent-worktree-fields");
    assert!(!app.is_shown(&fields).await);
    assert!(!app
        .text(&tid("new-agent-form"))
        .await
        .contains("remove its new worktree"));
    app.click("[data-testid=\"provider-option\"][data-provider=\"shell\"] input")
        .await;
    // Keyboard: the checkbox toggles with Space.
    app.type_into(&tid("new-agent-worktree"), " ").await;
    poll("the worktree fields shown", TIMEOUT, || async {
        app.is_shown(&fields).await.then_some(())
    })
    .await;
    assert!(app.is_shown(&tid("new-agent-worktree-new-branch")).await);
    assert!(!app.is_shown(&tid("new-agent-worktree-branch")).await);
    let from = app.text(&tid("new-agent-worktree-repo")).await;
    assert_eq!(from, repo.display().to_string());
    app.wait_for_text(&tid("new-agent-form"), |t| {
        t.contains("remove its new worktree (the branch is kept)")
    })
    .await;

    // Every refusal of `create_worktree` shows at its field, clearly, and changes nothing.
    let new_branch = tid("new-agent-worktree-new-branch");
    let base = tid("new-agent-worktree-base");
    refused(
        &app,
        &["New branch: give the new branch a name"],
        &new_branch,
    )
    .await;
    app.type_into(&new_branch, "bad..name").await;
    refused(
        &app,
        &["New branch: ", "not a valid git branch name"],
        &new_branch,
    )
    .await;
    // What a branch name could smuggle into git's command line is refused as well.
    retype(&app, &new_branch, "--orphan=x").await;
    refused(
        &app,
        &["New branch: ", "cannot start with '-'"],
        &new_branch,
    )
    .await;
    nothing_changed(&h, &app, &repo, &branches, 1).await;
    retype(&app, &new_branch, "existing").await;
    let shown = refused(&app, &["New branch: ", "already exists"], &new_branch).await;
    assert!(!shown.contains("workspace.source"), "{shown}");
    app.screenshot("new-agent-worktree-refused").await;
    nothing_changed(&h, &app, &repo, &branches, 1).await;
    retype(&app, &new_branch, "feat/wt").await;
    app.type_into(&base, "--detach").await;
    refused(&app, &["Base: ", "is not a commit, branch or tag"], &base).await;
    retype(&app, &base, "no-such-base").await;
    refused(&app, &["Base: ", "is not a commit, branch or tag"], &base).await;
    nothing_changed(&h, &app, &repo, &branches, 1).await;
    app.click(&tid("new-agent-worktree-checkout")).await;
    let branch = tid("new-agent-worktree-branch");
    app.type_into(&branch, "main").await;
    refused(&app, &["Branch: ", "already checked out at"], &branch).await;
    retype(&app, &branch, "no-such-branch").await;
    refused(&app, &["Branch: ", "does not exist"], &branch).await;
    nothing_changed(&h, &app, &repo, &branches, 1).await;
    // A directory that is no repository (it gets no workspace either).
    app.click(&format!(
        "{} option[value=\"__directory__\"]",
        tid("new-agent-workspace")
    ))
    .await;
    let directory = tid("new-agent-directory");
    app.type_into(&directory, &plain.display().to_string())
        .await;
    assert_eq!(
        app.text(&tid("new-agent-worktree-repo")).await,
        plain.display().to_string()
    );
    refused(
        &app,
        &["Repository: ", "is not inside a git repository"],
        &directory,
    )
    .await;
    nothing_changed(&h, &app, &repo, &branches, 1).await;

    // Branch off main, autoArchive on: the screenshot of the form as the user fills it.
    app.click(&format!(
        "{} option[value=\"{}\"]",
        tid("new-agent-workspace"),
        ws_id(&ws)
    ))
    .await;
    app.click(&tid("new-agent-worktree-branch-off")).await;
    retype(&app, &base, "main").await;
    app.type_into(&tid("new-agent-title"), "in-worktree").await;
    let script = format!(
        "pwd > where.txt; git rev-parse --abbrev-ref HEAD >> where.txt; echo \"working in $(pwd)\"; \
         i=0; while [ ! -e '{}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done",
        release.display()
    );
    app.type_into(&tid("new-agent-prompt"), &script).await;
    press(&app, &tid("new-agent-auto-archive")).await;
    app.execute("document.activeElement?.blur()", vec![]).await;
    // What was refused last is gone once the user changed the form.
    assert_eq!(app.text(&tid("new-agent-error")).await, "");
    assert_eq!(app.count("[aria-invalid]").await, 0);
    let shot = app.screenshot("new-agent-worktree").await;
    eprintln!("screenshot: {}", shot.display());

    // Enter in a text field creates it (keyboard again). The agent runs in the new worktree,
    // on its new branch, in a new worktree workspace.
    app.type_into(&new_branch, "\u{E007}").await;
    app.wait_for(&tid("agent-pane")).await;
    let agent = poll("the agent", TIMEOUT, || async {
        app.fleet_snapshot().await["agents"]
            .as_array()
            .unwrap()
            .first()
            .cloned()
    })
    .await;
    let agent_id = id(&agent);
    let cwd = agent["cwd"].as_str().unwrap().to_string();
    let worktrees = h.home().join("worktrees").canonicalize().unwrap();
    assert!(Path::new(&cwd).starts_with(&worktrees), "{cwd}");
    assert_ne!(ws_id(&agent), ws_id(&ws));
    assert_eq!(
        app.agent_detail(&agent_id).await["autoArchive"],
        json!(true)
    );
    app.wait_for_text(&sel_pane(&agent_id), |t| {
        t.contains(&format!("working in {cwd}"))
    })
    .await;
    let snap = app.fleet_snapshot().await;
    let made = snap["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["workspaceId"] == agent["workspaceId"])
        .cloned()
        .unwrap();
    assert_eq!(made["kind"], json!("worktree"));
    assert_eq!(made["branch"], json!("feat/wt"));
    assert_eq!(made["cwd"], json!(cwd));
    app.wait_for(&sel_ws(ws_id(&made))).await;
    assert!(git(&repo, &["worktree", "list"]).contains(&cwd));
    assert_eq!(
        git(&repo, &["rev-parse", "feat/wt"]),
        git(&repo, &["rev-parse", "main"])
    );
    // The repository itself was not registered again, and no workspace for `plain` exists.
    assert_eq!(snap["workspaces"].as_array().unwrap().len(), 2);

    // The first turn ends: the agent is archived, its worktree removed with git (what it left
    // committed on the branch first), the branch kept; the repository's workspace stays.
    std::fs::write(&release, "").unwrap();
    wait_archived_on_disk(&h, &[&agent_id], true).await;
    // The folder goes to the trash first, then git forgets the worktree (SPEC 15).
    poll("the worktree removed", TIMEOUT, || async {
        (!Path::new(&cwd).exists() && !git(&repo, &["worktree", "list"]).contains(&cwd))
            .then_some(())
    })
    .await;
    let left = git(&repo, &["show", "feat/wt:where.txt"]);
    assert_eq!(left, format!("{cwd}\nfeat/wt\n"));
    assert!(git(&repo, &["log", "-1", "--format=%s", "feat/wt"]).starts_with("Paseo: work left in"));
    assert!(git(&repo, &["branch", "--list"]).contains("feat/wt"));
    app.wait_count(&sel_tab(&agent_id), 0).await;
    app.wait_count(&sel_ws(ws_id(&made)), 0).await;
    app.wait_for(&sel_ws(ws_id(&ws))).await;
    let snap = app.fleet_snapshot().await;
    assert_eq!(snap["agents"], json!([]));
    app.quit().await;
}
