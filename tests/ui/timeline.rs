//! The timeline: older items page back from disk when scrolled up (past what the backend keeps
//! in memory), the DOM stays bounded, and the way back to the newest items.

use crate::common::{poll, tid, App};
use crate::helpers::*;
use fantoccini::key::Key;
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test]
async fn the_timeline_pages_older_items_back_from_disk_when_scrolled_up() {
    let (_h, app, dir) = start("timeline_paging").await;
    // Lines alternate between stdout and stderr with a pause, so each is mostly its own item
    // (a reader behind on a busy machine takes a few together): more than the 2,000 the
    // backend keeps in memory, so the oldest pages come from disk.
    let script = "perl -MTime::HiRes=sleep -e '$|=1; select(STDERR); $|=1; select(STDOUT); \
        for my $i (1..2000) { print STDOUT \"out $i\\n\"; sleep 0.0003; print STDERR \"err $i\\n\"; sleep 0.0003; }'";
    let chatty = app.create_shell(&dir, "chatty", script).await;
    let chatty_id = id(&chatty);
    stream_ended(&app, &chatty_id).await;
    let last_seq = streamed_past(&app, &chatty_id, script, 2100).await;

    open_root(&app, &chatty).await;
    app.wait_for(&format!(
        "[data-testid=\"timeline-item\"][data-seq=\"{last_seq}\"]"
    ))
    .await;
    let shown = app.count(&tid("timeline-item")).await;
    assert!(
        shown <= 200,
        "{shown} items in the DOM while following the tail"
    );

    // Scrolling up pages older items in, down to the first one (the prompt), and the DOM stays
    // bounded.
    let first = "[data-testid=\"timeline-item\"][data-seq=\"1\"]";
    poll(
        "the first item after scrolling up",
        Duration::from_secs(60),
        || async {
            // The Home key, as a user reading back would press it.
            let timeline = app.find(&tid("timeline")).await;
            timeline.send_keys(&Key::Home.to_string()).await.ok()?;
            (app.count(first).await == 1).then_some(())
        },
    )
    .await;
    assert_eq!(
        app.find(first).await.attr("data-kind").await.unwrap(),
        Some("user".to_string())
    );
    app.wait_for_text(&tid("timeline-status"), |t| {
        t.contains("Start of the timeline")
    })
    .await;
    let shown = app.count(&tid("timeline-item")).await;
    assert!(shown <= 1500, "{shown} items in the DOM");
    // The way back to the newest items.
    app.click(&tid("timeline-latest")).await;
    app.wait_for(&format!(
        "[data-testid=\"timeline-item\"][data-seq=\"{last_seq}\"]"
    ))
    .await;
    app.quit().await;
}

/// What the window keeps of a timeline it does not show (`ui/timeline-model.js`, MAX_ITEMS).
const KEPT_ITEMS: u64 = 3000;

#[tokio::test]
async fn a_timeline_in_a_background_tab_stays_bounded_while_its_agent_streams() {
    let (_h, app, dir) = start("timeline_background").await;
    // Waits for a file, then prints 6,000 lines to each stream, alternating (each line its own
    // item, but for those a reader behind on a busy machine takes together): well over the
    // 3,000 items the window keeps of an agent it does not show.
    let go = dir.join("go");
    let stream = "perl -MTime::HiRes=sleep -e '$|=1; select(STDERR); $|=1; select(STDOUT); \
        for my $i (1..6000) { print STDOUT \"out $i\\n\"; sleep 0.0003; print STDERR \"err $i\\n\"; sleep 0.0003; }'";
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; {stream}",
        go.display()
    );
    let chatty = app.create_shell(&dir, "chatty", &script).await;
    let chatty_id = id(&chatty);
    // Shown first (its timeline model is created and drawn), then left for another agent's tab.
    open_root(&app, &chatty).await;
    app.wait_for(&format!(
        "{} {}",
        sel_pane(&chatty_id),
        tid("timeline-item")
    ))
    .await;
    let quiet = app.create_shell(&dir, "quiet", "echo quiet").await;
    open_root(&app, &quiet).await;
    std::fs::write(&go, "").unwrap();
    stream_ended(&app, &chatty_id).await;
    streamed_past(&app, &chatty_id, stream, 5000).await;
    let last_seq = assert_held_bounded(&app, &chatty_id, 5000).await;
    // Back on its tab: the newest items, bounded in the DOM.
    app.click(&sel_tab(&chatty_id)).await;
    app.wait_for(&format!(
        "[data-testid=\"timeline-item\"][data-seq=\"{last_seq}\"]"
    ))
    .await;
    let shown = app.count(&tid("timeline-item")).await;
    assert!(shown <= 200, "{shown} items in the DOM while following");
    // The same from the workspace's home tab: nothing of the agent on screen, a second stream.
    app.click(&tid("tab-home")).await;
    app.wait_for(&tid("workspace-home")).await;
    app.call_backend("sendPrompt", vec![json!(chatty_id), json!(stream)])
        .await;
    app.wait_for_status(&chatty_id, "running").await;
    stream_ended(&app, &chatty_id).await;
    streamed_past(&app, &chatty_id, stream, last_seq + 5000).await;
    assert_held_bounded(&app, &chatty_id, last_seq + 5000).await;
    app.quit().await;
}

/// Asserts the window follows `agent`'s timeline to its newest item (beyond `more_than`) while
/// holding at most [`KEPT_ITEMS`] of it; returns the newest seq.
async fn assert_held_bounded(app: &App, agent: &str, more_than: u64) -> u64 {
    let held = app
        .execute_async(
            "const [id, done] = arguments;
             import('/timeline-model.js').then((m) => {
               const model = m.modelFor(id);
               done({ n: model.items.length, last: model.lastSeq });
             });",
            vec![json!(agent)],
        )
        .await;
    let last_seq = newest_seq(app, agent).await;
    assert!(last_seq > more_than, "only {last_seq} items streamed");
    assert_eq!(held["last"].as_u64(), Some(last_seq), "{held}");
    let n = held["n"].as_u64().unwrap();
    assert!(
        n <= KEPT_ITEMS,
        "{n} items of a timeline not on screen held in the window"
    );
    last_seq
}

/// Waits (up to a minute) until `agent`'s streaming turn has ended.
async fn stream_ended(app: &App, agent: &str) {
    poll("the stream to end", Duration::from_secs(60), || async {
        app.agent(agent).await.filter(|a| a["status"] == "idle")
    })
    .await;
}

/// Lets `agent` run `prompt` again until its timeline is past `more_than` items; returns the
/// newest seq. One turn prints enough on an idle machine, but a reader behind on a busy one takes
/// lines together into fewer items (the suite runs beside the window's tests): a turn that fell
/// short is followed by another, at most four.
async fn streamed_past(app: &App, agent: &str, prompt: &str, more_than: u64) -> u64 {
    for _ in 0..4 {
        let seq = newest_seq(app, agent).await;
        if seq > more_than {
            return seq;
        }
        app.call_backend("sendPrompt", vec![json!(agent), json!(prompt)])
            .await;
        app.wait_for_status(agent, "running").await;
        stream_ended(app, agent).await;
    }
    let seq = newest_seq(app, agent).await;
    assert!(seq > more_than, "only {seq} items after five turns");
    seq
}

/// The seq of `agent`'s newest timeline item, as the backend pages it.
async fn newest_seq(app: &App, agent: &str) -> u64 {
    let newest = app
        .call_ui(
            "/backend.js",
            "timeline",
            vec![json!(agent), Value::Null, json!(1)],
        )
        .await;
    newest[0]["seq"].as_u64().unwrap()
}
