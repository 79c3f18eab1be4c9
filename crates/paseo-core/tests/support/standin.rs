//! What the scripted stand-ins for the model APIs (`anthropic`, `openai`) and the MCP echo
//! server share: serving a router on 127.0.0.1 for as long as the stand-in lives, the replies
//! a test script gives, and answering a model request by streaming server-sent events.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::Value;
use tokio::sync::mpsc;

/// A router served on 127.0.0.1 until this is dropped.
pub struct Served {
    /// `http://127.0.0.1:PORT`
    pub addr: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn serve(app: Router) -> Served {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Served { addr, task }
}

/// A scripted reply of a model API.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Assistant text, ending the turn.
    Text(String),
    /// Text streamed in `chunks`, `delay` apart (for interrupting a turn mid-stream).
    SlowText {
        chunks: Vec<String>,
        delay: Duration,
    },
    /// A tool call; the CLI runs the tool and asks again with its result. OpenAI's MCP tools
    /// are called in a `namespace` (`mcp__<server>`); Anthropic's have none.
    Tool {
        namespace: Option<String>,
        name: String,
        input: Value,
    },
    /// An HTTP error with the API's error body.
    Error { status: u16, message: String },
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
    /// An Anthropic `tool_use`.
    pub fn tool_use(name: impl Into<String>, input: Value) -> Reply {
        Reply::Tool {
            namespace: None,
            name: name.into(),
            input,
        }
    }
    /// An OpenAI `function_call`.
    pub fn function_call(namespace: Option<&str>, name: &str, arguments: Value) -> Reply {
        Reply::Tool {
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
            input: arguments,
        }
    }
}

/// One server-sent event, sent `delay` after the one before it.
pub struct Event {
    pub delay: Option<Duration>,
    pub data: Value,
}

impl Event {
    pub fn now(data: Value) -> Event {
        Event { delay: None, data }
    }
}

/// How a model API answers one request: events to stream, or an error status and body.
pub type Answer = Result<Vec<Event>, (StatusCode, Value)>;

/// A model API served on `route` (POST): every request body is kept, and `answer` (given the
/// body and the request's number) says what to send back.
pub struct ModelApi {
    pub served: Served,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl ModelApi {
    pub async fn start(
        route: &str,
        answer: impl Fn(&Value, u64) -> Answer + Send + Sync + 'static,
    ) -> ModelApi {
        let requests: Arc<Mutex<Vec<Value>>> = Arc::default();
        let seen = requests.clone();
        let ids = Arc::new(AtomicU64::new(0));
        let answer = Arc::new(answer);
        let handler = move |Json(body): Json<Value>| {
            seen.lock().unwrap().push(body.clone());
            let n = ids.fetch_add(1, Ordering::SeqCst);
            let answer = answer(&body, n);
            async move { respond(answer) }
        };
        let app = Router::new()
            .route(route, post(handler))
            .fallback(|| async { StatusCode::NOT_FOUND });
        ModelApi {
            served: serve(app).await,
            requests,
        }
    }

    /// Every request body so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn respond(answer: Answer) -> Response {
    let events = match answer {
        Ok(events) => events,
        Err((status, body)) => return (status, Json(body)).into_response(),
    };
    let (tx, rx) = mpsc::channel::<String>(4);
    tokio::spawn(async move {
        for Event { delay, data } in events {
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            let name = data["type"].as_str().unwrap_or("message").to_string();
            if tx
                .send(format!("event: {name}\ndata: {data}\n\n"))
                .await
                .is_err()
            {
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

/// The text of a content value: a string, or the `text` of each part of a list.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// An error status as the script gave it.
pub fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}
