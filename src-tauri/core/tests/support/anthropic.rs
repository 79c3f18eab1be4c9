//! A scripted stand-in for the Anthropic Messages API, served on 127.0.0.1 for the real Claude
//! Code CLI. It speaks the real protocol (`POST /v1/messages?beta=true`, always streamed as
//! SSE: message_start, content_block_start, content_block_delta, content_block_stop,
//! message_delta, message_stop); a test decides each reply from the request with a script:
//!
//! ```ignore
//! let api = AnthropicStandIn::start(|req| match req.input() {
//!     Input::Text(t) if t.contains("use bash") => Reply::tool_use("Bash", json!({"command": "touch x"})),
//!     Input::ToolResult { content, .. } => Reply::text(format!("tool said {content}")),
//!     Input::Text(t) => Reply::text(format!("echo: {t}")),
//! }).await;
//! let env = api.claude_env(home.path()); // ANTHROPIC_BASE_URL, a temp HOME, ...
//! ```
//!
//! The CLI sends system-role messages mid-conversation and merges messages, so a script looks
//! only at the last block of the last user message (`Request::input`).

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

/// What the model was last given.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// A user text block (a prompt).
    Text(String),
    /// The result of a tool the model called.
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
    },
}

/// One request the CLI made.
#[derive(Clone, Debug)]
pub struct Request {
    pub body: Value,
}

impl Request {
    pub fn model(&self) -> &str {
        self.body["model"].as_str().unwrap_or("")
    }

    /// The last block of the last user message.
    pub fn input(&self) -> Input {
        let last_user = self.body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .rev()
            .find(|m| m["role"] == "user");
        let Some(m) = last_user else {
            return Input::Text(String::new());
        };
        match &m["content"] {
            Value::String(s) => Input::Text(s.clone()),
            Value::Array(blocks) => match blocks.last() {
                Some(b) if b["type"] == "tool_result" => Input::ToolResult {
                    tool_use_id: b["tool_use_id"].as_str().unwrap_or("").to_string(),
                    content: match &b["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        _ => String::new(),
                    },
                    is_error: b["is_error"].as_bool().unwrap_or(false),
                },
                Some(b) => Input::Text(b["text"].as_str().unwrap_or("").to_string()),
                None => Input::Text(String::new()),
            },
            _ => Input::Text(String::new()),
        }
    }

    /// The names of the tools the CLI offered the model.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    }
}

/// A scripted reply.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Assistant text, ending the turn.
    Text(String),
    /// Text streamed in `chunks`, `delay` apart (for interrupting a turn mid-stream).
    SlowText {
        chunks: Vec<String>,
        delay: Duration,
    },
    /// A tool call; the CLI runs the tool and asks again with its result.
    ToolUse { name: String, input: Value },
    /// An HTTP error with an Anthropic-style error body.
    Error { status: u16, message: String },
}

impl Reply {
    pub fn text(t: impl Into<String>) -> Reply {
        Reply::Text(t.into())
    }
    pub fn tool_use(name: impl Into<String>, input: Value) -> Reply {
        Reply::ToolUse {
            name: name.into(),
            input,
        }
    }
    pub fn slow(n: usize, delay: Duration) -> Reply {
        Reply::SlowText {
            chunks: (0..n).map(|i| format!("tick {i} ")).collect(),
            delay,
        }
    }
}

/// The tool-permission script several tests share: "use bash <file>" calls Bash to create
/// `<file>`; a tool result is echoed with whether it was an error; other text is echoed.
pub fn bash_script(input: Input) -> Reply {
    match input {
        Input::Text(t) if t.contains("use bash") => {
            let file = t.rsplit(' ').next().unwrap_or("x").to_string();
            Reply::tool_use(
                "Bash",
                json!({"command": format!("touch {file} && echo bash-ran"), "description": "make a file"}),
            )
        }
        Input::ToolResult {
            content, is_error, ..
        } => Reply::text(format!("tool result: {content} error={is_error}")),
        Input::Text(t) => Reply::text(format!("echo: {t}")),
    }
}

type Script = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

#[derive(Clone)]
struct Shared {
    script: Script,
    requests: Arc<Mutex<Vec<Request>>>,
    ids: Arc<AtomicU64>,
}

pub struct AnthropicStandIn {
    /// `http://127.0.0.1:PORT`, for ANTHROPIC_BASE_URL.
    pub url: String,
    requests: Arc<Mutex<Vec<Request>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for AnthropicStandIn {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl AnthropicStandIn {
    pub async fn start(script: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Shared {
            script: Arc::new(script),
            requests: requests.clone(),
            ids: Arc::new(AtomicU64::new(0)),
        };
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .fallback(|| async { StatusCode::NOT_FOUND })
            .with_state(shared);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        AnthropicStandIn {
            url,
            requests,
            server,
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// The environment that points Claude Code at this stand-in, offline, with its state under
    /// `home`.
    pub fn claude_env(&self, home: &Path) -> BTreeMap<String, String> {
        let config_dir = home.join(".claude");
        std::fs::create_dir_all(&config_dir).unwrap();
        [
            ("ANTHROPIC_BASE_URL", self.url.clone()),
            ("ANTHROPIC_API_KEY", "test".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("HOME", home.display().to_string()),
            ("CLAUDE_CONFIG_DIR", config_dir.display().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

fn sse(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn message_events(
    model: &str,
    id: &str,
    reply: &Reply,
    tool_id: &str,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let start = vec![sse(
        "message_start",
        json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )];
    let mut body = Vec::new();
    let stop_reason = match reply {
        Reply::Text(t) => {
            body.push(sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ));
            let mid = t
                .char_indices()
                .nth(t.chars().count() / 2)
                .map(|(i, _)| i)
                .unwrap_or(0);
            for part in [&t[..mid], &t[mid..]] {
                if !part.is_empty() {
                    body.push(sse(
                        "content_block_delta",
                        json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": part}}),
                    ));
                }
            }
            "end_turn"
        }
        Reply::SlowText { chunks, .. } => {
            body.push(sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ));
            for c in chunks {
                body.push(sse(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": c}}),
                ));
            }
            "end_turn"
        }
        Reply::ToolUse { name, input } => {
            body.push(sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}}}),
            ));
            let js = input.to_string();
            let mid = js.len() / 2;
            let mid = (0..=mid)
                .rev()
                .find(|i| js.is_char_boundary(*i))
                .unwrap_or(0);
            for part in [&js[..mid], &js[mid..]] {
                body.push(sse(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": part}}),
                ));
            }
            "tool_use"
        }
        Reply::Error { .. } => unreachable!("errors are not streamed"),
    };
    body.push(sse(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    let end = vec![
        sse(
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": 5}}),
        ),
        sse("message_stop", json!({"type": "message_stop"})),
    ];
    (start, body, end)
}

async fn messages(State(shared): State<Shared>, Json(body): Json<Value>) -> Response {
    let req = Request { body };
    shared.requests.lock().unwrap().push(req.clone());
    let reply = (shared.script)(&req);
    if let Reply::Error { status, message } = &reply {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = json!({"type": "error", "error": {"type": "api_error", "message": message}});
        return (status, Json(body)).into_response();
    }
    let n = shared.ids.fetch_add(1, Ordering::SeqCst);
    let (start, body, end) = message_events(
        req.model(),
        &format!("msg_standin_{n}"),
        &reply,
        &format!("toolu_standin_{n}"),
    );
    let delay = match &reply {
        Reply::SlowText { delay, .. } => Some(*delay),
        _ => None,
    };
    let (tx, rx) = mpsc::channel::<String>(4);
    tokio::spawn(async move {
        for ev in start {
            if tx.send(ev).await.is_err() {
                return;
            }
        }
        for ev in body {
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            if tx.send(ev).await.is_err() {
                return;
            }
        }
        for ev in end {
            if tx.send(ev).await.is_err() {
                return;
            }
        }
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
