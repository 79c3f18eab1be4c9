//! Scale in the window (docs/scale.md): a workspace with thousands of root agents opens and scrolls
//! with only the rows in view in the DOM, and the oldest agent, at the very end, is one scroll and
//! one click away.

use crate::common::{poll, tid, Harness, TIMEOUT};
use crate::helpers::*;
use paseo_core::model::AgentId;
use serde_json::json;

const ROOTS: usize = 3_000;

#[tokio::test]
async fn a_workspace_home_with_thousands_of_agents_keeps_few_rows_in_the_dom() {
    let h = Harness::new("scale_home");
    let work = h.work_dir("big");
    let mut oldest = None;
    for n in 0..ROOTS {
        let id = AgentId::new();
        oldest.get_or_insert(id);
        let at = format!(
            "2026-12-01T{:02}:{:02}:{:02}.000Z",
            n / 3600,
            (n / 60) % 60,
            n % 60
        );
        let record = json!({
            "id": id.to_string(), "provider": "shell", "cwd": work.display().to_string(),
            "title": format!("worker-{n:04}"), "lastStatus": "idle",
            "createdAt": at, "updatedAt": at, "lastActivityAt": at, "config": {},
        });
        put_record(&h, &record);
    }
    let oldest = oldest.unwrap().to_string();
    let app = h.launch_ready(&[]).await;
    let agent = app
        .agent(&oldest)
        .await
        .expect("the oldest agent is loaded");
    app.click(&sel_ws(ws_id(&agent))).await;
    app.click(&tid("tab-home")).await;
    app.wait_for(&tid("workspace-agent")).await;
    let in_dom = app
        .execute(
            "return document.querySelectorAll('[data-testid=\"workspace-agent\"]').length;",
            vec![],
        )
        .await;
    let in_dom = in_dom.as_u64().unwrap();
    assert!(
        (10..=80).contains(&in_dom),
        "{in_dom} rows in the DOM for {ROOTS} agents"
    );
    // The end of the list: the oldest agent, in view after one scroll, and it opens.
    app.execute(
        "const el = document.querySelector('[data-testid=\"workspace-home\"]'); el.scrollTop = el.scrollHeight; return null;",
        vec![],
    )
    .await;
    let row = format!("[data-testid=\"workspace-agent\"][data-agent-id=\"{oldest}\"]");
    app.wait_for(&row).await;
    app.click(&row).await;
    app.wait_for(&sel_pane(&oldest)).await;
    app.wait_for_text(&tid("agent-title"), |t| t == "worker-0000")
        .await;
    // Back on the home after the agent's view: the rows where the list is scrolled are there.
    app.click(&tid("tab-home")).await;
    poll("rows in view on the home again", TIMEOUT, || async {
        let seen = app
            .execute(
                r#"const home = document.querySelector('[data-testid="workspace-home"]');
                   if (!home || !home.isConnected) return false;
                   const box = home.getBoundingClientRect();
                   return [...home.querySelectorAll('[data-testid="workspace-agent"]')].some((r) => {
                     const b = r.getBoundingClientRect();
                     return b.height > 0 && b.top >= box.top && b.bottom <= box.bottom;
                   });"#,
                vec![],
            )
            .await;
        (seen == json!(true)).then_some(())
    })
    .await;
}

const ARCHIVED: usize = 1_200;

#[tokio::test]
async fn the_archived_list_pages_through_thousands_of_archive_gestures() {
    let h = Harness::new("scale_archived");
    let work = h.work_dir("old");
    let mut first_archived = None;
    for n in 0..ARCHIVED {
        let id = AgentId::new();
        first_archived.get_or_insert(id);
        let at = format!(
            "2026-11-01T{:02}:{:02}:{:02}.000Z",
            n / 3600,
            (n / 60) % 60,
            n % 60
        );
        let record = json!({
            "id": id.to_string(), "provider": "shell", "cwd": work.display().to_string(),
            "title": format!("old-{n:04}"), "lastStatus": "closed",
            "createdAt": at, "updatedAt": at, "archivedAt": at, "config": {},
        });
        put_record(&h, &record);
    }
    let first_archived = first_archived.unwrap().to_string();
    let app = h.launch_ready(&[]).await;
    let rows = tid("archived-row");
    let more = tid("archived-more");
    let list = tid("archived-list");
    app.click(&tid("archived-toggle")).await;
    // A page at a time, most recent first; only the rows in view are in the DOM.
    app.wait_for_attr(&list, "data-rows", "500").await;
    let in_dom = app
        .execute(
            "return document.querySelectorAll('[data-testid=\"archived-row\"]').length;",
            vec![],
        )
        .await;
    assert!(
        (5..=60).contains(&in_dom.as_u64().unwrap()),
        "{in_dom} archived rows in the DOM for 500 shown"
    );
    app.wait_for_text(&more, |t| t.contains("500 of 1,200"))
        .await;
    let top = app.find(&rows).await.attr("data-agent-id").await.unwrap();
    assert_ne!(top.as_deref(), Some(first_archived.as_str()));
    // Its tooltip says when, in the local format Date.toLocaleString() gives.
    let when = app
        .execute_async(
            "const done = arguments[0];
             const row = document.querySelector('[data-testid=\"archived-row\"]');
             import('/window-state.js').then(({ ui }) => {
               const agent = ui.archived.loaded.find((a) => a.id === row.dataset.agentId);
               done([row.title, new Date(agent.archivedAt).toLocaleString()]);
             });",
            vec![],
        )
        .await;
    assert!(
        when[0]
            .as_str()
            .unwrap()
            .ends_with(&format!("archived {}", when[1].as_str().unwrap())),
        "{when}"
    );
    app.screenshot("archived-paged").await;
    app.click(&more).await;
    app.wait_for_attr(&list, "data-rows", "1000").await;
    app.click(&more).await;
    app.wait_for_attr(&list, "data-rows", &ARCHIVED.to_string())
        .await;
    assert!(!app.is_shown(&more).await, "nothing more to show");
    // The first agent ever archived is at the very end, one scroll away, and restoring it keeps
    // the list whole.
    app.execute(
        "const el = document.querySelector('[data-testid=\"archived-list\"]'); el.scrollTop = el.scrollHeight; return null;",
        vec![],
    )
    .await;
    let last = format!("[data-testid=\"restore\"][data-agent-id=\"{first_archived}\"]");
    app.click(&last).await;
    app.wait_for_attr(&list, "data-rows", &(ARCHIVED - 1).to_string())
        .await;
    app.wait_for(&sel_tab(&first_archived)).await;
    assert!(!app.is_shown(&more).await);
}

const CARDS: usize = 300;

/// What a window keeps of an agent, as the page's store holds it.
async fn stored_card(app: &crate::common::App, id: &str) -> serde_json::Value {
    app.execute_async(
        "const [id, done] = arguments; import('/store.js').then((m) => done({card: m.fleet.agents.get(id) ?? null, details: m.fleet.details.size}));",
        vec![json!(id)],
    )
    .await
}

#[tokio::test]
async fn a_window_keeps_a_compact_card_per_agent_and_its_pane_fetches_the_rest() {
    let h = Harness::new("scale_cards");
    let work = h.work_dir("cards");
    let mut ids = Vec::new();
    for n in 0..CARDS {
        let id = AgentId::new();
        ids.push(id.to_string());
        let at = format!("2026-12-01T10:{:02}:{:02}.000Z", n / 60, n % 60);
        // The newest two are at the top of the workspace's home list.
        let failed = n == CARDS - 1;
        let record = json!({
            "id": id.to_string(), "provider": "shell", "cwd": work.display().to_string(),
            "title": format!("card-{n:03}"), "lastStatus": if failed { "error" } else { "idle" },
            "createdAt": at, "updatedAt": at, "lastActivityAt": at,
            "config": {"model": format!("model-{n}"), "mode": "default",
                "systemPrompt": format!("You are reviewer {n}. ").repeat(30)},
            "labels": {"team": "review", "paseo.note": format!("note {n}")},
            "persistence": {"sessionId": format!("session-{n}")},
            "lastMessage": format!("Reviewed part {n}. ").repeat(20),
            "lastError": if failed { json!("the disk is full") } else { json!(null) },
            "requiresAttention": failed, "attentionReason": if failed { json!("error") } else { json!(null) },
        });
        put_record(&h, &record);
    }
    let app = h.launch_ready(&[]).await;

    // The snapshot a window boots from: one small card per agent, none of the heavy fields.
    let snap = app.fleet_snapshot().await;
    let agents = snap["agents"].as_array().unwrap();
    assert_eq!(agents.len(), CARDS);
    let on_disk = serde_json::to_string(&h.agent_record(&ids[1]))
        .unwrap()
        .len();
    for card in agents {
        for heavy in [
            "config",
            "systemPrompt",
            "labels",
            "persistence",
            "lastMessage",
            "lastError",
        ] {
            assert!(card.get(heavy).is_none(), "{heavy} in the card {card}");
        }
        let size = serde_json::to_string(card).unwrap().len();
        assert!(size <= 450, "a card of {size} bytes: {card}");
        assert!(
            size * 3 < on_disk,
            "a card of {size} bytes for a {on_disk}-byte record"
        );
    }

    // The pane shows what a card leaves out (its model, its last error), from the agent's whole
    // snapshot, fetched when it is shown.
    let (last, next) = (CARDS - 1, CARDS - 2);
    let failed = json!({"id": ids[last], "workspaceId": agents[last]["workspaceId"]});
    open_root(&app, &failed).await;
    app.wait_for_text(&tid("agent-provider"), |t| {
        t.ends_with(&format!("· model-{last}"))
    })
    .await;
    app.wait_for_text(&tid("agent-error"), |t| t == "the disk is full")
        .await;

    // An update event carries the agent's card (the same fields the snapshot's card has); the
    // window keeps it, and the pane still shows the model.
    let worker = json!({"id": ids[next], "workspaceId": agents[next]["workspaceId"]});
    open_root(&app, &worker).await;
    app.wait_for_text(&tid("agent-provider"), |t| {
        t.ends_with(&format!("· model-{next}"))
    })
    .await;
    app.type_into(&tid("composer-input"), "echo compact-$((6*7))")
        .await;
    app.click(&tid("composer-send")).await;
    app.wait_for_text(&tid("timeline"), |t| t.contains("compact-42"))
        .await;
    let (agent, kept) = poll("the stored card to catch up", TIMEOUT, || async {
        let agent = app.agent(&ids[next]).await?;
        let kept = stored_card(&app, &ids[next]).await;
        (agent["status"] == "idle"
            && agent["turnCount"] == 1
            && kept["card"]["updatedAt"] == agent["updatedAt"])
            .then_some((agent, kept))
    })
    .await;
    let card = &kept["card"];
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(card),
        keys(&agent),
        "the stored card {card} and the backend's {agent}"
    );
    assert!(kept["details"].as_u64().unwrap() <= 8, "{kept}");
    assert_eq!(
        app.text(&tid("agent-provider")).await,
        format!("Shell · model-{next}")
    );
}

/// The page's tracks as the store holds them: the parent's children (its index of children),
/// its track, and the parents whose counts it keeps.
async fn stored_track(app: &crate::common::App, parent: &str) -> serde_json::Value {
    app.execute_async(
        "const [p, done] = arguments; import('/store.js').then((m) => done({
           children: m.childrenOf(p).map((a) => a.id), track: m.trackOf(p),
           busy: [...m.fleet.trackCounts.keys()], tracks: m.fleet.tracks.size}));",
        vec![json!(parent)],
    )
    .await
}

#[tokio::test]
async fn a_window_indexes_children_by_the_tracks_and_keeps_counts_only_for_busy_ones() {
    let (_h, app, dir) = start("scale_tracks").await;
    let gate = dir.join("go");
    let wait = format!(
        "while [ ! -e '{}' ]; do sleep 0.1; done; echo two-done",
        gate.display()
    );
    let fam = family(
        &app,
        &dir,
        &[
            kid("one", "echo one"),
            kid("two", &wait),
            kid("three", "echo three"),
        ],
        "echo lead-done",
    )
    .await;
    let lead = fam.lead_id.clone();
    let kids: Vec<String> = fam.kids.iter().map(id).collect();

    // While "two" runs, the lead's track is busy: its counts are the backend's, kept.
    let busy = poll("the lead's track to count two running", TIMEOUT, || async {
        let s = stored_track(&app, &lead).await;
        let c = &s["track"]["counts"];
        (c["running"] == 1 && s["children"].as_array()?.len() == 3).then_some(s)
    })
    .await;
    assert_eq!(busy["children"], json!(kids), "oldest first: {busy}");
    assert_eq!(busy["track"]["members"], json!(kids));
    assert_eq!(busy["track"]["counts"]["total"], 3);
    assert_eq!(busy["busy"], json!([lead]));

    // Once it is done the track is quiet: no counts kept, the total is its size.
    std::fs::write(&gate, "").unwrap();
    let quiet = poll("the lead's track to be quiet", TIMEOUT, || async {
        let s = stored_track(&app, &lead).await;
        (s["busy"] == json!([])).then_some(s)
    })
    .await;
    let c = &quiet["track"]["counts"];
    assert_eq!(
        (
            &c["running"],
            &c["queued"],
            &c["needsYou"],
            &c["failed"],
            &c["total"]
        ),
        (&json!(0), &json!(0), &json!(0), &json!(0), &json!(3)),
        "{c}"
    );
    open_root(&app, &fam.lead).await;
    app.wait_for_text(&tid("track-counts"), |t| {
        t == "0 running · 0 need you · 3 total"
    })
    .await;

    // Archiving a child takes it out of the index; the last one going drops the track.
    for (n, gone) in kids.iter().enumerate() {
        let out = app
            .call_ui("/backend.js", "archiveAgent", vec![json!(gone)])
            .await;
        assert!(out.get("error").is_none(), "{out}");
        let left: Vec<&String> = kids[n + 1..].iter().collect();
        let s = poll("the archived child to leave the index", TIMEOUT, || async {
            let s = stored_track(&app, &lead).await;
            (s["children"] == json!(left) && s["track"]["members"] == json!(left)).then_some(s)
        })
        .await;
        assert_eq!(s["track"]["counts"]["total"], left.len(), "{s}");
    }
    // The pane redraws on the next frame after the store changed.
    poll("the emptied track to hide", TIMEOUT, || async {
        (!app.is_shown(&tid("track")).await).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_pane_keeps_the_last_message_an_agent_at_rest_left_in_its_file() {
    let h = Harness::new("scale_at_rest");
    let work = h.work_dir("rest");
    let (lead, id) = (AgentId::new().to_string(), AgentId::new().to_string());
    let message = "Reviewed the login form.\nThe tests pass.".repeat(40);
    let at = "2026-12-01T10:00:00.000Z";
    let record = |id: &str, title: &str| {
        json!({
            "id": id, "provider": "shell", "cwd": work.display().to_string(), "title": title,
            "lastStatus": "idle", "createdAt": at, "updatedAt": at, "lastActivityAt": at,
            "config": {"systemPrompt": "You review code."},
        })
    };
    put_record(&h, &record(&lead, "lead"));
    // A subagent whose last turn failed: its answer and prompt are left in its file at load.
    let mut sub = record(&id, "reviewer");
    for (k, v) in [
        ("labels", json!({"paseo.parent-agent-id": lead})),
        ("createdBy", json!(lead)),
        ("lastStatus", json!("error")),
        ("lastMessage", json!(message)),
        ("lastError", json!("the disk is full")),
        ("requiresAttention", json!(true)),
        ("attentionReason", json!("error")),
    ] {
        sub[k] = v;
    }
    put_record(&h, &sub);
    let app = h.launch_ready(&[]).await;
    // What the backend tells windows about it from now on (events), recorded by the page.
    app.execute_async(
        "const [id, done] = arguments; import('/backend.js').then((b) => b.listen('paseo://event',
           (m) => { if (m.event?.agent?.id === id) (window.__atRest ??= []).push(m.event.agent); }).then(() => done(null)));",
        vec![json!(id)],
    )
    .await;
    let stored = || async {
        app.execute_async(
            "const [id, done] = arguments; import('/store.js').then((m) =>
               done({card: m.fleet.agents.get(id), detail: m.detailOf(id), events: window.__atRest ?? []}));",
            vec![json!(id)],
        )
        .await
    };
    // Opening it fetches its whole snapshot and acknowledges the error (an update event).
    app.call_ui("/gestures/tabs.js", "openAgent", vec![json!(id)])
        .await;
    app.wait_for(&sel_pane(&id)).await;
    poll("the pane's snapshot, acknowledged", TIMEOUT, || async {
        let s = stored().await;
        let d = &s["detail"];
        (s["card"]["requiresAttention"].is_null()
            && d["requiresAttention"] == false
            && d["lastMessage"] == message.as_str())
        .then_some(())
    })
    .await;
    // Detached, it is a root now: one more event about it, at rest.
    let out = app
        .call_ui("/backend.js", "detachAgent", vec![json!(id)])
        .await;
    assert!(out.get("error").is_none(), "{out}");
    let s = poll("the detach's event to be applied", TIMEOUT, || async {
        let s = stored().await;
        (s["card"]["parentAgentId"].is_null() && s["detail"]["parentAgentId"].is_null())
            .then_some(s)
    })
    .await;
    // The events carry cards, which never hold the text...
    let events = s["events"].as_array().unwrap();
    assert!(!events.is_empty());
    for ev in events {
        assert!(ev.get("lastMessage").is_none(), "{ev}");
        assert!(ev.get("config").is_none(), "{ev}");
    }
    // ...and the pane's snapshot takes the last event's card, keeping the text it had fetched.
    let d = &s["detail"];
    assert_eq!(d["lastMessage"], message.as_str(), "{d}");
    assert_eq!(d["config"]["systemPrompt"], "You review code.");
    assert!(d.get("atRest").is_none(), "{d}");
    // The file still holds it, and get_agent reads it back.
    assert_eq!(h.agent_record(&id)["lastMessage"], message.as_str());
    assert_eq!(app.agent_detail(&id).await["lastMessage"], message.as_str());
}
