//! Agents launching agents through the real MCP server, end to end: a shell agent whose prompt
//! calls the server with its own token (curl speaking streamable HTTP), and the real Claude Code
//! and Codex CLIs whose scripted stand-in models call `mcp__paseo__create_agent`. The children
//! are real shell agents; finish notices come back to the parent as its next turn.

use crate::support;

use std::time::Duration;

use paseo_core::mcp::{McpServer, RunningMcp};
use paseo_core::model::{AgentId, ItemKind, Status, WorkspaceId, PARENT_LABEL};
use paseo_core::runtime::Caller;
use paseo_core::runtime::{AgentSnapshot, CreateAgent, RuntimeOptions};
use paseo_core::server::{Runtime, Server};
use paseo_core::store::Layout;
use serde_json::json;
use support::anthropic::{self, AnthropicStandIn};
use support::cli::{CliApi, Clis, Seen};
use support::openai::{self, OpenAiStandIn};
use support::*;

const T: Duration = Duration::from_secs(60);

/// What the scripted models create: a shell child that prints a marker and finishes.
fn create_args() -> serde_json::Value {
    json!({
        "provider": "shell",
        "title": "helper",
        "initialPrompt": "touch helper-marker && echo helper-finished",
        "relationship": {"kind": "subagent"},
        "workspace": {"kind": "current"}
    })
}

struct Fixture {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    clis: Clis,
    rt: Option<Runtime>,
    mcp: Option<RunningMcp>,
    ws: Option<WorkspaceId>,
}

impl Fixture {
    async fn start() -> Fixture {
        let claude_api = AnthropicStandIn::start(|req| match req.input() {
            anthropic::Input::Text(t) if t.contains("<paseo-notice") => {
                anthropic::Reply::text("noted: the helper finished")
            }
            anthropic::Input::Text(t) if t.contains("spawn a helper") => {
                anthropic::Reply::tool_use("mcp__paseo__create_agent", create_args())
            }
            anthropic::Input::ToolResult {
                content, is_error, ..
            } => anthropic::Reply::text(format!("spawned (error: {is_error}): {content}")),
            anthropic::Input::Text(t) => anthropic::Reply::text(format!("echo: {t}")),
        })
        .await;
        let codex_api = OpenAiStandIn::start(|req| match req.input() {
            openai::Input::Text(t) if t.contains("<paseo-notice") => {
                openai::Reply::text("noted: the helper finished")
            }
            openai::Input::Text(t) if t.contains("spawn a helper") => {
                openai::Reply::function_call(Some("mcp__paseo"), "create_agent", create_args())
            }
            openai::Input::FunctionOutput { output, .. } => {
                openai::Reply::text(format!("spawned: {output}"))
            }
            other => openai::Reply::text(format!("got {other:?}")),
        })
        .await;
        let mut f = Fixture {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            clis: Clis::new(claude_api, codex_api),
            rt: None,
            mcp: None,
            ws: None,
        };
        let server = McpServer::bind(&Layout::new(f.home.path()), None).unwrap();
        let mut opts = RuntimeOptions::new(f.home.path(), f.clis.registry());
        // Claude Code refuses bypassPermissions as root unless told it runs in a sandbox (this
        // machine runs the tests as root; see shared/reference/agent-clis.md).
        opts.agent_env.insert("IS_SANDBOX".into(), "1".into());
        let rt = Runtime::start(opts, Some(server.access())).await.unwrap();
        let mcp = server.serve(rt.handle()).await.unwrap();
        rt.handle.deliver_pending().await.unwrap();
        let ws = rt
            .handle
            .add_workspace(f.work.path().display().to_string())
            .await
            .unwrap()
            .record
            .workspace_id;
        f.rt = Some(rt);
        f.mcp = Some(mcp);
        f.ws = Some(ws);
        f
    }

    fn h(&self) -> Server {
        self.rt.as_ref().unwrap().handle()
    }

    fn create(&self, provider: &str, prompt: &str) -> CreateAgent {
        let mut c = support::cli::create(provider, self.ws.as_ref().unwrap(), prompt);
        c.title = Some(format!("{provider} parent"));
        c
    }

    /// The unarchived children of `parent`, once there are `n`.
    async fn children(&self, parent: AgentId, n: usize) -> Vec<AgentSnapshot> {
        eventually(T, || async move {
            let f = paseo_core::engine::ListFilter {
                parent: Some(parent),
                ..Default::default()
            };
            let (kids, _) = self.h().list(f, 100).await.unwrap();
            if kids.len() >= n {
                return Ok(kids);
            }
            let p = self.h().get(parent).await.unwrap();
            let items = self.h().timeline(parent, 0, 50).await.unwrap();
            Err(format!(
                "{parent} has {} children, not {n}; status {:?}, error {:?}, timeline {items:#?}",
                kids.len(),
                p.status,
                p.record.last_error
            ))
        })
        .await
    }

    /// Waits until the agent's timeline has a system notice naming `child`.
    async fn notice_in_timeline(&self, parent: AgentId, child: AgentId) {
        eventually(T, || async move {
            let items = self.h().timeline(parent, 0, 200).await.unwrap();
            let noticed = items.iter().any(|i| {
                i.kind == ItemKind::System
                    && i.text.contains(&child.to_string())
                    && i.text.contains("completed")
            });
            noticed
                .then_some(())
                .ok_or_else(|| format!("no notice of {child} in {parent}'s timeline: {items:#?}"))
        })
        .await
    }

    async fn stop(mut self) {
        self.mcp.take().unwrap().shutdown().await;
        self.rt.take().unwrap().shutdown().await;
    }
}

/// Waits until the agent is idle with no notice left to run.
async fn settled(h: &Server, id: AgentId) -> AgentSnapshot {
    eventually(T, || async move {
        let a = h.wait(id, T).await.unwrap().agent;
        let busy = matches!(a.status, Status::Running | Status::Initializing);
        match busy || a.queued_notices > 0 {
            true => Err(format!("{id} never settled")),
            false => Ok(a),
        }
    })
    .await
}

#[tokio::test]
async fn a_shell_agent_creates_subagents_with_its_own_token_and_archiving_it_archives_them() {
    let f = Fixture::start().await;
    let h = f.h();
    // The prompt is a script: two create_agent calls over streamable HTTP with curl, using the
    // URL and token the agent's environment carries. A 401 would fail the turn.
    let call = |title: &str, prompt: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "create_agent", "arguments": {"provider": "shell", "title": title,
                "initialPrompt": prompt, "relationship": {"kind": "subagent"},
                "workspace": {"kind": "current"}}}});
        format!(
            "curl -sS -N --fail-with-body \"$PASEO_MCP_URL\" -H \"Authorization: Bearer $PASEO_MCP_TOKEN\" \
             -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
             -d '{body}' | sed -n 's/^data: //p'\n"
        )
    };
    let script = format!(
        "set -e\ntest -n \"$PASEO_MCP_TOKEN\"\n{}{}echo created-both",
        call("quick child", "echo child-done"),
        call("sleepy child", "sleep 300")
    );
    let parent = h.create(f.create("shell", &script)).await.unwrap();
    let p = settled(&h, parent.id()).await;
    assert_eq!(p.status, Status::Idle, "{:?}", p.record.last_error);
    let out = p.record.last_message.clone().unwrap_or_default();
    assert!(out.contains("created-both"), "{out}");
    assert!(out.contains("\"agentId\""), "the tool answered: {out}");

    let kids = f.children(parent.id(), 2).await;
    assert_eq!(kids.len(), 2);
    for k in &kids {
        assert_eq!(k.record.labels[PARENT_LABEL], parent.id().to_string());
        assert_eq!(k.parent_agent_id, Some(parent.id()));
        assert_eq!(
            k.record.created_by,
            Some(parent.id()),
            "the token named the parent"
        );
        assert_eq!(k.record.cwd, p.record.cwd);
        assert_eq!(k.record.provider, "shell");
    }
    let quick = kids
        .iter()
        .find(|k| k.record.title == "quick child")
        .unwrap();
    let sleepy = kids
        .iter()
        .find(|k| k.record.title == "sleepy child")
        .unwrap();
    let q = settled(&h, quick.id()).await;
    assert_eq!(q.status, Status::Idle);
    assert!(q
        .record
        .last_message
        .as_deref()
        .unwrap_or("")
        .contains("child-done"));
    // A shell parent cannot read: the notice is recorded in its timeline only.
    f.notice_in_timeline(parent.id(), quick.id()).await;
    let s = h.get(sleepy.id()).await.unwrap();
    assert!(
        s.status.is_active(),
        "the sleepy child runs: {:?}",
        s.status
    );
    poll("the sleepy child's process", || {
        (!agent_pids(sleepy.id()).is_empty()).then_some(())
    })
    .await;

    // Archiving the parent archives both children and stops the running one's processes.
    let archived = h.archive(Caller::User, parent.id()).await.unwrap();
    assert_eq!(archived.len(), 3, "{archived:?}");
    for id in [parent.id(), quick.id(), sleepy.id()] {
        assert!(archived.contains(&id));
        assert!(h.get(id).await.unwrap().record.archived_at.is_some());
    }
    assert!(
        agent_pids(sleepy.id()).is_empty(),
        "the sleepy child survived"
    );
    f.stop().await;
}

/// The end-to-end check for a prompt-reading CLI: the model's create_agent call made a shell
/// subagent in the parent's workspace; it finished; the parent got the notice as its next turn
/// and the stand-in model saw it.
/// The mode in which each CLI acts without asking (SPEC 14 power `full`).
fn full_mode(provider: &str) -> &'static str {
    match provider {
        "claude" => paseo_core::model::power::CLAUDE_FULL_MODE,
        _ => paseo_core::model::power::CODEX_FULL_MODE,
    }
}

/// A parent in a mode that acts without asking creates a shell child (equal power: nothing held).
async fn cli_parent_hears_from_its_subagent<A: CliApi>(f: &Fixture, api: &A, provider: &str) {
    let h = f.h();
    let mut c = f.create(provider, "spawn a helper, please");
    c.mode = Some(full_mode(provider).into());
    let parent = h.create(c).await.unwrap();
    assert_eq!(parent.power, paseo_core::model::Power::Full);
    let kids = f.children(parent.id(), 1).await;
    let kid = &kids[0];
    assert_eq!(kid.record.title, "helper");
    assert_eq!(kid.record.provider, "shell");
    assert_eq!(kid.record.labels[PARENT_LABEL], parent.id().to_string());
    assert_eq!(kid.record.created_by, Some(parent.id()));
    assert_eq!(kid.record.workspace_id, f.ws);
    let k = settled(&h, kid.id()).await;
    assert_eq!(k.status, Status::Idle, "{:?}", k.record.last_error);
    assert!(k
        .record
        .last_message
        .as_deref()
        .unwrap_or("")
        .contains("helper-finished"));

    // The parent's next turn is the notice, and the model received it.
    let p = eventually(T, || async {
        let p = h.get(parent.id()).await.unwrap();
        if p.record.last_message.as_deref() == Some("noted: the helper finished") {
            return Ok(p);
        }
        Err(format!(
            "{provider} parent never ran the notice turn: {:?} {:?} {:?}",
            p.status, p.record.last_message, p.record.last_error
        ))
    })
    .await;
    assert!(p.record.turn_count >= 2);
    let kid_id = kid.id().to_string();
    let saw_notice = |body: &str| {
        body.contains("<paseo-notice") && body.contains(&kid_id) && body.contains("helper-finished")
    };
    assert!(
        api.inputs()
            .iter()
            .any(|i| matches!(i, Seen::Text(t) if saw_notice(t))),
        "the model never saw the notice"
    );
    // The tool call itself succeeded and its result named the child.
    let (content, is_error) = api
        .inputs()
        .into_iter()
        .find_map(|i| match i {
            Seen::ToolOutput { content, is_error } => Some((content, is_error)),
            _ => None,
        })
        .expect("a tool result");
    assert!(!is_error, "create_agent failed: {content}");
    assert!(content.contains(&kid_id), "{content}");
    let tools = api.first_tools();
    assert!(tools.iter().any(|t| t == A::CREATE_AGENT_TOOL), "{tools:?}");
    let items = h.timeline(parent.id(), 0, 200).await.unwrap();
    assert!(
        items.iter().any(|i| i.kind == ItemKind::System
            && i.text.contains("<paseo-notice")
            && i.text.contains(&kid_id)),
        "the parent's timeline shows the notice as a system item"
    );
    // The child's archive goes with the parent's.
    let archived = h.archive(Caller::User, parent.id()).await.unwrap();
    assert!(archived.contains(&kid.id()));
}

/// SPEC 14 with the real CLI: a parent in its default mode (it asks before acting) creates a
/// shell child through MCP. The call succeeds, but nothing of the child's first turn runs (its
/// marker file stays absent) until the user allows it; a denied one errors and the parent gets
/// exactly one notice saying so.
async fn cli_held_child<A: CliApi>(f: &Fixture, api: &A, provider: &str) {
    let h = f.h();
    let marker = f.work.path().join("helper-marker");
    for allow in [true, false] {
        let parent = h
            .create(f.create(provider, "spawn a helper, please"))
            .await
            .unwrap();
        assert_eq!(parent.power, paseo_core::model::Power::Asks);
        let kid = f.children(parent.id(), 1).await.remove(0);
        let held = eventually(T, || async {
            let k = h.get(kid.id()).await.unwrap();
            match (&k.pending_permission, k.record.held_turn.is_some()) {
                (Some(p), true) => Ok(p.clone()),
                _ => Err(format!("{} not held: {:?}", kid.id(), k.status)),
            }
        })
        .await;
        let p = settled(&h, parent.id()).await;
        let (content, is_error) = api
            .inputs()
            .into_iter()
            .rev()
            .find_map(|i| match i {
                Seen::ToolOutput { content, is_error } => Some((content, is_error)),
                _ => None,
            })
            .expect("a tool result");
        assert!(!is_error, "the call itself succeeds: {content}");
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!marker.exists(), "nothing of a held turn runs");
        assert!(p.record.last_message.is_some());
        h.answer_permission(kid.id(), held.request_id.clone(), allow)
            .await
            .unwrap();
        let k = settled(&h, kid.id()).await;
        let kid_id = kid.id().to_string();
        let notices = || {
            api.inputs()
                .into_iter()
                .filter(|i| matches!(i, Seen::Text(t) if t.contains("<paseo-notice") && t.contains(&kid_id)))
                .count()
        };
        eventually(T, || async {
            (notices() >= 1)
                .then_some(())
                .ok_or("no notice yet".to_string())
        })
        .await;
        settled(&h, parent.id()).await;
        assert_eq!(notices(), 1, "exactly one notice");
        if allow {
            assert_eq!(k.status, Status::Idle, "{:?}", k.record.last_error);
            assert!(marker.exists(), "allowed: it ran");
            std::fs::remove_file(&marker).unwrap();
        } else {
            assert_eq!(k.status, Status::Error);
            assert_eq!(
                k.record.last_error.as_deref(),
                Some(paseo_core::engine::DENIED)
            );
            assert!(!marker.exists(), "denied: it never ran");
            let told = api.inputs().into_iter().any(|i| {
                matches!(i, Seen::Text(t) if t.contains(&kid_id) && t.contains("denied by the user"))
            });
            assert!(told, "the parent's notice names the denial");
        }
    }
}

#[tokio::test]
async fn claude_code_in_default_mode_cannot_run_a_shell_child_until_the_user_allows_it() {
    let f = Fixture::start().await;
    cli_held_child(&f, &f.clis.claude, "claude").await;
    f.stop().await;
}

#[tokio::test]
async fn codex_asking_for_approval_cannot_run_a_shell_child_until_the_user_allows_it() {
    let f = Fixture::start().await;
    cli_held_child(&f, &f.clis.codex, "codex").await;
    f.stop().await;
}

#[tokio::test]
async fn claude_code_creates_a_subagent_through_mcp_and_gets_its_finish_notice() {
    let f = Fixture::start().await;
    cli_parent_hears_from_its_subagent(&f, &f.clis.claude, "claude").await;
    f.stop().await;
}

#[tokio::test]
async fn codex_creates_a_subagent_through_mcp_and_gets_its_finish_notice() {
    let f = Fixture::start().await;
    cli_parent_hears_from_its_subagent(&f, &f.clis.codex, "codex").await;
    f.stop().await;
}

/// SPEC 14: an agent's environment carries its own token, never the user's (which would let it
/// act as the user: unheld, on every agent).
#[tokio::test]
async fn an_agents_environment_has_its_own_token_and_never_the_users() {
    let f = Fixture::start().await;
    let h = f.h();
    let user = std::fs::read_to_string(f.home.path().join("mcp-token")).unwrap();
    let user = user.trim();
    assert!(user.len() >= 32);
    let a = h
        .create(f.create("shell", "test -n \"$PASEO_MCP_TOKEN\" && env | sort"))
        .await
        .unwrap();
    let a = settled(&h, a.id()).await;
    assert_eq!(a.status, Status::Idle, "{:?}", a.record.last_error);
    let items = h.timeline(a.id(), 0, 500).await.unwrap();
    let output: String = items.iter().map(|i| i.text.as_str()).collect();
    assert!(output.contains("PASEO_MCP_TOKEN="), "{output}");
    assert!(
        !output.contains(user),
        "the user token is in an agent's environment"
    );
    f.stop().await;
}

/// The PASEO_MCP_TOKEN in the environment of each live process whose PASEO_AGENT_ID is `agent`.
fn tokens_in_environ(agent: AgentId) -> Vec<String> {
    let id = format!("PASEO_AGENT_ID={agent}");
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        let vars: Vec<String> = env
            .split(|b| *b == 0)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        if vars.contains(&id) {
            found.extend(
                vars.iter()
                    .filter_map(|v| v.strip_prefix("PASEO_MCP_TOKEN=").map(str::to_string)),
            );
        }
    }
    found
}

/// SPEC 14: with shell, Claude Code and Codex agents live, no process on the machine shows any
/// of their tokens, or the user's, on its command line (readable by every local user).
#[tokio::test]
async fn no_token_is_on_any_command_line_while_agents_run() {
    let f = Fixture::start().await;
    let h = f.h();
    let user = std::fs::read_to_string(f.home.path().join("mcp-token")).unwrap();
    let mut secrets = vec![user.trim().to_string()];
    let mut live = Vec::new();
    for provider in ["claude", "codex"] {
        let a = h.create(f.create(provider, "hello")).await.unwrap();
        settled(&h, a.id()).await;
        live.push(a.id());
    }
    // A shell agent whose turn is still running while we look.
    let sh = h.create(f.create("shell", "sleep 30")).await.unwrap();
    eventually(T, || async {
        let s = h.get(sh.id()).await.unwrap();
        (s.status == Status::Running)
            .then_some(())
            .ok_or(format!("{:?}", s.status))
    })
    .await;
    live.push(sh.id());
    // Each agent's token, from its processes' environments (Codex and shell) and, for Claude,
    // from its private MCP config file.
    for id in &live {
        secrets.extend(tokens_in_environ(*id));
    }
    for e in std::fs::read_dir(f.home.path().join("secrets"))
        .unwrap()
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let auth = v["mcpServers"]["paseo"]["headers"]["Authorization"]
            .as_str()
            .unwrap()
            .to_string();
        secrets.push(auth.trim_start_matches("Bearer ").to_string());
    }
    secrets.sort();
    secrets.dedup();
    assert!(
        secrets.len() >= 4,
        "the user's token and one per agent: {}",
        secrets.len()
    );
    let mut seen = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        seen += 1;
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        for s in &secrets {
            assert!(
                !cmdline.contains(s.as_str()),
                "a token on a command line: {cmdline}"
            );
        }
    }
    assert!(seen > 5);
    h.cancel(Caller::User, sh.id()).await.unwrap();
    f.stop().await;
}
