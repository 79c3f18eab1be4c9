//! The claude provider against the real Claude Code CLI (pinned, installed by
//! scripts/setup.sh), driven by the scripted Messages API stand-in on 127.0.0.1. The tests
//! both CLIs share are in support/cli.rs; this file runs them and Claude Code's own.

mod support;

use std::time::Duration;

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::model::ItemKind;
use paseo_core::providers::claude::ClaudeProvider;
use paseo_core::providers::{Provider, ProviderEvent};
use serde_json::json;
use support::anthropic::{bash_script, AnthropicStandIn, Input, Reply};
use support::cli::{self, Cli, ORCHESTRATE, SLOW, START_TREE, TREE};
use support::*;

async fn setup() -> Cli<AnthropicStandIn> {
    Cli::new(
        AnthropicStandIn::start(|req| match req.input() {
            Input::Text(t) if t.contains(SLOW) => Reply::slow(300, Duration::from_millis(20)),
            Input::Text(t) if t.contains(ORCHESTRATE) => {
                Reply::tool_use("mcp__paseo__create_agent", cli::orchestrate_args())
            }
            Input::Text(t) if t.contains(START_TREE) => Reply::tool_use(
                "Bash",
                json!({"command": TREE, "description": "start processes"}),
            ),
            other => bash_script(other),
        })
        .await,
    )
}

#[tokio::test]
async fn text_turns_on_one_long_lived_process() {
    let st = setup().await;
    // An MCP server that is not listening: Claude Code reports it failed and carries on.
    let (Started { s, .. }, session_id, first) = cli::text_turns(&st, "hello there").await;
    assert!(uuid::Uuid::parse_str(&session_id).is_ok());
    let failed = ProviderEvent::McpStatus {
        server: "paseo".into(),
        status: "failed".into(),
    };
    assert!(first.other.contains(&failed), "{:?}", first.other);
    let reported_again = |e: &ProviderEvent| matches!(e, ProviderEvent::SessionId(_));
    assert!(!first.other.iter().any(reported_again));
    s.close().await;
}

#[tokio::test]
async fn permission_requests_are_surfaced_and_answered() {
    let st = setup().await;
    cli::questions_are_answered(&st, "please use bash", |q| {
        let command = format!("touch {} && echo bash-ran", q.file);
        assert_eq!(q.req.input["command"], command);
        let result = q.turn.item(ItemKind::ToolResult).expect("a tool result");
        assert_eq!(q.call.call_id, result.call_id);
        assert_eq!(q.call.tool_name.as_deref(), Some("Bash"));
        let last = q.turn.last_message.as_deref().unwrap();
        if q.allowed {
            assert!(!result.is_error, "{result:?}");
            assert_eq!(result.text, "bash-ran");
            assert_eq!(last, "tool result: bash-ran error=false");
        } else {
            assert!(result.is_error, "{result:?}");
            assert!(last.ends_with("error=true"), "{last}");
        }
    })
    .await;
}

#[tokio::test]
async fn a_failing_process_reports_its_exit() {
    let st = setup().await;
    let mut spec = st.spec();
    spec.resume = Some("11111111-2222-4333-8444-555555555555".into());
    let Started { mut s, mut ev, .. } = st.start(spec).await;
    s.send(prompt("hello")).unwrap();
    let events = ev
        .until(|e| matches!(e, ProviderEvent::Exited { .. }))
        .await;
    let ended: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, ProviderEvent::TurnEnded(_)))
        .collect();
    assert_eq!(ended.len(), 1, "{events:?}");
    match events.last().unwrap() {
        ProviderEvent::Exited { message } => {
            assert!(message.contains("exited with code 1"), "{message}");
            assert!(message.contains("No conversation found"), "{message}");
        }
        _ => unreachable!(),
    }
    assert!(s.send(prompt("again")).is_err());
    s.close().await;
}

#[tokio::test]
async fn a_missing_binary_makes_the_provider_unavailable() {
    let p = ClaudeProvider::new(
        "claude",
        ProviderConfig {
            command: Some(vec!["/nonexistent/claude".into()]),
            ..ProviderConfig::new(ProviderKind::Claude)
        },
    );
    let info = p.info();
    assert!(!info.available);
    assert!(info
        .reason
        .as_deref()
        .unwrap()
        .contains("/nonexistent/claude does not exist"));
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path());
    let (sink, _ev) = sink(spec.agent_id, 4);
    let err = p.start(spec, sink).await.err().unwrap().to_string();
    assert!(err.contains("does not exist"), "{err}");
}

#[tokio::test]
async fn the_apps_mcp_tools_are_loaded_and_called_without_a_permission_prompt() {
    let st = setup().await;
    let t = cli::mcp_tools_are_called_without_a_prompt(&st, None).await;
    assert!(t.other.contains(&ProviderEvent::McpStatus {
        server: "paseo".into(),
        status: "connected".into()
    }));
    // alwaysLoad: the model sees the tools themselves, not only their names behind a search.
    let tools = st.api.requests()[0].tool_names();
    for tool in support::mcp_echo::TOOLS {
        assert!(tools.contains(&format!("mcp__paseo__{tool}")), "{tools:?}");
    }
}

/// SPEC 14: the agent's token reaches the CLI through a 0600 file that lives as long as the
/// session, never through its command line (which every local user can read in /proc).
#[tokio::test]
async fn the_mcp_token_is_in_a_private_file_for_the_sessions_life_never_on_a_command_line() {
    use std::os::unix::fs::PermissionsExt;
    let st = setup().await;
    let token = "secret-agent-token-0123456789abcdef";
    let mcp = support::mcp_echo::McpEcho::start(token).await;
    let mut spec = st.spec();
    spec.mcp = Some(mcp.access());
    let agent = spec.agent_id.to_string();
    let dir = mcp.access().config_dir;
    let Started { s, .. } = st.start(spec).await;

    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(&agent))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(std::fs::read_to_string(&files[0]).unwrap().contains(token));

    // No process of this machine shows the token on its command line.
    let mut seen = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            seen += 1;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            assert!(!cmdline.contains(token), "{cmdline}");
        }
    }
    assert!(seen > 1);
    // The connection still works: the CLI read the file (the echo saw no bad token).
    assert_eq!(mcp.unauthorized(), 0);

    s.close().await;
    assert!(!files[0].exists(), "the secrets file outlived its session");
}

crate::cli_tests! {
    setup;
    interrupt_mid_turn_cancels_and_the_session_goes_on => interrupt_mid_turn,
    a_new_process_resumes_the_session => a_new_process_resumes,
    close_mid_turn_kills_the_tools_processes_too => close_kills_the_tools_processes,
    a_process_dying_mid_turn_fails_the_turn_and_reports_the_exit => a_process_dying_mid_turn,
}
