//! Queued agents (SPEC 14 `maxLiveAgents`, UI.md "Queued agents"): an agent whose start waits
//! for a live slot has its own word, grey glyph and place in line, and counts as queued, not
//! running, in the track header and the status bar.

use crate::common::{tid, Answer, Harness};
use crate::helpers::*;

#[tokio::test]
async fn queued_agents_show_their_place_and_count_apart_from_running_ones() {
    queued_in_line(Harness::new("queued_ui"), "").await;
    let dark = Harness::builder("queued_ui_dark")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    queued_in_line(dark, "-dark").await;
}

async fn queued_in_line(h: Harness, theme: &str) {
    // Two live agents at most: the lead and its first subagent run, the other three wait.
    std::fs::write(
        h.home().join("config.json"),
        r#"{"limits": {"maxLiveAgents": 2}}"#,
    )
    .unwrap();
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("app");
    let kids = [
        kid("first", "sleep 300"),
        kid("second", "sleep 300"),
        kid("third", "sleep 300"),
        kid("fourth", "sleep 300"),
    ];
    let fam = family(&app, &dir, &kids, "sleep 300").await;
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 4).await;
    let word = |title: &str| format!("{} .row-status", sel_row(&fam.kid(title)));
    app.wait_for_text(&word("first"), |t| t == "running").await;
    app.wait_for_text(&word("second"), |t| t == "queued · 1st")
        .await;
    app.wait_for_text(&word("third"), |t| t == "queued · 2nd")
        .await;
    app.wait_for_text(&word("fourth"), |t| t == "queued · 3rd")
        .await;
    // The grey glyph of its own, named for screen readers too.
    let glyph = format!("{} .glyph", sel_row(&fam.kid("fourth")));
    app.wait_for_attr(&glyph, "class", "glyph s-queued").await;
    app.wait_for_attr(&glyph, "aria-label", "queued · 3rd")
        .await;
    app.wait_for_text(&tid("track-counts"), |t| {
        t.starts_with("1 running · 3 queued ·")
    })
    .await;
    // Fleet-wide: the lead and "first" run, three wait.
    app.wait_for_text(&tid("status-line"), |t| t.contains("2 running · 3 queued"))
        .await;
    app.screenshot(&format!("queued-track{theme}")).await;

    // The quit confirm says the status bar's words: two run, three wait and have run nothing.
    h.close_window("Paseo").await;
    h.wait_for_window("Quit Paseo?").await;
    h.wait_for_log("asking before quitting").await;
    let log = h.log_text();
    assert!(
        log.contains("2 agents are running. Quitting stops them."),
        "the queued agents are not counted as running"
    );
    // The message is logged whole (its lines too); this harness asks to quit once.
    let queued = log[log.rfind("2 agents are running.").unwrap_or(0)..].to_string();
    assert!(queued.contains("Queued, not started yet"), "{queued}");
    for title in ["second", "third", "fourth"] {
        let q = &queued[queued.find("Queued, not started yet").unwrap_or(0)..];
        assert!(q.contains(title), "{title} is named as queued: {queued}");
    }
    h.answer_dialog("Quit Paseo?", Answer::Return).await;
    app.quit().await;
}
