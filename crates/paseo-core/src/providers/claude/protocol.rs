//! Claude Code's stream-json protocol as a pure state machine: stdout lines in, provider events
//! and stdin messages out. The stdin side is three messages: a prompt is a `user` line, an
//! interrupt a `control_request` of subtype `interrupt`, a permission answer the
//! `control_response` to a `can_use_tool` request. On stdout, `system`/`init` carries the
//! session id and MCP server status, `assistant` and `user` lines the timeline (a subagent's,
//! nested under a tool use, is not this agent's), `result` ends the turn, and
//! `control_request`s ask for permissions.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::super::stdio::{exit_events, parse_line, turn_end, McpStatuses, Protocol, Step};
use super::super::{
    PermissionRequest, ProviderError, ProviderEvent, TurnOutcome, TurnUsage, MCP_SERVER_NAME,
};
use crate::model::{ItemKind, NewItem};

/// The pure state machine over Claude Code's stream-json output.
#[derive(Debug, Default)]
pub struct ClaudeStream {
    session_id: Option<String>,
    mcp: McpStatuses,
    turn_active: bool,
    interrupt_requested: bool,
    /// Interrupts sent so far (each control request gets its own id).
    interrupts: u64,
    last_text: Option<String>,
    /// Pending `can_use_tool` requests: request id → the tool input (echoed when allowing).
    pending: BTreeMap<String, Value>,
    /// The process resumed an earlier session (`--resume`).
    resumed: bool,
    /// The session's cumulative `total_cost_usd` at this process's previous `result`.
    process_cost: Option<f64>,
}

impl Protocol for ClaudeStream {
    /// The process was started with its session id: the session is known and ready at once.
    fn startup(&mut self) -> Step {
        let mut step = Step::default();
        if let Some(id) = &self.session_id {
            step.events.push(ProviderEvent::SessionId(id.clone()));
        }
        step.events.push(ProviderEvent::Ready);
        step
    }

    fn send_turn(&mut self, text: &str) -> Result<Vec<Value>, ProviderError> {
        if self.turn_active {
            return Err(ProviderError::Invalid("a turn is already running".into()));
        }
        self.start_turn();
        Ok(vec![json!({
            "type": "user",
            "message": {"role": "user", "content": text},
        })])
    }

    fn abandon_turn(&mut self) {
        self.turn_active = false;
    }

    fn interrupt(&mut self) -> Vec<Value> {
        if !self.request_interrupt() {
            return vec![];
        }
        self.interrupts += 1;
        vec![json!({
            "type": "control_request",
            "request_id": format!("paseo-interrupt-{}", self.interrupts),
            "request": {"subtype": "interrupt"},
        })]
    }

    /// The control response answering a pending `can_use_tool` request.
    fn answer_permission(&mut self, request_id: &str, allow: bool) -> Result<Value, ProviderError> {
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
        }))
    }

    fn on_line(&mut self, line: &str) -> Step {
        let mut step = Step::default();
        let Some(v) = parse_line(line) else {
            return step;
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

    fn on_exit(&mut self, message: &str) -> Vec<ProviderEvent> {
        let running = std::mem::take(&mut self.turn_active);
        exit_events(
            std::mem::take(&mut self.pending).into_keys(),
            running,
            message,
        )
    }
}

impl ClaudeStream {
    /// `session_id`: the id the process was started with (so init repeating it says nothing new).
    pub fn new(session_id: Option<String>) -> Self {
        ClaudeStream {
            session_id,
            ..Default::default()
        }
    }

    /// A stream of a process started with `--resume`: its first cost report may include the
    /// session's earlier total.
    pub fn resumed(self, resumed: bool) -> Self {
        ClaudeStream { resumed, ..self }
    }

    pub fn turn_active(&self) -> bool {
        self.turn_active
    }

    fn start_turn(&mut self) {
        self.turn_active = true;
        self.interrupt_requested = false;
        self.last_text = None;
    }

    /// Marks the running turn as interrupted; false when there is no turn to interrupt.
    fn request_interrupt(&mut self) -> bool {
        if !self.turn_active || self.interrupt_requested {
            return false;
        }
        self.interrupt_requested = true;
        true
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
            let Some(changed) = self.mcp.update(name, status) else {
                continue;
            };
            if name == MCP_SERVER_NAME && status != "connected" {
                tracing::warn!(target: "paseo::claude", "the paseo MCP server is {status} for this agent");
            }
            step.events.push(changed);
        }
    }

    fn on_assistant(&mut self, v: &Value, step: &mut Step) {
        let mut items = Vec::new();
        let mut text = String::new();
        for block in own_blocks(v) {
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
        let mut items = Vec::new();
        for block in own_blocks(v) {
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
                detail: None,
            }
        };
        self.interrupt_requested = false;
        if let Some(u) = self.turn_usage(v) {
            step.events.push(ProviderEvent::Usage(u));
        }
        let open = std::mem::take(&mut self.pending).into_keys();
        step.events
            .extend(turn_end(open, self.last_text.is_some(), outcome));
    }

    /// The turn's usage from a `result`: `usage` is the turn's own; `total_cost_usd` is the
    /// session's running total in this process, so a turn costs the difference from the
    /// previous result. A resumed process starts from the total Claude Code restored for the
    /// session, which shows as `modelUsage` (cumulative too) holding more output than this turn.
    fn turn_usage(&mut self, v: &Value) -> Option<TurnUsage> {
        let usage = v.get("usage").filter(|u| u.is_object());
        let total = v.get("total_cost_usd").and_then(Value::as_f64);
        if usage.is_none() && total.is_none() {
            return None;
        }
        let n = |k: &str| {
            usage
                .and_then(|u| u.get(k))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let output = n("output_tokens");
        let mut t = TurnUsage {
            input_tokens: n("input_tokens"),
            output_tokens: output,
            cache_read_tokens: n("cache_read_input_tokens"),
            cache_write_tokens: n("cache_creation_input_tokens"),
            session_cost_usd: total,
            ..TurnUsage::default()
        };
        if let Some(total) = total {
            match self.process_cost {
                Some(prev) => t.cost_usd = Some((total - prev).max(0.0)),
                None => {
                    let session_output: u64 = v
                        .get("modelUsage")
                        .and_then(Value::as_object)
                        .into_iter()
                        .flat_map(|m| m.values())
                        .filter_map(|m| m.get("outputTokens").and_then(Value::as_u64))
                        .sum();
                    if self.resumed && session_output > output {
                        t.restored = true;
                    } else {
                        t.cost_usd = Some(total);
                    }
                }
            }
            self.process_cost = Some(total);
        }
        // A turn that never reached the model (e.g. an unknown session) consumed nothing.
        let tokens = [t.output_tokens, t.cache_read_tokens, t.cache_write_tokens]
            .into_iter()
            .fold(t.input_tokens, u64::saturating_add);
        (tokens > 0 || t.restored || t.cost_usd.is_some_and(|c| c > 0.0)).then_some(t)
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
                        kind: crate::model::PermissionKind::Tool,
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
                step.out.push(json!({
                    "type": "control_response",
                    "response": {
                        "subtype": "error",
                        "request_id": request_id,
                        "error": format!("unsupported control request {other:?}"),
                    },
                }));
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

/// The content blocks of this agent's own message: none for a subagent's (the Task tool's
/// messages are nested under a tool use, and are not this agent's own words).
fn own_blocks(v: &Value) -> impl Iterator<Item = &Value> {
    let own = v
        .get("parent_tool_use_id")
        .unwrap_or(&Value::Null)
        .is_null();
    v["message"]["content"]
        .as_array()
        .filter(|_| own)
        .into_iter()
        .flatten()
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
