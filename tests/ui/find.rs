//! Find in the timeline (Ctrl+F): the backend searches the agent's whole timeline file, so a
//! match long paged out of the window (and out of the backend's memory) is found, counted,
//! paged back in and highlighted; Enter / Shift+Enter and the arrows step through the matches.

use crate::common::{poll, tid, TIMEOUT};
use crate::helpers::*;
use fantoccini::key::Key;
use serde_json::{json, Value};

#[tokio::test]
async fn ctrl_f_finds_in_the_timeline_what_is_paged_out_to_disk_too() {
    let (_h, app, dir) = start("find_in_timeline").await;
    // Three matches (the word is built at run time, so the prompt itself has none): the first
    // output item, one in the middle, the last; between them 2,800 items (stdout and stderr
    // alternate with a pause, so each line is its own item), more than the backend keeps in
    // memory and far more than the window holds. The last line waits for the readers to catch up,
    // so on a busy machine it is still the last item (stdout and stderr are read apart).
    let script = "perl -MTime::HiRes=sleep -e '$|=1; select(STDERR); $|=1; select(STDOUT); \
        my $w = \"nee\" . \"dle\"; print uc($w) . \" first\\n\"; sleep 0.01; \
        for my $i (1..1400) { print STDOUT \"out $i\\n\"; sleep 0.0003; print STDERR \"err $i\\n\"; sleep 0.0003; \
        if ($i == 700) { print STDOUT \"$w middle\\n\"; sleep 0.001; } } sleep 0.3; print \"the $w last\\n\";'";
    let agent = app.create_shell(&dir, "chatty", script).await;
    let agent_id = id(&agent);
    poll(
        "the stream to end",
        std::time::Duration::from_secs(90),
        || async { app.agent(&agent_id).await.filter(|a| a["status"] == "idle") },
    )
    .await;
    open_root(&app, &agent).await;
    app.wait_for_text(
        &format!(
            "{} [data-testid=\"timeline-item\"]:last-child",
            sel_pane(&agent_id)
        ),
        |t| t.contains("last"),
    )
    .await;
    let held = app
        .execute_async(
            "const [id, done] = arguments;
             import('/timeline-model.js').then((m) => done(m.modelFor(id).firstSeq));",
            vec![json!(agent_id)],
        )
        .await;
    let held_from = held.as_u64().unwrap();
    assert!(
        held_from > 100,
        "the window holds the whole timeline: {held}"
    );

    // Ctrl+F opens the bar with the focus in it; the newest match is shown first.
    let ctrl = |key: &str| format!("{}{key}{}", Key::Control, Key::Null);
    app.type_into("body", &ctrl("f")).await;
    let focused = app
        .execute(
            "return document.activeElement?.dataset.testid ?? null",
            vec![],
        )
        .await;
    assert_eq!(focused, json!("find-input"));
    app.type_into(&tid("find-input"), "needle").await;
    app.wait_for_text(&tid("find-count"), |t| t == "3 of 3")
        .await;
    let current = || async {
        app.execute(
            r#"const all = document.querySelectorAll('[data-testid="find-current"], mark.find-hit.current');
               if (all.length !== 1) return { count: all.length };
               const m = all[0];
               const item = m.closest('[data-testid="timeline-item"]');
               const r = m.getBoundingClientRect(), t = document.querySelector('[data-testid="timeline"]').getBoundingClientRect();
               return { text: m.textContent, seq: Number(item.dataset.seq), item: item.textContent,
                        visible: r.top >= t.top && r.bottom <= t.bottom };"#,
            vec![],
        )
        .await
    };
    let wait_current = |want: &'static str| async move {
        poll(
            &format!("the current match in {want:?}"),
            TIMEOUT,
            || async {
                let c: Value = current().await;
                (c["item"].as_str().is_some_and(|t| t.contains(want))
                    && c["visible"] == json!(true))
                .then_some(c)
            },
        )
        .await
    };
    let c = wait_current("needle last").await;
    assert_eq!(c["text"], json!("needle"));
    app.screenshot("find-last").await;

    // Shift+Enter goes back to the middle one, then to the first, which was only on disk.
    app.type_into(
        &tid("find-input"),
        &format!("{}{}{}", Key::Shift, Key::Enter, Key::Null),
    )
    .await;
    app.wait_for_text(&tid("find-count"), |t| t == "2 of 3")
        .await;
    wait_current("needle middle").await;
    app.type_into(
        &tid("find-input"),
        &format!("{}{}{}", Key::Shift, Key::Enter, Key::Null),
    )
    .await;
    app.wait_for_text(&tid("find-count"), |t| t == "1 of 3")
        .await;
    let first = wait_current("NEEDLE first").await;
    assert_eq!(first["text"], json!("NEEDLE"));
    let seq = first["seq"].as_u64().unwrap();
    assert!(
        seq < held_from,
        "the first match (item {seq}) was in the window already (from {held_from})"
    );
    // It stays in view once the page has settled (nothing scrolls it away afterwards).
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let still: Value = current().await;
    assert_eq!(
        (&still["seq"], &still["visible"]),
        (&first["seq"], &json!(true)),
        "{still}"
    );
    app.screenshot("find-first-from-disk").await;

    // Enter and the ↓ button step forward, wrapping around.
    app.click(&tid("find-next")).await;
    app.wait_for_text(&tid("find-count"), |t| t == "2 of 3")
        .await;
    app.type_into(&tid("find-input"), &Key::Enter.to_string())
        .await;
    app.wait_for_text(&tid("find-count"), |t| t == "3 of 3")
        .await;
    app.type_into(&tid("find-input"), &Key::Enter.to_string())
        .await;
    app.wait_for_text(&tid("find-count"), |t| t == "1 of 3")
        .await;

    // No match says so; Esc closes the bar and takes the highlights away.
    app.type_into(&tid("find-input"), "zz-absent").await;
    app.wait_for_text(&tid("find-count"), |t| t == "No matches")
        .await;
    app.type_into(&tid("find-input"), &Key::Escape.to_string())
        .await;
    assert!(!app.is_shown(&tid("find-bar")).await);
    assert_eq!(app.count("mark.find-hit").await, 0);
    app.quit().await;
}
