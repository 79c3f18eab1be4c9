//! The timeline: older items page back from disk when scrolled up (past what the backend keeps
//! in memory), the DOM stays bounded, and the way back to the newest items.

use crate::common::{poll, tid};
use crate::helpers::*;
use fantoccini::key::Key;
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test]
async fn the_timeline_pages_older_items_back_from_disk_when_scrolled_up() {
    let (_h, app, dir) = start("timeline_paging").await;
    // Lines alternate between stdout and stderr with a pause, so each is its own item: more
    // than the 2,000 the backend keeps in memory, so the oldest pages come from disk.
    let script = "perl -MTime::HiRes=sleep -e '$|=1; select(STDERR); $|=1; select(STDOUT); \
        for my $i (1..1400) { print STDOUT \"out $i\\n\"; sleep 0.0003; print STDERR \"err $i\\n\"; sleep 0.0003; }'";
    let chatty = app.create_shell(&dir, "chatty", script).await;
    let chatty_id = id(&chatty);
    poll("the turn to end", Duration::from_secs(60), || async {
        app.agent(&chatty_id)
            .await
            .filter(|a| a["status"] == "idle")
    })
    .await;
    let newest = app
        .call_ui(
            "/backend.js",
            "timeline",
            vec![json!(chatty_id), Value::Null, json!(1)],
        )
        .await;
    let last_seq = newest[0]["seq"].as_u64().unwrap();
    assert!(
        last_seq > 2100,
        "only {last_seq} items: not enough to page from disk"
    );

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
