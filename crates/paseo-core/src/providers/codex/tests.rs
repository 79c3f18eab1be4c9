//! The protocol state machine replayed on app-server streams recorded from the real
//! Codex 0.171.0 (tests/fixtures/codex; re-record with PASEO_RECORD_DIR, see
//! tests/suite/codex.rs). Request ids in a recording match ours as long as the same calls are
//! made in the same order, which the replay does. And the argv.

use serde_json::{json, Value};

use super::*;
use crate::model::{ItemKind, NewItem};
use crate::providers::stdio::Protocol;
use crate::providers::{ProviderEvent, TurnOutcome};

const TEXT_TURNS: &str = include_str!("../../../tests/fixtures/codex/text_turns.jsonl");
const INTERRUPT: &str = include_str!("../../../tests/fixtures/codex/interrupt.jsonl");
const APPROVAL: &str = include_str!("../../../tests/fixtures/codex/approval_allow_deny.jsonl");
const RESUME: &str = include_str!("../../../tests/fixtures/codex/resume.jsonl");
const UNKNOWN_THREAD: &str =
    include_str!("../../../tests/fixtures/codex/resume_unknown_thread.jsonl");

struct Replay {
    stream: CodexStream,
    events: Vec<ProviderEvent>,
    sent: Vec<Value>,
    fatal: bool,
}

impl Replay {
    fn new(params: ThreadParams) -> Self {
        let mut stream = CodexStream::new(params);
        let sent = stream.startup().out;
        Replay {
            stream,
            events: vec![],
            sent,
            fatal: false,
        }
    }
    fn feed(&mut self, line: &str) {
        let step = self.stream.on_line(line);
        self.events.extend(step.events);
        self.sent.extend(step.out);
        self.fatal |= step.fatal;
    }
    /// The thread, once the session is ready.
    fn thread(&self) -> Option<String> {
        self.events.iter().find_map(|e| match e {
            ProviderEvent::SessionId(id) => Some(id.clone()),
            _ => None,
        })
    }
    /// Whether the runtime would send a turn before this recorded line: the thread is idle
    /// and the line answers a request not made yet (the recorded session's `turn/start`).
    fn turn_due(&self, line: &Value) -> bool {
        let requests = self.sent.iter().filter(|m| m["method"].is_string());
        let next_id = requests.filter_map(|m| m["id"].as_u64()).max().unwrap_or(0) + 1;
        let answers_unsent = line["method"].is_null() && line["id"].as_u64() >= Some(next_id);
        self.thread().is_some() && !self.stream.turn_active() && answers_unsent
    }
    /// Feeds a recording, starting a turn whenever the thread is idle (as the runtime
    /// would after `Ready` and after each `TurnEnded`); `on_turn_started` runs at each
    /// `turn/started`.
    fn run(&mut self, stream: &str, mut on_turn_started: impl FnMut(&mut Replay)) {
        for line in stream.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if self.turn_due(&v) {
                let out = self.stream.send_turn("prompt").unwrap();
                self.sent.extend(out);
            }
            self.feed(line);
            if v["method"] == "turn/started" {
                on_turn_started(self);
            }
        }
    }
    fn ends(&self) -> Vec<TurnOutcome> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::TurnEnded(o) => Some(o.clone()),
                _ => None,
            })
            .collect()
    }
}

fn params() -> ThreadParams {
    ThreadParams {
        cwd: "/work".into(),
        model: Some("m".into()),
        approval_policy: Some("on-request".into()),
        developer_instructions: None,
        sandbox: None,
        resume: None,
    }
}

/// A session whose initialize and thread/start (thread `t1`) have been answered.
fn ready_on_thread_t1() -> CodexStream {
    let mut s = CodexStream::new(params());
    s.startup();
    s.on_line(r#"{"id":1,"result":{}}"#);
    s.on_line(r#"{"id":2,"result":{"thread":{"id":"t1"}}}"#);
    s
}

#[test]
fn startup_initializes_then_starts_a_thread_then_is_ready() {
    let mut r = Replay::new(params());
    assert_eq!(r.sent[0]["method"], "initialize");
    r.run(TEXT_TURNS, |_| {});
    assert_eq!(r.sent[1], json!({"method": "initialized"}));
    assert_eq!(r.sent[2]["method"], "thread/start");
    assert_eq!(
        r.sent[2]["params"],
        json!({"cwd": "/work", "model": "m", "approvalPolicy": "on-request"})
    );
    let thread = r.thread().unwrap();
    assert_eq!(
        &r.events[..2],
        &[
            ProviderEvent::SessionId(thread.clone()),
            ProviderEvent::Ready
        ]
    );
    assert_eq!(r.sent[3]["method"], "turn/start");
    assert_eq!(r.sent[3]["params"]["threadId"], thread.as_str());
    assert_eq!(
        r.sent[3]["params"]["input"],
        json!([{"type": "text", "text": "prompt", "text_elements": []}])
    );
}

#[test]
fn text_turns_map_to_items_last_message_and_completion() {
    let mut r = Replay::new(params());
    r.run(TEXT_TURNS, |_| {});
    assert_eq!(r.ends(), [TurnOutcome::Completed, TurnOutcome::Completed]);
    assert!(r.events.contains(&ProviderEvent::McpStatus {
        server: "paseo".into(),
        status: "starting".into()
    }));
    assert!(r
        .events
        .contains(&ProviderEvent::LastMessage("echo: hello codex".into())));
    assert!(r.events.contains(&ProviderEvent::Items(vec![NewItem::new(
        ItemKind::Assistant,
        "echo: hello codex"
    )])));
}

#[test]
fn interrupt_sends_turn_interrupt_and_the_turn_is_canceled() {
    let mut r = Replay::new(params());
    let mut first = true;
    r.run(INTERRUPT, |r| {
        if std::mem::take(&mut first) {
            let out = r.stream.interrupt();
            r.sent.extend(out);
        }
    });
    let interrupt = r
        .sent
        .iter()
        .find(|m| m["method"] == "turn/interrupt")
        .expect("turn/interrupt sent");
    assert!(interrupt["params"]["turnId"].as_str().is_some());
    assert_eq!(r.ends(), [TurnOutcome::Canceled, TurnOutcome::Completed]);
}

#[test]
fn an_interrupt_before_the_turn_id_is_known_is_sent_once_it_is() {
    let mut s = ready_on_thread_t1();
    let start = s.send_turn("x").unwrap();
    assert_eq!(start[0]["id"], 3);
    assert!(s.interrupt().is_empty());
    let step = s.on_line(r#"{"id":3,"result":{"turn":{"id":"turn-9","status":"inProgress"}}}"#);
    assert_eq!(step.out[0]["method"], "turn/interrupt");
    assert_eq!(
        step.out[0]["params"],
        json!({"threadId": "t1", "turnId": "turn-9"})
    );
    let step = s.on_line(
        r#"{"method":"turn/completed","params":{"threadId":"t1","turn":{"id":"turn-9","status":"interrupted","error":null}}}"#,
    );
    assert_eq!(
        step.events,
        vec![
            ProviderEvent::LastMessage(String::new()),
            ProviderEvent::TurnEnded(TurnOutcome::Canceled)
        ]
    );
}

#[test]
fn a_turn_sent_before_the_thread_is_ready_starts_with_it() {
    let mut s = CodexStream::new(params());
    s.startup();
    assert!(s.send_turn("early").unwrap().is_empty(), "queued");
    assert!(matches!(
        s.send_turn("again"),
        Err(ProviderError::Invalid(_))
    ));
    s.on_line(r#"{"id":1,"result":{}}"#);
    let step = s.on_line(r#"{"id":2,"result":{"thread":{"id":"t1"}}}"#);
    assert_eq!(
        step.events,
        [ProviderEvent::SessionId("t1".into()), ProviderEvent::Ready]
    );
    assert_eq!(step.out[0]["method"], "turn/start");
    assert_eq!(step.out[0]["params"]["input"][0]["text"], "early");
    // A turn whose message could not be written is forgotten: the next one may start.
    s.abandon_turn();
    assert!(!s.turn_active());
    assert_eq!(s.send_turn("next").unwrap()[0]["method"], "turn/start");
}

#[test]
fn approvals_become_permissions_answered_accept_or_decline() {
    let mut r = Replay::new(params());
    let mut answers = vec![];
    for line in APPROVAL.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if r.turn_due(&v) {
            let out = r.stream.send_turn("prompt").unwrap();
            r.sent.extend(out);
        }
        let seen = r.events.len();
        r.feed(line);
        let new: Vec<ProviderEvent> = r.events[seen..].to_vec();
        for req in new.into_iter().filter_map(|e| match e {
            ProviderEvent::Permission(req) => Some(req),
            _ => None,
        }) {
            assert_eq!(req.tool_name, "shell");
            assert_eq!(req.description.as_deref(), Some("make a file"));
            // It names the command's tool call, already in the timeline.
            let call = r.events[..seen]
                .iter()
                .flat_map(|e| match e {
                    ProviderEvent::Items(items) => items.clone(),
                    _ => vec![],
                })
                .rfind(|i| i.kind == ItemKind::ToolCall)
                .and_then(|i| i.call_id);
            assert!(call.is_some());
            assert_eq!(req.call_id, call);
            let allow = answers.is_empty();
            let answer = r.stream.answer_permission(&req.request_id, allow).unwrap();
            assert_eq!(answer["id"], v["id"]);
            answers.push(answer["result"]["decision"].clone());
        }
    }
    assert_eq!(answers, [json!("accept"), json!("decline")]);
    assert_eq!(r.ends(), [TurnOutcome::Completed, TurnOutcome::Completed]);
    let results: Vec<NewItem> = r
        .events
        .iter()
        .flat_map(|e| match e {
            ProviderEvent::Items(items) => items.clone(),
            _ => vec![],
        })
        .filter(|i| i.kind == ItemKind::ToolResult)
        .collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].text, "made-allowed-file\n");
    assert!(!results[0].is_error);
    assert_eq!(results[1].text, "declined");
    assert!(results[1].is_error);
    // Answered requests resolved by the server are not reported again.
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, ProviderEvent::PermissionResolved { .. })));
}

#[test]
fn resume_sends_thread_resume_with_the_stored_id() {
    let mut p = params();
    p.resume = Some("thread-7".into());
    let mut r = Replay::new(p);
    r.feed(RESUME.lines().next().unwrap());
    assert_eq!(r.sent[2]["method"], "thread/resume");
    assert_eq!(r.sent[2]["params"]["threadId"], "thread-7");
}

#[test]
fn an_unknown_thread_is_fatal_with_the_reason() {
    let mut p = params();
    p.resume = Some("01a23804-0000-78b2-87d5-ba62d0558149".into());
    let mut r = Replay::new(p);
    r.run(UNKNOWN_THREAD, |_| {});
    assert!(r.fatal);
    let fatal = r.stream.fatal.clone().unwrap();
    assert!(
        fatal.starts_with("could not resume Codex thread 01a23804-0000"),
        "{fatal}"
    );
    assert!(fatal.contains("no rollout found"), "{fatal}");
    assert!(!r.events.contains(&ProviderEvent::Ready));
    assert_eq!(
        r.stream.on_exit(&fatal),
        vec![ProviderEvent::Exited {
            message: fatal.clone()
        }]
    );
}

#[test]
fn unsupported_server_requests_get_an_error_and_paseo_elicitations_are_accepted() {
    let mut s = CodexStream::new(params());
    let step = s.on_line(r#"{"id":5,"method":"item/tool/requestUserInput","params":{}}"#);
    assert_eq!(step.out[0]["id"], 5);
    assert_eq!(step.out[0]["error"]["code"], -32601);
    let step = s.on_line(
        r#"{"id":6,"method":"mcpServer/elicitation/request","params":{"serverName":"paseo"}}"#,
    );
    assert_eq!(step.out[0]["result"]["action"], "accept");
    let step = s.on_line(
        r#"{"id":7,"method":"mcpServer/elicitation/request","params":{"serverName":"other"}}"#,
    );
    assert_eq!(step.out[0]["result"]["action"], "decline");
}

#[test]
fn mcp_tool_calls_become_namespaced_tool_items() {
    let mut s = CodexStream::new(params());
    let step = s.on_line(
        r#"{"method":"item/started","params":{"item":{"type":"mcpToolCall","id":"c1","server":"paseo","tool":"create_agent","arguments":{"provider":"shell"},"status":"inProgress"}}}"#,
    );
    assert_eq!(
        step.events,
        vec![ProviderEvent::Items(vec![NewItem::tool_call(
            "c1",
            "mcp__paseo__create_agent",
            json!({"provider": "shell"})
        )])]
    );
    let step = s.on_line(
        r#"{"method":"item/completed","params":{"item":{"type":"mcpToolCall","id":"c1","server":"paseo","tool":"create_agent","status":"completed","result":{"content":[{"type":"text","text":"created"}]},"error":null}}}"#,
    );
    assert_eq!(
        step.events,
        vec![ProviderEvent::Items(vec![NewItem::tool_result(
            "c1", "created", false
        )])]
    );
}

#[test]
fn a_failed_turn_carries_its_error_and_exit_mid_turn_fails_it() {
    let mut s = ready_on_thread_t1();
    s.send_turn("x").unwrap();
    s.on_line(r#"{"method":"error","params":{"error":{"message":"stream disconnected"},"willRetry":false}}"#);
    let step = s.on_line(
        r#"{"method":"turn/completed","params":{"turn":{"id":"u","status":"failed","error":null}}}"#,
    );
    assert_eq!(
        step.events,
        vec![
            ProviderEvent::LastMessage(String::new()),
            ProviderEvent::TurnEnded(TurnOutcome::Failed {
                message: "stream disconnected".into(),
                detail: None
            })
        ]
    );
    s.send_turn("y").unwrap();
    assert_eq!(
        s.on_exit("Codex was killed by signal 9 (SIGKILL)"),
        vec![
            ProviderEvent::TurnEnded(TurnOutcome::Failed {
                message: "Codex was killed by signal 9 (SIGKILL)".into(),
                detail: None
            }),
            ProviderEvent::Exited {
                message: "Codex was killed by signal 9 (SIGKILL)".into()
            }
        ]
    );
}

#[test]
fn argv_injects_the_mcp_server_without_the_token() {
    let argv = codex_argv(
        &["codex".into()],
        Some(&McpAccess {
            url: "http://127.0.0.1:4000/mcp".into(),
            token: "secret".into(),
            config_dir: "/unused".into(),
            tools: Default::default(),
        }),
    );
    assert_eq!(
        argv,
        [
            "codex",
            "app-server",
            "-c",
            "mcp_servers.paseo.url=\"http://127.0.0.1:4000/mcp\"",
            "-c",
            "mcp_servers.paseo.bearer_token_env_var=\"PASEO_MCP_TOKEN\"",
            "-c",
            "mcp_servers.paseo.default_tools_approval_mode=\"approve\""
        ]
    );
    assert!(!argv.join(" ").contains("secret"));
}

/// The Usage events of a replay.
fn usages(r: &Replay) -> Vec<(u64, u64, u64, u64)> {
    r.events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Usage(u) => Some((
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens,
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn each_turn_reports_what_the_threads_token_total_grew_by() {
    let mut r = Replay::new(params());
    r.run(TEXT_TURNS, |_| {});
    assert_eq!(usages(&r), [(10, 5, 0, 0), (10, 5, 0, 0)]);
    assert!(r.events.iter().all(|e| match e {
        ProviderEvent::Usage(u) => u.cost_usd.is_none() && u.session_cost_usd.is_none(),
        _ => true,
    }));
}

#[test]
fn a_resumed_threads_replayed_total_and_repeated_totals_are_not_charged_again() {
    // The second process of the recording: it resumes the thread, Codex replays the total
    // of the first process's turn, then the new turn's call arrives.
    let second: String = RESUME.lines().skip(17).map(|l| format!("{l}\n")).collect();
    let mut r = Replay::new(ThreadParams {
        resume: Some("01a23815-33d0-72c3-af25-84ac683d9262".into()),
        ..params()
    });
    r.run(&second, |_| {});
    assert_eq!(r.ends(), [TurnOutcome::Completed]);
    assert_eq!(usages(&r), [(10, 5, 0, 0)]);

    // A report repeating the same total (Codex re-sends it with rate-limit updates) adds
    // nothing; cached input is counted apart from the rest.
    let mut s = ready_on_thread_t1();
    s.send_turn("x").unwrap();
    let report = |total: u64, cached: u64| {
        json!({"method": "thread/tokenUsage/updated", "params": {"threadId": "t1", "turnId": "u",
            "tokenUsage": {
                "total": {"totalTokens": total + 5, "inputTokens": total, "cachedInputTokens": cached,
                          "outputTokens": 5, "reasoningOutputTokens": 0},
                "last": {"totalTokens": total + 5, "inputTokens": total, "cachedInputTokens": cached,
                         "outputTokens": 5, "reasoningOutputTokens": 0}}}})
        .to_string()
    };
    s.on_line(&report(110, 100));
    s.on_line(&report(110, 100));
    let end = s.on_line(
        r#"{"method":"turn/completed","params":{"turn":{"id":"u","status":"completed"}}}"#,
    );
    let u = end.events.iter().find_map(|e| match e {
        ProviderEvent::Usage(u) => Some(u.clone()),
        _ => None,
    });
    let u = u.expect("the turn's usage");
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cache_read_tokens),
        (10, 5, 100)
    );
}

/// SPEC 14: an agent the power rule counts as asking never takes its approval policy or
/// sandbox from the user's `~/.codex/config.toml` (where `approval_policy = "never"` or
/// `sandbox_mode = "danger-full-access"` would make it act without asking).
#[test]
fn an_asking_agent_gets_an_explicit_approval_policy_and_sandbox() {
    let spec = |mode: Option<&str>, sandbox: Option<&str>| {
        let mut config = crate::model::AgentConfig {
            mode: mode.map(Into::into),
            ..Default::default()
        };
        if let Some(s) = sandbox {
            config.extra.insert("sandbox".into(), json!(s));
        }
        ThreadParams::from_spec(&crate::providers::SessionSpec {
            agent_id: crate::model::AgentId::new(),
            provider: "codex".into(),
            cwd: "/w".into(),
            config,
            resume: None,
            env: Default::default(),
            mcp: None,
            groups: None,
            sandbox: None,
        })
    };
    let cases = [
        (None, None, "on-request", Some("read-only")),
        (Some("untrusted"), None, "untrusted", Some("read-only")),
        (Some("on-request"), None, "on-request", Some("read-only")),
        (
            Some("on-request"),
            Some("workspace-write"),
            "on-request",
            Some("workspace-write"),
        ),
        (Some("never"), None, "never", None),
        (Some("never"), Some("read-only"), "never", Some("read-only")),
    ];
    for (mode, sandbox, approval, want) in cases {
        let p = spec(mode, sandbox);
        assert_eq!(p.approval_policy.as_deref(), Some(approval), "{mode:?}");
        assert_eq!(p.sandbox.as_deref(), want, "{mode:?} {sandbox:?}");
    }
}
