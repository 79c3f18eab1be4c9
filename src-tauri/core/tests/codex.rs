//! The codex provider against the real Codex CLI (pinned, installed by scripts/setup.sh) in
//! app-server mode, driven by the scripted Responses API stand-in on 127.0.0.1.

mod support;

use std::time::Duration;

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::model::ItemKind;
use paseo_core::providers::codex::CodexProvider;
use paseo_core::providers::{Provider, ProviderEvent, SessionSpec, TurnInput, TurnOutcome};
use serde_json::json;
use support::openai::{Input, OpenAiStandIn, Reply};
use support::*;

async fn standin() -> OpenAiStandIn {
    OpenAiStandIn::start(|req| match req.input() {
        Input::Text(t) if t.contains("be slow") => Reply::slow(300, Duration::from_millis(20)),
        Input::Text(t) if t.contains("orchestrate") => Reply::function_call(
            Some("mcp__paseo"),
            "create_agent",
            json!({"provider": "shell", "initialPrompt": "echo hi"}),
        ),
        Input::Text(t) if t.contains("start a tree") => Reply::function_call(
            None,
            "exec_command",
            json!({"cmd": "nohup sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; echo $$ > fg.pid; sleep 300",
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
    .await
}

struct Setup {
    api: OpenAiStandIn,
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
    fn provider(&self) -> CodexProvider {
        let codex = agent_cli("codex").display().to_string();
        let mut env = self.api.codex_env(self.home.path());
        // PASEO_RECORD_DIR=dir re-records the parser fixtures: stdout is copied to a file per test.
        let mut command = match std::env::var("PASEO_RECORD_DIR") {
            Ok(dir) => {
                let name = std::thread::current().name().unwrap_or("codex").to_string();
                env.insert("PASEO_RECORD_FILE".into(), format!("{dir}/{name}.jsonl"));
                vec![
                    "/bin/sh".into(),
                    "-c".into(),
                    r#""$0" "$@" | tee -a "$PASEO_RECORD_FILE""#.into(),
                    codex,
                ]
            }
            Err(_) => vec![codex],
        };
        command.extend(self.api.codex_args());
        CodexProvider::new(
            "codex",
            ProviderConfig {
                command: Some(command),
                env,
                ..ProviderConfig::new(ProviderKind::Codex)
            },
        )
    }
    fn spec(&self) -> SessionSpec {
        spec(self.work.path())
    }
}

fn prompt(s: &str) -> TurnInput {
    TurnInput::Prompt(s.to_string())
}

fn session_id(events: &[ProviderEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            ProviderEvent::SessionId(id) => Some(id.clone()),
            _ => None,
        })
        .expect("a thread id before ready")
}

#[tokio::test]
async fn text_turns_on_one_app_server() {
    let st = Setup::new().await;
    let provider = st.provider();
    assert!(provider.info().available, "{:?}", provider.info());
    let mut spec = st.spec();
    spec.mcp = Some(mcp_access());
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = provider.start(spec, sink).await.unwrap();
    let before = ev.until(|e| matches!(e, ProviderEvent::Ready)).await;
    let thread = session_id(&before);

    s.send(prompt("hello codex")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(t.text_of(ItemKind::Assistant), "echo: hello codex");
    assert_eq!(t.last_message.as_deref(), Some("echo: hello codex"));

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
    // The injected MCP server (nothing listens there) is reported as failed; Codex gives up
    // on it in the background, possibly after the turns.
    let failed = ProviderEvent::McpStatus {
        server: "paseo".into(),
        status: "failed".into(),
    };
    if !ev.seen.contains(&failed) {
        ev.until(|e| *e == failed).await;
    }
    let reqs = st.api.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs
        .iter()
        .all(|r| r.body["model"] == support::openai::MODEL));
    assert!(!thread.is_empty());
    s.close().await;
}

#[tokio::test]
async fn interrupt_mid_turn_cancels_and_the_thread_goes_on() {
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
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Canceled);
    s.send(prompt("after the interrupt")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(t.last_message.as_deref(), Some("echo: after the interrupt"));
    s.close().await;
}

#[tokio::test]
async fn a_new_process_resumes_the_thread() {
    let st = Setup::new().await;
    let spec = st.spec();
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = st.provider().start(spec.clone(), sink).await.unwrap();
    let thread = session_id(&ev.until(|e| matches!(e, ProviderEvent::Ready)).await);
    s.send(prompt("remember the word alpha")).unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Completed);
    s.close().await;

    let mut spec2 = spec;
    spec2.resume = Some(thread.clone());
    let (sink2, mut ev) = support::sink(spec2.agent_id, 64);
    let mut s = st.provider().start(spec2, sink2).await.unwrap();
    let again = ev.until(|e| matches!(e, ProviderEvent::Ready)).await;
    assert_eq!(session_id(&again), thread);
    s.send(prompt("what was the word")).unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Completed);
    let history = st.api.requests().pop().unwrap().body["input"].to_string();
    assert!(
        history.contains("remember the word alpha"),
        "{history:.600}"
    );
    assert!(history.contains("echo: remember the word alpha"));
    s.close().await;
}

#[tokio::test]
async fn approval_requests_are_surfaced_and_answered() {
    let st = Setup::new().await;
    let mut spec = st.spec();
    spec.config.mode = Some("on-request".into());
    let work = st.work.path().to_path_buf();
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = st.provider().start(spec, sink).await.unwrap();
    ev.ready().await;
    for (file, allow) in [("allowed-file", true), ("denied-file", false)] {
        s.send(prompt(&format!("please run escalated {file}")))
            .unwrap();
        let mut before = ev
            .until(|e| matches!(e, ProviderEvent::Permission(_)))
            .await;
        let Some(ProviderEvent::Permission(req)) = before.pop() else {
            unreachable!()
        };
        assert_eq!(req.tool_name, "shell");
        assert!(
            req.input.to_string().contains(&format!("touch {file}")),
            "{req:?}"
        );
        // The command's tool call is on the timeline first, and the question names it.
        let call = first_tool_call(&before).expect("a tool call before the question");
        assert!(call.call_id.is_some());
        assert_eq!(req.call_id, call.call_id);
        assert!(!work.join(file).exists());
        s.respond_permission(&req.request_id, allow).unwrap();
        let t = ev.turn().await;
        assert_eq!(t.outcome(), &TurnOutcome::Completed);
        assert_eq!(work.join(file).exists(), allow, "{t:?}");
        let last = t.last_message.clone().unwrap();
        if allow {
            assert!(last.contains(&format!("made-{file}")), "{last}");
        }
        assert!(s.respond_permission(&req.request_id, true).is_err());
    }
    s.close().await;
}

#[tokio::test]
async fn an_unknown_thread_fails_the_session_with_the_reason() {
    let st = Setup::new().await;
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
    let st = Setup::new().await;
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
async fn close_kills_the_commands_codex_started() {
    let st = Setup::new().await;
    let mut spec = st.spec();
    spec.config.mode = Some("on-request".into());
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
    assert!(!alive(fg), "the command's shell {fg} survived close");
    assert!(
        !alive(bg),
        "the command's background process {bg} survived close"
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
        failed[0].starts_with("Codex was killed by signal 9 (SIGKILL)"),
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
async fn the_apps_mcp_tools_are_declared_and_called() {
    mcp_tools_are_called_without_a_prompt(None).await;
}

#[tokio::test]
async fn the_apps_mcp_tools_need_no_approval_even_when_everything_else_does() {
    mcp_tools_are_called_without_a_prompt(Some("untrusted")).await;
}

async fn mcp_tools_are_called_without_a_prompt(mode: Option<&str>) {
    let st = Setup::new().await;
    let mcp = support::mcp_echo::McpEcho::start("agent-token-2").await;
    let mut spec = st.spec();
    spec.config.mode = mode.map(str::to_string);
    spec.mcp = Some(mcp.access());
    let (sink, mut ev) = sink(spec.agent_id, 64);
    let mut s = st.provider().start(spec, sink).await.unwrap();
    ev.ready().await;
    s.send(prompt("please orchestrate")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed, "{t:?}");
    assert!(
        !t.other
            .iter()
            .any(|e| matches!(e, ProviderEvent::Permission(_))),
        "{:?}",
        t.other
    );
    let call = t
        .items
        .iter()
        .find(|i| i.kind == ItemKind::ToolCall)
        .expect("an MCP tool call item");
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
    let tools = st.api.requests()[0].tool_names();
    assert!(
        tools.contains(&"mcp__paseo/create_agent".to_string()),
        "{tools:?}"
    );
    s.close().await;
}
