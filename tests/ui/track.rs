//! The subagents track: archive X takes a subtree, Detach makes a running root agent, "Archive
//! finished" is one confirm and one batch, and the archived list restores (as a root agent when
//! the parent is archived).

use crate::common::{poll, tid, Answer, TIMEOUT};
use crate::helpers::*;
use serde_json::json;

#[tokio::test]
async fn track_archive_takes_the_subtree_and_detach_makes_a_running_root() {
    let (h, app, dir) = start("track_archive_detach").await;
    // "mid" creates a subagent of its own, so archiving it from the track takes a subtree.
    let mid_script = spawn_script(&[kid("leaf", "sleep 300")], "sleep 300");
    let kids = [kid("mid", &mid_script), kid("loner", "sleep 300")];
    let fam = family(&app, &dir, &kids, "echo ok").await;
    let (mid, loner) = (fam.kid("mid"), fam.kid("loner"));
    let leaf = id(&wait_children(&app, &mid, 1).await[0]);
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 2).await;
    app.wait_for_attr(&sel_row(&loner), "data-status", "running")
        .await;
    app.screenshot("track").await;
    // A shell agent's header shows its last turn's wall time and exit code.
    let lead_usage = format!("{} {}", sel_pane(&fam.lead_id), tid("agent-usage"));
    app.wait_for_text(&lead_usage, |t| t.ends_with("· exit 0"))
        .await;

    // Archive X: asks, then the row and its subtree are archived (on disk too).
    row_action(&app, &mid, "track-archive").await;
    h.screenshot_screen("archive-subagent-dialog");
    h.answer_dialog("Archive subagent?", Answer::Ok).await;
    app.wait_count(&sel_row(&mid), 0).await;
    wait_archived_on_disk(&h, &[&mid, &leaf], true).await;
    app.wait_for_text(&tid("track-counts"), |t| t.contains("1 total"))
        .await;

    // Detach: no dialog; the row leaves the track; the agent keeps running as a root agent.
    row_action(&app, &loner, "track-detach").await;
    app.wait_count(&tid("track"), 1).await;
    poll("the track to hide", TIMEOUT, || async {
        (!app.is_shown(&tid("track")).await).then_some(())
    })
    .await;
    let detached = app.wait_for_status(&loner, "running").await;
    assert!(detached["parentAgentId"].is_null(), "{detached}");
    // The record follows on disk: a detach is written behind (only an archive is durable before
    // the UI reports it, SPEC 1), so the snapshot can be ahead of the file for a moment.
    let rec = poll("the detached record on disk", TIMEOUT, || async {
        let rec = h.agent_record(&loner);
        rec["labels"]
            .get("paseo.parent-agent-id")
            .is_none()
            .then_some(rec)
    })
    .await;
    assert!(rec["archivedAt"].is_null(), "{rec}");

    // As a root agent now, closing its tab archives it (asking first, as it runs).
    open_root(&app, &detached).await;
    app.click(&sel_tab_close(&loner)).await;
    h.answer_dialog("Archive running agent?", Answer::Ok).await;
    wait_archived_on_disk(&h, &[&loner], true).await;
    app.wait_count(&sel_tab(&loner), 0).await;
    // The former parent was not touched.
    assert!(!archived_on_disk(&h, &fam.lead_id));
    app.quit().await;
}

#[tokio::test]
async fn archive_finished_then_restore_from_the_archived_list() {
    let (h, app, dir) = start("archive_finished_restore").await;
    let kids = [
        kid("done-1", "echo one"),
        kid("done-2", "echo two"),
        kid("busy", "sleep 300"),
    ];
    let fam = family(&app, &dir, &kids, "echo ok").await;
    let lead_id = &fam.lead_id;
    let (done1, done2, busy) = (fam.kid("done-1"), fam.kid("done-2"), fam.kid("busy"));
    for k in [&done1, &done2] {
        app.wait_for_status(k, "idle").await;
    }
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 3).await;

    // One confirm, then every subagent that is not running goes; the running one stays.
    app.click(&tid("track-archive-finished")).await;
    h.answer_dialog("Archive finished subagents?", Answer::Ok)
        .await;
    app.wait_count(&tid("track-row"), 1).await;
    app.wait_for(&sel_row(&busy)).await;
    wait_archived_on_disk(&h, &[&done1, &done2], true).await;
    assert!(!archived_on_disk(&h, &busy));
    assert_eq!(
        h.agent_record(&done1)["archiveBatchId"],
        h.agent_record(&done2)["archiveBatchId"],
        "one gesture, one batch"
    );

    // The archived list shows the batch as one line; Restore brings both back into the track.
    app.click(&tid("archived-toggle")).await;
    app.wait_count(&format!("{} li", tid("archived-list")), 1)
        .await;
    app.wait_for_text(&tid("archived-list"), |t| t.contains("+ 1 more"))
        .await;
    app.screenshot("archived-list").await;
    app.click(&format!("{} {}", tid("archived-list"), tid("restore")))
        .await;
    app.wait_count(&tid("track-row"), 3).await;
    wait_archived_on_disk(&h, &[&done1, &done2], false).await;
    app.wait_count(&format!("{} li", tid("archived-list")), 0)
        .await;

    // A restore whose parent is archived asks first and brings the agent back as a root agent.
    row_action(&app, &done1, "track-archive").await;
    h.answer_dialog("Archive subagent?", Answer::Ok).await;
    wait_archived_on_disk(&h, &[&done1], true).await;
    app.click(&sel_tab_close(lead_id)).await;
    h.answer_dialog("Archive agent with running subagents?", Answer::Ok)
        .await;
    wait_archived_on_disk(&h, &[lead_id], true).await;
    let done1_restore = format!(
        "{} [data-testid=\"restore\"][data-agent-id=\"{done1}\"]",
        tid("archived-list")
    );
    app.click(&done1_restore).await;
    h.answer_dialog("Restore as a root agent?", Answer::Ok)
        .await;
    wait_archived_on_disk(&h, &[&done1], false).await;
    let restored = app.agent(&done1).await.unwrap();
    assert!(restored["parentAgentId"].is_null(), "{restored}");
    assert!(archived_on_disk(&h, lead_id));
    // A restored root agent opens as a tab.
    app.wait_for(&sel_tab(&done1)).await;
    app.quit().await;
}

/// "Archive finished" takes only what is finished (SPEC 5's bulk gesture as a user reads it):
/// a subagent that needs you (an unseen failure) and one whose own subagent still runs stay,
/// nothing running is stopped, and the dialog names what goes and what stays.
#[tokio::test]
async fn archive_finished_names_what_goes_and_keeps_what_needs_you_or_runs() {
    let (h, app, dir) = start("archive_finished_names").await;
    let mid_script = spawn_script(&[kid("deep", "sleep 300")], "echo mid-done");
    let kids = [
        kid("done", "echo one"),
        kid("busy", "sleep 300"),
        kid("broken", "exit 3"),
        kid("mid", &mid_script),
    ];
    let fam = family(&app, &dir, &kids, "echo ok").await;
    let lead_id = &fam.lead_id;
    let (done, busy, broken, mid) = (
        fam.kid("done"),
        fam.kid("busy"),
        fam.kid("broken"),
        fam.kid("mid"),
    );
    app.wait_for_status(&done, "idle").await;
    app.wait_for_status(&broken, "error").await;
    app.wait_for_status(&mid, "idle").await;
    let deep = id(&wait_children(&app, &mid, 1).await[0]);
    app.wait_for_status(&deep, "running").await;
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 4).await;
    // The button counts what the core's rule would take: "mid" is not finished because of a
    // grandchild of the lead running, which the lead's track hears of though it is not a member.
    app.wait_for_attr(
        &tid("track-archive-finished"),
        "aria-label",
        "Archive 1 finished subagent",
    )
    .await;

    // The dialog's words, as the gesture makes them.
    let plan = app
        .call_ui("/gestures/archive.js", "finishedPlan", vec![json!(lead_id)])
        .await;
    let message = plan["message"].as_str().unwrap_or_default().to_string();
    assert!(message.contains("“done”"), "{plan}");
    for (name, why) in [
        ("busy", "running"),
        ("broken", "needs you"),
        ("mid", "a subagent running"),
    ] {
        assert!(
            message.contains(&format!("“{name}” ({why}")),
            "{name}: {plan}"
        );
    }
    assert_eq!(plan["archive"], json!([done]), "{plan}");

    app.click(&tid("track-archive-finished")).await;
    h.wait_for_window("Archive finished subagents?").await;
    h.screenshot_screen("archive-finished-dialog");
    h.answer_dialog("Archive finished subagents?", Answer::Ok)
        .await;
    wait_archived_on_disk(&h, &[&done], true).await;
    app.wait_count(&tid("track-row"), 3).await;
    for k in [&busy, &broken, &mid, &deep] {
        assert!(!archived_on_disk(&h, k), "{k} was archived");
    }
    assert_eq!(app.agent(&deep).await.unwrap()["status"], "running");
    assert_eq!(app.agent(&busy).await.unwrap()["status"], "running");
    app.screenshot("after-archive-finished").await;
    app.quit().await;
}

/// A canceled turn has its own word and glyph (grey, like every idle state: UI.md), never
/// "finished" with the green ✓; once seen it reads idle like any other.
#[tokio::test]
async fn a_canceled_turn_reads_canceled_not_finished() {
    let (h, app, dir) = start("canceled_word").await;
    let fam = family(&app, &dir, &[kid("spinner", "sleep 300")], "echo ok").await;
    let spinner = fam.kid("spinner");
    app.wait_for_status(&spinner, "running").await;
    open_root(&app, &fam.lead).await;
    app.wait_count(&tid("track-row"), 1).await;
    app.call_ui("/backend.js", "cancelAgent", vec![json!(spinner)])
        .await;
    app.wait_for_status(&spinner, "idle").await;
    let row = sel_row(&spinner);
    app.wait_for_text(&format!("{row} .row-status"), |t| t == "canceled")
        .await;
    let g = app.text(&format!("{row} .glyph")).await;
    assert_eq!(g, "⊘");
    assert_eq!(
        app.prop(&format!("{row} .glyph"), "className").await,
        "glyph s-canceled"
    );
    // The window hears the change as it happens; the record reaches the disk a moment later
    // (the runtime's writer), so wait for it rather than read it once.
    poll(
        "the canceled reason in the record on disk",
        TIMEOUT,
        || async { (h.agent_record(&spinner)["attentionReason"] == "canceled").then_some(()) },
    )
    .await;
    app.screenshot("canceled-row").await;
    // Looking at it acknowledges it, as for a finish: then it reads idle.
    row_action(&app, &spinner, "track-open").await;
    app.wait_for_text(&format!("{} .status-word", sel_pane(&spinner)), |t| {
        t == "idle"
    })
    .await;
    assert_eq!(h.agent_record(&spinner)["requiresAttention"], false);
    app.quit().await;
}

/// SPEC 13: `track-toggle` collapses a parent's subagents track and opens it again, by a click.
#[tokio::test]
async fn the_track_toggle_collapses_and_opens_the_subagents_track() {
    let (_h, app, dir) = start("track_toggle").await;
    let fam = family(
        &app,
        &dir,
        &[kid("one", "true"), kid("two", "true")],
        "true",
    )
    .await;
    open_root(&app, &fam.lead).await;
    let toggle = r#"[data-testid="track-toggle"]"#;
    let row = sel_row(&id(&fam.kids[0]));
    app.wait_for(&row).await;
    assert!(app.is_shown(&row).await, "the open track shows its rows");
    app.click(toggle).await;
    app.wait_for_attr(toggle, "aria-expanded", "false").await;
    poll("the rows hidden", TIMEOUT, || async {
        (!app.is_shown(&row).await).then_some(())
    })
    .await;
    app.click(toggle).await;
    app.wait_for_attr(toggle, "aria-expanded", "true").await;
    poll("the rows shown again", TIMEOUT, || async {
        app.is_shown(&row).await.then_some(())
    })
    .await;
    app.quit().await;
}
