//! The README's screenshots, light and dark: a fleet with a lead, its subagents in every state,
//! and the new-agent form. Run by hand: `cargo test --test ui -- --ignored docs_screenshots`.

use crate::common::{tid, Harness};
use crate::helpers::*;
use std::path::Path;

async fn fleet_screens(h: &Harness, name: &str) {
    let app = h.launch_ready(&[]).await;
    let app_dir = h.work_dir("app");
    let api_dir = h.work_dir("api");
    let plan = spawn_script(
        &[
            kid("tests", "echo 'running the test suite…'; sleep 600"),
            kid("lint", "echo 'lint: 0 problems'"),
            kid(
                "migrate",
                "echo 'migration 0042 failed: column exists' >&2; exit 3",
            ),
            kid("docs", "sleep 600"),
        ],
        "echo 'Split the login feature into tests, lint, a migration and docs.'\nsleep 600",
    );
    std::fs::write(app_dir.join("plan.sh"), plan).unwrap();
    let review = app
        .create_shell(
            &app_dir,
            "review",
            "git status --short 2>/dev/null; echo 'review: 2 comments'",
        )
        .await;
    let lead = app.create_shell(&app_dir, "lead", "sh plan.sh").await;
    let notes = app
        .create_shell(&api_dir, "api-notes", "echo 'GET /users: 200 OK'")
        .await;
    let lead_id = id(&lead);
    let kids = wait_children(&app, &lead_id, 4).await;
    let kid_id = |title| id(by_title(&kids, title));
    app.wait_for_status(&kid_id("migrate"), "error").await;
    app.wait_for_status(&kid_id("lint"), "idle").await;
    app.wait_for_status(&id(&review), "idle").await;
    app.wait_for_status(&id(&notes), "idle").await;
    open_root(&app, &review).await;
    open_root(&app, &lead).await;
    row_action(&app, &kid_id("tests"), "track-open").await;
    app.click(&sel_tab(&lead_id)).await;
    app.wait_for(&sel_pane(&lead_id)).await;
    app.wait_count(&tid("track-row"), 4).await;
    app.execute("document.activeElement?.blur()", vec![]).await;
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/screenshots");
    std::fs::create_dir_all(&docs).unwrap();
    let shot = app.screenshot(name).await;
    std::fs::copy(&shot, docs.join(format!("{name}.png"))).unwrap();
    if name.ends_with("light") {
        app.click(&tid("new-agent")).await;
        app.wait_for(&tid("new-agent-form")).await;
        let shot = app.screenshot("new-agent").await;
        std::fs::copy(&shot, docs.join("new-agent.png")).unwrap();
    }
    app.quit().await;
}

#[tokio::test]
#[ignore = "writes docs/screenshots; run by hand"]
async fn docs_screenshots() {
    fleet_screens(&Harness::new("docs_light"), "fleet-light").await;
    let dark = Harness::builder("docs_dark")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    fleet_screens(&dark, "fleet-dark").await;
}
