//! Schedules on the workspace home (SPEC 20) in the real window: a schedule is made with the
//! form (the next three due times said as the user types, a bad one named before Save), saved to
//! config.json, run now (one labelled run, its outcome shown on the row), paused and deleted
//! after the native confirm.

use crate::common::{mcp_call, poll, tid, Answer, TIMEOUT};
use crate::helpers::*;
use serde_json::{json, Value};

fn config_schedules(h: &crate::common::Harness) -> Value {
    let text = std::fs::read_to_string(h.home().join("config.json")).unwrap_or_default();
    serde_json::from_str::<Value>(&text).unwrap_or(Value::Null)["schedules"].clone()
}

async fn set_value(app: &crate::common::App, selector: &str, text: &str) {
    app.execute(
        "const el = document.querySelector(arguments[0]); el.value = ''; el.dispatchEvent(new Event('input'))",
        vec![json!(selector)],
    )
    .await;
    app.type_into(selector, text).await;
}

#[tokio::test]
async fn a_schedule_is_made_previewed_run_now_paused_and_deleted_from_the_home() {
    let (h, app, dir) = start("schedules").await;
    let lead = app.create_shell(&dir, "lead", "echo hi").await;
    app.click(&sel_ws(ws_id(&lead))).await;
    app.click(&tid("tab-home")).await;
    app.wait_for(&tid("schedules")).await;
    assert_eq!(app.count(&tid("schedule-row")).await, 0);

    // The form says what is wrong with a `when` as it is typed, and the next three due times.
    app.click(&tid("schedule-new")).await;
    app.wait_for(&tid("schedule-form")).await;
    app.type_into(&tid("schedule-name"), "tidy").await;
    app.type_into(&tid("schedule-when"), "30s").await;
    app.wait_for_text(&tid("schedule-preview"), |t| t.contains("under one minute"))
        .await;
    set_value(&app, &tid("schedule-when"), "15m").await;
    let preview = app
        .wait_for_text(&tid("schedule-preview"), |t| {
            t.starts_with("every 15 minutes · next")
        })
        .await;
    assert_eq!(
        preview.matches(", ").count(),
        2,
        "three due times: {preview}"
    );
    // Saved without a prompt: refused with the field named, nothing written.
    app.click(&tid("schedule-save")).await;
    app.wait_for_text(&tid("schedule-form-error"), |t| {
        t.contains("schedule.prompt")
    })
    .await;
    assert_eq!(config_schedules(&h), Value::Null);
    app.type_into(&tid("schedule-prompt"), "echo tidy").await;
    assert!(
        !app.is_shown(&tid("schedule-form-error")).await,
        "a refusal is stale once the form changes"
    );
    app.execute("document.activeElement?.blur()", vec![]).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    app.screenshot("schedule-form").await;
    app.click(&tid("schedule-save")).await;
    app.wait_count(&tid("schedule-row"), 1).await;
    let saved = config_schedules(&h);
    assert_eq!(saved[0]["name"], "tidy");
    assert_eq!(saved[0]["every"], "15m");
    assert_eq!(
        saved[0]["workspace"],
        json!({"kind": "directory", "path": dir})
    );
    app.wait_for_text(&tid("schedule-next"), |t| t.starts_with("next "))
        .await;

    // Run now: one run, labelled, in this workspace; the row says it ran.
    app.click(&tid("schedule-run")).await;
    let runs = poll("the run", TIMEOUT, || async {
        let l = mcp_call(
            h.home(),
            "list_agents",
            json!({"labels": {"schedule": "tidy"}}),
        );
        (l["total"] == 1).then_some(l)
    })
    .await;
    let run = &runs["agents"][0];
    assert_eq!(run["workspaceId"], lead["workspaceId"]);
    assert!(
        run["title"].as_str().unwrap().starts_with("tidy · "),
        "{run}"
    );
    app.wait_for_text(&tid("schedule-last"), |t| t.starts_with("✓ ran"))
        .await;
    app.wait_count(&tid("workspace-agent"), 2).await;
    // The run says its schedule on its home row and on its tab (SPEC 20).
    let run_id = run["id"].as_str().unwrap();
    let row = format!("[data-testid=\"workspace-agent\"][data-agent-id=\"{run_id}\"]");
    app.wait_for_text(
        &format!("{row} [data-testid=\"workspace-agent-schedule\"]"),
        |t| t == "◷ tidy",
    )
    .await;
    app.click(&row).await;
    app.wait_for_text(
        &format!("{} [data-testid=\"tab-schedule\"]", sel_tab(run_id)),
        |t| t == "◷ tidy",
    )
    .await;
    app.click(&tid("tab-home")).await;
    app.wait_for(&tid("schedule-row")).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    app.screenshot("schedules").await;

    // Paused: written to config.json, said on the row.
    app.click(&tid("schedule-pause")).await;
    poll("paused on disk", TIMEOUT, || async {
        (config_schedules(&h)[0]["paused"] == true).then_some(())
    })
    .await;
    app.wait_for_text(&tid("schedule-next"), |t| t == "paused")
        .await;

    // Edit: a new when, written in place, the rest of the entry kept.
    app.click(&tid("schedule-edit")).await;
    app.wait_for(&tid("schedule-form")).await;
    assert_eq!(
        app.prop(&tid("schedule-name"), "value").await,
        json!("tidy")
    );
    set_value(&app, &tid("schedule-when"), "2h").await;
    app.wait_for_text(&tid("schedule-preview"), |t| t.starts_with("every 2 hours"))
        .await;
    app.click(&tid("schedule-save")).await;
    poll("the edit on disk", TIMEOUT, || async {
        let s = config_schedules(&h);
        (s[0]["every"] == "2h").then_some(s)
    })
    .await;
    let edited = config_schedules(&h);
    assert_eq!(edited.as_array().unwrap().len(), 1);
    assert_eq!(edited[0]["paused"], true, "kept");
    app.wait_for_text(".schedule-words", |t| t == "every 2 hours")
        .await;

    // Deleted after the confirm; Cancel keeps it. Its run stays.
    app.click(&tid("schedule-delete")).await;
    h.wait_for_window("Delete schedule?").await;
    h.answer_dialog("Delete schedule?", Answer::Cancel).await;
    assert_eq!(app.count(&tid("schedule-row")).await, 1);
    app.click(&tid("schedule-delete")).await;
    h.answer_dialog("Delete schedule?", Answer::Ok).await;
    app.wait_count(&tid("schedule-row"), 0).await;
    assert_eq!(config_schedules(&h), json!([]));
    let l = mcp_call(
        h.home(),
        "list_agents",
        json!({"labels": {"schedule": "tidy"}}),
    );
    assert_eq!(l["total"], 1);
    app.quit().await;
}
