//! Catching up (ui/sync.js): this machine's events reach the window numbered, as a host's do,
//! and its snapshot says the number of the last one it reflects. An event the window's
//! snapshot already reflects is skipped; news that events were missed (what the desktop shell
//! sends when a window falls behind the backend) makes the window take the snapshot again,
//! which brings back what the lost events said, and the numbered events after it apply.

use crate::common::{poll, Harness, TIMEOUT};
use crate::helpers::*;
use paseo_core::model::AgentId;
use serde_json::{json, Value};

#[tokio::test]
async fn a_window_skips_what_its_snapshot_holds_and_takes_it_again_after_missed_events() {
    let h = Harness::new("catch_up");
    let dir = h.work_dir("app");
    let ids: Vec<String> = ["first", "second"]
        .iter()
        .map(|title| {
            let id = AgentId::new().to_string();
            put_record(
                &h,
                &json!({"id": id, "provider": "shell", "cwd": dir.display().to_string(),
                    "title": title, "lastStatus": "idle",
                    "createdAt": "2026-12-01T10:00:00.000Z", "updatedAt": "2026-12-01T10:00:00.000Z"}),
            );
            id
        })
        .collect();
    let (a, b) = (&ids[0], &ids[1]);
    let app = h.launch_ready(&[]).await;
    let in_page = |script: &str, args: Vec<Value>| {
        let script = format!(
            "const args = [...arguments]; const done = args.pop();
             Promise.all([import('/sync.js'), import('/store.js')]).then(([sync, store]) => {{ {script} }});"
        );
        let app = &app;
        async move { app.execute_async(&script, args).await }
    };

    // This machine's fleet is numbered like a host's, and its start took one snapshot: the
    // events since came without a gap.
    let seq = in_page("done(sync.seqOf(sync.HERE));", vec![]).await;
    assert!(seq.is_u64(), "{seq}");
    let loads = in_page("done(sync.loadsOf(sync.HERE));", vec![]).await;
    assert_eq!(loads, 1);

    // An event numbered at or below what the window holds is one its snapshot reflects: skipped.
    let title = in_page(
        "const [id] = args;
         const card = { ...store.fleet.agents.get(id), title: 'stale' };
         sync.onEvent({ seq: sync.seqOf(sync.HERE), event: { type: 'agentUpdated', agent: card } });
         done(store.fleet.agents.get(id).title);",
        vec![json!(a)],
    )
    .await;
    assert_eq!(title, "first");

    // Events lost on the way: the window drops what they would have told it (here: an agent
    // it no longer holds), then hears that they were missed up to the next number.
    let held = in_page(
        "const [id] = args;
         store.fleet.agents.delete(id);
         sync.onEvent({ seq: sync.seqOf(sync.HERE) + 1, missed: 1 });
         done(store.fleet.agents.has(id));",
        vec![json!(b)],
    )
    .await;
    assert_eq!(held, false);
    // The next real event is that number (a snapshot taken before it reflects less than the
    // news says was missed, and is taken again).
    let ws = app
        .execute_async(
            "const [id, done] = arguments; import('/store.js').then((s) => done(s.fleet.agents.get(id).workspaceId));",
            vec![json!(a)],
        )
        .await;
    app.call_backend("renameWorkspace", vec![ws.clone(), json!("renamed")])
        .await;
    // The snapshot taken again brings the agent back, and the rename shows: nothing missed,
    // the numbering goes on past it.
    let caught_up = poll("the window to catch up", TIMEOUT, || async {
        let v = in_page(
            "const [b, ws] = args;
             done({ back: store.fleet.agents.has(b), name: store.fleet.workspaces.get(ws)?.name ?? null,
                    seq: sync.seqOf(sync.HERE) });",
            vec![json!(b), ws.clone()],
        )
        .await;
        (v["back"] == true && v["name"] == "renamed").then_some(v)
    })
    .await;
    assert!(
        caught_up["seq"].as_u64() > seq.as_u64(),
        "{caught_up} after {seq}"
    );
    // The sidebar shows the workspace's new name (drawn from the store after the catch-up).
    poll("the renamed workspace in the sidebar", TIMEOUT, || async {
        let ws = ws.as_str()?;
        app.text(&sel_ws(ws))
            .await
            .contains("renamed")
            .then_some(())
    })
    .await;
}
