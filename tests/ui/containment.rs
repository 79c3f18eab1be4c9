//! Containment in the window (SPEC 16): the new-agent form's Unconfined choice with its warning,
//! and each agent's header saying "contained" or "unconfined" beside its power.

use crate::common::{tid, Harness};

#[tokio::test]
async fn the_form_offers_unconfined_with_its_warning_and_the_header_says_which() {
    form_and_header(Harness::new("containment_ui"), "").await;
    let dark = Harness::builder("containment_ui_dark")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    form_and_header(dark, "-dark").await;
}

async fn form_and_header(h: Harness, theme: &str) {
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("boxed");
    // What only an unconfined agent can list: the app's data root.
    let data = h.home().display().to_string();
    let shell = "[data-testid=\"provider-option\"][data-provider=\"shell\"]";

    for (title, unconfined) in [("boxed", false), ("free", true)] {
        app.click(&tid("new-agent")).await;
        app.wait_for(&tid("new-agent-form")).await;
        app.click(&format!("{shell} input")).await;
        // The first agent adds the folder as a workspace; the form then offers it.
        if app.is_shown(&tid("new-agent-directory")).await {
            app.type_into(&tid("new-agent-directory"), &dir.display().to_string())
                .await;
        }
        app.type_into(&tid("new-agent-title"), title).await;
        app.type_into(
            &tid("new-agent-prompt"),
            &format!("ls '{data}'; echo listed"),
        )
        .await;
        assert!(!app.is_shown(&tid("new-agent-unconfined-warning")).await);
        if unconfined {
            app.click(&tid("new-agent-unconfined")).await;
            let warning = app
                .wait_for_text(&tid("new-agent-unconfined-warning"), |t| !t.is_empty())
                .await;
            assert!(warning.contains("whole reach"), "{warning}");
            app.screenshot(&format!("new-agent-unconfined{theme}"))
                .await;
        }
        app.click(&tid("new-agent-submit")).await;
        app.wait_for(&tid("agent-pane")).await;
        let want = if unconfined {
            "unconfined"
        } else {
            "contained"
        };
        app.wait_for_text(&tid("agent-title"), |t| t == title).await;
        app.wait_for_attr(&tid("agent-reach"), "data-reach", want)
            .await;
        assert_eq!(app.text(&tid("agent-reach")).await, want);
        // The box is real: the contained agent sees the data root empty.
        let shown = app
            .wait_for_text(&tid("timeline"), |t| t.contains("listed"))
            .await;
        assert_eq!(shown.contains("mcp-token"), unconfined, "{shown}");
    }
    let agents = app.fleet_snapshot().await["agents"].clone();
    assert_eq!(agents.as_array().map(Vec::len), Some(2), "{agents}");
    // No containment problem here: the status bar says nothing about it.
    assert!(!app.is_shown(&tid("containment-status")).await);
    app.screenshot(&format!("agent-unconfined{theme}")).await;
    app.quit().await;
}
