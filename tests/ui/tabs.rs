//! Closing a tab: a running root agent's tab asks first and archives it with its subagents; a
//! subagent's tab only closes the view (the track opens it again), with the mouse or the keyboard.

use crate::common::{tid, Answer};
use crate::helpers::*;
use fantoccini::key::Key;
use serde_json::json;

#[tokio::test]
async fn closing_a_running_root_agents_tab_asks_first_and_archives_it_with_its_subagents() {
    let (h, app, dir) = start("close_running_root_tab").await;
    let Family {
        lead,
        lead_id,
        kids,
    } = family(
        &app,
        &dir,
        &[kid("kid-1", "sleep 300"), kid("kid-2", "echo kid two done")],
        "echo 'split into two parts'\nsleep 300",
    )
    .await;
    open_root(&app, &lead).await;
    app.wait_for_attr(&sel_pane(&lead_id), "data-status", "running")
        .await;
    app.wait_count(&tid("track-row"), 2).await;
    app.wait_for_text(&tid("track-counts"), |t| t.contains("2 total"))
        .await;
    app.screenshot("running-lead").await;

    // Cancel: everything stays as it was.
    app.click(&sel_tab_close(&lead_id)).await;
    h.answer_dialog("Archive running agent?", Answer::Cancel)
        .await;
    assert_eq!(app.count(&sel_tab(&lead_id)).await, 1);
    assert_eq!(
        app.agent(&lead_id).await.unwrap()["status"],
        json!("running")
    );
    assert!(!archived_on_disk(&h, &lead_id));
    for k in &kids {
        assert!(app.agent(&id(k)).await.is_some());
    }

    // OK: the agent and its subagents are archived, on disk too, and the tab is gone.
    app.click(&sel_tab_close(&lead_id)).await;
    h.answer_dialog("Archive running agent?", Answer::Ok).await;
    app.wait_count(&sel_tab(&lead_id), 0).await;
    for a in std::iter::once(&lead).chain(kids.iter()) {
        wait_archived_on_disk(&h, &[&id(a)], true).await;
        let rec = h.agent_record(&id(a));
        assert_ne!(rec["lastStatus"], json!("running"), "{rec}");
    }
    assert!(app.agent(&lead_id).await.is_none());
    app.screenshot("after-archive").await;
    app.quit().await;
}

#[tokio::test]
async fn closing_a_subagents_tab_only_closes_the_view_and_the_track_reopens_it() {
    let (h, app, dir) = start("close_subagent_tab").await;
    let fam = family(&app, &dir, &[kid("worker", "sleep 300")], "echo handed off").await;
    let (lead_id, worker_id) = (fam.lead_id.clone(), fam.kid("worker"));
    app.wait_for_status(&lead_id, "idle").await;
    open_root(&app, &fam.lead).await;
    row_action(&app, &worker_id, "track-open").await;
    app.wait_for_attr(&sel_pane(&worker_id), "data-status", "running")
        .await;
    // The subagent's header links to its parent.
    app.wait_for_text(&tid("parent-link"), |t| t.contains("lead"))
        .await;
    app.screenshot("subagent-tab").await;

    // No dialog: the tab closes, the agent keeps running and stays in its parent's track.
    click_tab_close(&app, &worker_id).await;
    app.wait_count(&sel_tab(&worker_id), 0).await;
    assert!(h.windows("Archive running agent?", true).await.is_empty());
    app.wait_for(&sel_pane(&lead_id)).await;
    app.wait_for_attr(&sel_row(&worker_id), "data-status", "running")
        .await;
    assert_eq!(
        app.agent(&worker_id).await.unwrap()["status"],
        json!("running")
    );
    assert!(!archived_on_disk(&h, &worker_id));

    // The track opens it again.
    row_action(&app, &worker_id, "track-open").await;
    app.wait_for(&sel_tab(&worker_id)).await;
    app.wait_for(&sel_pane(&worker_id)).await;
    // And the parent link goes back.
    app.click(&tid("parent-link")).await;
    app.wait_for(&sel_pane(&lead_id)).await;

    // The keyboard: Ctrl+Tab to the next tab, Ctrl+L to the composer, Ctrl+W closes the
    // subagent's tab (again without a dialog).
    let ctrl = |key: &str| format!("{}{key}{}", Key::Control, Key::Null);
    app.type_into(&tid("composer-input"), &ctrl(&Key::Tab.to_string()))
        .await;
    app.wait_for(&sel_pane(&worker_id)).await;
    app.type_into("body", &ctrl("l")).await;
    let focused = app
        .execute("return document.activeElement?.dataset.testid", vec![])
        .await;
    assert_eq!(focused, json!("composer-input"));
    app.type_into(&tid("composer-input"), &ctrl("w")).await;
    app.wait_count(&sel_tab(&worker_id), 0).await;
    app.wait_for(&sel_pane(&lead_id)).await;
    assert_eq!(
        app.agent(&worker_id).await.unwrap()["status"],
        json!("running")
    );
    app.quit().await;
}

/// SPEC 1, 11: an agent whose parent label names no agent (its parent's record was quarantined,
/// or upstream data) is a root in the window as in the engine, so closing its tab archives it;
/// the label stays in the record for when the parent comes back.
#[tokio::test]
async fn closing_the_tab_of_an_agent_whose_parent_is_gone_archives_it() {
    use paseo_core::model::AgentId;
    let h = crate::common::Harness::new("dangling_parent_tab");
    let work = h.work_dir("repo");
    let (agent_id, gone) = (AgentId::new(), AgentId::new());
    let at = "2026-12-01T10:00:00.000Z";
    let record = json!({
        "id": agent_id.to_string(), "provider": "shell", "cwd": work.display().to_string(),
        "title": "orphaned", "lastStatus": "idle", "createdAt": at, "updatedAt": at,
        "labels": {"paseo.parent-agent-id": gone.to_string()}, "config": {},
    });
    put_record(&h, &record);

    let app = h.launch_ready(&[]).await;
    let id = agent_id.to_string();
    let agent = app.agent(&id).await.expect("the agent is loaded");
    assert_eq!(agent["parentAgentId"], json!(null), "{agent}");
    open_root(&app, &agent).await;
    click_tab_close(&app, &id).await;
    app.wait_count(&sel_tab(&id), 0).await;
    wait_archived_on_disk(&h, &[&id], true).await;
    assert_eq!(
        h.agent_record(&id)["labels"]["paseo.parent-agent-id"],
        json!(gone.to_string())
    );
    app.quit().await;
}
