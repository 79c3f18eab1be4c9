//! The app's MCP server (SPEC 8): streamable HTTP on 127.0.0.1, built on the official Rust SDK
//! (`rmcp`), through which agents create, prompt, wait for and archive agents.
//!
//! Wiring (window and headless modes alike):
//!
//! ```ignore
//! let mcp = McpServer::bind(&layout, config_port)?;          // listener + user token
//! let runtime = Runtime::start(opts, Some(mcp.access())).await?;
//! let mcp = mcp.serve(runtime.handle()).await?;              // serving; mcp.json written
//! runtime.handle().deliver_pending().await?;
//! // … at quit:
//! mcp.shutdown().await;                                      // mcp.json removed
//! runtime.shutdown().await;
//! ```
//!
//! Every request must carry `Authorization: Bearer <token>`: an agent's own token (issued when
//! its session starts, see [`tokens`]) makes an agent-scoped call, the user token in
//! `$PASEO_HOME/mcp-token` a non-agent one. Anything else is answered 401 before the MCP layer
//! sees it, so it changes nothing. rmcp's DNS-rebinding protection stays on: the `Host` must be
//! a loopback name and a browser `Origin`, when present, a loopback origin.
//!
//! The transport is stateless (no `Mcp-Session-Id`): each POST is served on its own, with an
//! SSE response (headers at once, keep-alive pings during long waits). Agents can sit idle for
//! hours between tool calls, and a stateful session would expire under them; the caller's
//! identity comes from each request's token, so nothing needs a session.

pub mod input;
pub mod tokens;
pub mod tools;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::runtime::AgentAccess;
use crate::server::Server;
use crate::store::atomic::{remove_durable, write_atomic};
use crate::store::Layout;

pub use tokens::{Caller, Tokens};
pub use tools::{PaseoTools, SERVER_NAME};

/// How long a shutdown waits for in-flight requests before dropping them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> McpError {
    let what = what.into();
    move |source| McpError::Io { what, source }
}

/// A bound, not yet serving, MCP server.
pub struct McpServer {
    layout: Layout,
    listener: std::net::TcpListener,
    addr: SocketAddr,
    tokens: Arc<Tokens>,
}

impl McpServer {
    /// Binds 127.0.0.1:`port` (a free port when `port` is `None`, 0, or cannot be bound, e.g.
    /// taken), makes sure the user token exists in `$PASEO_HOME/mcp-token` (0600, created once
    /// and kept), and removes a stale `mcp.json` so nobody reads an old URL before
    /// [`McpServer::serve`] writes the new one.
    pub fn bind(layout: &Layout, port: Option<u16>) -> Result<McpServer, McpError> {
        crate::store::atomic::ensure_dir(&layout.home)
            .map_err(io(format!("create {}", layout.home.display())))?;
        remove_durable(&layout.mcp_json_path())
            .map_err(io(format!("remove {}", layout.mcp_json_path().display())))?;
        let listener = match port.filter(|p| *p != 0) {
            Some(p) => match std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, p)) {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!("MCP port {p} is not available ({e}); using a free port");
                    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                        .map_err(io("bind a loopback port"))?
                }
            },
            None => std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .map_err(io("bind a loopback port"))?,
        };
        listener
            .set_nonblocking(true)
            .map_err(io("configure the MCP listener"))?;
        let addr = listener
            .local_addr()
            .map_err(io("read the MCP listener's address"))?;
        let user = tokens::ensure_user_token(&layout.mcp_token_path())
            .map_err(io(format!("write {}", layout.mcp_token_path().display())))?;
        let secrets = layout.secrets_dir();
        tokens::prepare_secrets_dir(&secrets)
            .map_err(io(format!("prepare {}", secrets.display())))?;
        let url = format!("http://127.0.0.1:{}/mcp", addr.port());
        Ok(McpServer {
            layout: layout.clone(),
            listener,
            addr,
            tokens: Arc::new(Tokens::new(url, user, secrets)),
        })
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.addr.port())
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The token registry as the runtime's [`AgentAccess`] (pass it to `Runtime::start`).
    pub fn access(&self) -> Arc<dyn AgentAccess> {
        self.tokens.clone()
    }

    pub fn tokens(&self) -> Arc<Tokens> {
        self.tokens.clone()
    }

    /// Starts serving the tools on `handle`, then writes `$PASEO_HOME/mcp.json` atomically with
    /// `{"url": …}` (the listener already accepts connections when it appears).
    pub async fn serve(self, handle: Server) -> Result<RunningMcp, McpError> {
        let url = self.url();
        let listener = tokio::net::TcpListener::from_std(self.listener)
            .map_err(io("register the MCP listener"))?;
        let ct = CancellationToken::new();
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(false)
            .with_cancellation_token(ct.child_token())
            .with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
            .with_allowed_origins(["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
            .enforce_origin_validation();
        let tools = PaseoTools::new(handle);
        let service: StreamableHttpService<PaseoTools, NeverSessionManager> =
            StreamableHttpService::new(move || Ok(tools.clone()), Default::default(), config);
        let app = axum::Router::new().route_service("/mcp", service).layer(
            axum::middleware::from_fn_with_state(self.tokens.clone(), authenticate),
        );
        let stop = ct.clone();
        let task = tokio::spawn(async move {
            let r = axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await;
            if let Err(e) = r {
                tracing::error!("the MCP server stopped: {e}");
            }
        });
        let path = self.layout.mcp_json_path();
        let body = serde_json::to_vec(&serde_json::json!({ "url": url }))
            .map_err(|e| io("encode mcp.json")(std::io::Error::other(e)))?;
        let p = path.clone();
        let written = tokio::task::spawn_blocking(move || write_atomic(&p, &body))
            .await
            .map_err(|e| io("write mcp.json")(std::io::Error::other(e)))
            .and_then(|r| r.map_err(io(format!("write {}", path.display()))));
        if let Err(e) = written {
            ct.cancel();
            let _ = task.await;
            return Err(e);
        }
        tracing::info!(%url, "MCP server listening");
        Ok(RunningMcp {
            url,
            mcp_json: path,
            ct,
            task: Some(task),
            tokens: self.tokens,
        })
    }
}

/// A serving MCP server. Dropping it stops serving; [`RunningMcp::shutdown`] also waits for the
/// server to end and removes `mcp.json`.
pub struct RunningMcp {
    url: String,
    mcp_json: PathBuf,
    ct: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
    tokens: Arc<Tokens>,
}

impl RunningMcp {
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn tokens(&self) -> Arc<Tokens> {
        self.tokens.clone()
    }

    /// Stops accepting requests, lets in-flight ones end (bounded), and removes `mcp.json` if
    /// it still names this server.
    pub async fn shutdown(mut self) {
        self.ct.cancel();
        if let Some(mut task) = self.task.take() {
            if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
            {
                tracing::warn!(
                    "MCP requests still running after {SHUTDOWN_GRACE:?}; dropping them"
                );
                task.abort();
            }
        }
        let path = self.mcp_json.clone();
        let url = self.url.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let ours = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|v| v["url"] == url.as_str());
            if ours {
                if let Err(e) = remove_durable(&path) {
                    tracing::warn!("cannot remove {}: {e}", path.display());
                }
            }
        })
        .await;
        tracing::info!("MCP server stopped");
    }
}

impl Drop for RunningMcp {
    fn drop(&mut self) {
        self.ct.cancel();
    }
}

fn bearer(req: &Request) -> Option<&str> {
    let v = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Lets a request through only with a known bearer token, stamping it with the [`Caller`] the
/// tools read. Everything else gets 401 before any MCP processing.
async fn authenticate(State(tokens): State<Arc<Tokens>>, mut req: Request, next: Next) -> Response {
    let caller = bearer(&req).and_then(|t| tokens.caller(t));
    let Some(caller) = caller else {
        let why = if bearer(&req).is_some() {
            "invalid or revoked token"
        } else {
            "missing bearer token"
        };
        tracing::info!(method = %req.method(), "MCP request refused: {why}");
        let mut r = (
            StatusCode::UNAUTHORIZED,
            [(header::CONTENT_TYPE, "application/json")],
            serde_json::json!({"error": "unauthorized", "message": why}).to_string(),
        )
            .into_response();
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"paseo\""),
        );
        return r;
    };
    req.extensions_mut().insert(caller);
    next.run(req).await
}
