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
use paseo_core::runtime::{
    AgentSnapshot, CreateAgent, Runtime, RuntimeHandle, RuntimeOptions, WorkspaceTarget,
};
use paseo_core::store::Layout;
use support::git::git;
use support::scripted::{Env, Scripted};

mod changes;
mod existing;
mod limits;
mod powers;
mod reach;
mod reattach;
mod secrets;

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

    fn h(&self) -> RuntimeHandle {
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
        let mut r = CreateAgent::new(
            "script",
            WorkspaceTarget::Existing {
                id: self.ws.clone(),
                cwd: None,
            },
        );
        r.initial_prompt = Some(prompt.to_string());
        r.title = Some(format!("root {prompt}"));
        r.unconfined = unconfined;
        let a = self.h().create(r).await.unwrap();
        if prompt != "hang" {
            self.idle(a.id()).await;
        }
        a
    }

    /// Waits until the agent is idle with nothing queued (notices included).
    async fn idle(&self, id: AgentId) -> AgentSnapshot {
        let deadline = tokio::time::Instant::now() + T;
        loop {
            let w = self.h().wait(id, T).await.unwrap();
            if w.agent.status == Status::Idle && w.agent.queued_notices == 0 {
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

// ------------------------------------------------------------------ tests

#[tokio::test]
async fn tools_are_listed_with_schemas_from_the_rust_types() {
    let h = Harness::start().await;
    let c = h.user().await;
    let info = c.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "paseo");
    let tools = c.list_all_tools().await.unwrap();
    let names: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "create_agent",
            "send_agent_prompt",
            "wait_for_agent",
            "get_agent",
            "get_agent_changes",
            "list_agents",
            "cancel_agent",
            "archive_agent",
            "create_worktree"
        ])
    );
    let create = tools.iter().find(|t| t.name == "create_agent").unwrap();
    let schema = Value::Object((*create.input_schema).clone());
    assert_eq!(schema["type"], "object");
    let required: BTreeSet<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        required,
        BTreeSet::from(["provider", "initialPrompt", "relationship", "workspace"])
    );
    // The tagged unions are in the schema (kinds as constants).
    let s = schema.to_string();
    for k in [
        "subagent",
        "detached",
        "current",
        "create",
        "directory",
        "worktree",
        "branch-off",
        "checkout-branch",
        "newBranch",
    ] {
        assert!(s.contains(k), "{k} missing from the create_agent schema");
    }
    assert!(create.output_schema.is_some());
    // Inlined: some clients' schema converters do not follow references.
    for t in &tools {
        let s = Value::Object((*t.input_schema).clone()).to_string();
        assert!(
            !s.contains("$ref") && !s.contains("$defs"),
            "{}: {s}",
            t.name
        );
    }
    drop(c);
    h.stop().await;
}

/// What a Claude Code agent is given pre-approved is exactly what the server serves (SPEC 9:
/// the app's own tools never wait on a permission prompt): one list, read from the tools.
#[tokio::test]
async fn the_pre_approved_tools_are_the_served_tools() {
    let h = Harness::start().await;
    let c = h.user().await;
    let served: BTreeSet<String> = c
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    let a = h.root("ok hi").await;
    h.token(a.id()).await;
    // What the agent's session was given: the claude provider pre-approves exactly these.
    let given = h.seen.lock().unwrap()[&a.id()].clone();
    let approved: BTreeSet<String> = given.tools.iter().cloned().collect();
    assert!(served.contains("get_agent_changes"));
    assert_eq!(approved, served);
    drop(c);
    h.stop().await;
}

#[tokio::test]
async fn an_agent_creates_a_subagent_in_its_workspace_and_hears_when_it_finishes() {
    let h = Harness::start().await;
    let mut r = CreateAgent::new(
        "script",
        WorkspaceTarget::Existing {
            id: h.ws.clone(),
            cwd: None,
        },
    );
    r.initial_prompt = Some("ok planning".into());
    r.model = Some("m-parent".into());
    r.mode = Some("plan".into());
    let parent = h.h().create(r).await.unwrap();
    h.idle(parent.id()).await;
    let sub = h.env.work.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let c = h.as_agent(parent.id()).await;
    let out = ok(
        &c,
        "create_agent",
        json!({
            "provider": "script",
            "title": "kid-1",
            "initialPrompt": "ok tests pass",
            "relationship": {"kind": "subagent"},
            "workspace": {"kind": "current"}
        }),
    )
    .await;
    // At once: initializing, in the parent's workspace and cwd.
    assert_eq!(out["status"], "initializing");
    assert_eq!(out["workspaceId"], h.ws.to_string());
    assert_eq!(out["cwd"], parent.record.cwd.as_str());
    assert_eq!(out["parentAgentId"], parent.id().to_string());
    let kid = id_of(&out);
    let snap = h.h().get(kid).await.unwrap();
    assert_eq!(snap.record.labels[PARENT_LABEL], parent.id().to_string());
    assert_eq!(snap.record.created_by, Some(parent.id()));
    assert_eq!(snap.record.title, "kid-1");
    // Same provider: the caller's model and mode are inherited.
    assert_eq!(snap.record.config.model.as_deref(), Some("m-parent"));
    assert_eq!(snap.record.config.mode.as_deref(), Some("plan"));
    // The parent gets the finish notice as its next turn.
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let got = h.env.log.lock().unwrap().inputs.iter().any(|(a, i)| {
            *a == parent.id()
                && matches!(i, paseo_core::providers::TurnInput::Notice(t) if t.contains(&kid.to_string()) && t.contains("tests pass"))
        });
        if got {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no notice");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Another cwd inside the workspace, and notifyOnFinish off.
    let out = ok(
        &c,
        "create_agent",
        json!({
            "provider": "script",
            "initialPrompt": "ok second",
            "relationship": {"kind": "subagent"},
            "workspace": {"kind": "current", "cwd": sub.display().to_string()},
            "notifyOnFinish": false,
            "labels": {"team": "qa"},
            "model": "m-own"
        }),
    )
    .await;
    assert_eq!(
        out["cwd"],
        sub.canonicalize().unwrap().display().to_string()
    );
    let second = h.h().get(id_of(&out)).await.unwrap();
    assert!(!second.record.notify_on_finish);
    assert_eq!(&second.record.labels["team"], "qa");
    assert_eq!(second.record.config.model.as_deref(), Some("m-own"));
    assert_eq!(second.record.config.mode.as_deref(), Some("plan"));
    // Another provider: its own defaults.
    let out = ok(
        &c,
        "create_agent",
        json!({"provider": "mute", "initialPrompt": "ok third", "relationship": {"kind": "detached"},
               "workspace": {"kind": "current"}, "notifyOnFinish": false}),
    )
    .await;
    let third = h.h().get(id_of(&out)).await.unwrap();
    assert_eq!(third.record.config.model, None);
    assert_eq!(third.record.config.mode, None);
    assert_eq!(third.parent_agent_id, None);
    assert_eq!(
        third.record.workspace_id.as_ref(),
        Some(&h.ws),
        "detached, in the caller's workspace"
    );
    h.stop().await;
}

#[tokio::test]
async fn every_tool_works_end_to_end() {
    let h = Harness::start().await;
    // Unconfined with full power: it reaches every directory, so nothing here is held.
    let lead = h.root_as("ok lead", true).await;
    let c = h.as_agent(lead.id()).await;
    let r = repo(&h);

    // create_agent: detached, in a new directory workspace, model inherited from nobody.
    let dir = h.env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&dir).unwrap();
    let det = ok(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok detached done",
               "relationship": {"kind": "detached"},
               "workspace": {"kind": "create", "source": {"kind": "directory", "path": dir.display().to_string()}},
               "model": "m-1"}),
    )
    .await;
    let det_id = id_of(&det);
    assert_ne!(det["workspaceId"], h.ws.to_string());
    assert!(det.get("parentAgentId").is_none());
    let snap = h.h().get(det_id).await.unwrap();
    assert_eq!(snap.parent_agent_id, None);
    assert_eq!(snap.record.created_by, Some(lead.id()));
    assert_eq!(snap.record.config.model.as_deref(), Some("m-1"));

    // wait_for_agent: the first turn's result.
    let w = ok(
        &c,
        "wait_for_agent",
        json!({"agentId": det_id.to_string(), "timeoutSeconds": 10}),
    )
    .await;
    assert_eq!(w["status"], "idle");
    assert_eq!(w["lastMessage"], "detached done");
    assert_eq!(w["timedOut"], false);

    // create_agent in a new worktree (repo given), then create_worktree with the default repo.
    let wt = ok(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok in worktree",
               "relationship": {"kind": "subagent"},
               "workspace": {"kind": "create", "source": {"kind": "worktree", "repo": r.display().to_string(),
                   "target": {"kind": "branch-off", "newBranch": "feat/a"}}}}),
    )
    .await;
    let wt_cwd = wt["cwd"].as_str().unwrap().to_string();
    assert!(
        wt_cwd.starts_with(&h.env.home().join("worktrees").display().to_string()),
        "{wt_cwd}"
    );
    assert!(std::path::Path::new(&wt_cwd).join(".git").exists());
    let wt_id: WorkspaceId = wt["workspaceId"].as_str().unwrap().parse().unwrap();
    let ws_rec = h
        .h()
        .snapshot()
        .await
        .unwrap()
        .workspaces
        .into_iter()
        .find(|w| w.record.workspace_id == wt_id)
        .unwrap()
        .record;
    assert_eq!(ws_rec.branch.as_deref(), Some("feat/a"));
    assert_eq!(ws_rec.created_by_agent_id, Some(lead.id()));

    let repo_agent = h
        .h()
        .create({
            let mut r2 = CreateAgent::new(
                "script",
                WorkspaceTarget::Existing {
                    id: h.ws.clone(),
                    cwd: Some(r.display().to_string()),
                },
            );
            r2.initial_prompt = Some("ok in repo".into());
            r2
        })
        .await
        .unwrap();
    h.idle(repo_agent.id()).await;
    let rc = h.as_agent(repo_agent.id()).await;
    let made = ok(
        &rc,
        "create_worktree",
        json!({"target": {"kind": "branch-off", "newBranch": "feat/b", "base": "main"}}),
    )
    .await;
    assert_eq!(made["branch"], "feat/b");
    assert!(std::path::Path::new(made["cwd"].as_str().unwrap()).is_dir());
    git(&r, &["branch", "feat/c"]);
    let made = ok(
        &rc,
        "create_worktree",
        json!({"repo": r.display().to_string(), "target": {"kind": "checkout-branch", "branch": "feat/c"}}),
    )
    .await;
    assert_eq!(made["branch"], "feat/c");

    // send_agent_prompt: background (default for agents) then foreground.
    let kid = id_of(&wt);
    h.idle(kid).await;
    let s = ok(
        &c,
        "send_agent_prompt",
        json!({"agentId": kid.to_string(), "prompt": "ok again"}),
    )
    .await;
    assert_eq!(s["background"], true);
    assert!(s.get("lastMessage").is_none());
    h.idle(kid).await;
    assert_eq!(
        h.h().get(kid).await.unwrap().record.last_message.as_deref(),
        Some("again")
    );
    let s = ok(
        &c,
        "send_agent_prompt",
        json!({"agentId": kid.to_string(), "prompt": "ok in the foreground", "background": false}),
    )
    .await;
    assert_eq!(s["background"], false);
    assert_eq!(s["status"], "idle");
    assert_eq!(s["lastMessage"], "in the foreground");
    assert_eq!(s["timedOut"], false);

    // get_agent and list_agents.
    let g = ok(&c, "get_agent", json!({"agentId": kid.to_string()})).await;
    assert_eq!(g["id"], kid.to_string());
    assert_eq!(g["parentAgentId"], lead.id().to_string());
    assert_eq!(g["status"], "idle");
    assert!(g["archivedAt"].is_null());
    assert_eq!(g["labels"][PARENT_LABEL], lead.id().to_string());
    let l = ok(
        &c,
        "list_agents",
        json!({"parentAgentId": lead.id().to_string()}),
    )
    .await;
    assert_eq!(l["total"], 1);
    assert_eq!(l["agents"][0]["id"], kid.to_string());
    let l = ok(&c, "list_agents", json!({})).await;
    assert_eq!(l["total"], 4);
    let l = ok(&c, "list_agents", json!({"limit": 2})).await;
    assert_eq!(l["total"], 4);
    assert_eq!(l["agents"].as_array().unwrap().len(), 2);
    assert_eq!(l["agents"][0]["id"], lead.id().to_string(), "oldest first");
    let l = ok(
        &c,
        "list_agents",
        json!({"workspaceId": det["workspaceId"]}),
    )
    .await;
    assert_eq!(l["total"], 1);
    let l = ok(&c, "list_agents", json!({"statuses": ["running", "error"]})).await;
    assert_eq!(l["total"], 0);

    // wait_for_agent times out on a long turn; cancel_agent ends it.
    ok(
        &c,
        "send_agent_prompt",
        json!({"agentId": kid.to_string(), "prompt": "hang", "notifyOnFinish": false}),
    )
    .await;
    let w = ok(
        &c,
        "wait_for_agent",
        json!({"agentId": kid.to_string(), "timeoutSeconds": 0.2}),
    )
    .await;
    assert_eq!(w["timedOut"], true);
    assert_eq!(w["status"], "running");
    let l = ok(&c, "list_agents", json!({"statuses": ["running"]})).await;
    assert_eq!(l["total"], 1);
    let x = ok(&c, "cancel_agent", json!({"agentId": kid.to_string()})).await;
    assert_eq!(x["status"], "idle");

    // archive_agent: the cascade, durable; detached agents stay.
    let a = ok(
        &c,
        "archive_agent",
        json!({"agentId": lead.id().to_string()}),
    )
    .await;
    let archived: BTreeSet<String> = a["archived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        archived,
        BTreeSet::from([lead.id().to_string(), kid.to_string()])
    );
    let k = h.h().get(kid).await.unwrap();
    let disk: Value = serde_json::from_slice(
        &std::fs::read(h.h().layout().record_path(&k.record.cwd, kid)).unwrap(),
    )
    .unwrap();
    assert!(disk["archivedAt"].is_string());
    assert!(h
        .h()
        .get(det_id)
        .await
        .unwrap()
        .record
        .archived_at
        .is_none());
    // Archived agents show only on request.
    let u = h.user().await;
    let l = ok(&u, "list_agents", json!({"includeArchived": true})).await;
    assert_eq!(l["total"], 4);
    let l = ok(&u, "list_agents", json!({})).await;
    assert_eq!(l["total"], 2);
    // Archiving again is idempotent.
    let a = ok(&u, "archive_agent", json!({"agentId": kid.to_string()})).await;
    assert_eq!(a["archived"], json!([]));
    h.stop().await;
}

#[tokio::test]
async fn invalid_input_names_the_field_and_changes_nothing() {
    let h = Harness::start().await;
    let lead = h.root("ok lead").await;
    let c = h.as_agent(lead.id()).await;
    let r = repo(&h);
    git(&r, &["branch", "taken"]);
    let outside = tempfile::tempdir().unwrap();
    let file = h.env.work.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let base = json!({"provider": "script", "initialPrompt": "ok",
                      "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}});
    let with = |patch: Value| {
        let mut v = base.clone();
        for (k, x) in patch.as_object().unwrap() {
            if x.is_null() {
                v.as_object_mut().unwrap().remove(k);
            } else {
                v[k] = x.clone();
            }
        }
        v
    };
    let wt = |target: Value| {
        with(
            json!({"workspace": {"kind": "create", "source": {"kind": "worktree",
            "repo": r.display().to_string(), "target": target}}}),
        )
    };
    let before_agents = h.count(true).await;
    let before_ws = h.h().snapshot().await.unwrap().workspaces.len();
    let missing = AgentId::new().to_string();
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "create_agent",
            with(json!({"provider": null})),
            "provider: is required",
        ),
        (
            "create_agent",
            with(json!({"provider": 3})),
            "provider: must be a string",
        ),
        (
            "create_agent",
            with(json!({"provider": "nope"})),
            "provider: unknown provider",
        ),
        (
            "create_agent",
            with(json!({"initialPrompt": null})),
            "initialPrompt: is required",
        ),
        (
            "create_agent",
            with(json!({"initialPrompt": " "})),
            "initialPrompt: must not be empty",
        ),
        (
            "create_agent",
            with(json!({"initialPrompt": "x".repeat(paseo_core::runtime::MAX_PROMPT_BYTES + 1)})),
            "initialPrompt: the prompt is",
        ),
        (
            "create_agent",
            with(json!({"title": "t".repeat(300)})),
            "title: longer than",
        ),
        (
            "create_agent",
            with(json!({"relationship": null})),
            "relationship: is required",
        ),
        (
            "create_agent",
            with(json!({"relationship": "subagent"})),
            "relationship: must be an object",
        ),
        (
            "create_agent",
            with(json!({"relationship": {}})),
            "relationship.kind: is required",
        ),
        (
            "create_agent",
            with(json!({"relationship": {"kind": "child"}})),
            "relationship.kind: unknown kind \"child\"",
        ),
        (
            "create_agent",
            with(json!({"workspace": null})),
            "workspace: is required",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "here"}})),
            "workspace.kind: unknown kind",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "current", "cwd": "relative"}})),
            "workspace.cwd: the path must be absolute",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "current", "cwd": outside.path().display().to_string()}}),
            ),
            "workspace.cwd:",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "current", "path": "/tmp"}})),
            "workspace.path: unknown field",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "create"}})),
            "workspace.source: is required",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "create", "source": {"kind": "directory"}}})),
            "workspace.source.path: is required",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "create", "source": {"kind": "directory", "path": "rel/dir"}}}),
            ),
            "workspace.source.path: the path must be absolute",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "create", "source": {"kind": "directory", "path": "/no/such/dir"}}}),
            ),
            "workspace.source.path: /no/such/dir does not exist",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "create", "source": {"kind": "directory", "path": file.display().to_string()}}}),
            ),
            "workspace.source.path:",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "create", "source": {"kind": "worktree", "repo": outside.path().display().to_string(), "target": {"kind": "branch-off", "newBranch": "x"}}}}),
            ),
            "workspace.source.repo:",
        ),
        (
            "create_agent",
            wt(json!({"kind": "branch-off"})),
            "workspace.source.target.newBranch: is required",
        ),
        (
            "create_agent",
            wt(json!({"kind": "branch-off", "newBranch": "taken"})),
            "workspace.source.target.newBranch: branch \"taken\" already exists",
        ),
        (
            "create_agent",
            wt(json!({"kind": "branch-off", "newBranch": "bad..name"})),
            "workspace.source.target.newBranch:",
        ),
        (
            "create_agent",
            wt(json!({"kind": "branch-off", "newBranch": "ok-1", "base": "nope"})),
            "workspace.source.target.base:",
        ),
        (
            "create_agent",
            wt(json!({"kind": "checkout-branch", "branch": "main"})),
            "workspace.source.target.branch: branch \"main\" is already checked out",
        ),
        (
            "create_agent",
            wt(json!({"kind": "checkout-branch", "branch": "ghost"})),
            "workspace.source.target.branch: branch \"ghost\" does not exist",
        ),
        (
            "create_agent",
            wt(json!({"kind": "merge"})),
            "workspace.source.target.kind: unknown kind",
        ),
        (
            "create_agent",
            with(json!({"notifyOnFinish": "yes"})),
            "notifyOnFinish: must be true or false",
        ),
        (
            "create_agent",
            with(json!({"autoArchive": 1})),
            "autoArchive: must be true or false",
        ),
        (
            "create_agent",
            with(json!({"labels": ["a"]})),
            "labels: must be an object",
        ),
        (
            "create_agent",
            with(json!({"labels": {"k": 1}})),
            "labels.k: must be a string",
        ),
        (
            "create_agent",
            with(json!({"labels": {PARENT_LABEL: lead.id().to_string()}})),
            "labels.paseo.parent-agent-id:",
        ),
        (
            "create_agent",
            with(json!({"cwd": "/tmp"})),
            "cwd: unknown field",
        ),
        (
            "send_agent_prompt",
            json!({"prompt": "ok"}),
            "agentId: is required",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": "not-a-uuid", "prompt": "ok"}),
            "agentId: \"not-a-uuid\" is not an agent id",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": missing, "prompt": "ok"}),
            "agentId: unknown agent",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": lead.id().to_string()}),
            "prompt: is required",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": lead.id().to_string(), "prompt": ""}),
            "prompt: must not be empty",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": lead.id().to_string(), "prompt": "ok", "background": "no"}),
            "background: must be true or false",
        ),
        ("wait_for_agent", json!({}), "agentId: is required"),
        (
            "wait_for_agent",
            json!({"agentId": missing}),
            "agentId: unknown agent",
        ),
        (
            "wait_for_agent",
            json!({"agentId": lead.id().to_string(), "timeoutSeconds": 601}),
            "timeoutSeconds: must be between 0 and 600",
        ),
        (
            "wait_for_agent",
            json!({"agentId": lead.id().to_string(), "timeoutSeconds": -1}),
            "timeoutSeconds: must be between 0 and 600",
        ),
        (
            "wait_for_agent",
            json!({"agentId": lead.id().to_string(), "timeoutSeconds": "30"}),
            "timeoutSeconds: must be a number",
        ),
        (
            "get_agent",
            json!({"agentId": 5}),
            "agentId: must be a string",
        ),
        (
            "get_agent",
            json!({"agentId": missing}),
            "agentId: unknown agent",
        ),
        (
            "get_agent",
            json!({"id": lead.id().to_string()}),
            "id: unknown field",
        ),
        (
            "list_agents",
            json!({"limit": 10_001}),
            "limit: must be a whole number from 0 to 10000",
        ),
        (
            "list_agents",
            json!({"limit": -1}),
            "limit: must be a whole number",
        ),
        (
            "list_agents",
            json!({"statuses": "idle"}),
            "statuses: must be an array",
        ),
        (
            "list_agents",
            json!({"statuses": ["idle", "sleeping"]}),
            "statuses[1]: unknown status \"sleeping\"",
        ),
        (
            "list_agents",
            json!({"parentAgentId": "x"}),
            "parentAgentId: \"x\" is not an agent id",
        ),
        (
            "list_agents",
            json!({"workspaceId": "../x"}),
            "workspaceId: invalid workspace id",
        ),
        (
            "list_agents",
            json!({"workspaceId": "no-such-ws"}),
            "workspaceId: unknown workspace no-such-ws",
        ),
        (
            "list_agents",
            json!({"parentAgentId": missing}),
            "parentAgentId: unknown agent",
        ),
        (
            "list_agents",
            json!({"includeArchived": "true"}),
            "includeArchived: must be true or false",
        ),
        (
            "cancel_agent",
            json!({"agentId": missing}),
            "agentId: unknown agent",
        ),
        (
            "archive_agent",
            json!({"agentId": "../../etc"}),
            "agentId: \"../../etc\" is not an agent id",
        ),
        (
            "archive_agent",
            json!({"agentId": missing}),
            "agentId: unknown agent",
        ),
        ("create_worktree", json!({}), "target: is required"),
        (
            "create_worktree",
            json!({"repo": r.display().to_string(), "target": {"kind": "branch-off", "newBranch": "taken"}}),
            "target.newBranch: branch \"taken\" already exists",
        ),
        (
            "create_worktree",
            json!({"repo": "relative", "target": {"kind": "branch-off", "newBranch": "n"}}),
            "repo: the path must be absolute",
        ),
        (
            "create_worktree",
            json!({"repo": r.display().to_string(), "target": {"kind": "checkout-branch", "newBranch": "n"}}),
            "target.newBranch: is not a field of kind \"checkout-branch\"",
        ),
    ];
    for (tool, args, want) in cases {
        let e = err(&c, tool, args.clone()).await;
        assert!(
            e.starts_with(want),
            "{tool} {args}:\n  got  {e}\n  want {want}…"
        );
    }
    // Nothing changed: no agent, no workspace, no worktree, no branch.
    assert_eq!(h.count(true).await, before_agents);
    assert_eq!(h.h().snapshot().await.unwrap().workspaces.len(), before_ws);
    assert!(
        !h.env.home().join("worktrees").exists()
            || std::fs::read_dir(h.env.home().join("worktrees"))
                .unwrap()
                .all(|e| std::fs::read_dir(e.unwrap().path())
                    .unwrap()
                    .next()
                    .is_none())
    );
    let branches = std::process::Command::new("git")
        .arg("-C")
        .arg(&r)
        .args(["branch", "--list"])
        .output()
        .unwrap();
    let branches = String::from_utf8_lossy(&branches.stdout);
    assert_eq!(branches.lines().count(), 2, "{branches}");
    assert_eq!(h.h().get(lead.id()).await.unwrap().record.turn_count, 1);
    h.stop().await;
}

/// Sends one raw JSON-RPC POST; returns the status and body.
async fn raw_post(
    url: &str,
    token: Option<&str>,
    extra: &[(&str, &str)],
    body: &Value,
) -> (u16, String) {
    let mut rq = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(t) = token {
        rq = rq.header("authorization", format!("Bearer {t}"));
    }
    for (k, v) in extra {
        rq = rq.header(*k, *v);
    }
    let r = rq.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

fn create_call(h: &Harness) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_agent",
        "arguments": {"provider": "script", "initialPrompt": "ok raw",
            "relationship": {"kind": "detached"},
            "workspace": {"kind": "create", "source": {"kind": "directory", "path": h.env.work.display().to_string()}}}}})
}

#[tokio::test]
async fn requests_without_a_valid_token_get_401_and_change_nothing() {
    let h = Harness::start().await;
    let lead = h.root("ok lead").await;
    let lead_token = h.token(lead.id()).await;
    let body = create_call(&h);
    let before = h.count(true).await;

    // The rmcp client cannot even initialize.
    for t in [None, Some("wrong"), Some(&"0".repeat(64)[..])] {
        let Err(e) = client(&h.url, t).await else {
            panic!("a client with token {t:?} was accepted")
        };
        assert!(
            e.contains("401")
                || e.to_lowercase().contains("unauthorized")
                || e.to_lowercase().contains("auth"),
            "{e}"
        );
    }
    // Raw HTTP: missing, wrong scheme, wrong token.
    for (t, extra) in [
        (None, vec![]),
        (Some("not-the-token"), vec![]),
        (None, vec![("authorization", "Basic dXNlcjpwYXNz")]),
    ] {
        let (status, text) = raw_post(&h.url, t, &extra, &body).await;
        assert_eq!(status, 401, "{text}");
    }
    // A revoked token: the agent is archived, its token stops working.
    let c = h.as_agent(lead.id()).await;
    let (status, _) = raw_post(
        &h.url,
        Some(&lead_token),
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, 200);
    h.h().archive(Caller::User, lead.id()).await.unwrap();
    let (status, _) = raw_post(&h.url, Some(&lead_token), &[], &body).await;
    assert_eq!(status, 401);
    let p = c.call_tool(CallToolRequestParams::new("list_agents")).await;
    assert!(
        p.is_err(),
        "an open client with a revoked token is refused too"
    );
    // A reissued token replaces the old one: resume an agent and the previous token fails.
    let other = h.root("ok other").await;
    let t1 = h.token(other.id()).await;
    h.h().stop(other.id()).await.unwrap();
    // SPEC 14: a token works only while its agent has a runtime, not until archive.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, _) = raw_post(&h.url, Some(&t1), &[], &list).await;
    assert_eq!(status, 401, "a stopped agent's token still worked");
    h.seen.lock().unwrap().remove(&other.id());
    h.h()
        .prompt(Caller::User, other.id(), "ok back".into(), None, None)
        .await
        .unwrap();
    let t2 = h.token(other.id()).await;
    assert_ne!(t1, t2);
    // The agent has a runtime again, so the one request, sent with each token, tells the two
    // apart by the token alone: the new one is served, the replaced one refused (SPEC 14).
    let (status, text) = raw_post(&h.url, Some(&t2), &[], &list).await;
    assert_eq!(
        status, 200,
        "the resumed agent's new token is refused: {text}"
    );
    assert!(text.contains("create_agent"), "{text}");
    let (status, text) = raw_post(&h.url, Some(&t1), &[], &list).await;
    assert_eq!(status, 401, "the replaced token still works: {text}");
    let (status, _) = raw_post(&h.url, Some(&t1), &[], &body).await;
    assert_eq!(status, 401);
    // Refusing the old token did not disturb the new one.
    let (status, _) = raw_post(&h.url, Some(&t2), &[], &list).await;
    assert_eq!(status, 200);
    let before_other = h.count(true).await;
    assert_eq!(before_other, before + 1);

    // Raw TCP, no client library at all.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let port = h
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp");
    let mut s = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let b = body.to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
        "f".repeat(64),
        b.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).await.unwrap();
    assert!(resp.starts_with("HTTP/1.1 401"), "{resp}");
    assert!(
        resp.to_lowercase().contains("www-authenticate: bearer"),
        "{resp}"
    );

    // Nothing was created by any refused request.
    assert_eq!(h.count(true).await, before_other);
    // The same raw request with the user token works: the token was the only problem.
    let (status, text) = raw_post(&h.url, Some(&h.user), &[], &body).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("agentId"), "{text}");
    assert_eq!(h.count(true).await, before_other + 1);
    h.stop().await;
}

#[tokio::test]
async fn host_and_origin_must_be_loopback() {
    let h = Harness::start().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (s, _) = raw_post(&h.url, Some(&h.user), &[("host", "evil.example")], &body).await;
    assert_eq!(s, 403);
    let (s, _) = raw_post(
        &h.url,
        Some(&h.user),
        &[("origin", "http://evil.example")],
        &body,
    )
    .await;
    assert_eq!(s, 403);
    let port = h
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .to_string();
    let origin = format!("http://127.0.0.1:{port}");
    let (s, _) = raw_post(&h.url, Some(&h.user), &[("origin", &origin)], &body).await;
    assert_eq!(s, 200);
    let (s, t) = raw_post(&h.url, Some(&h.user), &[], &body).await;
    assert_eq!(s, 200);
    assert!(t.contains("create_agent"));
    h.stop().await;
}

#[tokio::test]
async fn an_agent_may_mutate_only_itself_its_descendants_and_agents_it_created() {
    let h = Harness::start().await;
    let a = h.root("ok a").await;
    let b = h.root("ok b").await;
    let ca = h.as_agent(a.id()).await;
    let cb = h.as_agent(b.id()).await;
    let mk = |rel: &str, prompt: &str| {
        json!({"provider": "script", "initialPrompt": prompt, "relationship": {"kind": rel},
               "workspace": {"kind": "current"}, "notifyOnFinish": false})
    };
    let child = id_of(&ok(&ca, "create_agent", mk("subagent", "ok child")).await);
    let detached = id_of(&ok(&ca, "create_agent", mk("detached", "ok det")).await);
    h.idle(child).await;
    let cc = h.as_agent(child).await;
    let grandchild = id_of(&ok(&cc, "create_agent", mk("subagent", "ok grand")).await);
    h.idle(grandchild).await;
    h.idle(detached).await;

    // B reads anything but mutates nothing of A's.
    for t in [a.id(), child, detached, grandchild] {
        ok(&cb, "get_agent", json!({"agentId": t.to_string()})).await;
        ok(
            &cb,
            "wait_for_agent",
            json!({"agentId": t.to_string(), "timeoutSeconds": 1}),
        )
        .await;
        for (tool, verb, extra) in [
            ("send_agent_prompt", "prompt", json!({"prompt": "ok nope"})),
            ("cancel_agent", "cancel", json!({})),
            ("archive_agent", "archive", json!({})),
        ] {
            let mut args = extra.clone();
            args["agentId"] = json!(t.to_string());
            let e = err(&cb, tool, args).await;
            assert!(
                e.starts_with(&format!(
                    "agentId: agent {} may not {verb} agent {t}",
                    b.id()
                )),
                "{e}"
            );
        }
    }
    // The child may not act on its parent, nor on the detached sibling.
    let e = err(
        &cc,
        "send_agent_prompt",
        json!({"agentId": a.id().to_string(), "prompt": "ok up"}),
    )
    .await;
    assert!(e.contains("may not prompt"), "{e}");
    let e = err(
        &cc,
        "archive_agent",
        json!({"agentId": detached.to_string()}),
    )
    .await;
    assert!(e.contains("may not archive"), "{e}");
    // Nothing changed.
    for t in [a.id(), child, detached, grandchild] {
        let s = h.h().get(t).await.unwrap();
        assert!(s.record.archived_at.is_none());
        assert_eq!(s.record.turn_count, 1, "{t} got no extra turn");
    }
    // A may prompt its child, its grandchild (descendant) and its detached agent (created).
    for t in [child, grandchild, detached] {
        let s = ok(
            &ca,
            "send_agent_prompt",
            json!({"agentId": t.to_string(), "prompt": "ok yes", "background": false}),
        )
        .await;
        assert_eq!(s["lastMessage"], "yes");
    }
    // The child may act on itself and its own child.
    ok(&cc, "send_agent_prompt", json!({"agentId": grandchild.to_string(), "prompt": "ok from parent", "notifyOnFinish": false})).await;
    // A archives itself: the cascade takes child and grandchild, not the detached agent.
    let out = ok(&ca, "archive_agent", json!({"agentId": a.id().to_string()})).await;
    let got: BTreeSet<String> = out["archived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        got,
        BTreeSet::from([
            a.id().to_string(),
            child.to_string(),
            grandchild.to_string()
        ])
    );
    assert!(h
        .h()
        .get(detached)
        .await
        .unwrap()
        .record
        .archived_at
        .is_none());
    // The user token may act on any agent.
    let u = h.user().await;
    ok(
        &u,
        "archive_agent",
        json!({"agentId": detached.to_string()}),
    )
    .await;
    ok(
        &u,
        "send_agent_prompt",
        json!({"agentId": b.id().to_string(), "prompt": "ok user"}),
    )
    .await;
    h.stop().await;
}

#[tokio::test]
async fn a_user_token_session_cannot_use_subagent_or_current() {
    let h = Harness::start().await;
    let u = h.user().await;
    let r = repo(&h);
    let before = h.count(true).await;
    let dir = json!({"kind": "create", "source": {"kind": "directory", "path": h.env.work.display().to_string()}});
    let e = err(
        &u,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok",
        "relationship": {"kind": "subagent"}, "workspace": dir}),
    )
    .await;
    assert!(
        e.starts_with("relationship.kind: \"subagent\" needs an agent-scoped session"),
        "{e}"
    );
    let e = err(
        &u,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok",
        "relationship": {"kind": "detached"}, "workspace": {"kind": "current"}}),
    )
    .await;
    assert!(
        e.starts_with("workspace.kind: \"current\" needs an agent-scoped session"),
        "{e}"
    );
    let e = err(&u, "create_agent", json!({"provider": "script", "initialPrompt": "ok",
        "relationship": {"kind": "detached"}, "workspace": {"kind": "create", "source": {"kind": "worktree",
        "target": {"kind": "branch-off", "newBranch": "x"}}}})).await;
    assert!(
        e.starts_with("workspace.source.repo: is required for a user-token session"),
        "{e}"
    );
    let e = err(
        &u,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok",
        "relationship": {"kind": "detached"}, "workspace": dir, "notifyOnFinish": true}),
    )
    .await;
    assert!(e.starts_with("notifyOnFinish:"), "{e}");
    let e = err(
        &u,
        "create_worktree",
        json!({"target": {"kind": "branch-off", "newBranch": "x"}}),
    )
    .await;
    assert!(
        e.starts_with("repo: is required for a user-token session"),
        "{e}"
    );
    assert_eq!(h.count(true).await, before);

    // What it can do: detached agents in new workspaces, worktrees with a repo; foreground
    // prompts by default; no notices.
    let out = ok(
        &u,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok by user",
        "relationship": {"kind": "detached"}, "workspace": dir}),
    )
    .await;
    let id = id_of(&out);
    let s = h.h().get(id).await.unwrap();
    assert_eq!(s.record.created_by, None);
    assert!(!s.record.notify_on_finish);
    h.idle(id).await;
    let p = ok(
        &u,
        "send_agent_prompt",
        json!({"agentId": id.to_string(), "prompt": "ok fg"}),
    )
    .await;
    assert_eq!(p["background"], false);
    assert_eq!(p["lastMessage"], "fg");
    let w = ok(&u, "create_worktree", json!({"repo": r.display().to_string(), "target": {"kind": "branch-off", "newBranch": "u/1"}})).await;
    assert_eq!(w["branch"], "u/1");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_agents_create_subagents_concurrently() {
    // The roots stand in for agents calling while idle, which only works while they keep their
    // sessions: room for all 100 (the live-agent limit has its own tests in limits.rs).
    let roomy = paseo_core::config::Limits {
        max_live_agents: 200,
        ..Default::default()
    };
    let h = Harness::start_limited(Env::new(), None, roomy).await;
    let mut roots = Vec::new();
    for i in 0..50 {
        roots.push(h.root(&format!("ok root-{i}")).await.id());
    }
    let mut tokens = Vec::new();
    for r in &roots {
        tokens.push(h.token(*r).await);
    }
    let url = h.url.clone();
    let mut tasks = Vec::new();
    for (i, t) in tokens.into_iter().enumerate() {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let c = client(&url, Some(&t)).await.unwrap();
            let v = ok(
                &c,
                "create_agent",
                json!({"provider": "script", "initialPrompt": format!("ok child-{i}"),
                       "title": format!("child-{i}"),
                       "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
            )
            .await;
            (
                i,
                id_of(&v),
                v["parentAgentId"].as_str().unwrap().to_string(),
            )
        }));
    }
    let mut kids = Vec::new();
    for t in tasks {
        kids.push(t.await.unwrap());
    }
    let unique: BTreeSet<AgentId> = kids.iter().map(|k| k.1).collect();
    assert_eq!(unique.len(), 50, "no duplicates");
    for (i, kid, parent) in &kids {
        assert_eq!(parent, &roots[*i].to_string());
        let (under, total) = h
            .h()
            .list(
                paseo_core::engine::ListFilter {
                    parent: Some(roots[*i]),
                    ..Default::default()
                },
                10,
            )
            .await
            .unwrap();
        assert_eq!(total, 1, "root {i} has exactly one child");
        assert_eq!(under[0].id(), *kid);
        assert_eq!(under[0].record.title, format!("child-{i}"));
    }
    assert_eq!(h.count(true).await, 100, "none lost, none extra");
    // And every parent hears from its own child.
    for (i, kid, _) in &kids {
        let w = h.h().wait(*kid, T).await.unwrap();
        assert_eq!(
            w.agent.record.last_message.as_deref(),
            Some(format!("child-{i}").as_str())
        );
    }
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let inputs = h.env.log.lock().unwrap().inputs.clone();
        let heard = kids
            .iter()
            .filter(|(i, kid, _)| {
                inputs.iter().any(|(a, inp)| {
                    *a == roots[*i]
                        && matches!(inp, paseo_core::providers::TurnInput::Notice(t) if t.contains(&kid.to_string()))
                })
            })
            .count();
        if heard == 50 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {heard} parents heard"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.stop().await;
}

#[tokio::test]
async fn headless_start_stop_keeps_state_and_the_user_token() {
    let env = Env::new();
    let home = env.home();
    let h = Harness::start_on(env, None).await;
    // What a script sees: mcp.json with the URL, mcp-token (0600) with the user token.
    let mcp_json: Value =
        serde_json::from_slice(&std::fs::read(home.join("mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp_json, json!({"url": h.url}));
    let token = std::fs::read_to_string(home.join("mcp-token"))
        .unwrap()
        .trim()
        .to_string();
    assert!(token.len() >= 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join("mcp-token"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }
    let c = client(mcp_json["url"].as_str().unwrap(), Some(&token))
        .await
        .unwrap();
    let dir = json!({"kind": "create", "source": {"kind": "directory", "path": h.env.work.display().to_string()}});
    let out = ok(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok survive",
        "title": "survivor", "relationship": {"kind": "detached"}, "workspace": dir}),
    )
    .await;
    let id = id_of(&out);
    let w = ok(&c, "wait_for_agent", json!({"agentId": id.to_string()})).await;
    assert_eq!(w["lastMessage"], "survive");
    drop(c);
    let old_url = h.url.clone();
    let env = h.stop().await;
    assert!(
        !home.join("mcp.json").exists(),
        "a clean stop removes mcp.json"
    );
    assert!(
        client(&old_url, Some(&token)).await.is_err(),
        "nothing serves any more"
    );

    // Again, on the same home: same token, same agents.
    let h = Harness::start_on(env, None).await;
    let token2 = std::fs::read_to_string(home.join("mcp-token"))
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(token2, token);
    let mcp_json: Value =
        serde_json::from_slice(&std::fs::read(home.join("mcp.json")).unwrap()).unwrap();
    let c = client(mcp_json["url"].as_str().unwrap(), Some(&token))
        .await
        .unwrap();
    let g = ok(&c, "get_agent", json!({"agentId": id.to_string()})).await;
    assert_eq!(g["title"], "survivor");
    assert_eq!(g["status"], "closed");
    assert_eq!(g["lastMessage"], "survive");
    let l = ok(&c, "list_agents", json!({})).await;
    assert_eq!(l["total"], 1);
    // It resumes on use.
    let p = ok(
        &c,
        "send_agent_prompt",
        json!({"agentId": id.to_string(), "prompt": "ok back again"}),
    )
    .await;
    assert_eq!(p["lastMessage"], "back again");
    drop(c);
    h.stop().await;
}

#[tokio::test]
async fn the_configured_port_is_used_or_a_free_one_when_taken() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path().join("home"));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let s = McpServer::bind(&layout, Some(port)).unwrap();
    assert_ne!(s.port(), port);
    drop(s);
    drop(taken);
    // A port that was just free is used as configured.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let s = McpServer::bind(&layout, Some(port)).unwrap();
    assert_eq!(s.port(), port);
    assert_eq!(s.url(), format!("http://127.0.0.1:{port}/mcp"));
    // A stale mcp.json from an earlier run is gone until serve writes the new one.
    drop(s);
    std::fs::write(
        layout.mcp_json_path(),
        r#"{"url":"http://127.0.0.1:1/mcp"}"#,
    )
    .unwrap();
    let _s = McpServer::bind(&layout, None).unwrap();
    assert!(!layout.mcp_json_path().exists());
}

/// docs/mcp.md's Tests section says how many tools there are, which commands run the tests and
/// where each named test is: all three as the code has them, so a reader's command runs them.
#[tokio::test]
async fn the_docs_count_the_served_tools_and_name_commands_that_run_the_tests() {
    let h = Harness::start().await;
    let c = h.user().await;
    let served = c.list_all_tools().await.unwrap().len();
    drop(c);
    h.stop().await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("../../docs/mcp.md")).unwrap();
    let tests = &doc[doc.find("## Tests").unwrap()..];
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    let count = tests
        .split("the ")
        .find_map(|s| {
            let (w, _) = s.split_once(" tools")?;
            words.iter().position(|x| *x == w)
        })
        .expect("the Tests section says how many tools there are");
    assert_eq!(
        count, served,
        "docs/mcp.md counts {count} tools, the server serves {served}"
    );

    // Every command names a test target that exists; the tests' sources are those targets'.
    let mut sources = String::new();
    let mut commands = 0;
    for part in tests.split("cargo test -p paseo-core").skip(1) {
        let args: Vec<&str> = part
            .split('`')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        assert_eq!(args.first(), Some(&"--test"), "not a test target: {args:?}");
        let target = args.get(1).copied().unwrap_or("");
        let dir = root.join("tests").join(target);
        let files: Vec<std::path::PathBuf> = if dir.is_dir() {
            std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect()
        } else {
            vec![root.join(format!("tests/{target}.rs"))]
        };
        for f in files {
            let text = std::fs::read_to_string(&f)
                .unwrap_or_else(|e| panic!("docs/mcp.md runs `--test {target}`: {e}"));
            let module = f.file_stem().unwrap().to_string_lossy().to_string();
            // A test in a module file is named with its module, as the table names it.
            sources.push_str(&text.replace("fn ", &format!("fn {module}::")));
            sources.push_str(&text);
        }
        commands += 1;
    }
    assert!(commands >= 2, "the Tests section names its commands");
    let mut rows = 0;
    for row in tests.lines().filter(|l| l.starts_with("| `")) {
        let name = row.split('`').nth(1).unwrap_or("");
        assert!(
            sources.contains(&format!("fn {name}(")),
            "docs/mcp.md names `{name}`, which none of its commands runs"
        );
        rows += 1;
    }
    assert!(rows > 10, "the table of tests was read");
}

#[tokio::test]
async fn the_docs_show_the_served_schemas() {
    let h = Harness::start().await;
    let c = h.user().await;
    let tools = c.list_all_tools().await.unwrap();
    let order = [
        "create_agent",
        "send_agent_prompt",
        "wait_for_agent",
        "get_agent",
        "get_agent_changes",
        "list_agents",
        "cancel_agent",
        "archive_agent",
        "create_worktree",
    ];
    let mut want = String::new();
    for name in order {
        let t = tools.iter().find(|t| t.name == name).unwrap();
        let schema =
            serde_json::to_string_pretty(&Value::Object((*t.input_schema).clone())).unwrap();
        want.push_str(&format!("\n### {name}\n\n```json\n{schema}\n```\n"));
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mcp.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = ("<!-- schemas:begin -->\n", "<!-- schemas:end -->");
    let a = doc.find(begin).unwrap() + begin.len();
    let b = doc.find(end).unwrap();
    if std::env::var_os("UPDATE_MCP_DOCS").is_some() {
        let new = format!("{}{}\n{}", &doc[..a], want.trim_start(), &doc[b..]);
        std::fs::write(&path, new).unwrap();
    } else {
        assert_eq!(
            doc[a..b].trim(),
            want.trim(),
            "docs/mcp.md is out of date: run UPDATE_MCP_DOCS=1 cargo test -p paseo-core --test mcp_tools the_docs_show"
        );
    }
    drop(c);
    h.stop().await;
}
