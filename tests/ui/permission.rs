//! The permission prompt, with the real Claude Code CLI against the scripted Anthropic API: a
//! Bash call waits collapsed in the pane until Allow runs it or Deny refuses it, and the files it
//! would make are checked on disk; the header sums the usage Claude Code reported.

use crate::anthropic::{bash_script, AnthropicStandIn, Input};
use crate::common::{poll, tid, App, Harness, TIMEOUT};
use crate::helpers::*;
use serde_json::{json, Value};

/// The `n`th tool call line (from 1) in the pane `pane`, once there is one.
async fn tool_call(app: &App, pane: &str, n: usize) -> String {
    let script = "const calls = document.querySelectorAll(arguments[0] + ' [data-testid=\"timeline-item\"][data-kind=\"tool_call\"]'); \
        const el = calls[arguments[1] - 1]; return el ? el.dataset.seq : null;";
    let seq = poll(&format!("tool call {n} in {pane}"), TIMEOUT, || async {
        app.execute(script, vec![json!(pane), json!(n)])
            .await
            .as_str()
            .map(str::to_string)
    })
    .await;
    format!("{pane} [data-testid=\"timeline-item\"][data-seq=\"{seq}\"]")
}

#[tokio::test]
async fn a_claude_agents_tool_call_waits_for_the_permission_prompt_in_the_pane() {
    let h = Harness::new("permission_prompt");
    let api = AnthropicStandIn::start(|req| bash_script(req.input())).await;
    use_claude(&h, &api);
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("repo");
    let ws = app.add_workspace(&dir).await;
    let builder = app
        .create_agent(
            json!({"provider": "claude", "model": "standin-model", "title": "builder",
            "prompt": "please use bash allowed-file", "workspaceId": ws["workspaceId"],
            "autoArchive": false}),
        )
        .await;
    let builder_id = id(&builder);
    open_root(&app, &builder).await;
    let pane = sel_pane(&builder_id);

    // The model asks for Bash: the prompt names the tool and the command, the agent and its
    // workspace need the user, the call waits collapsed, and nothing has run.
    let prompt = app
        .wait_for_text(&tid("permission"), |t| t.contains("Bash"))
        .await;
    assert!(prompt.contains("touch allowed-file"), "{prompt}");
    assert!(prompt.contains("builder"), "{prompt}");
    app.wait_for_attr(&pane, "data-bucket", "needs_input").await;
    app.wait_for_attr(&sel_ws(ws_id(&ws)), "data-status", "needs_input")
        .await;
    let call = tool_call(&app, &pane, 1).await;
    let summary = app
        .wait_for_text(&format!("{call} summary"), |t| t.contains("Bash"))
        .await;
    assert!(summary.contains("touch allowed-file"), "{summary}");
    let details = format!("{call} details");
    assert_eq!(app.prop(&details, "open").await, json!(false));
    // The call line itself says it waits for the user.
    app.wait_for_attr(&call, "data-awaiting", "true").await;
    app.wait_for_text(&format!("{call} .tool-status"), |t| {
        t.contains("waiting for you")
    })
    .await;
    assert!(!dir.join("allowed-file").exists());
    app.screenshot("permission").await;

    // Allow: the command runs, its result fills the call line, the model sees it, the turn ends.
    app.click(&tid("permission-allow")).await;
    app.wait_for_text(&tid("timeline"), |t| {
        t.contains("tool result: bash-ran error=false")
    })
    .await;
    app.wait_for_attr(&call, "data-result", "ok").await;
    assert_eq!(app.prop(&call, "dataset.awaiting").await, Value::Null);
    assert!(dir.join("allowed-file").exists());
    app.wait_for_attr(&pane, "data-status", "idle").await;
    assert!(!app.is_shown(&tid("permission")).await);
    // The header shows what the turn's two model calls used, as Claude Code reported it.
    let usage = format!("{pane} {}", tid("agent-usage"));
    let used = app
        .wait_for_text(&usage, |t| t.starts_with("20 in · 10 out · $"))
        .await;
    assert!(!used.contains("subagents"), "{used}");
    // The call opens on a click to show its input and output, and stays open when the pane
    // draws its timeline again (the turn's last news, a resync that fetches it anew).
    app.click(&format!("{call} summary")).await;
    poll("the call to open on a click", TIMEOUT, || async {
        (app.prop(&details, "open").await == json!(true)).then_some(())
    })
    .await;
    let mark = "document.querySelector(arguments[0]).dataset.before = 'resync'; \
        import('/sync.js').then((m) => m.sync(m.HERE));";
    app.execute(mark, vec![json!(call)]).await;
    let drawn_again = "const el = document.querySelector(arguments[0]); \
        return el !== null && el.dataset.before === undefined;";
    poll("the timeline drawn again", TIMEOUT, || async {
        (app.execute(drawn_again, vec![json!(call)]).await == json!(true)).then_some(())
    })
    .await;
    assert_eq!(
        app.prop(&details, "open").await,
        json!(true),
        "the call the user opened is open again after the redraw"
    );
    let input = app
        .wait_for_text(&format!("{call} .tool-in"), |t| !t.is_empty())
        .await;
    assert!(
        input.contains("\"description\": \"make a file\""),
        "{input}"
    );
    let output = format!("{call} .tool-out");
    app.wait_for_text(&output, |t| t.trim() == "bash-ran").await;
    assert!(app.is_shown(&output).await);
    app.screenshot("tool-call-open").await;

    // Deny, on the next turn from the composer: the tool fails, no file, the model is told.
    app.type_into(&tid("composer-input"), "please use bash denied-file")
        .await;
    app.click(&tid("composer-send")).await;
    app.wait_for_text(&tid("permission"), |t| t.contains("touch denied-file"))
        .await;
    app.wait_for_attr(&pane, "data-bucket", "needs_input").await;
    let denied = tool_call(&app, &pane, 2).await;
    app.wait_for_attr(&denied, "data-awaiting", "true").await;
    app.click(&tid("permission-deny")).await;
    app.wait_for_text(&tid("timeline"), |t| t.contains("error=true"))
        .await;
    app.wait_for_attr(&denied, "data-result", "error").await;
    app.wait_for_attr(&pane, "data-status", "idle").await;
    assert!(!dir.join("denied-file").exists());
    assert!(!app.is_shown(&tid("permission")).await);
    // Summed over both turns.
    app.wait_for_text(&usage, |t| t.starts_with("40 in · 20 out · $"))
        .await;
    app.screenshot("usage").await;
    app.screenshot("denied").await;

    let results: Vec<bool> = api
        .requests()
        .iter()
        .filter_map(|r| match r.input() {
            Input::ToolResult { is_error, .. } => Some(is_error),
            _ => None,
        })
        .collect();
    assert_eq!(results, [false, true], "tool results the model saw");
    // The workspace home sums its agents, and shows each root agent's tree.
    app.click(&tid("tab-home")).await;
    app.wait_for_text(&tid("workspace-usage"), |t| {
        t.contains("40 in · 20 out · $")
    })
    .await;
    app.wait_for_text(
        &format!("[data-testid=\"workspace-agent\"][data-agent-id=\"{builder_id}\"]"),
        |t| t.contains("40 in · 20 out · $"),
    )
    .await;
    app.quit().await;
}
