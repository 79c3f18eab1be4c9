//! The `codex` provider: one long-lived `codex app-server` process per agent session, spoken to
//! in JSON-RPC over stdio (newline-delimited JSON, no `jsonrpc` field required).
//!
//! Why app-server rather than `codex exec --json`: exec runs one process per turn and has no
//! control channel (SIGINT kills it without a final event), while app-server keeps the thread
//! loaded between turns, interrupts a turn with `turn/interrupt` (answered by `turn/completed`
//! with status `interrupted`), resumes a stored thread with `thread/resume`, and asks for
//! approvals as JSON-RPC requests we can surface as permission requests.
//!
//! Flow: `initialize` → `initialized` → `thread/start` (or `thread/resume` with the stored
//! thread id) → `SessionId(thread id)` + `Ready`; each turn is `turn/start`, its items arrive
//! as `item/started` / `item/completed` notifications, and `turn/completed` ends it. The app's
//! MCP server is injected with `-c mcp_servers.paseo.url=...` and the agent's token travels in
//! `PASEO_MCP_TOKEN` (`bearer_token_env_var`).
//!
//! [`CodexStream`] is the pure protocol state machine: lines in, events and requests out.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::claude::MCP_SERVER_NAME;
use super::process::{self, describe_exit, AgentEnv, Emitter, LineReader, Tail, TERM_GRACE};
use super::{
    EventSink, McpAccess, PermissionRequest, Provider, ProviderError, ProviderEvent, ProviderInfo,
    Session, SessionSpec, TurnInput, TurnOutcome,
};
use crate::config::ProviderConfig;
use crate::model::{ItemKind, NewItem};

const MAX_LINE: usize = 32 * 1024 * 1024;

/// Approval policies Codex accepts as an agent's `mode`.
pub const APPROVAL_POLICIES: [&str; 3] = ["untrusted", "on-request", "never"];

pub struct CodexProvider {
    id: String,
    config: ProviderConfig,
}

impl CodexProvider {
    pub fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        CodexProvider {
            id: id.into(),
            config,
        }
    }

    fn prefix(&self) -> Vec<String> {
        self.config
            .command
            .clone()
            .unwrap_or_else(|| vec!["codex".to_string()])
    }
}

/// The full argv: the prefix, `app-server`, and the MCP injection.
pub fn codex_argv(prefix: &[String], mcp: Option<&McpAccess>) -> Vec<String> {
    let mut argv = prefix.to_vec();
    argv.push("app-server".into());
    if let Some(mcp) = mcp {
        let url = serde_json::to_string(&mcp.url).unwrap_or_default();
        for kv in [
            format!("mcp_servers.{MCP_SERVER_NAME}.url={url}"),
            // Codex refuses inline tokens; it reads this variable, which the session sets.
            format!("mcp_servers.{MCP_SERVER_NAME}.bearer_token_env_var=\"PASEO_MCP_TOKEN\""),
        ] {
            argv.push("-c".into());
            argv.push(kv);
        }
    }
    argv
}

impl Provider for CodexProvider {
    fn info(&self) -> ProviderInfo {
        let env = AgentEnv {
            set: self.config.env.clone(),
        };
        let prefix = self.prefix();
        let reason = process::find_program(&prefix[0], &env)
            .err()
            .map(|r| format!("Codex is not installed: {r}"));
        ProviderInfo {
            id: self.id.clone(),
            label: self.config.label.clone().unwrap_or_else(|| "Codex".into()),
            kind: "codex".into(),
            available: reason.is_none(),
            reason,
            reads_prompts: true,
            models: self.config.models.clone(),
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
                    reason: format!("Codex is not installed: {reason}"),
                }
            })?;
            if let Some(mode) = spec.config.mode.as_deref().filter(|m| !m.is_empty()) {
                if !APPROVAL_POLICIES.contains(&mode) {
                    return Err(ProviderError::Invalid(format!(
                        "unknown Codex mode {mode:?} (expected one of {})",
                        APPROVAL_POLICIES.join(", ")
                    )));
                }
            }
            let argv = codex_argv(&prefix, spec.mcp.as_ref());
            let spawned = process::spawn(process::Launch {
                argv: &argv,
                cwd: &spec.cwd,
                env: &env,
                stdin: true,
            })?;
            let pgid = spawned.proc.pgid();
            let mut stream = CodexStream::new(ThreadParams::from_spec(&spec));
            let (stdin_tx, stdin_rx) = mpsc::unbounded_channel::<String>();
            for msg in stream.startup() {
                let _ = stdin_tx.send(msg.to_string());
            }
            let stream = Arc::new(Mutex::new(stream));
            if let Some(stdin) = spawned.stdin {
                tokio::spawn(write_stdin(stdin, stdin_rx));
            }
            let emitter = Emitter::spawn(sink);
            let closing = Arc::new(AtomicBool::new(false));
            let exited = Arc::new(AtomicBool::new(false));
            let stderr_tail = Arc::new(Mutex::new(Tail::new(2000)));
            let stderr_task = tokio::spawn(read_stderr(spawned.stderr, stderr_tail.clone()));
            let reader = tokio::spawn(read_stdout(ReaderCtx {
                stdout: spawned.stdout,
                stream: stream.clone(),
                emitter,
                stdin: stdin_tx.clone(),
                exit: spawned.proc.exit_watch(),
                stderr_task,
                stderr_tail,
                closing: closing.clone(),
                exited: exited.clone(),
                pgid,
            }));
            Ok(Box::new(CodexSession {
                stream,
                stdin: Some(stdin_tx),
                proc: Some(spawned.proc),
                reader: Some(reader),
                closing,
                exited,
            }) as Box<dyn Session>)
        })
    }
}

struct CodexSession {
    stream: Arc<Mutex<CodexStream>>,
    stdin: Option<mpsc::UnboundedSender<String>>,
    proc: Option<process::Proc>,
    reader: Option<JoinHandle<()>>,
    closing: Arc<AtomicBool>,
    exited: Arc<AtomicBool>,
}

impl CodexSession {
    fn write_all(&self, msgs: Vec<Value>) -> Result<(), ProviderError> {
        if self.exited.load(Ordering::SeqCst) {
            return Err(ProviderError::SessionGone);
        }
        let tx = self.stdin.as_ref().ok_or(ProviderError::SessionGone)?;
        for m in msgs {
            tx.send(m.to_string())
                .map_err(|_| ProviderError::SessionGone)?;
        }
        Ok(())
    }
    fn stream(&self) -> std::sync::MutexGuard<'_, CodexStream> {
        self.stream.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Session for CodexSession {
    fn send(&mut self, input: TurnInput) -> Result<(), ProviderError> {
        if self.exited.load(Ordering::SeqCst) {
            return Err(ProviderError::SessionGone);
        }
        let msgs = self.stream().send_turn(input.text())?;
        self.write_all(msgs)
    }

    fn interrupt(&mut self) -> Result<(), ProviderError> {
        let msgs = self.stream().interrupt();
        self.write_all(msgs)
    }

    fn respond_permission(&mut self, request_id: &str, allow: bool) -> Result<(), ProviderError> {
        let msg = self.stream().answer_permission(request_id, allow)?;
        self.write_all(vec![msg])
    }

    fn close(mut self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            self.closing.store(true, Ordering::SeqCst);
            // app-server exits when its stdin closes.
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
        tracing::debug!(target: "paseo::codex", "stderr: {line}");
        let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
        t.push(&line);
        t.push("\n");
    }
}

struct ReaderCtx {
    stdout: tokio::process::ChildStdout,
    stream: Arc<Mutex<CodexStream>>,
    emitter: Emitter,
    stdin: mpsc::UnboundedSender<String>,
    exit: tokio::sync::watch::Receiver<Option<std::process::ExitStatus>>,
    stderr_task: JoinHandle<()>,
    stderr_tail: Arc<Mutex<Tail>>,
    closing: Arc<AtomicBool>,
    exited: Arc<AtomicBool>,
    pgid: i32,
}

async fn read_stdout(mut ctx: ReaderCtx) {
    let mut lines = LineReader::new(BufReader::new(ctx.stdout), MAX_LINE);
    while let Some(line) = lines.next_line().await {
        let step = ctx
            .stream
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .on_line(&line);
        for msg in step.out {
            let _ = ctx.stdin.send(msg.to_string());
        }
        for event in step.events {
            if !ctx.emitter.event_or_items(event).await {
                return;
            }
        }
        if step.fatal {
            // The session cannot go on (its thread could not be started or resumed): stop the
            // process; the exit report below carries the reason.
            process::signal_group(ctx.pgid, libc::SIGTERM);
        }
    }
    let status = ctx
        .exit
        .wait_for(|s| s.is_some())
        .await
        .ok()
        .and_then(|s| *s);
    let _ = tokio::time::timeout(Duration::from_secs(1), ctx.stderr_task).await;
    ctx.exited.store(true, Ordering::SeqCst);
    if ctx.closing.load(Ordering::SeqCst) {
        return;
    }
    let mut message = match status {
        Some(s) => format!("Codex {}", describe_exit(&s)),
        None => "Codex exited".to_string(),
    };
    let events = {
        let mut stream = ctx.stream.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fatal) = stream.fatal.clone() {
            message = fatal;
        } else {
            let tail = ctx
                .stderr_tail
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            let tail = tail.trim();
            if !tail.is_empty() {
                message.push_str(": ");
                message.push_str(tail);
            }
        }
        stream.on_exit(&message)
    };
    for event in events {
        ctx.emitter.event_or_items(event).await;
    }
}

/// What `thread/start` / `thread/resume` are called with.
#[derive(Clone, Debug, Default)]
pub struct ThreadParams {
    pub cwd: PathBuf,
    pub model: Option<String>,
    pub approval_policy: Option<String>,
    pub developer_instructions: Option<String>,
    /// Codex's sandbox mode (`read-only`, `workspace-write`, `danger-full-access`), from the
    /// agent config's `sandbox` extra; unset leaves Codex's own default.
    pub sandbox: Option<String>,
    pub resume: Option<String>,
}

impl ThreadParams {
    pub fn from_spec(spec: &SessionSpec) -> Self {
        let nonempty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        ThreadParams {
            cwd: spec.cwd.clone(),
            model: nonempty(&spec.config.model),
            approval_policy: nonempty(&spec.config.mode),
            developer_instructions: nonempty(&spec.config.system_prompt),
            sandbox: spec
                .config
                .extra
                .get("sandbox")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            resume: nonempty(&spec.resume),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Call {
    Initialize,
    Thread,
    TurnStart,
    Interrupt,
}

#[derive(Clone, Debug, PartialEq)]
enum ApprovalKind {
    /// v2 `item/*/requestApproval`: `{decision: "accept" | "decline"}`.
    Decision,
    /// v1 `execCommandApproval` / `applyPatchApproval`: `{decision: "approved" | {denied}}`.
    Review,
}

#[derive(Debug, Default)]
struct TurnState {
    id: Option<String>,
    interrupt_requested: bool,
    error: Option<String>,
    said_something: bool,
}

/// What one line leads to.
#[derive(Debug, Default, PartialEq)]
pub struct Step {
    pub events: Vec<ProviderEvent>,
    /// JSON-RPC messages to write to app-server's stdin.
    pub out: Vec<Value>,
    /// The session cannot continue (see `CodexStream::fatal`).
    pub fatal: bool,
}

/// The pure state machine over the app-server protocol.
#[derive(Debug, Default)]
pub struct CodexStream {
    params: ThreadParams,
    next_id: u64,
    calls: BTreeMap<u64, Call>,
    thread_id: Option<String>,
    /// A turn asked for before the thread was ready.
    queued: Option<String>,
    turn: Option<TurnState>,
    /// Pending approvals: our request id → (the JSON-RPC id to answer, the answer's shape).
    approvals: BTreeMap<String, (Value, ApprovalKind)>,
    mcp: BTreeMap<String, String>,
    /// Why the session cannot go on, once it cannot.
    pub fatal: Option<String>,
}

impl CodexStream {
    pub fn new(params: ThreadParams) -> Self {
        CodexStream {
            params,
            next_id: 1,
            ..Default::default()
        }
    }

    fn request(&mut self, call: Call, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.calls.insert(id, call);
        json!({"id": id, "method": method, "params": params})
    }

    /// The messages that open the session.
    pub fn startup(&mut self) -> Vec<Value> {
        vec![self.request(
            Call::Initialize,
            "initialize",
            json!({"clientInfo": {"name": "paseo-desktop", "title": "Paseo Desktop",
                                  "version": env!("CARGO_PKG_VERSION")},
                   "capabilities": null}),
        )]
    }

    pub fn turn_active(&self) -> bool {
        self.turn.is_some()
    }

    pub fn send_turn(&mut self, text: &str) -> Result<Vec<Value>, ProviderError> {
        if self.turn.is_some() || self.queued.is_some() {
            return Err(ProviderError::Invalid("a turn is already running".into()));
        }
        if let Some(f) = &self.fatal {
            return Err(ProviderError::Protocol(f.clone()));
        }
        let Some(thread) = self.thread_id.clone() else {
            self.queued = Some(text.to_string());
            return Ok(vec![]);
        };
        Ok(vec![self.turn_start(&thread, text)])
    }

    fn turn_start(&mut self, thread: &str, text: &str) -> Value {
        self.turn = Some(TurnState::default());
        self.request(
            Call::TurnStart,
            "turn/start",
            json!({"threadId": thread,
                   "input": [{"type": "text", "text": text, "text_elements": []}]}),
        )
    }

    pub fn interrupt(&mut self) -> Vec<Value> {
        let Some(thread) = self.thread_id.clone() else {
            return vec![];
        };
        let Some(turn) = self.turn.as_mut() else {
            return vec![];
        };
        if turn.interrupt_requested {
            return vec![];
        }
        turn.interrupt_requested = true;
        match turn.id.clone() {
            Some(turn_id) => vec![self.request(
                Call::Interrupt,
                "turn/interrupt",
                json!({"threadId": thread, "turnId": turn_id}),
            )],
            // Sent as soon as turn/start tells us the turn's id.
            None => vec![],
        }
    }

    pub fn answer_permission(
        &mut self,
        request_id: &str,
        allow: bool,
    ) -> Result<Value, ProviderError> {
        let (rpc_id, kind) = self.approvals.remove(request_id).ok_or_else(|| {
            ProviderError::Invalid(format!("no pending permission request {request_id:?}"))
        })?;
        let result = match (kind, allow) {
            (ApprovalKind::Decision, true) => json!({"decision": "accept"}),
            (ApprovalKind::Decision, false) => json!({"decision": "decline"}),
            (ApprovalKind::Review, true) => json!({"decision": "approved"}),
            (ApprovalKind::Review, false) => {
                json!({"decision": {"denied": {"rejection": "The user denied this request."}}})
            }
        };
        Ok(json!({"id": rpc_id, "result": result}))
    }

    pub fn on_exit(&mut self, message: &str) -> Vec<ProviderEvent> {
        let mut events: Vec<ProviderEvent> = std::mem::take(&mut self.approvals)
            .into_keys()
            .map(|request_id| ProviderEvent::PermissionResolved { request_id })
            .collect();
        if self.turn.take().is_some() || self.queued.take().is_some() {
            events.push(ProviderEvent::TurnEnded(TurnOutcome::Failed {
                message: message.to_string(),
            }));
        }
        events.push(ProviderEvent::Exited {
            message: message.to_string(),
        });
        events
    }

    pub fn on_line(&mut self, line: &str) -> Step {
        let mut step = Step::default();
        let line = line.trim();
        if line.is_empty() {
            return step;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            tracing::debug!(target: "paseo::codex", "non-JSON stdout line: {line:.200}");
            return step;
        };
        let method = v.get("method").and_then(Value::as_str);
        match (method, v.get("id")) {
            (Some(m), Some(id)) => self.on_server_request(m, id.clone(), &v["params"], &mut step),
            (Some(m), None) => self.on_notification(m, &v["params"], &mut step),
            (None, Some(id)) => self.on_response(id, &v, &mut step),
            (None, None) => {}
        }
        step
    }

    fn on_response(&mut self, id: &Value, v: &Value, step: &mut Step) {
        let Some(call) = id.as_u64().and_then(|id| self.calls.remove(&id)) else {
            return;
        };
        let error = v.get("error").map(|e| {
            e.get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error")
                .to_string()
        });
        match (call, error) {
            (Call::Initialize, None) => {
                step.out.push(json!({"method": "initialized"}));
                let p = &self.params;
                let mut params = json!({"cwd": p.cwd.display().to_string()});
                if let Some(m) = &p.model {
                    params["model"] = json!(m);
                }
                if let Some(a) = &p.approval_policy {
                    params["approvalPolicy"] = json!(a);
                }
                if let Some(d) = &p.developer_instructions {
                    params["developerInstructions"] = json!(d);
                }
                if let Some(sb) = &p.sandbox {
                    params["sandbox"] = json!(sb);
                }
                let msg = match p.resume.clone() {
                    Some(thread) => {
                        params["threadId"] = json!(thread);
                        self.request(Call::Thread, "thread/resume", params)
                    }
                    None => self.request(Call::Thread, "thread/start", params),
                };
                step.out.push(msg);
            }
            (Call::Initialize, Some(e)) => {
                self.fail(format!("Codex app-server refused to initialize: {e}"), step)
            }
            (Call::Thread, None) => {
                let Some(thread) = v["result"]["thread"]["id"].as_str() else {
                    self.fail("Codex started a thread without an id".into(), step);
                    return;
                };
                self.thread_id = Some(thread.to_string());
                step.events
                    .push(ProviderEvent::SessionId(thread.to_string()));
                step.events.push(ProviderEvent::Ready);
                if let Some(text) = self.queued.take() {
                    let msg = self.turn_start(thread, &text);
                    step.out.push(msg);
                }
            }
            (Call::Thread, Some(e)) => {
                let what = match &self.params.resume {
                    Some(t) => format!("could not resume Codex thread {t}"),
                    None => "could not start a Codex thread".to_string(),
                };
                self.fail(format!("{what}: {e}"), step)
            }
            (Call::TurnStart, None) => {
                let turn_id = v["result"]["turn"]["id"].as_str().map(str::to_string);
                let thread = self.thread_id.clone();
                if let (Some(turn), Some(turn_id), Some(thread)) =
                    (self.turn.as_mut(), turn_id, thread)
                {
                    turn.id.get_or_insert(turn_id.clone());
                    if turn.interrupt_requested {
                        let msg = self.request(
                            Call::Interrupt,
                            "turn/interrupt",
                            json!({"threadId": thread, "turnId": turn_id}),
                        );
                        step.out.push(msg);
                    }
                }
            }
            (Call::TurnStart, Some(e)) => {
                if self.turn.take().is_some() {
                    step.events
                        .push(ProviderEvent::TurnEnded(TurnOutcome::Failed {
                            message: format!("Codex refused the turn: {e}"),
                        }));
                }
            }
            (Call::Interrupt, Some(e)) => {
                tracing::warn!(target: "paseo::codex", "turn/interrupt failed: {e}");
            }
            (Call::Interrupt, None) => {}
        }
    }

    fn fail(&mut self, message: String, step: &mut Step) {
        tracing::warn!(target: "paseo::codex", "{message}");
        self.fatal = Some(message);
        step.fatal = true;
    }

    fn on_server_request(&mut self, method: &str, id: Value, params: &Value, step: &mut Step) {
        let (tool, kind) = match method {
            "item/commandExecution/requestApproval" => ("shell", ApprovalKind::Decision),
            "item/fileChange/requestApproval" => ("apply_patch", ApprovalKind::Decision),
            "execCommandApproval" => ("shell", ApprovalKind::Review),
            "applyPatchApproval" => ("apply_patch", ApprovalKind::Review),
            "mcpServer/elicitation/request" => {
                // The app's own MCP tools are pre-approved (SPEC 9); other servers' questions
                // are declined, as there is no form to show them in.
                let ours = params["serverName"].as_str() == Some(MCP_SERVER_NAME);
                let action = if ours { "accept" } else { "decline" };
                let content = if ours { json!({}) } else { Value::Null };
                step.out.push(json!({"id": id, "result": {"action": action, "content": content, "_meta": null}}));
                return;
            }
            other => {
                step.out.push(json!({"id": id, "error": {"code": -32601,
                    "message": format!("{other} is not supported by Paseo Desktop")}}));
                return;
            }
        };
        let request_id = format!("codex-{}", id.to_string().trim_matches('"'));
        let description = params
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string);
        // v2 approvals name the item (the tool call's id in the timeline); legacy ones its call.
        let call_id = params
            .get("itemId")
            .or_else(|| params.get("callId"))
            .and_then(Value::as_str)
            .map(str::to_string);
        self.approvals.insert(request_id.clone(), (id, kind));
        step.events
            .push(ProviderEvent::Permission(PermissionRequest {
                request_id,
                tool_name: tool.to_string(),
                input: params.clone(),
                description,
                call_id,
            }));
    }

    fn on_notification(&mut self, method: &str, p: &Value, step: &mut Step) {
        match method {
            "turn/started" => {
                if let (Some(turn), Some(id)) = (self.turn.as_mut(), p["turn"]["id"].as_str()) {
                    turn.id.get_or_insert(id.to_string());
                }
            }
            "item/started" => {
                if let Some(item) = started_item(&p["item"]) {
                    step.events.push(ProviderEvent::Items(vec![item]));
                }
            }
            "item/completed" => {
                let item = &p["item"];
                if item["type"] == "agentMessage" {
                    let text = item["text"].as_str().unwrap_or("");
                    if !text.is_empty() {
                        if let Some(turn) = self.turn.as_mut() {
                            turn.said_something = true;
                        }
                        step.events.push(ProviderEvent::Items(vec![NewItem::new(
                            ItemKind::Assistant,
                            text,
                        )]));
                        step.events
                            .push(ProviderEvent::LastMessage(text.to_string()));
                    }
                } else if let Some(item) = completed_item(item) {
                    step.events.push(ProviderEvent::Items(vec![item]));
                }
            }
            "error" => {
                let message = p["error"]["message"].as_str().unwrap_or("").to_string();
                if !p["willRetry"].as_bool().unwrap_or(false) && !message.is_empty() {
                    if let Some(turn) = self.turn.as_mut() {
                        turn.error = Some(message.clone());
                    }
                    let mut item = NewItem::new(ItemKind::Error, message);
                    item.is_error = true;
                    step.events.push(ProviderEvent::Items(vec![item]));
                }
            }
            "turn/completed" => {
                let Some(turn) = self.turn.take() else {
                    return;
                };
                let t = &p["turn"];
                let outcome = match t["status"].as_str().unwrap_or("") {
                    "completed" => TurnOutcome::Completed,
                    "interrupted" => TurnOutcome::Canceled,
                    _ if turn.interrupt_requested => TurnOutcome::Canceled,
                    _ => TurnOutcome::Failed {
                        message: t["error"]["message"]
                            .as_str()
                            .map(str::to_string)
                            .or(turn.error)
                            .unwrap_or_else(|| "the Codex turn failed".into()),
                    },
                };
                // A question left open when its turn ended can no longer be answered.
                for request_id in std::mem::take(&mut self.approvals).into_keys() {
                    step.events
                        .push(ProviderEvent::PermissionResolved { request_id });
                }
                if !turn.said_something {
                    // A turn without assistant text has an empty last message.
                    step.events.push(ProviderEvent::LastMessage(String::new()));
                }
                step.events.push(ProviderEvent::TurnEnded(outcome));
            }
            "serverRequest/resolved" => {
                let id = p["requestId"].to_string();
                let request_id = format!("codex-{}", id.trim_matches('"'));
                if self.approvals.remove(&request_id).is_some() {
                    step.events
                        .push(ProviderEvent::PermissionResolved { request_id });
                }
            }
            "mcpServer/startupStatus/updated" => {
                let (Some(name), Some(status)) = (p["name"].as_str(), p["status"].as_str()) else {
                    return;
                };
                if self.mcp.get(name).map(String::as_str) == Some(status) {
                    return;
                }
                if name == MCP_SERVER_NAME && status == "failed" {
                    tracing::warn!(target: "paseo::codex", "the paseo MCP server failed for this agent: {}", p["error"]);
                }
                self.mcp.insert(name.to_string(), status.to_string());
                step.events.push(ProviderEvent::McpStatus {
                    server: name.to_string(),
                    status: status.to_string(),
                });
            }
            _ => {}
        }
    }
}

/// A tool-like item as it starts: a call on the timeline.
fn started_item(item: &Value) -> Option<NewItem> {
    let id = item["id"].as_str().unwrap_or("");
    let call = |name: String, input: Value| Some(NewItem::tool_call(id, name, input));
    match item["type"].as_str()? {
        "commandExecution" => call(
            "shell".into(),
            json!({"command": item["command"], "cwd": item["cwd"]}),
        ),
        "mcpToolCall" => call(
            format!(
                "mcp__{}__{}",
                item["server"].as_str().unwrap_or(""),
                item["tool"].as_str().unwrap_or("")
            ),
            item["arguments"].clone(),
        ),
        "fileChange" => call("apply_patch".into(), json!({"changes": item["changes"]})),
        "webSearch" => call("web_search".into(), json!({"query": item["query"]})),
        "dynamicToolCall" => call(
            item["tool"].as_str().unwrap_or("tool").to_string(),
            item["arguments"].clone(),
        ),
        _ => None,
    }
}

/// A tool-like item as it completes: its result (reasoning becomes a reasoning item).
fn completed_item(item: &Value) -> Option<NewItem> {
    let id = item["id"].as_str().unwrap_or("");
    let failed = |status: &Value| matches!(status.as_str(), Some("failed") | Some("declined"));
    match item["type"].as_str()? {
        "commandExecution" => {
            let exit = item["exitCode"].as_i64();
            let is_error = failed(&item["status"]) || exit.is_some_and(|c| c != 0);
            let text = match (item["aggregatedOutput"].as_str(), item["status"].as_str()) {
                (Some(out), _) => out.to_string(),
                (None, Some("declined")) => "declined".to_string(),
                (None, _) => String::new(),
            };
            Some(NewItem::tool_result(id, text, is_error))
        }
        "mcpToolCall" => {
            let error = item["error"]["message"].as_str();
            let text = match error {
                Some(e) => e.to_string(),
                None => mcp_result_text(&item["result"]),
            };
            Some(NewItem::tool_result(
                id,
                text,
                error.is_some() || failed(&item["status"]),
            ))
        }
        "fileChange" | "webSearch" | "dynamicToolCall" => Some(NewItem::tool_result(
            id,
            item["status"].as_str().unwrap_or(""),
            failed(&item["status"]),
        )),
        "reasoning" => {
            let parts: Vec<&str> = item["summary"]
                .as_array()
                .into_iter()
                .chain(item["content"].as_array())
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            (!parts.is_empty()).then(|| NewItem::new(ItemKind::Reasoning, parts.join("\n")))
        }
        _ => None,
    }
}

fn mcp_result_text(result: &Value) -> String {
    let texts: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    if texts.is_empty() && !result.is_null() {
        result.to_string()
    } else {
        texts.join("\n")
    }
}

#[cfg(test)]
mod tests {
    //! The protocol state machine replayed on app-server streams recorded from the real
    //! Codex 0.171.0 (tests/fixtures/codex; re-record with PASEO_RECORD_DIR, see
    //! tests/codex.rs). Request ids in a recording match ours as long as the same calls are
    //! made in the same order, which the replay does.
    use super::*;

    const TEXT_TURNS: &str = include_str!("../../tests/fixtures/codex/text_turns.jsonl");
    const INTERRUPT: &str = include_str!("../../tests/fixtures/codex/interrupt.jsonl");
    const APPROVAL: &str = include_str!("../../tests/fixtures/codex/approval_allow_deny.jsonl");
    const RESUME: &str = include_str!("../../tests/fixtures/codex/resume.jsonl");
    const UNKNOWN_THREAD: &str =
        include_str!("../../tests/fixtures/codex/resume_unknown_thread.jsonl");

    struct Replay {
        stream: CodexStream,
        events: Vec<ProviderEvent>,
        sent: Vec<Value>,
        fatal: bool,
    }

    impl Replay {
        fn new(params: ThreadParams) -> Self {
            let mut stream = CodexStream::new(params);
            let sent = stream.startup();
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
        /// Feeds a recording, starting a turn whenever the thread is idle (as the runtime
        /// would after `Ready` and after each `TurnEnded`); `on_turn_started` runs at each
        /// `turn/started`.
        fn run(&mut self, stream: &str, mut on_turn_started: impl FnMut(&mut Replay)) {
            for line in stream.lines() {
                let idle = self.stream.thread_id.is_some() && !self.stream.turn_active();
                let v: Value = serde_json::from_str(line).unwrap();
                let is_turn_response = v["id"].as_u64().is_some_and(|id| {
                    !self.stream.calls.contains_key(&id) && id >= self.stream.next_id
                });
                if idle && is_turn_response {
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
        let thread = r.stream.thread_id.clone().unwrap();
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
        let mut s = CodexStream::new(params());
        s.startup();
        s.on_line(r#"{"id":1,"result":{}}"#);
        s.on_line(r#"{"id":2,"result":{"thread":{"id":"t1"}}}"#);
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
    fn approvals_become_permissions_answered_accept_or_decline() {
        let mut r = Replay::new(params());
        let mut answers = vec![];
        for line in APPROVAL.lines() {
            let idle = r.stream.thread_id.is_some() && !r.stream.turn_active();
            let v: Value = serde_json::from_str(line).unwrap();
            if idle && v["id"].as_u64().is_some_and(|id| id >= r.stream.next_id) {
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
        let mut s = CodexStream::new(params());
        s.startup();
        s.on_line(r#"{"id":1,"result":{}}"#);
        s.on_line(r#"{"id":2,"result":{"thread":{"id":"t1"}}}"#);
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
                    message: "stream disconnected".into()
                })
            ]
        );
        s.send_turn("y").unwrap();
        assert_eq!(
            s.on_exit("Codex was killed by signal 9 (SIGKILL)"),
            vec![
                ProviderEvent::TurnEnded(TurnOutcome::Failed {
                    message: "Codex was killed by signal 9 (SIGKILL)".into()
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
                "mcp_servers.paseo.bearer_token_env_var=\"PASEO_MCP_TOKEN\""
            ]
        );
        assert!(!argv.join(" ").contains("secret"));
    }
}
