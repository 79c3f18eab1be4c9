//! A minimal MCP server (streamable HTTP, JSON responses) named like the app's, offering the
//! app's tool names and answering every call with an echo. It lets the provider tests check
//! what only a live server shows: that the real CLIs connect with the agent's bearer token,
//! see the tools, and call them without asking for permission. The app's real server (rmcp)
//! replaces it in the MCP tests.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::standin::{serve, Served};

/// The app's tool names (those its real server serves), offered by the echo.
pub fn tools() -> Vec<String> {
    paseo_core::mcp::PaseoTools::served()
}

/// A tool call the server received.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub tool: String,
    pub arguments: Value,
}

#[derive(Clone)]
struct Shared {
    token: String,
    calls: Arc<Mutex<Vec<Call>>>,
    unauthorized: Arc<Mutex<u32>>,
}

pub struct McpEcho {
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    pub token: String,
    shared: Shared,
    _served: Served,
}

impl McpEcho {
    pub async fn start(token: &str) -> McpEcho {
        let shared = Shared {
            token: token.to_string(),
            calls: Arc::default(),
            unauthorized: Arc::default(),
        };
        let app = Router::new()
            .route(
                "/mcp",
                post(rpc).get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
            )
            .with_state(shared.clone());
        let served = serve(app).await;
        McpEcho {
            url: format!("{}/mcp", served.addr),
            token: token.to_string(),
            shared,
            _served: served,
        }
    }

    pub fn access(&self) -> paseo_core::providers::McpAccess {
        paseo_core::providers::McpAccess {
            url: self.url.clone(),
            token: self.token.clone(),
            config_dir: super::secrets_dir(),
            tools: paseo_core::mcp::PaseoTools::served().into(),
        }
    }

    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().unwrap().clone()
    }

    pub fn unauthorized(&self) -> u32 {
        *self.shared.unauthorized.lock().unwrap()
    }
}

async fn rpc(State(shared): State<Shared>, headers: HeaderMap, Json(msg): Json<Value>) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if auth != format!("Bearer {}", shared.token) {
        *shared.unauthorized.lock().unwrap() += 1;
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let Some(id) = msg.get("id").cloned() else {
        // A notification.
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match msg["method"].as_str().unwrap_or("") {
        "initialize" => json!({
            "protocolVersion": msg["params"]["protocolVersion"].as_str().unwrap_or("2025-03-26"),
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "paseo", "version": "0.0.0-test"},
        }),
        "tools/list" => json!({"tools": tools().iter().map(|t| json!({
            "name": t,
            "description": format!("{t} (test echo)"),
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": true},
        })).collect::<Vec<_>>()}),
        "tools/call" => {
            let tool = msg["params"]["name"].as_str().unwrap_or("").to_string();
            let arguments = msg["params"]["arguments"].clone();
            let text = format!("called {tool} with {arguments}");
            shared.calls.lock().unwrap().push(Call { tool, arguments });
            json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
        "ping" => json!({}),
        other => {
            return Json(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("unknown method {other}")}}))
            .into_response()
        }
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}
