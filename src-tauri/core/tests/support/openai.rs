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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// The model name the stand-in serves: one Codex does not know, so it declares MCP tools.
pub const MODEL: &str = "paseo-standin-model";
/// The variable Codex reads the stand-in's API key from.
pub const KEY_VAR: &str = "PASEO_STANDIN_API_KEY";

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
            Some("message") => Input::Text(match &last["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            }),
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

#[derive(Clone, Debug)]
pub enum Reply {
    Text(String),
    /// Text streamed in `chunks`, `delay` apart (for interrupting a turn mid-stream).
    SlowText {
        chunks: Vec<String>,
        delay: Duration,
    },
    FunctionCall {
        namespace: Option<String>,
        name: String,
        arguments: Value,
    },
    Error {
        status: u16,
        message: String,
    },
}

impl Reply {
    pub fn text(t: impl Into<String>) -> Reply {
        Reply::Text(t.into())
    }
    pub fn slow(n: usize, delay: Duration) -> Reply {
        Reply::SlowText {
            chunks: (0..n).map(|i| format!("tick {i} ")).collect(),
            delay,
        }
    }
    pub fn function_call(namespace: Option<&str>, name: &str, arguments: Value) -> Reply {
        Reply::FunctionCall {
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
            arguments,
        }
    }
}

type Script = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

#[derive(Clone)]
struct Shared {
    script: Script,
    requests: Arc<Mutex<Vec<Request>>>,
    ids: Arc<AtomicU64>,
}

pub struct OpenAiStandIn {
    /// `http://127.0.0.1:PORT/v1`, the provider's base_url.
    pub base_url: String,
    requests: Arc<Mutex<Vec<Request>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for OpenAiStandIn {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl OpenAiStandIn {
    pub async fn start(script: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared {
            script: Arc::new(script),
            requests: requests.clone(),
            ids: Arc::new(AtomicU64::new(0)),
        };
        let app = Router::new()
            .route("/v1/responses", post(responses))
            .fallback(|| async { StatusCode::NOT_FOUND })
            .with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        OpenAiStandIn {
            base_url,
            requests,
            server,
        }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
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

fn sse(data: Value) -> String {
    let name = data["type"].as_str().unwrap_or("message").to_string();
    format!("event: {name}\ndata: {data}\n\n")
}

async fn responses(State(shared): State<Shared>, Json(body): Json<Value>) -> Response {
    let req = Request { body };
    shared.requests.lock().unwrap().push(req.clone());
    let reply = (shared.script)(&req);
    if let Reply::Error { status, message } = &reply {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = json!({"error": {"type": "server_error", "message": message}});
        return (status, Json(body)).into_response();
    }
    let n = shared.ids.fetch_add(1, Ordering::SeqCst);
    let rid = format!("resp_standin_{n}");
    let (tx, rx) = mpsc::channel::<String>(4);
    tokio::spawn(async move {
        let send = |v: Value| {
            let tx = tx.clone();
            async move { tx.send(sse(v)).await.is_ok() }
        };
        if !send(json!({"type": "response.created",
            "response": {"id": rid, "status": "in_progress", "output": []}}))
        .await
        {
            return;
        }
        let item = match &reply {
            Reply::Text(_) | Reply::SlowText { .. } => {
                let (chunks, delay) = match &reply {
                    Reply::Text(t) => (vec![t.clone()], None),
                    Reply::SlowText { chunks, delay } => (chunks.clone(), Some(*delay)),
                    _ => unreachable!(),
                };
                let mid = format!("msg_standin_{n}");
                let text: String = chunks.concat();
                if !send(
                    json!({"type": "response.output_item.added", "output_index": 0,
                    "item": {"type": "message", "id": mid, "role": "assistant",
                             "status": "in_progress", "content": []}}),
                )
                .await
                {
                    return;
                }
                if !send(
                    json!({"type": "response.content_part.added", "output_index": 0,
                    "item_id": mid, "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []}}),
                )
                .await
                {
                    return;
                }
                for c in chunks {
                    if let Some(d) = delay {
                        tokio::time::sleep(d).await;
                    }
                    if !send(
                        json!({"type": "response.output_text.delta", "output_index": 0,
                        "item_id": mid, "content_index": 0, "delta": c}),
                    )
                    .await
                    {
                        return;
                    }
                }
                if !send(
                    json!({"type": "response.output_text.done", "output_index": 0,
                    "item_id": mid, "content_index": 0, "text": text}),
                )
                .await
                {
                    return;
                }
                json!({"type": "message", "id": mid, "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
            }
            Reply::FunctionCall {
                namespace,
                name,
                arguments,
            } => {
                let fid = format!("fc_standin_{n}");
                let call_id = format!("call_standin_{n}");
                let args = arguments.to_string();
                let mut item = json!({"type": "function_call", "id": fid, "name": name,
                    "call_id": call_id, "arguments": args, "status": "completed"});
                if let Some(ns) = namespace {
                    item["namespace"] = json!(ns);
                }
                let mut added = item.clone();
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                if !send(
                    json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
                )
                .await
                {
                    return;
                }
                if !send(
                    json!({"type": "response.function_call_arguments.delta", "output_index": 0,
                    "item_id": fid, "delta": args}),
                )
                .await
                {
                    return;
                }
                if !send(
                    json!({"type": "response.function_call_arguments.done", "output_index": 0,
                    "item_id": fid, "arguments": args}),
                )
                .await
                {
                    return;
                }
                item
            }
            Reply::Error { .. } => unreachable!("errors are not streamed"),
        };
        if !send(json!({"type": "response.output_item.done", "output_index": 0, "item": item}))
            .await
        {
            return;
        }
        send(
            json!({"type": "response.completed", "response": {"id": rid, "status": "completed",
            "output": [item],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}}),
        )
        .await;
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|s| (Ok::<_, std::io::Error>(s), rx))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}
