//! The codex provider against the real Codex CLI (pinned, installed by scripts/setup.sh) in
//! app-server mode, driven by the scripted Responses API stand-in on 127.0.0.1. The tests
//! both CLIs share are in support/cli.rs; this file runs them and Codex's own.

use crate::support;

use std::time::Duration;

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::providers::codex::CodexProvider;
use paseo_core::providers::{Provider, ProviderEvent};
use serde_json::json;
use support::cli::{self, Cli, ORCHESTRATE, SLOW, START_TREE, TREE};
use support::openai::{Input, OpenAiStandIn, Reply};
use support::*;

async fn setup() -> Cli<OpenAiStandIn> {
    Cli::new(
        OpenAiStandIn::start(|req| match req.input() {
            Input::Text(t) if t.contains(SLOW) => Reply::slow(300, Duration::from_millis(20)),
            Input::Text(t) if t.contains(ORCHESTRATE) => {
                Reply::function_call(Some("mcp__paseo"), "create_agent", cli::orchestrate_args())
            }
            Input::Text(t) if t.contains(START_TREE) => Reply::function_call(
                None,
                "exec_command",
                json!({"cmd": TREE,
                       "sandbox_permissions": "require_escalated",
                       "justification": "start processes",
                       "yield_time_ms": 500}),
            ),
            Input::Text(t) if t.contains("run escalated") => {
                let file = t.rsplit(' ').next().unwrap_or("x").to_string();
                Reply::function_call(
                    None,
                    "exec_command",
                    json!({"cmd": format!("touch {file} && echo made-{file}"),
                           "sandbox_permissions": "require_escalated",
                           "justification": "make a file"}),
                )
            }
            Input::FunctionOutput { output, .. } => Reply::text(format!("tool said: {output}")),
            Input::Text(t) => Reply::text(format!("echo: {t}")),
            Input::Other(v) => Reply::text(format!("other: {v}")),
        })
        .await,
    )
}

#[tokio::test]
async fn text_turns_on_one_app_server() {
    let st = setup().await;
    let (Started { s, mut ev, .. }, thread, _) = cli::text_turns(&st, "hello codex").await;
    assert!(!thread.is_empty());
    // The injected MCP server (nothing listens there) is reported as failed; Codex gives up
    // on it in the background, possibly after the turns.
    let failed = ProviderEvent::McpStatus {
        server: "paseo".into(),
        status: "failed".into(),
    };
    if !ev.seen.contains(&failed) {
        ev.until(|e| *e == failed).await;
    }
    s.close().await;
}

#[tokio::test]
async fn an_unknown_thread_fails_the_session_with_the_reason() {
    let st = setup().await;
    let mut spec = st.spec();
    spec.resume = Some("01a23804-0000-78b2-87d5-ba62d0558149".into());
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let s = st.provider().start(spec, sink).await.unwrap();
    let events = ev
        .until(|e| matches!(e, ProviderEvent::Exited { .. }))
        .await;
    assert!(!events.contains(&ProviderEvent::Ready));
    match events.last().unwrap() {
        ProviderEvent::Exited { message } => {
            assert!(
                message.contains("could not resume Codex thread 01a23804-0000"),
                "{message}"
            );
            assert!(message.contains("no rollout found"), "{message}");
        }
        _ => unreachable!(),
    }
    s.close().await;
}

#[tokio::test]
async fn bad_modes_and_missing_binaries_are_refused() {
    let st = setup().await;
    let mut spec = st.spec();
    spec.config.mode = Some("yolo".into());
    let (sink, _ev) = sink(spec.agent_id, 4);
    let err = st
        .provider()
        .start(spec, sink)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("unknown Codex mode \"yolo\""), "{err}");

    let p = CodexProvider::new(
        "codex",
        ProviderConfig {
            env: [("PATH".to_string(), "/nonexistent".to_string())].into(),
            ..ProviderConfig::new(ProviderKind::Codex)
        },
    );
    let info = p.info();
    assert!(!info.available);
    assert_eq!(
        info.reason.as_deref(),
        Some("Codex is not installed: `codex` was not found on PATH")
    );
}

#[tokio::test]
async fn approval_requests_are_surfaced_and_answered() {
    let st = setup().await;
    cli::questions_are_answered(&st, "please run escalated", |q| {
        let last = q.turn.last_message.clone().unwrap();
        if q.allowed {
            assert!(last.contains(&format!("made-{}", q.file)), "{last}");
        }
    })
    .await;
}

#[tokio::test]
async fn the_apps_mcp_tools_are_declared_and_called() {
    mcp_tools_are_called_without_a_prompt(None).await;
}

#[tokio::test]
async fn the_apps_mcp_tools_need_no_approval_even_when_everything_else_does() {
    mcp_tools_are_called_without_a_prompt(Some("untrusted")).await;
}

async fn mcp_tools_are_called_without_a_prompt(mode: Option<&str>) {
    cli::mcp_tools_are_called_without_a_prompt(&setup().await, mode).await;
}

crate::cli_tests! {
    setup;
    interrupt_mid_turn_cancels_and_the_thread_goes_on => interrupt_mid_turn,
    a_new_process_resumes_the_thread => a_new_process_resumes,
    close_kills_the_commands_codex_started => close_kills_the_tools_processes,
    a_process_dying_mid_turn_fails_the_turn_and_reports_the_exit => a_process_dying_mid_turn,
}

/// SPEC 14: a Codex agent without a mode asks, whatever the user's `~/.codex/config.toml` says.
/// With `approval_policy = "never"` and `sandbox_mode = "danger-full-access"` there, the app
/// still starts the thread asking (`on-request`, read-only): the command waits for an answer.
#[tokio::test]
async fn the_users_config_does_not_decide_for_an_agent_without_a_mode() {
    let st = setup().await;
    let codex_home = st.home.path().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n",
    )
    .unwrap();
    let spec = st.spec();
    assert_eq!(spec.config.mode, None);
    let Started { mut s, mut ev, .. } = st.start(spec).await;
    s.send(prompt("please run escalated by-user-config"))
        .unwrap();
    let events = ev
        .until(|e| {
            matches!(
                e,
                ProviderEvent::Permission(_) | ProviderEvent::TurnEnded(_)
            )
        })
        .await;
    let Some(ProviderEvent::Permission(req)) = events.last() else {
        panic!("no question: the user's config.toml decided the approval policy: {events:?}");
    };
    assert!(req.input.to_string().contains("by-user-config"), "{req:?}");
    assert!(!st.work().join("by-user-config").exists());
    s.respond_permission(&req.request_id, false).unwrap();
    ev.turn().await;
    s.close().await;
}
