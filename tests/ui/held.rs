//! SPEC 14 in the window: the real Claude Code CLI in its default mode (it asks before acting)
//! starts a shell agent through the app's MCP server. The child's first turn is held: the
//! parent's track says the child needs you, the child's pane shows who wants to run what,
//! where, and the whole prompt, and nothing runs (no marker file) until Allow.

use crate::anthropic::{AnthropicStandIn, Input, Reply};
use crate::common::{tid, Harness};
use crate::helpers::*;
use serde_json::json;

#[tokio::test]
async fn a_held_start_is_answered_from_the_childs_pane() {
    let h = Harness::new("held_turn");
    let api = AnthropicStandIn::start(|req| match req.input() {
        Input::Text(t) if t.contains("spawn a helper") => Reply::tool_use(
            "mcp__paseo__create_agent",
            json!({"provider": "shell", "title": "helper",
                   "initialPrompt": "touch held-marker && echo helper-done",
                   "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
        ),
        Input::ToolResult { .. } => Reply::text("started the helper"),
        Input::Text(_) => Reply::text("noted"),
    })
    .await;
    use_claude(&h, &api);
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("repo");
    let ws = app.add_workspace(&dir).await;
    let lead = app
        .create_agent(
            json!({"provider": "claude", "model": "standin-model", "title": "lead",
            "prompt": "spawn a helper, please", "workspaceId": ws["workspaceId"],
            "autoArchive": false}),
        )
        .await;
    let lead_id = id(&lead);
    open_root(&app, &lead).await;
    app.wait_for_text(
        &format!("{} {}", sel_pane(&lead_id), tid("agent-power")),
        |t| t.contains("asks"),
    )
    .await;
    let kid = wait_children(&app, &lead_id, 1).await.remove(0);
    let kid_id = id(&kid);

    // The parent's track: the child needs you, to approve its start; it would act with full power.
    let row = sel_row(&kid_id);
    app.wait_for_attr(&row, "data-bucket", "needs_input").await;
    app.wait_for_text(&row, |t| t.contains("approve start"))
        .await;
    app.wait_for_text(&format!("{row} {}", tid("track-power")), |t| {
        t.contains("full")
    })
    .await;

    // Its pane: who wants what, where, and the whole prompt; nothing has run.
    app.click(&format!("{row} {}", tid("track-open"))).await;
    let pane = sel_pane(&kid_id);
    app.wait_for(&pane).await;
    let held = app
        .wait_for_text(&format!("{pane} {}", tid("permission-held")), |t| {
            t.contains("lead wants to start a Shell agent")
        })
        .await;
    assert!(
        held.contains(&dir.canonicalize().unwrap().display().to_string())
            || held.contains(&dir.display().to_string()),
        "{held}"
    );
    let prompt = app
        .wait_for_text(&format!("{pane} {}", tid("permission-prompt")), |t| {
            !t.is_empty()
        })
        .await;
    assert_eq!(prompt.trim(), "touch held-marker && echo helper-done");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        !dir.join("held-marker").exists(),
        "nothing of a held turn runs"
    );
    app.screenshot("held-turn").await;

    // Allow: it runs, and the row goes back to quiet.
    app.click(&format!("{pane} {}", tid("permission-allow")))
        .await;
    // The held agent already reads idle before the allowed turn starts: wait for what the turn
    // does, then for the agent to be idle after it.
    let mut ran = false;
    for _ in 0..200 {
        ran = dir.join("held-marker").exists();
        if ran {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(ran, "allowed: it ran");
    app.wait_for_attr(&pane, "data-status", "idle").await;
    // The status and the prompt's removal may reach the pane in two renders.
    let permission = format!("{pane} {}", tid("permission"));
    let mut shown = true;
    for _ in 0..50 {
        shown = app.is_shown(&permission).await;
        if !shown {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!shown, "the answered prompt is gone from the pane");
}
