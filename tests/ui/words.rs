//! Words that tell the truth: the confirm's button is the gesture's verb (its mnemonic works)
//! and Return alone cancels; the quit confirm names who resumes and who is stopped for good; a
//! shell agent's composer says each prompt runs in a fresh shell, and it does.

use crate::common::{poll, tid, Answer, App, Harness, TIMEOUT};
use crate::helpers::*;

/// Resizes the app's main window (no window manager here: xdotool sets the size directly) and
/// waits until the page is laid out at the new size.
pub async fn resize(h: &Harness, app: &App, width: u32, height: u32) {
    let id = h.wait_for_window("Paseo").await;
    let ok = tokio::process::Command::new("xdotool")
        .env("DISPLAY", h.display())
        .args(["windowsize", "--sync", &id.to_string()])
        .args([width.to_string(), height.to_string()])
        .status()
        .await
        .expect("cannot run xdotool")
        .success();
    assert!(ok, "xdotool could not resize the window");
    poll("the page at its new size", TIMEOUT, || async {
        let size = app
            .execute("return [innerWidth, innerHeight]", vec![])
            .await;
        (size == serde_json::json!([width, height])).then_some(())
    })
    .await;
    // One more frame for the layout to be painted.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
}

#[tokio::test]
async fn confirm_buttons_are_verbs_and_return_alone_cancels() {
    let (h, app, dir) = start("confirm_verbs").await;
    let fam = family(&app, &dir, &[kid("lint", "echo clean")], "echo ok").await;
    let lint = fam.kid("lint");
    open_root(&app, &fam.lead).await;
    app.wait_for_attr(&sel_row(&lint), "data-status", "idle")
        .await;

    // Return alone answers with the focused button: Cancel. Nothing is archived.
    row_action(&app, &lint, "track-archive").await;
    h.wait_for_window("Archive subagent?").await;
    h.screenshot_screen("archive-dialog");
    h.answer_dialog("Archive subagent?", Answer::Return).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!archived_on_disk(&h, &lint), "Return must not archive");
    assert_eq!(app.count(&sel_row(&lint)).await, 1);

    // The action button is labelled "Archive": its mnemonic, Alt+A, archives. (A button
    // labelled OK has the mnemonic Alt+O, and Alt+A would do nothing.)
    row_action(&app, &lint, "track-archive").await;
    h.answer_dialog("Archive subagent?", Answer::Keys("alt+a"))
        .await;
    wait_archived_on_disk(&h, &[&lint], true).await;
    // Its only subagent gone, the track hides.
    poll("the track to hide", TIMEOUT, || async {
        (!app.is_shown(&tid("track")).await).then_some(())
    })
    .await;
    app.quit().await;
}

#[tokio::test]
async fn the_quit_confirm_names_the_shell_agents_it_stops_for_good() {
    let (h, app, dir) = start("quit_words").await;
    let build = app
        .create_shell(&dir, "build", "echo compiling; sleep 300")
        .await;
    app.wait_for_status(&id(&build), "running").await;

    // No tray host here: closing the main window quits, after the confirm.
    h.close_window("Paseo").await;
    h.wait_for_window("Quit Paseo?").await;
    h.screenshot_screen("quit-dialog");
    h.wait_for_log("Stopped for good (a shell or command turn is killed and does not resume")
        .await;
    assert!(
        h.log_text()
            .contains("does not resume; its output so far is kept): build."),
        "the confirm names the shell agent"
    );
    assert!(
        !h.log_text().contains("Resume their session"),
        "no agent here resumes"
    );
    h.answer_dialog("Quit Paseo?", Answer::Return).await;
    app.wait_for_status(&id(&build), "running").await;

    // Alt+Q: the button is labelled "Quit".
    h.close_window("Paseo").await;
    h.answer_dialog("Quit Paseo?", Answer::Keys("alt+q")).await;
    poll("the app to quit", TIMEOUT, || async {
        h.lock_is_free().then_some(())
    })
    .await;
    let record = h.agent_record(&id(&build));
    assert_eq!(record["lastStatus"], "closed", "{record}");
    app.quit().await;
}

#[tokio::test]
async fn a_shell_agents_composer_says_each_prompt_runs_in_a_fresh_shell() {
    let (h, app, dir) = start("shell_hint").await;
    let shell = app
        .create_shell(
            &dir,
            "sh",
            "cd / && export FOO=bar && echo FOO=$FOO in $(pwd)",
        )
        .await;
    let sid = id(&shell);
    open_root(&app, &shell).await;
    app.wait_for_attr(&sel_pane(&sid), "data-status", "idle")
        .await;
    let hint = app.text(&tid("composer-hint")).await;
    assert!(hint.contains("fresh shell"), "{hint}");
    assert!(hint.contains("cd and export do not carry over"), "{hint}");

    // And it is true: the next prompt starts again in the agent's folder, without FOO.
    app.type_into(&tid("composer-input"), "echo \"FOO=[$FOO] in $(pwd)\"")
        .await;
    app.click(&tid("composer-send")).await;
    let want = format!("FOO=[] in {}", dir.display());
    app.wait_for_text(&sel_pane(&sid), |t| t.contains(&want))
        .await;
    app.wait_for_attr(&sel_pane(&sid), "data-status", "idle")
        .await;
    app.execute("document.activeElement?.blur()", vec![]).await;
    app.screenshot("shell-hint-1200").await;
    resize(&h, &app, 900, 700).await;
    app.screenshot("shell-hint-900").await;
    app.quit().await;
}
