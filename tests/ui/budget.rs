//! SPEC 18 in the window, with the real Claude Code CLI against the scripted Anthropic stand-in
//! (every reply reports the same usage): the root's header "Budget…" sets a budget and then shows
//! "N of M tokens"; at its cap the user's own prompt still runs, while the child the model starts
//! through the app's MCP server is held: the parent's track row says it waits on the budget, its
//! pane says how much the tree used and shows the prompt, and "Raise budget…" raises it, which
//! runs the held turn; "Clear" takes it away. Light and dark, with screenshots of each.

use crate::anthropic::{AnthropicStandIn, Input, Reply};
use crate::anthropic::{CACHE_WRITE_TOKENS, INPUT_TOKENS, OUTPUT_TOKENS};
use crate::common::{tid, Harness};
use crate::helpers::*;
use fantoccini::key::Key;
use serde_json::json;

/// What one reply counts against a budget (cache reads are not counted).
const TURN: u64 = INPUT_TOKENS + OUTPUT_TOKENS + CACHE_WRITE_TOKENS;

async fn budget_scenario(h: Harness, shot: &str) {
    let api = AnthropicStandIn::start(|req| match req.input() {
        Input::Text(t) if t.contains("spawn a helper") => Reply::tool_use(
            "mcp__paseo__create_agent",
            json!({"provider": "claude", "model": "standin-model", "title": "helper",
                   "initialPrompt": "check the tests",
                   "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
        ),
        Input::ToolResult { .. } => Reply::text("started the helper"),
        Input::Text(t) => Reply::text(format!("noted: {t}")),
    })
    .await;
    use_claude(&h, &api);
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("repo");
    let ws = app.add_workspace(&dir).await;
    let lead = app
        .create_agent(
            json!({"provider": "claude", "model": "standin-model", "title": "lead",
            "prompt": "hello", "workspaceId": ws["workspaceId"], "autoArchive": false}),
        )
        .await;
    let lead_id = id(&lead);
    open_root(&app, &lead).await;
    let pane = sel_pane(&lead_id);
    app.wait_for_attr(&pane, "data-status", "idle").await;
    assert!(
        !app.is_shown(&format!("{pane} {}", tid("agent-budget")))
            .await,
        "no budget, no words"
    );

    // "Budget…": exactly what the tree used so far, so it is used up.
    app.click(&format!("{pane} {}", tid("budget-open"))).await;
    let dialog = tid("budget-dialog");
    app.wait_for(&dialog).await;
    app.type_into(&tid("budget-tokens"), &TURN.to_string())
        .await;
    app.screenshot(&format!("{shot}-dialog")).await;
    app.click(&tid("budget-save")).await;
    let words = app
        .wait_for_text(&format!("{pane} {}", tid("agent-budget")), |t| {
            t.contains(&format!("{TURN} of {TURN} tokens"))
        })
        .await;
    assert_eq!(words, format!("{TURN} of {TURN} tokens"));
    assert!(!app.is_shown(&dialog).await, "the dialog closed");

    // The user's own prompt runs at the cap; the child the model starts is held.
    app.type_into(
        &tid("composer-input"),
        &format!("spawn a helper, please{}", Key::Enter),
    )
    .await;
    let kid = wait_children(&app, &lead_id, 1).await.remove(0);
    let kid_id = id(&kid);
    let row = sel_row(&kid_id);
    app.wait_for_attr(&row, "data-bucket", "needs_input").await;
    app.wait_for_text(&row, |t| t.contains("needs you: budget"))
        .await;
    app.wait_for_attr(&pane, "data-status", "idle").await;
    app.wait_for_text(&format!("{pane} {}", tid("agent-budget")), |t| {
        t.contains(&format!("{} of {TURN} tokens", 3 * TURN))
    })
    .await;
    let requests = api.requests().len();
    app.screenshot(&format!("{shot}-track")).await;

    // Its pane: how much the tree used, the prompt, and Raise budget…; nothing ran.
    app.click(&format!("{row} {}", tid("track-open"))).await;
    let kid_pane = sel_pane(&kid_id);
    app.wait_for(&kid_pane).await;
    let held = app
        .wait_for_text(&format!("{kid_pane} {}", tid("permission-budget")), |t| {
            t.contains("budget: this tree used")
        })
        .await;
    // The words say what the tree had used when the turn was held (the lead's turn may not
    // have ended yet then).
    let used = held
        .strip_prefix("budget: this tree used ")
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{held}"));
    assert!(used >= TURN, "{held}");
    assert!(held.contains(&format!("of {TURN} tokens")), "{held}");
    assert!(held.contains("lead asked helper for a turn"), "{held}");
    let prompt = app
        .wait_for_text(&format!("{kid_pane} {}", tid("permission-prompt")), |t| {
            !t.is_empty()
        })
        .await;
    assert_eq!(prompt.trim(), "check the tests");
    // A subagent's header shows its tree's budget but sets none of its own.
    app.wait_for_text(&format!("{kid_pane} {}", tid("agent-budget")), |t| {
        t.contains(&format!("of {TURN} tokens"))
    })
    .await;
    assert!(
        !app.is_shown(&format!("{kid_pane} {}", tid("budget-open")))
            .await,
        "only a root has Budget…"
    );
    app.screenshot(&format!("{shot}-held")).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(api.requests().len(), requests, "a held turn sends nothing");

    // Raise budget…: the dialog for the lead, with its budget; raising runs the held turn.
    app.click(&format!("{kid_pane} {}", tid("budget-raise")))
        .await;
    app.wait_for(&dialog).await;
    let had = app
        .prop(&tid("budget-tokens"), "value")
        .await
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(had, TURN.to_string(), "the dialog shows the budget");
    app.wait_for_text(&tid("budget-save"), |t| t == "Raise")
        .await;
    app.execute(
        "document.querySelector('[data-testid=\"budget-tokens\"]').value = ''; return null;",
        vec![],
    )
    .await;
    app.type_into(&tid("budget-tokens"), "100000").await;
    app.click(&tid("budget-save")).await;
    // Raised: the held turn runs (its reply is in the pane) and nothing waits any more.
    app.wait_for_text(&kid_pane, |t| t.contains("noted: check the tests"))
        .await;
    let permission = format!("{kid_pane} {}", tid("permission"));
    crate::common::poll(
        "the answered request to leave the pane",
        crate::common::TIMEOUT,
        || async { (!app.is_shown(&permission).await).then_some(()) },
    )
    .await;
    app.wait_for_attr(&kid_pane, "data-status", "idle").await;
    app.wait_for_text(&format!("{kid_pane} {}", tid("agent-budget")), |t| {
        t.contains("of 100,000 tokens")
    })
    .await;
    app.screenshot(&format!("{shot}-raised")).await;

    // Clear, from the lead's header: no budget applies, no words.
    app.click(&sel_tab(&lead_id)).await;
    app.wait_for(&pane).await;
    app.click(&format!("{pane} {}", tid("budget-open"))).await;
    app.click(&tid("budget-clear")).await;
    crate::common::poll(
        "the budget's words to go",
        crate::common::TIMEOUT,
        || async {
            (!app
                .is_shown(&format!("{pane} {}", tid("agent-budget")))
                .await)
                .then_some(())
        },
    )
    .await;
    assert!(!app.is_shown(&dialog).await, "the dialog closed");
}

#[tokio::test]
async fn a_budget_is_set_in_the_header_holds_the_tree_and_is_raised() {
    budget_scenario(Harness::new("budget"), "light").await;
}

#[tokio::test]
async fn a_budget_in_the_dark_theme() {
    let h = Harness::builder("budget_dark")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    budget_scenario(h, "dark").await;
}
