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
        self.write(line)?;
        self.stream().start_turn();
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
            if let Some(reader) = self.reader.take() {
                let _ = reader.await;
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

impl Emitter {
    /// Items go through the batcher; everything else as an event.
    pub(crate) async fn event_or_items(&self, event: ProviderEvent) -> bool {
        match event {
            ProviderEvent::Items(items) => {
                for item in items {
                    if !self.item(item).await {
                        return false;
                    }
                }
                true
            }
            other => self.event(other).await,
        }
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
