//! Problems found at load (a record that cannot be parsed, a wrong config field) shown as
//! notices, nothing dropped, and dismissing one.

use crate::common::{tid, Harness};

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
        text.contains("config.json: providers: expected an object"),
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
