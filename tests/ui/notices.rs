//! Problems found at load (a record that cannot be parsed, a wrong config field) shown as
//! notices, nothing dropped, and dismissing one; and a finish notice in its parent's timeline,
//! shown from its structure with the child's text exactly as the child wrote it.

use crate::common::{tid, Harness};
use crate::helpers::*;

#[tokio::test]
async fn problems_found_at_load_are_shown_as_notices() {
    let h = Harness::new("load_notices");
    // A record that cannot be parsed, and a config.json with a wrong field.
    let bad_dir = h.home().join("agents").join("tmp-broken");
    std::fs::create_dir_all(&bad_dir).unwrap();
    let bad = bad_dir.join("0b6c2a3e-1111-4222-8333-444455556666.json");
    std::fs::write(
        &bad,
        b"{\"id\": \"0b6c2a3e-1111-4222-8333-444455556666\", truncated",
    )
    .unwrap();
    std::fs::write(h.home().join("config.json"), br#"{"providers": 3}"#).unwrap();
    let app = h.launch_ready(&[]).await;
    app.wait_count(&tid("notice"), 2).await;
    let text = app.text(&tid("notices")).await;
    assert!(
        text.contains("0b6c2a3e-1111-4222-8333-444455556666.json"),
        "{text}"
    );
    assert!(text.contains("quarantine"), "{text}");
    assert!(
        text.contains("config.json: providers: invalid type: integer `3`, expected an object"),
        "{text}"
    );
    // Nothing was dropped: the record was moved aside; config.json is left in place, only its
    // wrong setting unused, the rest applying (SPEC 11; SPEC 15: never replaced unseen).
    assert!(!bad.exists());
    assert_eq!(
        std::fs::read_dir(h.home().join("quarantine"))
            .unwrap()
            .count(),
        1
    );
    assert_eq!(
        std::fs::read(h.home().join("config.json")).unwrap(),
        br#"{"providers": 3}"#
    );
    app.screenshot("notices").await;
    // Dismissed, a notice goes away.
    app.click(&tid("notice-dismiss")).await;
    app.wait_count(&tid("notice"), 1).await;
    app.quit().await;
}

/// SPEC 4 and 14: the notice a subagent leaves its parent shows the child's title, the outcome in
/// the app's words, and the child's error and last message quoted exactly as written (`<`, `>`
/// and `&` literally, never escaped twice, never parsed back from the notice's text).
#[tokio::test]
async fn a_finish_notice_shows_the_childs_text_literally_and_its_structure() {
    finish_notice(Harness::new("finish_notice_ui"), "").await;
    let dark = Harness::builder("finish_notice_ui_dark")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    finish_notice(dark, "-dark").await;
}

async fn finish_notice(h: Harness, theme: &str) {
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("app");
    let script = "printf 'if a < b && c > d then\\n</paseo-notice> ok\\n'; \
                  echo 'warning: <x> & more' >&2; exit 3";
    let fam = family(&app, &dir, &[kid("kid <1>", script)], "true").await;
    open_root(&app, &fam.lead).await;
    let notice = tid("timeline-notice");
    app.wait_for(&notice).await;
    let outcome = app
        .text(&format!("{notice} {}", tid("notice-outcome")))
        .await;
    assert_eq!(outcome, "failed");
    let head = app.text(&format!("{notice} .notice-head")).await;
    assert!(head.starts_with("kid <1>"), "{head}");
    let excerpt = app
        .text(&format!("{notice} {} blockquote", tid("notice-excerpt")))
        .await;
    assert!(
        excerpt.contains("if a < b && c > d then") && excerpt.contains("</paseo-notice> ok"),
        "{excerpt}"
    );
    let error = app
        .text(&format!("{notice} {} blockquote", tid("notice-error")))
        .await;
    assert!(error.contains("warning: <x> & more"), "{error}");
    let all = app.text(&notice).await;
    assert!(
        !all.contains("&lt;") && !all.contains("&gt;") && !all.contains("&amp;"),
        "{all}"
    );
    app.screenshot(&format!("finish-notice{theme}")).await;
    app.quit().await;
}
