//! Layout that holds at 900 px: the agent header keeps the cwd in view (the workspace words give
//! way first) and says the branch once.

use crate::common::tid;
use crate::helpers::*;
use crate::words::resize;
use serde_json::json;

const BRANCH: &str = "feature/very-long-branch-name-for-the-release-pipeline-cleanup";

#[tokio::test]
async fn the_header_keeps_the_cwd_in_view_and_says_the_branch_once() {
    let (h, app, dir) = start("header_fit").await;
    git(&dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "start"]);
    let agent = app
        .create_agent(
            json!({"provider": "shell", "title": "pipeline", "prompt": "echo hi",
            "autoArchive": false, "worktree": {"repo": dir, "target": {"kind": "branch-off",
            "newBranch": BRANCH}}}),
        )
        .await;
    open_root(&app, &agent).await;
    app.wait_for_attr(&sel_pane(&id(&agent)), "data-status", "idle")
        .await;
    for (width, shot) in [(1200, "header-1200"), (900, "header-900")] {
        resize(&h, &app, width, 700).await;
        let words = app.text(&tid("agent-workspace")).await;
        assert_eq!(words.matches("very-long").count(), 1, "{words}");
        let fit = app
            .execute(
                "const cwd = document.querySelector('[data-testid=\"agent-cwd\"]').getBoundingClientRect(); \
                 const pane = document.querySelector('[data-testid=\"agent-pane\"]').getBoundingClientRect(); \
                 const line = document.querySelector('.agent-header .line.sub').getBoundingClientRect(); \
                 return [cwd.width, cwd.right <= pane.right, line.right <= pane.right + 1];",
                vec![],
            )
            .await;
        assert!(
            fit[0].as_f64().unwrap() >= 120.0,
            "the cwd is squeezed out: {fit}"
        );
        assert_eq!(fit[1], json!(true), "the cwd runs off the pane: {fit}");
        assert_eq!(fit[2], json!(true), "the line runs off the pane: {fit}");
        app.execute("document.activeElement?.blur()", vec![]).await;
        app.screenshot(shot).await;
    }
    app.quit().await;
}

/// The left edges of `cell` in each track row, rounded to whole pixels.
async fn column(app: &crate::common::App, cell: &str) -> Vec<i64> {
    let v = app
        .execute(
            "return [...document.querySelectorAll('[data-testid=\"track-row\"]')].map(r => \
             Math.round(r.querySelector(arguments[0]).getBoundingClientRect().left));",
            vec![json!(cell)],
        )
        .await;
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn track_columns_line_up_like_a_table() {
    let (h, app, dir) = start("track_columns").await;
    // One of them in a repository of its own (inside the lead's folder, so its start is not
    // held for approval) with a change there: its row alone has counts.
    let own = dir.join("own");
    std::fs::create_dir_all(&own).unwrap();
    git(&own, &["init", "-q", "-b", "main"]);
    let kids = [
        kid("a", "echo short"),
        kid("a much longer subagent title than the others", "sleep 300"),
        Kid {
            directory: Some(own.clone()),
            ..kid("mid", "echo 'x' > made.txt; exit 3")
        },
    ];
    let fam = family(&app, &dir, &kids, "echo ok").await;
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 3).await;
    app.wait_for_attr(&sel_row(&fam.kid("mid")), "data-status", "error")
        .await;
    app.wait_for_attr(&sel_row(&fam.kid("a")), "data-status", "idle")
        .await;
    app.wait_for_text(
        &format!("{} {}", sel_row(&fam.kid("mid")), tid("track-changes")),
        |t| t.starts_with("1 file"),
    )
    .await;
    for width in [1200, 900] {
        resize(&h, &app, width, 700).await;
        for cell in [
            ".row-provider",
            ".row-power",
            ".row-status",
            ".row-changes",
            ".row-usage",
            ".row-actions",
        ] {
            let lefts = column(&app, cell).await;
            assert!(
                lefts.windows(2).all(|w| w[0] == w[1]),
                "{cell} does not line up at {width} px: {lefts:?}"
            );
        }
        let fits = app
            .execute(
                "const b = document.querySelector('.track-body'); return b.scrollWidth <= b.clientWidth;",
                vec![],
            )
            .await;
        assert_eq!(
            fits,
            json!(true),
            "the track scrolls sideways at {width} px"
        );
        app.execute("document.activeElement?.blur()", vec![]).await;
        app.screenshot(&format!("track-columns-{width}")).await;
    }
    app.quit().await;
}

#[tokio::test]
async fn the_sidebar_names_branches_shows_a_collapsed_projects_status_and_keeps_the_selection_in_view(
) {
    let (h, app, dir) = start("sidebar_fit").await;
    git(&dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "start"]);
    let busy = app.create_shell(&dir, "busy", "sleep 300").await;
    app.wait_for_status(&id(&busy), "running").await;
    let row = sel_ws(ws_id(&busy));
    app.wait_for_attr(&row, "data-status", "running").await;
    // The tooltip names the branch.
    let title = app.prop(&row, "title").await;
    assert!(title.as_str().unwrap().contains("branch main"), "{title}");

    // Collapsed, the project still says something runs inside it.
    let project_id = app
        .execute(
            "return document.querySelector(arguments[0]).closest('[data-testid=\"project\"]').dataset.projectId;",
            vec![json!(row)],
        )
        .await;
    let project_sel = format!(
        "[data-testid=\"project\"][data-project-id=\"{}\"]",
        project_id.as_str().unwrap()
    );
    app.click(&format!("{project_sel} {}", tid("project-toggle")))
        .await;
    app.wait_count(&row, 0).await;
    let status = format!("{project_sel} {}", tid("project-status"));
    app.wait_for_attr(&status, "data-status", "running").await;
    assert!(
        app.is_shown(&status).await,
        "the collapsed project's status is hidden"
    );
    let shown = app.text(&status).await;
    assert!(shown.contains('●') && shown.contains("running"), "{shown}");
    app.screenshot("collapsed-project").await;
    app.click(&format!("{project_sel} {}", tid("project-toggle")))
        .await;
    app.wait_for(&row).await;

    // Many workspaces: selecting one far down the list (by opening its agent) scrolls it in.
    let mut last = None;
    for i in 0..40 {
        let d = h.work_dir(&format!("w{i:02}"));
        last = Some(app.add_workspace(&d).await);
    }
    let far = last.unwrap();
    let far_dir = std::path::PathBuf::from(far["cwd"].as_str().unwrap());
    let far_agent = app.create_shell(&far_dir, "far", "echo far").await;
    app.click(&row).await;
    app.call_ui(
        "/gestures/tabs.js",
        "openAgent",
        vec![json!(id(&far_agent))],
    )
    .await;
    let far_row = sel_ws(ws_id(&far_agent));
    app.wait_for_attr(&far_row, "aria-current", "true").await;
    crate::common::poll(
        "the selected workspace in view",
        crate::common::TIMEOUT,
        || async {
            let inside = app
                .execute(
                    "const r = document.querySelector(arguments[0]).getBoundingClientRect(); \
                 const s = document.querySelector('.sidebar-scroll').getBoundingClientRect(); \
                 return r.top >= s.top - 1 && r.bottom <= s.bottom + 1;",
                    vec![json!(far_row)],
                )
                .await;
            (inside == json!(true)).then_some(())
        },
    )
    .await;
    app.quit().await;
}

/// The top of `selector`, in pixels from the page's top.
async fn top(app: &crate::common::App, selector: &str) -> f64 {
    app.execute(
        "return document.querySelector(arguments[0]).getBoundingClientRect().top;",
        vec![json!(selector)],
    )
    .await
    .as_f64()
    .unwrap()
}

#[tokio::test]
async fn the_new_agent_form_errs_at_the_field_offers_worktrees_only_in_repositories_and_holds_still(
) {
    let (h, app, dir) = start("form_fit").await;
    // A folder that is not in a git repository, known as a workspace.
    let plain = app.add_workspace(&dir).await;
    app.click(&tid("new-agent")).await;
    app.wait_for(&tid("new-agent-form")).await;
    app.execute(
        "const s = document.querySelector('[data-testid=\"new-agent-workspace\"]'); \
         s.value = arguments[0]; s.dispatchEvent(new Event('change', {bubbles: true})); return null;",
        vec![plain["workspaceId"].clone()],
    )
    .await;
    // "New worktree…" is offered only where there is a repository, and says why not.
    assert_eq!(
        app.prop(&tid("new-agent-worktree"), "disabled").await,
        json!(true)
    );
    let why = app.text(&tid("new-agent-worktree-why")).await;
    assert!(why.contains("needs a git repository"), "{why}");

    // Holds still: the Create button stays where it was through the first interactions.
    let before = top(&app, &tid("new-agent-submit")).await;
    app.click("[data-testid=\"provider-option\"][data-provider=\"shell\"] input")
        .await;
    app.type_into(&tid("new-agent-title"), "t").await;
    let after = top(&app, &tid("new-agent-submit")).await;
    assert!(
        (before - after).abs() < 1.0,
        "Create moved from {before} to {after}"
    );
    app.screenshot("form-1200").await;

    // A directory that does not exist: the message sits under the directory's row.
    app.execute(
        "const s = document.querySelector('[data-testid=\"new-agent-workspace\"]'); \
         s.value = '__directory__'; s.dispatchEvent(new Event('change', {bubbles: true})); return null;",
        vec![],
    )
    .await;
    app.type_into(&tid("new-agent-directory"), "/nonexistent/dir")
        .await;
    app.click(&tid("new-agent-submit")).await;
    app.wait_for_text(&tid("new-agent-error"), |t| t.contains("/nonexistent/dir"))
        .await;
    let placed = app
        .execute(
            "const e = document.querySelector('[data-testid=\"new-agent-error\"]'); \
             const d = document.querySelector('[data-testid=\"new-agent-directory\"]'); \
             return [e.previousElementSibling.contains(d), d.getAttribute('aria-invalid')];",
            vec![],
        )
        .await;
    assert_eq!(
        placed,
        json!([true, "true"]),
        "the error is not at the directory"
    );
    app.screenshot("form-error-1200").await;
    resize(&h, &app, 900, 700).await;
    app.screenshot("form-error-900").await;
    app.quit().await;
}
