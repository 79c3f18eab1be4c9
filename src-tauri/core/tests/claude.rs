//! The claude provider against the real Claude Code CLI (pinned, installed by
//! scripts/setup.sh), driven by the scripted Messages API stand-in on 127.0.0.1.

mod support;

use std::path::Path;
use std::time::Duration;

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::model::ItemKind;
use paseo_core::providers::claude::ClaudeProvider;
use paseo_core::providers::{Provider, ProviderEvent, SessionSpec, TurnInput, TurnOutcome};
use serde_json::json;
use support::anthropic::{bash_script, AnthropicStandIn, Input, Reply};
use support::*;

async fn standin() -> AnthropicStandIn {
    AnthropicStandIn::start(|req| match req.input() {
        Input::Text(t) if t.contains("be slow") => Reply::slow(300, Duration::from_millis(20)),
        Input::Text(t) if t.contains("orchestrate") => Reply::tool_use(
            "mcp__paseo__create_agent",
            json!({"provider": "shell", "initialPrompt": "echo hi"}),
        ),
        Input::Text(t) if t.contains("start a tree") => Reply::tool_use(
            "Bash",
            json!({"command": "nohup sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; echo $$ > fg.pid; sleep 300",
                   "description": "start processes"}),
        ),
        other => bash_script(other),
    })
    .await
}

struct Setup {
    api: AnthropicStandIn,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Setup {
    async fn new() -> Setup {
        Setup {
            api: standin().await,
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }
    fn provider(&self) -> ClaudeProvider {
        let claude = agent_cli("claude").display().to_string();
        let mut env = self.api.claude_env(self.home.path());
        // PASEO_RECORD_DIR=dir re-records the parser fixtures: stdout is copied to a file per test.
        let command = match std::env::var("PASEO_RECORD_DIR") {
            Ok(dir) => {
                let name = std::thread::current()
                    .name()
                    .unwrap_or("claude")
                    .to_string();
                env.insert("PASEO_RECORD_FILE".into(), format!("{dir}/{name}.jsonl"));
                vec![
                    "/bin/sh".into(),
                    "-c".into(),
                    r#""$0" "$@" | tee -a "$PASEO_RECORD_FILE""#.into(),
                    claude,
                ]
            }
            Err(_) => vec![claude],
        };
        ClaudeProvider::new(
            "claude",
            ProviderConfig {
                command: Some(command),
                env,
                ..ProviderConfig::new(ProviderKind::Claude)
            },
        )
    }
    fn spec(&self) -> SessionSpec {
        let mut s = spec(self.work.path());
        s.config.model = Some("standin-model".into());
        s
    }
}

fn prompt(s: &str) -> TurnInput {
    TurnInput::Prompt(s.to_string())
}

#[tokio::test]
async fn text_turns_on_one_long_lived_process() {
    let st = Setup::new().await;
    let provider = st.provider();
    assert!(provider.info().available, "{:?}", provider.info());
    let mut spec = st.spec();
    // An MCP server that is not listening: Claude Code reports it failed and carries on.
    spec.mcp = Some(mcp_access());
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = provider.start(spec, sink).await.unwrap();
    let before = ev.until(|e| matches!(e, ProviderEvent::Ready)).await;
    let session_id = before
        .iter()
        .find_map(|e| match e {
            ProviderEvent::SessionId(id) => Some(id.clone()),
            _ => None,
        })
        .expect("session id before ready");
    assert!(uuid::Uuid::parse_str(&session_id).is_ok());

    s.send(prompt("hello there")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(t.text_of(ItemKind::Assistant), "echo: hello there");
    assert_eq!(t.last_message.as_deref(), Some("echo: hello there"));
    assert!(
        t.other.contains(&ProviderEvent::McpStatus {
            server: "paseo".into(),
            status: "failed".into()
        }),
        "{:?}",
        t.other
    );
    assert!(!t
        .other
        .iter()
        .any(|e| matches!(e, ProviderEvent::SessionId(_))));

    s.send(TurnInput::Notice(
        "<paseo-notice>child done</paseo-notice>".into(),
    ))
    .unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(
        t.last_message.as_deref(),
        Some("echo: <paseo-notice>child done</paseo-notice>")
    );
    let reqs = st.api.requests();
    assert_eq!(reqs.len(), 2, "one process, two turns, two model calls");
    assert!(reqs.iter().all(|r| r.model() == "standin-model"));
    s.close().await;
}

#[tokio::test]
async fn interrupt_mid_turn_cancels_and_the_session_goes_on() {
    let st = Setup::new().await;
    let spec = st.spec();
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = st.provider().start(spec, sink).await.unwrap();
    ev.ready().await;
    s.send(prompt("be slow please")).unwrap();
    poll("the model call", || {
        st.api
            .requests()
            .iter()
            .any(|r| r.input() == Input::Text("be slow please".into()))
            .then_some(())
    })
    .await;
    s.interrupt().unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Canceled);
    s.send(prompt("after the interrupt")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(t.last_message.as_deref(), Some("echo: after the interrupt"));
    s.close().await;
}

#[tokio::test]
async fn a_new_process_resumes_the_session() {
    let st = Setup::new().await;
    let spec = st.spec();
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = st.provider().start(spec.clone(), sink).await.unwrap();
    let first = ev.until(|e| matches!(e, ProviderEvent::Ready)).await;
    let id = first
        .iter()
        .find_map(|e| match e {
            ProviderEvent::SessionId(id) => Some(id.clone()),
            _ => None,
        })
        .unwrap();
    s.send(prompt("remember the word alpha")).unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Completed);
    s.close().await;

    let mut spec2 = spec;
    spec2.resume = Some(id.clone());
    let (sink2, mut ev) = support::sink(spec2.agent_id, 64);
    let mut s = st.provider().start(spec2, sink2).await.unwrap();
    let again = ev.until(|e| matches!(e, ProviderEvent::Ready)).await;
    assert!(again.contains(&ProviderEvent::SessionId(id.clone())));
    s.send(prompt("what was the word")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert!(!t
        .other
        .iter()
        .any(|e| matches!(e, ProviderEvent::SessionId(other) if *other != id)));
    let last = st.api.requests().pop().unwrap();
    let history = last.body["messages"].to_string();
    assert!(
        history.contains("remember the word alpha"),
        "history lost: {history:.500}"
    );
    assert!(history.contains("echo: remember the word alpha"));
    s.close().await;
}

#[tokio::test]
async fn permission_requests_are_surfaced_and_answered() {
    let st = Setup::new().await;
    let spec = st.spec();
    let work = st.work.path().to_path_buf();
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = st.provider().start(spec, sink).await.unwrap();
    ev.ready().await;

    for (file, allow) in [("allowed-file", true), ("denied-file", false)] {
        s.send(prompt(&format!("please use bash {file}"))).unwrap();
        let mut before = ev
            .until(|e| matches!(e, ProviderEvent::Permission(_)))
            .await;
        let Some(ProviderEvent::Permission(req)) = before.pop() else {
            unreachable!()
        };
        // The tool call is on the timeline before the question.
        let call = first_tool_call(&before).expect("a tool call before the question");
        // ...and the question names that call.
        assert!(call.call_id.is_some());
        assert_eq!(req.call_id, call.call_id);
        assert_eq!(req.tool_name, "Bash");
        assert_eq!(
            req.input["command"],
            format!("touch {file} && echo bash-ran")
        );
        assert!(
            !Path::new(&work).join(file).exists(),
            "ran before the answer"
        );
        s.respond_permission(&req.request_id, allow).unwrap();
        let t = ev.turn().await;
        assert_eq!(t.outcome(), &TurnOutcome::Completed);
        let result = t
            .items
            .iter()
            .find(|i| i.kind == ItemKind::ToolResult)
            .expect("a tool result");
        assert_eq!(call.call_id, result.call_id);
        assert_eq!(call.tool_name.as_deref(), Some("Bash"));
        if allow {
            assert!(!result.is_error, "{result:?}");
            assert_eq!(result.text, "bash-ran");
            assert!(work.join(file).exists());
            assert_eq!(
                t.last_message.as_deref(),
                Some("tool result: bash-ran error=false")
            );
        } else {
            assert!(result.is_error, "{result:?}");
            assert!(!work.join(file).exists());
            assert!(t.last_message.as_deref().unwrap().ends_with("error=true"));
        }
        // A request that was answered cannot be answered twice.
        assert!(s.respond_permission(&req.request_id, true).is_err());
    }
    s.close().await;
}

#[tokio::test]
async fn a_failing_process_reports_its_exit() {
    let st = Setup::new().await;
    let mut spec = st.spec();
    spec.resume = Some("11111111-2222-4333-8444-555555555555".into());
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = st.provider().start(spec, sink).await.unwrap();
    ev.ready().await;
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
async fn close_mid_turn_kills_the_tools_processes_too() {
    let st = Setup::new().await;
    let spec = st.spec();
    let work = st.work.path().to_path_buf();
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = st.provider().start(spec, sink).await.unwrap();
    ev.ready().await;
    s.send(prompt("please start a tree")).unwrap();
    let mut events = ev
        .until(|e| matches!(e, ProviderEvent::Permission(_)))
        .await;
    let Some(ProviderEvent::Permission(req)) = events.pop() else {
        unreachable!()
    };
    s.respond_permission(&req.request_id, true).unwrap();
    let fg = read_pid(&work.join("fg.pid")).await;
    let bg = read_pid(&work.join("bg.pid")).await;
    assert!(alive(fg) && alive(bg));
    s.close().await;
    assert!(!alive(fg), "the tool's shell {fg} survived close");
    assert!(
        !alive(bg),
        "the tool's background process {bg} survived close"
    );
}

#[tokio::test]
async fn a_process_dying_mid_turn_fails_the_turn_and_reports_the_exit() {
    let st = Setup::new().await;
    let spec = st.spec();
    let agent = spec.agent_id;
    let (sink, mut ev) = sink(agent, 64);
    let mut s = st.provider().start(spec, sink).await.unwrap();
    ev.ready().await;
    s.send(prompt("be slow please")).unwrap();
    poll("the model call", || {
        st.api
            .requests()
            .iter()
            .any(|r| r.input() == Input::Text("be slow please".into()))
            .then_some(())
    })
    .await;
    crash_agent(agent);
    let events = ev
        .until(|e| matches!(e, ProviderEvent::Exited { .. }))
        .await;
    let failed: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::TurnEnded(TurnOutcome::Failed { message }) => Some(message.clone()),
            ProviderEvent::TurnEnded(other) => panic!("turn ended {other:?}"),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    assert!(
        failed[0].starts_with("Claude Code was killed by signal 9 (SIGKILL)"),
        "{}",
        failed[0]
    );
    let ProviderEvent::Exited { message } = events.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(message, &failed[0]);
    assert!(s.send(prompt("again")).is_err());
    s.close().await;
    assert!(agent_pids(agent).is_empty());
}

#[tokio::test]
async fn the_apps_mcp_tools_are_loaded_and_called_without_a_permission_prompt() {
    let st = Setup::new().await;
    let mcp = support::mcp_echo::McpEcho::start("agent-token-1").await;
    let mut spec = st.spec();
    spec.mcp = Some(mcp.access());
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = st.provider().start(spec, sink).await.unwrap();
    ev.ready().await;
    s.send(prompt("please orchestrate")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert!(
        !t.other
            .iter()
            .any(|e| matches!(e, ProviderEvent::Permission(_))),
        "{:?}",
        t.other
    );
    assert!(t.other.contains(&ProviderEvent::McpStatus {
        server: "paseo".into(),
        status: "connected".into()
    }));
    let call = t
        .items
        .iter()
        .find(|i| i.kind == ItemKind::ToolCall)
        .unwrap();
    assert_eq!(call.tool_name.as_deref(), Some("mcp__paseo__create_agent"));
    let result = t
        .items
        .iter()
        .find(|i| i.kind == ItemKind::ToolResult)
        .unwrap();
    assert!(!result.is_error, "{result:?}");
    assert!(
        result.text.starts_with("called create_agent with"),
        "{result:?}"
    );
    assert_eq!(
        mcp.calls(),
        [support::mcp_echo::Call {
            tool: "create_agent".into(),
            arguments: json!({"provider": "shell", "initialPrompt": "echo hi"})
        }]
    );
    assert_eq!(mcp.unauthorized(), 0);
    // alwaysLoad: the model sees the tools themselves, not only their names behind a search.
    let tools = st.api.requests()[0].tool_names();
    for tool in support::mcp_echo::TOOLS {
        assert!(tools.contains(&format!("mcp__paseo__{tool}")), "{tools:?}");
    }
    s.close().await;
}
