//! The `claude` provider: one long-lived Claude Code process per agent session, spoken to in
//! stream-json (`claude -p --input-format stream-json --output-format stream-json --verbose`).
//!
//! Prompts go to stdin as `user` lines; interrupts and permission answers travel on the same
//! stdin as control messages (`--permission-prompt-tool stdio` makes the CLI ask us through
//! `control_request`s of subtype `can_use_tool`). The first start passes `--session-id` with a
//! fresh UUID, later starts `--resume` it. The app's MCP server is injected with `--mcp-config`
//! and its tools are pre-approved with `--allowedTools`, so orchestration never waits on a
//! permission prompt.
//!
//! [`ClaudeStream`] is the pure parser: stdout lines in, provider events and stdin replies out.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::process::{self, describe_exit, AgentEnv, Emitter, LineReader, Tail, TERM_GRACE};
use super::{
    EventSink, McpAccess, PermissionRequest, Provider, ProviderError, ProviderEvent, ProviderInfo,
    Session, SessionSpec, TurnInput, TurnOutcome,
};
use crate::config::ProviderConfig;
use crate::model::{ItemKind, NewItem};

/// The app's MCP tools, pre-approved for every Claude Code agent.
pub const PASEO_TOOLS: [&str; 8] = [
    "create_agent",
    "send_agent_prompt",
    "wait_for_agent",
    "get_agent",
    "list_agents",
    "cancel_agent",
    "archive_agent",
    "create_worktree",
];

/// The MCP server name agents see (`mcp__paseo__<tool>`).
pub const MCP_SERVER_NAME: &str = "paseo";

/// A stdout line longer than this is skipped (a runaway tool result must not exhaust memory).
const MAX_LINE: usize = 32 * 1024 * 1024;

pub struct ClaudeProvider {
    id: String,
    config: ProviderConfig,
}

impl ClaudeProvider {
    pub fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        ClaudeProvider {
            id: id.into(),
            config,
        }
    }

    fn prefix(&self) -> Vec<String> {
        self.config
            .command
            .clone()
            .unwrap_or_else(|| vec!["claude".to_string()])
    }
}

/// How the session is identified on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaudeSessionArg {
    /// A new session with this id (`--session-id`).
    New(String),
    /// An existing session (`--resume`).
    Resume(String),
}

impl ClaudeSessionArg {
    pub fn id(&self) -> &str {
        match self {
            ClaudeSessionArg::New(id) | ClaudeSessionArg::Resume(id) => id,
        }
    }
}

/// The `--mcp-config` JSON that injects the app's MCP server.
pub fn mcp_config_json(mcp: &McpAccess) -> String {
    json!({
        "mcpServers": {
            MCP_SERVER_NAME: {
                "type": "http",
                "url": mcp.url,
                "headers": {"Authorization": format!("Bearer {}", mcp.token)},
                "alwaysLoad": true,
            }
        }
    })
    .to_string()
}

/// The full argv for a session.
pub fn claude_argv(
    prefix: &[String],
    spec: &SessionSpec,
    session: &ClaudeSessionArg,
) -> Vec<String> {
    let mut argv: Vec<String> = prefix.to_vec();
    let mut push = |a: &str| argv.push(a.to_string());
    push("-p");
    push("--input-format");
    push("stream-json");
    push("--output-format");
    push("stream-json");
    push("--permission-prompt-tool");
    push("stdio");
    match session {
        ClaudeSessionArg::New(id) => {
            push("--session-id");
            push(id);
        }
        ClaudeSessionArg::Resume(id) => {
            push("--resume");
            push(id);
        }
    }
    if let Some(model) = spec.config.model.as_deref().filter(|m| !m.is_empty()) {
        push("--model");
        push(model);
    }
    if let Some(mode) = spec.config.mode.as_deref().filter(|m| !m.is_empty()) {
        push("--permission-mode");
        push(mode);
    }
    if let Some(sp) = spec
        .config
        .system_prompt
        .as_deref()
        .filter(|m| !m.is_empty())
    {
        push("--append-system-prompt");
        push(sp);
    }
    if let Some(mcp) = &spec.mcp {
        // Both options take several values; the flag after each ends its list.
        push("--mcp-config");
        push(&mcp_config_json(mcp));
        push("--allowedTools");
        let tools: Vec<String> = PASEO_TOOLS
            .iter()
            .map(|t| format!("mcp__{MCP_SERVER_NAME}__{t}"))
            .collect();
        push(&tools.join(","));
    }
    push("--verbose");
    argv
}

impl Provider for ClaudeProvider {
    fn info(&self) -> ProviderInfo {
        let env = AgentEnv {
            set: self.config.env.clone(),
        };
        let prefix = self.prefix();
        let reason = process::find_program(&prefix[0], &env)
            .err()
            .map(|r| format!("Claude Code is not installed: {r}"));
        ProviderInfo {
            id: self.id.clone(),
            label: self
                .config
                .label
                .clone()
                .unwrap_or_else(|| "Claude Code".into()),
            kind: "claude".into(),
            available: reason.is_none(),
            reason,
            reads_prompts: true,
            models: if self.config.models.is_empty() {
                vec!["sonnet".into(), "opus".into(), "haiku".into()]
            } else {
                self.config.models.clone()
            },
        }
    }

    fn start(
        &self,
        spec: SessionSpec,
        sink: EventSink,
    ) -> BoxFuture<'static, Result<Box<dyn Session>, ProviderError>> {
        let env = AgentEnv::new(
            spec.agent_id,
            &self.config.env,
            &spec.env,
            spec.mcp.as_ref(),
        );
        let prefix = self.prefix();
        let id = self.id.clone();
        Box::pin(async move {
            process::find_program(&prefix[0], &env).map_err(|reason| {
                ProviderError::Unavailable {
                    provider: id.clone(),
                    reason: format!("Claude Code is not installed: {reason}"),
                }
            })?;
            let session_arg = match spec.resume.as_deref().filter(|s| !s.is_empty()) {
                Some(id) => ClaudeSessionArg::Resume(id.to_string()),
                None => ClaudeSessionArg::New(uuid::Uuid::new_v4().to_string()),
            };
            let argv = claude_argv(&prefix, &spec, &session_arg);
            let spawned = process::spawn(process::Launch {
                argv: &argv,
                cwd: &spec.cwd,
                env: &env,
                stdin: true,
            })?;
            let emitter = Emitter::spawn(sink);
            let stream = Arc::new(Mutex::new(ClaudeStream::new(Some(
                session_arg.id().to_string(),
            ))));
            let (stdin_tx, stdin_rx) = mpsc::unbounded_channel::<String>();
            let closing = Arc::new(AtomicBool::new(false));
            let exited = Arc::new(AtomicBool::new(false));
            if let Some(stdin) = spawned.stdin {
                tokio::spawn(write_stdin(stdin, stdin_rx));
            }
            let stderr_tail = Arc::new(Mutex::new(Tail::new(2000)));
            let stderr_task = tokio::spawn(read_stderr(spawned.stderr, stderr_tail.clone()));
            emitter
                .event(ProviderEvent::SessionId(session_arg.id().to_string()))
                .await;
            emitter.event(ProviderEvent::Ready).await;
            let reader = tokio::spawn(read_stdout(
                spawned.stdout,
                stream.clone(),
                emitter.clone(),
                stdin_tx.clone(),
                spawned.proc.exit_watch(),
                stderr_task,
                stderr_tail,
                closing.clone(),
                exited.clone(),
            ));
            Ok(Box::new(ClaudeSession {
                stream,
                stdin: Some(stdin_tx),
                proc: Some(spawned.proc),
                reader: Some(reader),
                closing,
                exited,
                interrupts: AtomicU64::new(0),
            }) as Box<dyn Session>)
        })
    }
}

struct ClaudeSession {
    stream: Arc<Mutex<ClaudeStream>>,
    stdin: Option<mpsc::UnboundedSender<String>>,
    proc: Option<process::Proc>,
    reader: Option<JoinHandle<()>>,
    closing: Arc<AtomicBool>,
    exited: Arc<AtomicBool>,
    interrupts: AtomicU64,
}

impl ClaudeSession {
    fn write(&self, line: String) -> Result<(), ProviderError> {
        if self.exited.load(Ordering::SeqCst) {
            return Err(ProviderError::SessionGone);
        }
        self.stdin
            .as_ref()
            .and_then(|tx| tx.send(line).ok())
            .ok_or(ProviderError::SessionGone)
    }
    fn stream(&self) -> std::sync::MutexGuard<'_, ClaudeStream> {
        self.stream.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Session for ClaudeSession {
    fn send(&mut self, input: TurnInput) -> Result<(), ProviderError> {
        if self.stream().turn_active() {
            return Err(ProviderError::Invalid("a turn is already running".into()));
        }
        let line = json!({
            "type": "user",
            "message": {"role": "user", "content": input.text()},
        })
        .to_string();
        // The turn starts before the line is written: the answer may come back at once.
        self.stream().start_turn();
        if let Err(e) = self.write(line) {
            self.stream().abandon_turn();
            return Err(e);
        }
        Ok(())
    }

    fn interrupt(&mut self) -> Result<(), ProviderError> {
        if !self.stream().request_interrupt() {
            return Ok(());
        }
        let n = self.interrupts.fetch_add(1, Ordering::SeqCst) + 1;
        let line = json!({
            "type": "control_request",
            "request_id": format!("paseo-interrupt-{n}"),
            "request": {"subtype": "interrupt"},
        })
        .to_string();
        self.write(line)
    }

    fn respond_permission(&mut self, request_id: &str, allow: bool) -> Result<(), ProviderError> {
        let line = self.stream().answer_permission(request_id, allow)?;
        self.write(line)
    }

    fn close(mut self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            self.closing.store(true, Ordering::SeqCst);
            // Closing stdin asks Claude Code to finish and exit on its own.
            self.stdin.take();
            if let Some(proc) = self.proc.take() {
                let mut exit = proc.exit_watch();
                let _ =
                    tokio::time::timeout(Duration::from_secs(1), exit.wait_for(|s| s.is_some()))
                        .await;
                proc.terminate(TERM_GRACE).await;
            }
            // The reader may be blocked on a full sink that the caller of close drains: it
            // has nothing left to report after a close, so it is not waited for long.
            if let Some(mut reader) = self.reader.take() {
                if tokio::time::timeout(Duration::from_millis(500), &mut reader)
                    .await
                    .is_err()
                {
                    reader.abort();
                }
            }
        })
    }
}

async fn write_stdin(
    mut stdin: tokio::process::ChildStdin,
    mut rx: mpsc::UnboundedReceiver<String>,
) {
    while let Some(mut line) = rx.recv().await {
        line.push('\n');
        if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
    let _ = stdin.shutdown().await;
}

async fn read_stderr(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<Tail>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(target: "paseo::claude", "stderr: {line}");
        let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
        t.push(&line);
        t.push("\n");
    }
}

#[allow(clippy::too_many_arguments)]
async fn read_stdout(
    stdout: tokio::process::ChildStdout,
    stream: Arc<Mutex<ClaudeStream>>,
    emitter: Emitter,
    stdin: mpsc::UnboundedSender<String>,
    mut exit: tokio::sync::watch::Receiver<Option<std::process::ExitStatus>>,
    stderr_task: JoinHandle<()>,
    stderr_tail: Arc<Mutex<Tail>>,
    closing: Arc<AtomicBool>,
    exited: Arc<AtomicBool>,
) {
    let mut lines = LineReader::new(BufReader::new(stdout), MAX_LINE);
    while let Some(line) = lines.next_line().await {
        let step = stream
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .on_line(&line);
        for reply in step.replies {
            let _ = stdin.send(reply);
        }
        for event in step.events {
            if !emitter.event_or_items(event).await {
                return;
            }
        }
    }
    let status = exit.wait_for(|s| s.is_some()).await.ok().and_then(|s| *s);
    let _ = tokio::time::timeout(Duration::from_secs(1), stderr_task).await;
    exited.store(true, Ordering::SeqCst);
    if closing.load(Ordering::SeqCst) {
        return;
    }
    let mut message = match status {
        Some(s) => format!("Claude Code {}", describe_exit(&s)),
        None => "Claude Code exited".to_string(),
    };
    let tail = stderr_tail.lock().unwrap_or_else(|e| e.into_inner()).take();
    let tail = tail.trim();
    if !tail.is_empty() {
        message.push_str(": ");
        message.push_str(tail);
    }
    let events = stream
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .on_exit(&message);
    for event in events {
        emitter.event_or_items(event).await;
    }
}

/// What one stdout line leads to.
#[derive(Debug, Default, PartialEq)]
pub struct Step {
    pub events: Vec<ProviderEvent>,
    /// Lines to write to the CLI's stdin (answers to control requests we do not support).
    pub replies: Vec<String>,
}

/// The pure state machine over Claude Code's stream-json output.
#[derive(Debug, Default)]
pub struct ClaudeStream {
    session_id: Option<String>,
    mcp: BTreeMap<String, String>,
    turn_active: bool,
    interrupt_requested: bool,
    last_text: Option<String>,
    /// Pending `can_use_tool` requests: request id → the tool input (echoed when allowing).
    pending: BTreeMap<String, Value>,
}

impl ClaudeStream {
    /// `session_id`: the id the process was started with (so init repeating it says nothing new).
    pub fn new(session_id: Option<String>) -> Self {
        ClaudeStream {
            session_id,
            ..Default::default()
        }
    }

    pub fn turn_active(&self) -> bool {
        self.turn_active
    }

    pub fn start_turn(&mut self) {
        self.turn_active = true;
        self.interrupt_requested = false;
        self.last_text = None;
    }

    /// Forgets a turn whose prompt could not be sent.
    pub fn abandon_turn(&mut self) {
        self.turn_active = false;
    }

    /// Marks the running turn as interrupted; false when there is no turn to interrupt.
    pub fn request_interrupt(&mut self) -> bool {
        if !self.turn_active || self.interrupt_requested {
            return false;
        }
        self.interrupt_requested = true;
        true
    }

    /// The control response answering a pending permission request.
    pub fn answer_permission(
        &mut self,
        request_id: &str,
        allow: bool,
    ) -> Result<String, ProviderError> {
        let input = self.pending.remove(request_id).ok_or_else(|| {
            ProviderError::Invalid(format!("no pending permission request {request_id:?}"))
        })?;
        let response = if allow {
            json!({"behavior": "allow", "updatedInput": input})
        } else {
            json!({"behavior": "deny", "message": "The user denied this tool use."})
        };
        Ok(json!({
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response},
        })
        .to_string())
    }

    /// Parses one stdout line.
    pub fn on_line(&mut self, line: &str) -> Step {
        let mut step = Step::default();
        let line = line.trim();
        if line.is_empty() {
            return step;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => {
                tracing::debug!(target: "paseo::claude", "non-JSON stdout line: {line:.200}");
                return step;
            }
        };
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "system" => self.on_system(&v, &mut step),
            "assistant" => self.on_assistant(&v, &mut step),
            "user" => self.on_user(&v, &mut step),
            "result" => self.on_result(&v, &mut step),
            "control_request" => self.on_control_request(&v, &mut step),
            "control_cancel_request" => {
                if let Some(id) = v.get("request_id").and_then(Value::as_str) {
                    if self.pending.remove(id).is_some() {
                        step.events.push(ProviderEvent::PermissionResolved {
                            request_id: id.to_string(),
                        });
                    }
                }
            }
            "control_response" => {
                let r = &v["response"];
                if r.get("subtype").and_then(Value::as_str) == Some("error") {
                    tracing::warn!(target: "paseo::claude", "control request failed: {}", r["error"]);
                }
            }
            _ => {}
        }
        step
    }

    /// The process is gone: a running turn fails, pending permissions are void, and the
    /// session reports its exit.
    pub fn on_exit(&mut self, message: &str) -> Vec<ProviderEvent> {
        let mut events = Vec::new();
        for id in std::mem::take(&mut self.pending).into_keys() {
            events.push(ProviderEvent::PermissionResolved { request_id: id });
        }
        if self.turn_active {
            self.turn_active = false;
            events.push(ProviderEvent::TurnEnded(TurnOutcome::Failed {
                message: message.to_string(),
            }));
        }
        events.push(ProviderEvent::Exited {
            message: message.to_string(),
        });
        events
    }

    fn on_system(&mut self, v: &Value, step: &mut Step) {
        if v.get("subtype").and_then(Value::as_str) != Some("init") {
            return;
        }
        if let Some(id) = v.get("session_id").and_then(Value::as_str) {
            if self.session_id.as_deref() != Some(id) {
                self.session_id = Some(id.to_string());
                step.events.push(ProviderEvent::SessionId(id.to_string()));
            }
        }
        for server in v
            .get("mcp_servers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(name), Some(status)) = (
                server.get("name").and_then(Value::as_str),
                server.get("status").and_then(Value::as_str),
            ) else {
                continue;
            };
            if self.mcp.get(name).map(String::as_str) == Some(status) {
                continue;
            }
            if name == MCP_SERVER_NAME && status != "connected" {
                tracing::warn!(target: "paseo::claude", "the paseo MCP server is {status} for this agent");
            }
            self.mcp.insert(name.to_string(), status.to_string());
            step.events.push(ProviderEvent::McpStatus {
                server: name.to_string(),
                status: status.to_string(),
            });
        }
    }

    fn on_assistant(&mut self, v: &Value, step: &mut Step) {
        // Messages of subagents (the Task tool) are nested under a tool use: not this agent's
        // own words.
        if !v
            .get("parent_tool_use_id")
            .unwrap_or(&Value::Null)
            .is_null()
        {
            return;
        }
        let mut items = Vec::new();
        let mut text = String::new();
        for block in v["message"]["content"].as_array().into_iter().flatten() {
            match block.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" => {
                    let t = block.get("text").and_then(Value::as_str).unwrap_or("");
                    if !t.is_empty() {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(t);
                        items.push(NewItem::new(ItemKind::Assistant, t));
                    }
                }
                "thinking" => {
                    let t = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                    if !t.is_empty() {
                        items.push(NewItem::new(ItemKind::Reasoning, t));
                    }
                }
                "tool_use" | "server_tool_use" => {
                    items.push(NewItem::tool_call(
                        block.get("id").and_then(Value::as_str).unwrap_or(""),
                        block.get("name").and_then(Value::as_str).unwrap_or(""),
                        block.get("input").cloned().unwrap_or(Value::Null),
                    ));
                }
                _ => {}
            }
        }
        if !items.is_empty() {
            step.events.push(ProviderEvent::Items(items));
        }
        if !text.is_empty() {
            self.last_text = Some(text.clone());
            step.events.push(ProviderEvent::LastMessage(text));
        }
    }

    fn on_user(&mut self, v: &Value, step: &mut Step) {
        if !v
            .get("parent_tool_use_id")
            .unwrap_or(&Value::Null)
            .is_null()
        {
            return;
        }
        let mut items = Vec::new();
        for block in v["message"]["content"].as_array().into_iter().flatten() {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            items.push(NewItem::tool_result(
                block
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                content_text(block.get("content").unwrap_or(&Value::Null)),
                block
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            ));
        }
        if !items.is_empty() {
            step.events.push(ProviderEvent::Items(items));
        }
    }

    fn on_result(&mut self, v: &Value, step: &mut Step) {
        if !self.turn_active {
            tracing::debug!(target: "paseo::claude", "result outside a turn ignored");
            return;
        }
        self.turn_active = false;
        let subtype = v.get("subtype").and_then(Value::as_str).unwrap_or("");
        let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let aborted = v
            .get("terminal_reason")
            .and_then(Value::as_str)
            .is_some_and(|r| r.starts_with("aborted"));
        let outcome = if self.interrupt_requested || (aborted && subtype != "success") {
            TurnOutcome::Canceled
        } else if subtype == "success" && !is_error {
            TurnOutcome::Completed
        } else {
            TurnOutcome::Failed {
                message: result_message(v, subtype),
            }
        };
        self.interrupt_requested = false;
        // A question left open when its turn ended can no longer be answered.
        for request_id in std::mem::take(&mut self.pending).into_keys() {
            step.events
                .push(ProviderEvent::PermissionResolved { request_id });
        }
        if self.last_text.is_none() {
            // A turn without assistant text has an empty last message, not the previous one.
            step.events.push(ProviderEvent::LastMessage(String::new()));
        }
        step.events.push(ProviderEvent::TurnEnded(outcome));
    }

    fn on_control_request(&mut self, v: &Value, step: &mut Step) {
        let Some(request_id) = v.get("request_id").and_then(Value::as_str) else {
            return;
        };
        let req = &v["request"];
        match req.get("subtype").and_then(Value::as_str).unwrap_or("") {
            "can_use_tool" => {
                let input = req.get("input").cloned().unwrap_or(json!({}));
                self.pending.insert(request_id.to_string(), input.clone());
                step.events
                    .push(ProviderEvent::Permission(PermissionRequest {
                        request_id: request_id.to_string(),
                        tool_name: req
                            .get("tool_name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        input,
                        description: req
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        call_id: req
                            .get("tool_use_id")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    }));
            }
            other => {
                // We register no hooks or in-process MCP servers; say so rather than let the
                // CLI wait for an answer that never comes.
                step.replies.push(
                    json!({
                        "type": "control_response",
                        "response": {
                            "subtype": "error",
                            "request_id": request_id,
                            "error": format!("unsupported control request {other:?}"),
                        },
                    })
                    .to_string(),
                );
            }
        }
    }
}

fn result_message(v: &Value, subtype: &str) -> String {
    if let Some(r) = v
        .get("result")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        return r.to_string();
    }
    let errors: Vec<&str> = v
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !errors.is_empty() {
        return errors.join("; ");
    }
    if subtype.is_empty() {
        "Claude Code reported an error".into()
    } else {
        format!("Claude Code ended the turn with {subtype}")
    }
}

/// A tool result's content: a string or a list of blocks.
fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    //! The parser replayed on streams recorded from the real Claude Code 2.1.332
    //! (tests/fixtures/claude; re-record with PASEO_RECORD_DIR, see tests/claude.rs).
    use super::*;

    const TEXT_TURNS: &str = include_str!("../../tests/fixtures/claude/text_turns.jsonl");
    const INTERRUPT: &str = include_str!("../../tests/fixtures/claude/interrupt.jsonl");
    const PERMISSION: &str =
        include_str!("../../tests/fixtures/claude/permission_allow_deny.jsonl");
    const INTERRUPT_PERMISSION: &str =
        include_str!("../../tests/fixtures/claude/interrupt_during_permission.jsonl");
    const UNKNOWN_SESSION: &str =
        include_str!("../../tests/fixtures/claude/resume_unknown_session.jsonl");

    fn session_of(stream: &str) -> String {
        let first: Value = serde_json::from_str(stream.lines().next().unwrap()).unwrap();
        first["session_id"].as_str().unwrap().to_string()
    }

    /// Replays a recording the way the session drives the parser: a turn starts before each
    /// `init` (the CLI prints one per user message), and `interrupt` is requested before
    /// the control response acknowledging it.
    fn replay(stream: &str, parser: &mut ClaudeStream) -> Vec<Vec<ProviderEvent>> {
        let mut turns = vec![];
        let mut current = vec![];
        for line in stream.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if v["subtype"] == "init" && !parser.turn_active() {
                parser.start_turn();
            }
            if v["type"] == "control_response" {
                parser.request_interrupt();
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
                ProviderEvent::TurnEnded(TurnOutcome::Completed),
            ]
        );
        // The second init repeats the same session and MCP status: nothing new to report.
        assert_eq!(turns[1].len(), 3);
        assert_eq!(
            turns[1][2],
            ProviderEvent::TurnEnded(TurnOutcome::Completed)
        );
        assert!(!p.turn_active());
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
        p.start_turn();
        let result = INTERRUPT
            .lines()
            .find(|l| l.contains("aborted_streaming"))
            .unwrap();
        assert_eq!(
            p.on_line(result).events,
            vec![
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
                p.start_turn();
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
                    let answer: Value =
                        serde_json::from_str(&p.answer_permission(&req.request_id, allow).unwrap())
                            .unwrap();
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
            .into_iter()
            .flatten()
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
        let events: Vec<ProviderEvent> = replay(INTERRUPT_PERMISSION, &mut p)
            .into_iter()
            .flatten()
            .collect();
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
        p.start_turn();
        let events = p.on_line(UNKNOWN_SESSION.lines().next().unwrap()).events;
        assert_eq!(
            events,
            vec![
                ProviderEvent::LastMessage(String::new()),
                ProviderEvent::TurnEnded(TurnOutcome::Failed {
                    message:
                        "No conversation found with session ID: 11111111-2222-4333-8444-555555555555"
                            .into()
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
        p.start_turn();
        assert_eq!(
            p.on_exit("Claude Code was killed by signal 9 (SIGKILL)"),
            vec![
                ProviderEvent::TurnEnded(TurnOutcome::Failed {
                    message: "Claude Code was killed by signal 9 (SIGKILL)".into()
                }),
                ProviderEvent::Exited {
                    message: "Claude Code was killed by signal 9 (SIGKILL)".into()
                },
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
        let reply: Value = serde_json::from_str(&step.replies[0]).unwrap();
        assert_eq!(reply["response"]["subtype"], "error");
        assert_eq!(reply["response"]["request_id"], "r1");
        assert!(p.on_line("not json").events.is_empty());
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
            }),
        };
        spec.config.model = Some("opus".into());
        spec.config.mode = Some("acceptEdits".into());
        let argv = claude_argv(
            &["claude".to_string()],
            &spec,
            &ClaudeSessionArg::New("abc".into()),
        );
        let joined = argv.join(" ");
        assert!(joined.starts_with(
            "claude -p --input-format stream-json --output-format stream-json --permission-prompt-tool stdio --session-id abc --model opus --permission-mode acceptEdits --mcp-config "
        ), "{joined}");
        let mcp: Value =
            serde_json::from_str(&argv[argv.iter().position(|a| a == "--mcp-config").unwrap() + 1])
                .unwrap();
        assert_eq!(
            mcp["mcpServers"]["paseo"],
            json!({"type": "http", "url": "http://127.0.0.1:4000/mcp",
                   "headers": {"Authorization": "Bearer tok"}, "alwaysLoad": true})
        );
        let allowed = &argv[argv.iter().position(|a| a == "--allowedTools").unwrap() + 1];
        assert_eq!(allowed.split(',').count(), 8);
        assert!(allowed.starts_with("mcp__paseo__create_agent,mcp__paseo__send_agent_prompt"));
        assert_eq!(argv.last().unwrap(), "--verbose");
        let resumed = claude_argv(
            &["c".into()],
            &spec,
            &ClaudeSessionArg::Resume("abc".into()),
        );
        assert!(resumed.join(" ").contains("--resume abc"));
    }
}
