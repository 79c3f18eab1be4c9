//! A scripted stand-in for the OpenAI Responses API, served on 127.0.0.1 for the real Codex
//! CLI. It speaks the real protocol (`POST /v1/responses`, streamed as SSE: response.created,
//! response.output_item.added, text or function-call deltas, response.output_item.done,
//! response.completed); a test decides each reply from the last input item:
//!
//! ```ignore
//! let api = OpenAiStandIn::start(|req| match req.input() {
//!     Input::Text(t) if t.contains("orchestrate") =>
//!         Reply::function_call(Some("mcp__paseo"), "create_agent", json!({"provider": "shell"})),
//!     Input::FunctionOutput { output, .. } => Reply::text(format!("tool said {output}")),
//!     Input::Text(t) => Reply::text(format!("echo: {t}")),
//! }).await;
//! // codex argv prefix: [codex, api.codex_args()...]; env: api.codex_env(home)
//! ```
//!
//! MCP tools are declared to the model as a namespace `mcp__<server>`; a call to one must carry
//! `namespace: "mcp__<server>"` and the bare tool name.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

pub use super::standin::Reply;
use super::standin::{status, text_of, Answer, Event, ModelApi};

/// The model name the stand-in serves: one Codex does not know, so it declares MCP tools.
pub const MODEL: &str = "paseo-standin-model";
/// The variable Codex reads the stand-in's API key from.
pub const KEY_VAR: &str = "PASEO_STANDIN_API_KEY";

/// The usage every response reports, as the real API does (`input_tokens` includes the cached
/// part).
pub const INPUT_TOKENS: u64 = 110;
pub const CACHED_TOKENS: u64 = 100;
pub const OUTPUT_TOKENS: u64 = 5;

#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// A user message's text.
    Text(String),
    /// The output of a function (tool) call the model made.
    FunctionOutput { call_id: String, output: String },
    /// Anything else (the raw item).
    Other(Value),
}

#[derive(Clone, Debug)]
pub struct Request {
    pub body: Value,
}

impl Request {
    /// The last input item.
    pub fn input(&self) -> Input {
        let Some(last) = self.body["input"].as_array().and_then(|a| a.last()) else {
            return Input::Other(Value::Null);
        };
        match last["type"].as_str() {
            Some("message") => Input::Text(text_of(&last["content"])),
            Some("function_call_output") => Input::FunctionOutput {
                call_id: last["call_id"].as_str().unwrap_or("").to_string(),
                output: match &last["output"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
            },
            _ => Input::Other(last.clone()),
        }
    }

    /// Tools offered to the model: plain functions by name, namespaces as `ns/fn`.
    pub fn tool_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for t in self.body["tools"].as_array().into_iter().flatten() {
            let name = t["name"].as_str().unwrap_or("");
            if t["type"] == "namespace" {
                for f in t["tools"].as_array().into_iter().flatten() {
                    out.push(format!("{name}/{}", f["name"].as_str().unwrap_or("")));
                }
            } else if !name.is_empty() {
                out.push(name.to_string());
            }
        }
        out
    }
}

pub struct OpenAiStandIn {
    /// `http://127.0.0.1:PORT/v1`, the provider's base_url.
    pub base_url: String,
    api: ModelApi,
}

impl OpenAiStandIn {
    pub async fn start(script: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        let api = ModelApi::start("/v1/responses", move |body, n| {
            answer(script(&Request { body: body.clone() }), n)
        })
        .await;
        OpenAiStandIn {
            base_url: format!("{}/v1", api.served.addr),
            api,
        }
    }

    pub fn requests(&self) -> Vec<Request> {
        let bodies = self.api.bodies().into_iter();
        bodies.map(|body| Request { body }).collect()
    }

    /// Codex options (after the binary) that use this stand-in as the model provider, offline.
    pub fn codex_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for kv in [
            "model_provider=\"standin\"".to_string(),
            "model_providers.standin.name=\"standin\"".to_string(),
            format!("model_providers.standin.base_url=\"{}\"", self.base_url),
            "model_providers.standin.wire_api=\"responses\"".to_string(),
            format!("model_providers.standin.env_key=\"{KEY_VAR}\""),
            format!("model=\"{MODEL}\""),
            "check_for_update_on_startup=false".to_string(),
        ] {
            args.push("-c".to_string());
            args.push(kv);
        }
        for feature in ["plugins", "remote_plugin", "apps"] {
            args.push("--disable".to_string());
            args.push(feature.to_string());
        }
        args
    }

    /// Codex's environment: its state under `home`, the stand-in's key.
    pub fn codex_env(&self, home: &Path) -> BTreeMap<String, String> {
        let codex_home = home.join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        [
            ("CODEX_HOME", codex_home.display().to_string()),
            ("HOME", home.display().to_string()),
            (KEY_VAR, "test".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// A Responses API stream: response.created, the one output item (added, its text or
/// arguments, done), response.completed.
fn answer(reply: Reply, n: u64) -> Answer {
    let rid = format!("resp_standin_{n}");
    let mut events = vec![Event::now(json!({"type": "response.created",
        "response": {"id": rid, "status": "in_progress", "output": []}}))];
    let item =
        match reply {
            Reply::Error {
                status: code,
                message,
            } => {
                let body = json!({"error": {"type": "server_error", "message": message}});
                return Err((status(code), body));
            }
            Reply::Text(t) => message(&mut events, n, vec![t], None),
            Reply::SlowText { chunks, delay } => message(&mut events, n, chunks, Some(delay)),
            Reply::Tool {
                namespace,
                name,
                input,
            } => {
                let fid = format!("fc_standin_{n}");
                let args = input.to_string();
                let mut item = json!({"type": "function_call", "id": fid, "name": name,
                "call_id": format!("call_standin_{n}"), "arguments": args, "status": "completed"});
                if let Some(ns) = namespace {
                    item["namespace"] = json!(ns);
                }
                let mut added = item.clone();
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                events.extend([
                json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
                json!({"type": "response.function_call_arguments.delta", "output_index": 0,
                    "item_id": fid, "delta": args}),
                json!({"type": "response.function_call_arguments.done", "output_index": 0,
                    "item_id": fid, "arguments": args}),
            ].map(Event::now));
                item
            }
        };
    events.push(Event::now(
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    ));
    events.push(Event::now(json!({"type": "response.completed",
        "response": {"id": rid, "status": "completed", "output": [item],
            "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS,
                      "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS,
                      "input_tokens_details": {"cached_tokens": CACHED_TOKENS},
                      "output_tokens_details": {"reasoning_tokens": 0}}}})));
    Ok(events)
}

/// The events of an assistant message streamed in `chunks` (`delay` before each); the
/// completed message item.
fn message(events: &mut Vec<Event>, n: u64, chunks: Vec<String>, delay: Option<Duration>) -> Value {
    let mid = format!("msg_standin_{n}");
    let text: String = chunks.concat();
    events.push(Event::now(
        json!({"type": "response.output_item.added", "output_index": 0,
        "item": {"type": "message", "id": mid, "role": "assistant",
                 "status": "in_progress", "content": []}}),
    ));
    events.push(Event::now(
        json!({"type": "response.content_part.added", "output_index": 0,
        "item_id": mid, "content_index": 0,
        "part": {"type": "output_text", "text": "", "annotations": []}}),
    ));
    for c in chunks {
        events.push(Event {
            delay,
            data: json!({"type": "response.output_text.delta", "output_index": 0,
                "item_id": mid, "content_index": 0, "delta": c}),
        });
    }
    events.push(Event::now(
        json!({"type": "response.output_text.done", "output_index": 0,
        "item_id": mid, "content_index": 0, "text": text}),
    ));
    json!({"type": "message", "id": mid, "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}
