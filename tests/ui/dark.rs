//! The new surfaces in the dark theme, at 1200 and 900 px: the workspace home's tools and
//! roll-ups, the agent header, the track's columns, the Changes view's scope line, the composer's
//! shell hint, the ☰ menu and About, and a confirm with its verb button. Screenshots to look at;
//! the checks are that the page is dark and each surface is there.

use crate::common::{tid, Answer, Harness};
use crate::helpers::*;
use crate::words::resize;
use serde_json::json;

/// A screenshot once the last change is painted (the display can lag the DOM by a frame).
async fn shot(app: &crate::common::App, name: &str) {
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    app.screenshot(name).await;
}

#[tokio::test]
async fn the_new_surfaces_in_the_dark_theme() {
    let h = Harness::builder("dark_surfaces")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    let app = h.launch_ready(&[]).await;
    let dark = app
        .execute(
            "return matchMedia('(prefers-color-scheme: dark)').matches",
            vec![],
        )
        .await;
    assert_eq!(dark, json!(true));
    let dir = h.work_dir("app");
    git(&dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "start"]);
    let kids = [
        kid("tests", "sleep 300"),
        kid("lint with a longer title", "echo clean"),
        kid("migrate", "echo 'column exists' >&2; exit 3"),
    ];
    let fam = family(&app, &dir, &kids, "echo edited >> a.txt; echo planned").await;
    app.wait_for_status(&fam.kid("migrate"), "error").await;
    app.wait_for_status(&fam.lead_id, "idle").await;
    // The home's Schedules section (SPEC 20), one schedule paused.
    for (name, paused) in [("nightly deps", false), ("hourly triage", true)] {
        let entry = json!({"name": name, "cron": "0 7 * * 1-5", "provider": "shell",
            "prompt": "echo check", "paused": paused,
            "workspace": {"kind": "directory", "path": dir}});
        let saved = app
            .call_ui("/backend.js", "saveSchedule", vec![entry])
            .await;
        assert!(saved.get("error").is_none(), "{saved}");
    }

    for width in [1200, 900] {
        resize(&h, &app, width, 700).await;
        app.click(&sel_ws(ws_id(&fam.lead))).await;
        app.click(&tid("tab-home")).await;
        app.wait_for(&tid("home-sort")).await;
        app.wait_count(&tid("schedule-row"), 2).await;
        app.execute("document.activeElement?.blur()", vec![]).await;
        shot(&app, &format!("home-{width}")).await;

        open_root(&app, &fam.lead).await;
        app.wait_count(&tid("track-row"), 3).await;
        app.execute("document.activeElement?.blur()", vec![]).await;
        shot(&app, &format!("lead-{width}")).await;

        app.click(&tid("changes-toggle")).await;
        app.wait_for_text(&tid("changes-scope"), |t| t.contains("since HEAD"))
            .await;
        shot(&app, &format!("changes-{width}")).await;
        app.click(&tid("changes-toggle")).await;

        app.click(&tid("app-menu")).await;
        app.wait_for(&tid("menu-about")).await;
        shot(&app, &format!("menu-{width}")).await;
        app.click(&tid("menu-about")).await;
        app.wait_for(&tid("about")).await;
        shot(&app, &format!("about-{width}")).await;
        app.click(&tid("about-close")).await;
    }

    // A confirm in the dark: Cancel and the verb.
    app.click(&tid("changes-toggle")).await;
    app.wait_for_text(&tid("changes-summary"), |t| t.contains("1 file"))
        .await;
    app.click(&tid("changes-discard")).await;
    h.wait_for_window("Discard the changes?").await;
    h.screenshot_screen("discard-dialog");
    h.answer_dialog("Discard the changes?", Answer::Cancel)
        .await;
    app.quit().await;
}
