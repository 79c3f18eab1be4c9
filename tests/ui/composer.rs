//! Issue 17.11: the composer's placeholder stays on one line at the default window size (a
//! textarea wraps a long placeholder and cuts off the second line), whatever the agent's title.

use crate::common::Harness;
use crate::helpers::*;
use serde_json::Value;

/// The placeholder and the widths that matter, measured by the layout engine: the text laid out
/// in a span with the input's font, against the input's content box.
async fn placeholder_fit(app: &crate::common::App) -> (String, f64, f64) {
    let script = r#"
        const el = document.querySelector('[data-testid="composer-input"]');
        const s = getComputedStyle(el);
        const probe = document.createElement('span');
        for (const k of ['fontFamily', 'fontSize', 'fontWeight', 'fontStyle', 'letterSpacing']) probe.style[k] = s[k];
        probe.style.whiteSpace = 'pre';
        probe.style.position = 'absolute';
        probe.textContent = el.placeholder;
        document.body.append(probe);
        const width = probe.getBoundingClientRect().width;
        probe.remove();
        const room = el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
        return [el.placeholder, width, room];
    "#;
    let got = app.execute(script, vec![]).await;
    let num = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    (
        got[0].as_str().unwrap_or_default().to_string(),
        num(&got[1]),
        num(&got[2]),
    )
}

#[tokio::test]
async fn the_composer_placeholder_stays_on_one_line() {
    let h = Harness::new("composer_placeholder");
    let dir = h.work_dir("repo");
    let app = h.launch_ready(&[]).await;

    let long = "Refactor the storage layer and document every field of the records";
    let agent = app.create_shell(&dir, long, "true").await;
    open_root(&app, &agent).await;
    app.wait_for_attr(&sel_pane(&id(&agent)), "data-status", "idle")
        .await;
    let (text, width, room) = placeholder_fit(&app).await;
    assert!(room > 100.0, "the composer has no room: {room}");
    assert!(
        width <= room,
        "placeholder {text:?} is {width}px wide in a {room}px box: it wraps"
    );
    // Shortened, it still names the agent and says how to send.
    assert!(text.starts_with(&format!("Send to {long}")), "{text:?}");
    assert!(text.contains("Enter to send"), "{text:?}");

    // A short title keeps the whole hint.
    let short = app.create_shell(&dir, "fix", "true").await;
    open_root(&app, &short).await;
    app.wait_for_attr(&sel_pane(&id(&short)), "data-status", "idle")
        .await;
    let (text, width, room) = placeholder_fit(&app).await;
    assert!(width <= room, "{text:?}: {width}px in {room}px");
    assert!(text.contains("Shift+Enter"), "{text:?}");
    app.quit().await;
}
