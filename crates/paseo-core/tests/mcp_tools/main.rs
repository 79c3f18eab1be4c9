//! MCP server tests: the real server on loopback, called with the official rmcp client (and
//! raw HTTP where the point is the HTTP layer), over the real runtime with real files and git.
//! Agents run on the runtime tests' scripted provider (prompt text is the script: `ok <text>`
//! completes, `hang` runs until interrupted), wrapped to record the MCP access each session
//! was given, as a real provider would put it in the agent's process.

#[path = "../support/mod.rs"]
mod support;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::mcp::{McpServer, RunningMcp};
use paseo_core::model::{AgentId, Status, WorkspaceId, PARENT_LABEL};
use paseo_core::providers::{
    EventSink, McpAccess, Provider, ProviderError, ProviderInfo, ProviderRegistry, Session,
    SessionSpec,
};
use paseo_core::runtime::Caller;
use paseo_core::runtime::{AgentSnapshot, CreateAgent, RuntimeOptions, WorkspaceTarget};
use paseo_core::server::{Runtime, Server};
use paseo_core::store::Layout;
use support::git::git;
use support::scripted::{Env, Scripted};
use support::Door;

// One module per tool family or concern; this file is the shared harness.
mod access;
mod budget;
mod catalog;
mod changes;
mod create;
mod end_to_end;
mod existing;
mod hosts;
mod invalid;
mod limits;
mod powers;
mod reach;
mod reattach;
mod secrets;
mod server;

type Client = RunningService<RoleClient, ClientConfig>;

const T: Duration = Duration::from_secs(20);

/// The scripted provider, recording the MCP access each session start received.
struct Capture {
    inner: Scripted,
    seen: Arc<Mutex<HashMap<AgentId, McpAccess>>>,
    /// The provider kind it stands for, when not the scripted one's (the power rule reads it).
    kind: Option<&'static str>,
}

impl Provider for Capture {
    fn info(&self) -> ProviderInfo {
        let mut info = self.inner.info();
        if let Some(k) = self.kind {
            info.kind = k.into();
        }
        info
    }
    fn start(
        &self,
        spec: SessionSpec,
        sink: EventSink,
    ) -> BoxFuture<'static, Result<Box<dyn Session>, ProviderError>> {
        if let Some(m) = &spec.mcp {
            self.seen.lock().unwrap().insert(spec.agent_id, m.clone());
        }
        self.inner.start(spec, sink)
    }
}

struct Harness {
    env: Env,
    rt: Option<Runtime>,
    mcp: Option<RunningMcp>,
    url: String,
    user: String,
    seen: Arc<Mutex<HashMap<AgentId, McpAccess>>>,
    ws: WorkspaceId,
}

impl Harness {
    async fn start() -> Harness {
        Harness::start_on(Env::new(), None).await
    }

    async fn start_on(env: Env, port: Option<u16>) -> Harness {
        Harness::start_limited(env, port, Default::default()).await
    }

    async fn start_limited(
        env: Env,
        port: Option<u16>,
        limits: paseo_core::config::Limits,
    ) -> Harness {
        let seen: Arc<Mutex<HashMap<AgentId, McpAccess>>> = Arc::default();
        let mut reg = ProviderRegistry::new();
        // `asker` stands for an agent that asks before it acts (a Claude Code kind: `asks`
        // unless its mode is bypassPermissions); the scripted ones have `full` power.
        for (id, reads, kind) in [
            ("script", true, None),
            ("mute", false, None),
            ("asker", true, Some("claude")),
        ] {
            reg.insert(
                id,
                Arc::new(Capture {
                    inner: Scripted {
                        id,
                        reads,
                        log: env.log.clone(),
                    },
                    seen: seen.clone(),
                    kind,
                }),
            );
        }
        // `claude-yolo`: a Claude Code provider the user configured to skip its permissions
        // (config.json `command`), so `full` whatever its agents' mode (SPEC 14).
        let mut yolo = ProviderConfig::new(ProviderKind::Claude);
        yolo.command = Some(vec![
            "claude".into(),
            "--dangerously-skip-permissions".into(),
        ]);
        reg.insert_configured(
            "claude-yolo",
            Arc::new(Capture {
                inner: Scripted {
                    id: "claude-yolo",
                    reads: true,
                    log: env.log.clone(),
                },
                seen: seen.clone(),
                kind: Some("claude"),
            }),
            yolo,
        );
        let layout = Layout::new(env.home());
        let server = McpServer::bind(&layout, port).unwrap();
        let mut opts = RuntimeOptions::new(env.home(), reg);
        opts.cancel_timeout = Duration::from_millis(300);
        opts.limits = limits;
        let rt = Runtime::start(opts, Some(server.access())).await.unwrap();
        let mcp = server.serve(rt.handle()).await.unwrap();
        rt.handle.deliver_pending().await.unwrap();
        let ws = rt
            .handle
            .add_workspace(env.work.display().to_string())
            .await
            .unwrap()
            .record
            .workspace_id;
        Harness {
            url: mcp.url().to_string(),
            user: mcp.tokens().user_token().to_string(),
            env,
            rt: Some(rt),
            mcp: Some(mcp),
            seen,
            ws,
        }
    }

    fn h(&self) -> Server {
        self.rt.as_ref().unwrap().handle()
    }

    async fn stop(mut self) -> Env {
        self.mcp.take().unwrap().shutdown().await;
        self.rt.take().unwrap().shutdown().await;
        self.env
    }

    async fn user(&self) -> Client {
        client(&self.url, Some(&self.user)).await.unwrap()
    }

    /// The token the agent's current session was given (waits for the session to start).
    async fn token(&self, id: AgentId) -> String {
        let deadline = tokio::time::Instant::now() + T;
        loop {
            if let Some(a) = self.seen.lock().unwrap().get(&id) {
                assert_eq!(a.url, self.url, "the provider got the server's URL");
                return a.token.clone();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no MCP access for {id}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn as_agent(&self, id: AgentId) -> Client {
        let t = self.token(id).await;
        client(&self.url, Some(&t)).await.unwrap()
    }

    /// A root agent the user made in the harness workspace, idle after `prompt`.
    async fn root(&self, prompt: &str) -> AgentSnapshot {
        self.root_as(prompt, false).await
    }

    /// The same, run unconfined (the user's choice, SPEC 16) when `unconfined`: with full
    /// power it may then start agents anywhere without being held (SPEC 14).
    async fn root_as(&self, prompt: &str, unconfined: bool) -> AgentSnapshot {
        let mut r = CreateAgent::new("script", WorkspaceTarget::existing(self.ws.clone()));
        r.initial_prompt = Some(prompt.to_string());
        r.title = Some(format!("root {prompt}"));
        r.unconfined = unconfined;
        let a = self.h().create(r).await.unwrap();
        if prompt != "hang" {
            self.idle(a.id()).await;
        }
        a
    }

    /// Waits until the agent is idle with nothing queued (notices included), or, its first turn
    /// held for the user, settled with no session (SPEC 14: nothing of it runs before Allow).
    async fn idle(&self, id: AgentId) -> AgentSnapshot {
        let deadline = tokio::time::Instant::now() + T;
        loop {
            let w = self.h().wait(id, T).await.unwrap();
            let held = w.agent.status == Status::Closed && w.agent.record.held_turn.is_some();
            if (w.agent.status == Status::Idle || held) && w.agent.queued_notices == 0 {
                return w.agent;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{id} never idle: {:?}",
                w.agent.status
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn count(&self, include_archived: bool) -> usize {
        let f = paseo_core::engine::ListFilter {
            include_archived,
            ..Default::default()
        };
        self.h().list(f, 100_000).await.unwrap().1
    }
}

async fn client(url: &str, token: Option<&str>) -> Result<Client, String> {
    let mut cfg = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(t) = token {
        cfg = cfg.auth_header(t.to_string());
    }
    let transport = StreamableHttpClientTransport::from_config(cfg);
    ClientConfig::default()
        .serve(transport)
        .await
        .map_err(|e| e.to_string())
}

async fn call(c: &Client, tool: &str, args: Value) -> CallToolResult {
    let mut p = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(m) = args {
        p = p.with_arguments(m);
    }
    c.call_tool(p).await.unwrap()
}

/// A successful call's structured content.
async fn ok(c: &Client, tool: &str, args: Value) -> Value {
    let r = call(c, tool, args.clone()).await;
    assert_ne!(
        r.is_error,
        Some(true),
        "{tool} {args} failed: {:?}",
        text(&r)
    );
    assert!(!text(&r).is_empty(), "{tool} has a text summary");
    r.structured_content.clone().expect("structured content")
}

/// A failed call's message (it must be a tool error, not a protocol error).
async fn err(c: &Client, tool: &str, args: Value) -> String {
    let r = call(c, tool, args.clone()).await;
    assert_eq!(
        r.is_error,
        Some(true),
        "{tool} {args} should fail: {:?}",
        r.structured_content
    );
    text(&r)
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn id_of(v: &Value) -> AgentId {
    v["agentId"].as_str().unwrap().parse().unwrap()
}

/// A git repository with one commit, inside the harness workspace.
fn repo(h: &Harness) -> std::path::PathBuf {
    let r = h.env.work.join("repo");
    std::fs::create_dir_all(&r).unwrap();
    git(&r, &["init", "-q", "-b", "main"]);
    git(&r, &["commit", "-q", "--allow-empty", "-m", "init"]);
    r
}
