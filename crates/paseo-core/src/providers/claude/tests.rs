//! The parser replayed on streams recorded from the real Claude Code 2.1.332
//! (tests/fixtures/claude; re-record with PASEO_RECORD_DIR, see tests/suite/claude.rs), driven the
//! way the shared stdio session drives it; and the argv.

use serde_json::{json, Value};

use super::*;
use crate::model::{ItemKind, NewItem};
use crate::providers::stdio::Protocol;
use crate::providers::{ProviderError, ProviderEvent, TurnOutcome, TurnUsage};

const TEXT_TURNS: &str = include_str!("../../../tests/fixtures/claude/text_turns.jsonl");
const INTERRUPT: &str = include_str!("../../../tests/fixtures/claude/interrupt.jsonl");
const PERMISSION: &str = include_str!("../../../tests/fixtures/claude/permission_allow_deny.jsonl");
const INTERRUPT_PERMISSION: &str =
    include_str!("../../../tests/fixtures/claude/interrupt_during_permission.jsonl");
const UNKNOWN_SESSION: &str =
    include_str!("../../../tests/fixtures/claude/resume_unknown_session.jsonl");

fn usage(input: u64, output: u64, cost: Option<f64>, session: f64) -> TurnUsage {
    TurnUsage {
        input_tokens: input,
        output_tokens: output,
        cost_usd: cost,
        session_cost_usd: Some(session),
        ..TurnUsage::default()
    }
}

fn session_of(stream: &str) -> String {
    let first: Value = serde_json::from_str(stream.lines().next().unwrap()).unwrap();
    first["session_id"].as_str().unwrap().to_string()
}

/// Replays a recording the way the session drives the parser: a turn is sent before each
/// `init` (the CLI prints one per user message), and an interrupt before the control
/// response acknowledging it.
fn replay(stream: &str, parser: &mut ClaudeStream) -> Vec<Vec<ProviderEvent>> {
    let mut turns = vec![];
    let mut current = vec![];
    for line in stream.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["subtype"] == "init" && !parser.turn_active() {
            parser.send_turn("prompt").unwrap();
        }
        if v["type"] == "control_response" {
            parser.interrupt();
        }
        let step = parser.on_line(line);
        let ended = step
            .events
            .iter()
            .any(|e| matches!(e, ProviderEvent::TurnEnded(_)));
        current.extend(step.events);
        if ended {
            turns.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        turns.push(current);
    }
    turns
}

#[test]
fn text_turns_map_to_items_last_message_and_completion() {
    let mut p = ClaudeStream::new(Some(session_of(TEXT_TURNS)));
    let turns = replay(TEXT_TURNS, &mut p);
    assert_eq!(turns.len(), 2);
    assert_eq!(
        turns[0],
        vec![
            ProviderEvent::McpStatus {
                server: "paseo".into(),
                status: "failed".into()
            },
            ProviderEvent::Items(vec![NewItem::new(ItemKind::Assistant, "echo: hello there")]),
            ProviderEvent::LastMessage("echo: hello there".into()),
            ProviderEvent::Usage(usage(10, 5, Some(0.00014), 0.00014)),
            ProviderEvent::TurnEnded(TurnOutcome::Completed),
        ]
    );
    // The second init repeats the same session and MCP status: nothing new to report. The
    // CLI's cost is the process's running total: the turn costs the difference.
    assert_eq!(turns[1].len(), 4);
    let ProviderEvent::Usage(u) = &turns[1][2] else {
        panic!("{:?}", turns[1]);
    };
    assert_eq!((u.input_tokens, u.output_tokens), (10, 5));
    assert!((u.cost_usd.unwrap() - 0.00014).abs() < 1e-12, "{u:?}");
    assert_eq!(
        turns[1][3],
        ProviderEvent::TurnEnded(TurnOutcome::Completed)
    );
    assert!(!p.turn_active());
}

/// A result as Claude Code 2.1.332 prints it (trimmed), with the session's running totals.
fn result(output: u64, total_cost: f64, session_output: u64) -> String {
    json!({"type": "result", "subtype": "success", "is_error": false, "result": "hi",
        "usage": {"input_tokens": 100, "cache_creation_input_tokens": 50,
                  "cache_read_input_tokens": 1000, "output_tokens": output},
        "total_cost_usd": total_cost,
        "modelUsage": {"claude-sonnet-4-5": {"outputTokens": session_output, "costUSD": total_cost}}})
    .to_string()
}

#[test]
fn a_resumed_process_says_when_its_cost_total_was_restored() {
    // Claude Code restores the session's cost on --resume: the first total includes it, and
    // modelUsage shows more output than this turn's.
    let mut p = ClaudeStream::new(Some("s".into())).resumed(true);
    p.send_turn("x").unwrap();
    let ev = p.on_line(&result(7, 0.0036, 28)).events;
    let want = TurnUsage {
        input_tokens: 100,
        output_tokens: 7,
        cache_read_tokens: 1000,
        cache_write_tokens: 50,
        cost_usd: None,
        session_cost_usd: Some(0.0036),
        restored: true,
    };
    assert_eq!(ev[0], ProviderEvent::Usage(want.clone()));
    // Later turns of the same process cost the difference.
    p.send_turn("y").unwrap();
    let ev = p.on_line(&result(7, 0.0046, 35)).events;
    let ProviderEvent::Usage(u) = &ev[0] else {
        panic!("{ev:?}")
    };
    assert!(!u.restored);
    assert!((u.cost_usd.unwrap() - 0.001).abs() < 1e-12, "{u:?}");
    // Resumed, but nothing was restored (another session ran in this folder since): the
    // first total is this turn's alone.
    let mut p = ClaudeStream::new(Some("s".into())).resumed(true);
    p.send_turn("x").unwrap();
    let ev = p.on_line(&result(7, 0.0009, 7)).events;
    assert_eq!(
        ev[0],
        ProviderEvent::Usage(TurnUsage {
            cost_usd: Some(0.0009),
            session_cost_usd: Some(0.0009),
            restored: false,
            ..want
        })
    );
}

#[test]
fn a_session_id_is_reported_when_it_is_new() {
    let mut p = ClaudeStream::new(None);
    let turns = replay(TEXT_TURNS, &mut p);
    assert_eq!(
        turns[0][0],
        ProviderEvent::SessionId(session_of(TEXT_TURNS))
    );
}

#[test]
fn an_interrupted_turn_is_canceled_and_the_next_completes() {
    let mut p = ClaudeStream::new(None);
    let turns = replay(INTERRUPT, &mut p);
    assert_eq!(
        turns[0].last(),
        Some(&ProviderEvent::TurnEnded(TurnOutcome::Canceled))
    );
    assert_eq!(
        turns[1].last(),
        Some(&ProviderEvent::TurnEnded(TurnOutcome::Completed))
    );
    // Aborted by the CLI without our interrupt (e.g. another client): still canceled.
    let mut p = ClaudeStream::new(None);
    p.send_turn("x").unwrap();
    let result = INTERRUPT
        .lines()
        .find(|l| l.contains("aborted_streaming"))
        .unwrap();
    assert_eq!(
        p.on_line(result).events,
        vec![
            ProviderEvent::Usage(usage(0, 0, Some(0.00006), 0.00006)),
            ProviderEvent::LastMessage(String::new()),
            ProviderEvent::TurnEnded(TurnOutcome::Canceled)
        ]
    );
}

#[test]
fn permission_requests_become_events_and_answers_control_responses() {
    let mut p = ClaudeStream::new(None);
    let mut perms = vec![];
    let mut last_call = None;
    for line in PERMISSION.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["subtype"] == "init" && !p.turn_active() {
            p.send_turn("prompt").unwrap();
        }
        for e in p.on_line(line).events {
            if let ProviderEvent::Items(items) = &e {
                if let Some(call) = items.iter().rfind(|i| i.kind == ItemKind::ToolCall) {
                    last_call = call.call_id.clone();
                }
            }
            if let ProviderEvent::Permission(req) = e {
                assert_eq!(req.tool_name, "Bash");
                assert_eq!(req.description.as_deref(), Some("make a file"));
                // It names the tool call it is about, already in the timeline.
                assert!(last_call.is_some());
                assert_eq!(req.call_id, last_call);
                let allow = perms.is_empty();
                let answer = p.answer_permission(&req.request_id, allow).unwrap();
                assert_eq!(answer["type"], "control_response");
                assert_eq!(answer["response"]["request_id"], req.request_id.as_str());
                let r = &answer["response"]["response"];
                if allow {
                    assert_eq!(r["behavior"], "allow");
                    assert_eq!(r["updatedInput"], req.input);
                } else {
                    assert_eq!(r["behavior"], "deny");
                }
                assert!(p.answer_permission(&req.request_id, true).is_err());
                perms.push(req);
            }
        }
    }
    assert_eq!(perms.len(), 2);
}

#[test]
fn tool_calls_and_results_are_linked_items() {
    let mut p = ClaudeStream::new(None);
    let items: Vec<NewItem> = replay(PERMISSION, &mut p)
        .concat()
        .into_iter()
        .flat_map(|e| match e {
            ProviderEvent::Items(items) => items,
            _ => vec![],
        })
        .collect();
    let kinds: Vec<ItemKind> = items.iter().map(|i| i.kind).collect();
    assert_eq!(
        kinds,
        [
            ItemKind::ToolCall,
            ItemKind::ToolResult,
            ItemKind::Assistant,
            ItemKind::ToolCall,
            ItemKind::ToolResult,
            ItemKind::Assistant
        ]
    );
    assert_eq!(items[0].call_id, items[1].call_id);
    assert_eq!(items[1].text, "bash-ran");
    assert!(!items[1].is_error);
    assert!(items[4].is_error);
    assert_eq!(items[4].text, "The user denied this tool use.");
}

#[test]
fn a_permission_canceled_by_an_interrupt_is_resolved() {
    let mut p = ClaudeStream::new(None);
    let events = replay(INTERRUPT_PERMISSION, &mut p).concat();
    let (perm_at, req) = events
        .iter()
        .enumerate()
        .find_map(|(i, e)| match e {
            ProviderEvent::Permission(r) => Some((i, r.clone())),
            _ => None,
        })
        .unwrap();
    let resolved_at = events
        .iter()
        .position(|e| {
            *e == ProviderEvent::PermissionResolved {
                request_id: req.request_id.clone(),
            }
        })
        .expect("resolved");
    assert!(resolved_at > perm_at);
    assert!(p.answer_permission(&req.request_id, true).is_err());
    let ends: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::TurnEnded(o) => Some(o.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        [
            TurnOutcome::Canceled,
            TurnOutcome::Canceled,
            TurnOutcome::Completed
        ]
    );
}

#[test]
fn an_error_result_fails_the_turn_with_its_message() {
    let mut p = ClaudeStream::new(None);
    p.send_turn("x").unwrap();
    let events = p.on_line(UNKNOWN_SESSION.lines().next().unwrap()).events;
    assert_eq!(
        events,
        vec![
            ProviderEvent::LastMessage(String::new()),
            ProviderEvent::TurnEnded(TurnOutcome::Failed {
                message:
                    "No conversation found with session ID: 11111111-2222-4333-8444-555555555555"
                        .into(),
                detail: None
            })
        ]
    );
    // A result with no turn running (nothing was sent) is not a turn end.
    assert!(p
        .on_line(UNKNOWN_SESSION.lines().next().unwrap())
        .events
        .is_empty());
}

#[test]
fn exit_mid_turn_fails_the_turn_then_reports_the_exit() {
    let mut p = ClaudeStream::new(None);
    p.send_turn("x").unwrap();
    let killed = "Claude Code was killed by signal 9 (SIGKILL)".to_string();
    let failed = TurnOutcome::Failed {
        message: killed.clone(),
        detail: None,
    };
    assert_eq!(
        p.on_exit(&killed),
        [
            ProviderEvent::TurnEnded(failed),
            ProviderEvent::Exited { message: killed }
        ]
    );
    assert_eq!(
        p.on_exit("x"),
        vec![ProviderEvent::Exited {
            message: "x".into()
        }]
    );
}

#[test]
fn unsupported_control_requests_are_answered_with_an_error() {
    let mut p = ClaudeStream::new(None);
    let step = p.on_line(
        r#"{"type":"control_request","request_id":"r1","request":{"subtype":"hook_callback"}}"#,
    );
    assert!(step.events.is_empty());
    let reply = &step.out[0];
    assert_eq!(reply["response"]["subtype"], "error");
    assert_eq!(reply["response"]["request_id"], "r1");
    assert!(p.on_line("not json").events.is_empty());
}

#[test]
fn prompts_and_interrupts_are_the_stdin_messages_the_cli_reads() {
    let mut p = ClaudeStream::new(Some("s-1".into()));
    let opening = p.startup();
    assert_eq!(
        opening.events,
        [ProviderEvent::SessionId("s-1".into()), ProviderEvent::Ready]
    );
    assert!(opening.out.is_empty());
    assert!(p.interrupt().is_empty(), "no turn to interrupt");
    assert_eq!(
        p.send_turn("hi").unwrap(),
        [json!({"type": "user", "message": {"role": "user", "content": "hi"}})]
    );
    assert!(matches!(
        p.send_turn("again"),
        Err(ProviderError::Invalid(_))
    ));
    assert_eq!(
        p.interrupt(),
        [
            json!({"type": "control_request", "request_id": "paseo-interrupt-1",
                "request": {"subtype": "interrupt"}})
        ]
    );
    assert!(p.interrupt().is_empty(), "asked once per turn");
    // A turn whose prompt could not be written is forgotten: the next one may start.
    p.abandon_turn();
    p.send_turn("next").unwrap();
    assert_eq!(p.interrupt()[0]["request_id"], "paseo-interrupt-2");
}

#[test]
fn argv_carries_session_model_mode_and_mcp() {
    let mut spec = SessionSpec {
        agent_id: crate::model::AgentId::new(),
        provider: "claude".into(),
        cwd: "/tmp".into(),
        config: Default::default(),
        resume: None,
        env: Default::default(),
        mcp: Some(McpAccess {
            url: "http://127.0.0.1:4000/mcp".into(),
            token: "tok".into(),
            config_dir: "/run/secrets".into(),
            tools: crate::mcp::PaseoTools::served().into(),
        }),
        groups: None,
        sandbox: None,
    };
    spec.config.model = Some("opus".into());
    spec.config.mode = Some("acceptEdits".into());
    let file = std::path::Path::new("/run/secrets/claude-mcp.json");
    let argv = claude_argv(
        &["claude".to_string()],
        &spec,
        &ClaudeSessionArg::New("abc".into()),
        Some(file),
    );
    let joined = argv.join(" ");
    assert!(joined.starts_with(
        "claude -p --input-format stream-json --output-format stream-json --permission-prompt-tool stdio --session-id abc --model opus --permission-mode acceptEdits --setting-sources user --strict-mcp-config --mcp-config /run/secrets/claude-mcp.json "
    ), "{joined}");
    // The token is in the file's JSON, never on the command line.
    assert!(
        argv.iter().all(|a| !a.contains("Bearer") && a != "tok"),
        "{joined}"
    );
    let mcp: Value = serde_json::from_str(&mcp_config_json(spec.mcp.as_ref().unwrap())).unwrap();
    assert_eq!(
        mcp["mcpServers"]["paseo"],
        json!({"type": "http", "url": "http://127.0.0.1:4000/mcp",
               "headers": {"Authorization": "Bearer tok"}, "alwaysLoad": true})
    );
    let allowed = &argv[argv.iter().position(|a| a == "--allowedTools").unwrap() + 1];
    // Every served tool, the read-only get_agent_changes included (SPEC 9).
    let served = crate::mcp::PaseoTools::served();
    assert_eq!(allowed.split(',').count(), served.len());
    assert!(
        allowed.contains("mcp__paseo__get_agent_changes"),
        "{allowed}"
    );
    assert!(allowed.starts_with("mcp__paseo__archive_agent,mcp__paseo__cancel_agent"));
    assert_eq!(argv.last().unwrap(), "--verbose");
    let resumed = claude_argv(
        &["c".into()],
        &spec,
        &ClaudeSessionArg::Resume("abc".into()),
        None,
    );
    assert!(!resumed.contains(&"--mcp-config".to_string()));
    assert!(resumed.join(" ").contains("--resume abc"));
    // Without the app's server, still no other: none from the agent's cwd (SPEC 14).
    assert!(resumed.contains(&"--strict-mcp-config".to_string()));
}

/// SPEC 14: a mode-less agent is started in the asking mode, never in whatever the user's
/// global `permissions.defaultMode` says; only the user's settings load, never the project's.
#[test]
fn every_session_has_a_mode_and_loads_no_project_settings() {
    let spec = SessionSpec {
        agent_id: crate::model::AgentId::new(),
        provider: "claude".into(),
        cwd: "/w".into(),
        config: Default::default(),
        resume: None,
        env: Default::default(),
        mcp: None,
        groups: None,
        sandbox: None,
    };
    let argv = claude_argv(
        &["claude".into()],
        &spec,
        &ClaudeSessionArg::New("a".into()),
        None,
    );
    let after = |flag: &str| argv[argv.iter().position(|a| a == flag).unwrap() + 1].clone();
    assert_eq!(after("--permission-mode"), "default");
    assert_eq!(after("--setting-sources"), "user");
    assert!(argv.contains(&"--strict-mcp-config".to_string()));
    assert_eq!(argv.iter().filter(|a| *a == "--permission-mode").count(), 1);
}
