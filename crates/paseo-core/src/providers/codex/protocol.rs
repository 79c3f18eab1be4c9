//! Codex's app-server JSON-RPC as a pure state machine: stdout lines in, provider events and
//! stdin messages out. Our requests carry ids we count from 1 and remember, so each response
//! is matched to its call (`initialize`, the thread, `turn/start`, `turn/interrupt`); the
//! server's notifications carry the turn (`turn/started`, `item/*`, `turn/completed`) and MCP
//! server status; the server's requests are approvals (answered by the user) or questions
//! answered at once. How items become timeline items is in [`super::items`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};

use super::super::stdio::{exit_events, parse_line, turn_end, McpStatuses, Protocol, Step};
use super::super::{
    PermissionRequest, ProviderError, ProviderEvent, SessionSpec, TurnOutcome, TurnUsage,
    MCP_SERVER_NAME,
};
use super::items::{completed_item, started_item};
use crate::model::power::{CODEX_ASKING_MODE, CODEX_FULL_MODE};
use crate::model::{ItemKind, NewItem};

/// What `thread/start` / `thread/resume` are called with, from the agent's config. Unset
/// values are left out (Codex's own defaults apply), except the approval policy and sandbox of
/// an agent that asks: see [`ThreadParams::from_spec`].
#[derive(Clone, Debug, Default)]
pub struct ThreadParams {
    pub cwd: PathBuf,
    /// `model`: the agent's model.
    pub model: Option<String>,
    /// `approvalPolicy`: the agent's mode.
    pub approval_policy: Option<String>,
    /// `developerInstructions`: the agent's system prompt.
    pub developer_instructions: Option<String>,
    /// `sandbox`: Codex's sandbox mode (`read-only`, `workspace-write`, `danger-full-access`),
    /// from the agent config's `sandbox` extra.
    pub sandbox: Option<String>,
    /// The thread to resume (`thread/resume` instead of `thread/start`).
    pub resume: Option<String>,
}

impl ThreadParams {
    /// The thread's settings from the agent's. An agent without a mode asks
    /// ([`CODEX_ASKING_MODE`]), and one that asks without a sandbox gets the read-only one, in
    /// which every write asks too: neither is left to `approval_policy` / `sandbox_mode` in the
    /// user's `~/.codex/config.toml`, which could make an agent the power rule counts as asking
    /// act without asking (SPEC 14). With approval `never` the agent has full power already
    /// (asks only in a read-only sandbox it was given), so its sandbox stays the user's default.
    pub fn from_spec(spec: &SessionSpec) -> Self {
        fn nonempty(s: Option<&str>) -> Option<String> {
            s.filter(|s| !s.is_empty()).map(str::to_string)
        }
        let approval =
            nonempty(spec.config.mode.as_deref()).unwrap_or_else(|| CODEX_ASKING_MODE.into());
        let sandbox = spec
            .config
            .extra
            .get("sandbox")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .or_else(|| (approval != CODEX_FULL_MODE).then(|| "read-only".to_string()));
        ThreadParams {
            cwd: spec.cwd.clone(),
            model: nonempty(spec.config.model.as_deref()),
            approval_policy: Some(approval),
            developer_instructions: nonempty(spec.config.system_prompt.as_deref()),
            sandbox,
            resume: nonempty(spec.resume.as_deref()),
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
    /// What the turn's model calls consumed so far.
    usage: Option<TurnUsage>,
}

/// The token counts of a `TokenUsageBreakdown`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Breakdown {
    input: u64,
    cached: u64,
    cache_write: u64,
    output: u64,
}

impl Breakdown {
    fn of(v: &Value) -> Option<Breakdown> {
        let n = |k: &str| v.get(k).and_then(Value::as_u64);
        Some(Breakdown {
            input: n("inputTokens")?,
            cached: n("cachedInputTokens").unwrap_or(0),
            cache_write: n("cacheWriteInputTokens").unwrap_or(0),
            output: n("outputTokens")?,
        })
    }
    fn minus(self, o: Breakdown) -> Breakdown {
        Breakdown {
            input: self.input.saturating_sub(o.input),
            cached: self.cached.saturating_sub(o.cached),
            cache_write: self.cache_write.saturating_sub(o.cache_write),
            output: self.output.saturating_sub(o.output),
        }
    }
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
    mcp: McpStatuses,
    /// The thread's total token usage as last reported: a report with the same total repeats
    /// one already counted (Codex re-sends it with rate-limit updates).
    usage_total: Option<Breakdown>,
    /// Why the session cannot go on, once it cannot.
    pub fatal: Option<String>,
}

impl Protocol for CodexStream {
    /// `initialize`; the thread is started once it is answered, and the session is ready
    /// when the thread is.
    fn startup(&mut self) -> Step {
        let initialize = self.request(
            Call::Initialize,
            "initialize",
            json!({"clientInfo": {"name": "paseo-desktop", "title": "Paseo Desktop",
                                  "version": env!("CARGO_PKG_VERSION")},
                   "capabilities": null}),
        );
        Step {
            out: vec![initialize],
            ..Step::default()
        }
    }

    /// `turn/start`, or nothing yet when the thread is not ready: the turn is queued and
    /// started with it.
    fn send_turn(&mut self, text: &str) -> Result<Vec<Value>, ProviderError> {
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

    fn abandon_turn(&mut self) {
        self.turn = None;
        self.queued = None;
    }

    fn interrupt(&mut self) -> Vec<Value> {
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

    fn answer_permission(&mut self, request_id: &str, allow: bool) -> Result<Value, ProviderError> {
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

    fn on_line(&mut self, line: &str) -> Step {
        let mut step = Step::default();
        let Some(v) = parse_line(line) else {
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

    /// A session that could not go on says why ([`CodexStream::fatal`]) rather than how the
    /// process ended (it was stopped for that reason).
    fn on_exit(&mut self, message: &str) -> Vec<ProviderEvent> {
        let message = self.fatal.clone().unwrap_or_else(|| message.to_string());
        let running = self.turn.take().is_some() | self.queued.take().is_some();
        exit_events(
            std::mem::take(&mut self.approvals).into_keys(),
            running,
            &message,
        )
    }
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

    pub fn turn_active(&self) -> bool {
        self.turn.is_some()
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
                            detail: None,
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
                kind: crate::model::PermissionKind::Tool,
                tool_name: tool.to_string(),
                input: params.clone(),
                description,
                call_id,
            }));
    }

    /// A token-count report: `total` is the thread's running total, `last` the latest model
    /// call's. A turn is charged what the total grew by. The first report of a process has no
    /// earlier total to compare with: it is a new call when it is the thread's only one (`total`
    /// equals `last`); otherwise it is the total a resumed thread replays, which was charged
    /// before. Codex re-sends an unchanged total with rate-limit updates: that adds nothing.
    fn on_token_usage(&mut self, u: &Value) {
        let (Some(total), Some(last)) = (Breakdown::of(&u["total"]), Breakdown::of(&u["last"]))
        else {
            return;
        };
        let grew = match self.usage_total.replace(total) {
            Some(prev) => total.minus(prev),
            None if total == last => last,
            None => return,
        };
        let Some(turn) = self.turn.as_mut() else {
            return;
        };
        if grew == Breakdown::default() {
            return;
        }
        let t = turn.usage.get_or_insert_with(TurnUsage::default);
        // Codex's input includes the cached input; ours does not (as Claude's).
        t.input_tokens = t
            .input_tokens
            .saturating_add(grew.input.saturating_sub(grew.cached));
        t.output_tokens = t.output_tokens.saturating_add(grew.output);
        t.cache_read_tokens = t.cache_read_tokens.saturating_add(grew.cached);
        t.cache_write_tokens = t.cache_write_tokens.saturating_add(grew.cache_write);
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
                        detail: None,
                    },
                };
                if let Some(u) = turn.usage {
                    step.events.push(ProviderEvent::Usage(u));
                }
                let open = std::mem::take(&mut self.approvals).into_keys();
                step.events
                    .extend(turn_end(open, turn.said_something, outcome));
            }
            "thread/tokenUsage/updated" => self.on_token_usage(&p["tokenUsage"]),
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
                let Some(changed) = self.mcp.update(name, status) else {
                    return;
                };
                if name == MCP_SERVER_NAME && status == "failed" {
                    tracing::warn!(target: "paseo::codex", "the paseo MCP server failed for this agent: {}", p["error"]);
                }
                step.events.push(changed);
            }
            _ => {}
        }
    }
}
