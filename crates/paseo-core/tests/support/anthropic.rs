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

use serde_json::{json, Value};

// What the stand-ins share is this module's child, so that this file can be used on its own
// (tests/ui.rs includes it by path); support/mod.rs hands it on to the other stand-ins.
#[path = "standin.rs"]
pub mod standin;

pub use standin::Reply;
use standin::{status, text_of, Answer, Event, ModelApi};

/// The usage every reply reports, as the real API does: input, cache writes and reads in
/// `message_start`, the output count in `message_delta`.
pub const INPUT_TOKENS: u64 = 10;
pub const OUTPUT_TOKENS: u64 = 5;
pub const CACHE_READ_TOKENS: u64 = 300;
pub const CACHE_WRITE_TOKENS: u64 = 40;

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
                    content: text_of(&b["content"]),
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

pub struct AnthropicStandIn {
    /// `http://127.0.0.1:PORT`, for ANTHROPIC_BASE_URL.
    pub url: String,
    api: ModelApi,
}

impl AnthropicStandIn {
    pub async fn start(script: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        let api = ModelApi::start("/v1/messages", move |body, n| {
            let req = Request { body: body.clone() };
            answer(&req, script(&req), n)
        })
        .await;
        AnthropicStandIn {
            url: api.served.addr.clone(),
            api,
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        let bodies = self.api.bodies().into_iter();
        bodies.map(|body| Request { body }).collect()
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

/// A Messages API stream: message_start, the one content block (start, deltas, stop),
/// message_delta with the stop reason, message_stop.
fn answer(req: &Request, reply: Reply, n: u64) -> Answer {
    let (block, deltas, stop_reason, delay) = match reply {
        Reply::Error {
            status: code,
            message,
        } => {
            let body = json!({"type": "error", "error": {"type": "api_error", "message": message}});
            return Err((status(code), body));
        }
        Reply::Text(t) => {
            let text = |part: &str| json!({"type": "text_delta", "text": part});
            let deltas = halves(&t).into_iter().filter(|p| !p.is_empty()).map(text);
            let block = json!({"type": "text", "text": ""});
            (block, deltas.collect(), "end_turn", None)
        }
        Reply::SlowText { chunks, delay } => {
            let text = |part: &String| json!({"type": "text_delta", "text": part});
            let block = json!({"type": "text", "text": ""});
            (
                block,
                chunks.iter().map(text).collect(),
                "end_turn",
                Some(delay),
            )
        }
        Reply::Tool { name, input, .. } => {
            let js = input.to_string();
            let partial = |part: &str| json!({"type": "input_json_delta", "partial_json": part});
            let block = json!({"type": "tool_use", "id": format!("toolu_standin_{n}"), "name": name, "input": {}});
            (
                block,
                halves(&js).into_iter().map(partial).collect::<Vec<_>>(),
                "tool_use",
                None,
            )
        }
    };
    let paced = |data: Value| Event { delay, data };
    let mut events = vec![Event::now(json!({"type": "message_start",
        "message": {"id": format!("msg_standin_{n}"), "type": "message", "role": "assistant",
            "model": req.model(), "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": 1,
                "cache_creation_input_tokens": CACHE_WRITE_TOKENS,
                "cache_read_input_tokens": CACHE_READ_TOKENS}}}))];
    events.push(paced(
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
    ));
    for delta in deltas {
        events.push(paced(
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ));
    }
    events.push(paced(json!({"type": "content_block_stop", "index": 0})));
    events.push(Event::now(json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": OUTPUT_TOKENS}})));
    events.push(Event::now(json!({"type": "message_stop"})));
    Ok(events)
}

/// A text cut in two at a character boundary (streamed as two deltas, as the real API does).
fn halves(t: &str) -> [&str; 2] {
    let mid = (0..=t.len() / 2)
        .rev()
        .find(|i| t.is_char_boundary(*i))
        .unwrap_or(0);
    [&t[..mid], &t[mid..]]
}
