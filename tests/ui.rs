//! The desktop UI end to end, in the real webview over WebDriver: tab close (archive with a
//! native confirm for a running root agent, layout-only for a subagent), the subagents track
//! (open, detach, archive X, "Archive finished"), several windows, workspace activity, the
//! archived list with restore, the layout kept per window across restarts, and the new-agent
//! form. Agents are real shell agents; subagents are created the way agents create them, through
//! the MCP server with the parent's own token. Each test checks what the DOM shows and, where it
//! matters, what is on disk.

mod common;

use common::{poll, tid, Answer, App, Harness, TIMEOUT};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// Helpers

/// A subagent a shell parent creates through MCP.
struct Kid {
    title: String,
    prompt: String,
    /// A directory for a new workspace ("create"), or None for the parent's ("current").
    directory: Option<PathBuf>,
}

fn kid(title: &str, prompt: &str) -> Kid {
    Kid {
        title: title.into(),
        prompt: prompt.into(),
        directory: None,
    }
}

/// A shell prompt that creates `kids` as subagents with the agent's own MCP token (curl speaking
/// streamable HTTP, as in the core's MCP tests), then runs `tail`. A refused call fails the turn.
fn spawn_script(kids: &[Kid], tail: &str) -> String {
    let mut script = String::from("set -e\ntest -n \"$PASEO_MCP_TOKEN\"\nbody=$(mktemp)\n");
    for k in kids {
        let workspace = match &k.directory {
            Some(dir) => json!({"kind": "create", "source": {"kind": "directory", "path": dir}}),
            None => json!({"kind": "current"}),
        };
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "create_agent", "arguments": {"provider": "shell", "title": k.title,
                "initialPrompt": k.prompt, "relationship": {"kind": "subagent"},
                "workspace": workspace}}});
        script.push_str(&format!(
            "cat > \"$body\" <<'PASEO_BODY'\n{body}\nPASEO_BODY\n\
             curl -sS -N --fail-with-body \"$PASEO_MCP_URL\" -H \"Authorization: Bearer $PASEO_MCP_TOKEN\" \
             -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
             --data-binary @\"$body\" | grep -q '\"agentId\"'\necho 'started {}'\n",
            k.title
        ));
    }
    script.push_str("rm -f \"$body\"\n");
    script.push_str(tail);
    script
}

/// A fresh directory beside the harness' data root (a place to work in).
fn work_dir(h: &Harness, name: &str) -> PathBuf {
    let dir = h.home().parent().unwrap().join("work").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

async fn launch(h: &Harness) -> App {
    let app = h.launch(&[]).await;
    app.wait_for_attr("body", "data-ready", "true").await;
    app
}

/// Creates an agent through the UI's backend seam (what the new-agent form calls).
async fn create(app: &App, form: Value) -> Value {
    let agent = app
        .call_ui("/backend.js", "createAgent", vec![form.clone()])
        .await;
    assert!(agent.get("error").is_none(), "create_agent {form}: {agent}");
    agent
}

async fn create_shell(app: &App, dir: &Path, title: &str, prompt: &str) -> Value {
    create(
        app,
        json!({"provider": "shell", "title": title, "prompt": prompt,
            "directory": dir.display().to_string(), "autoArchive": false}),
    )
    .await
}

async fn snapshot(app: &App) -> Value {
    app.call_ui("/backend.js", "fleetSnapshot", vec![]).await
}

/// The live agent `id` as the backend reports it (None once archived).
async fn agent(app: &App, id: &str) -> Option<Value> {
    snapshot(app).await["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
        .cloned()
}

/// Waits until the backend reports `id` with `status`.
async fn wait_status(app: &App, id: &str, status: &str) -> Value {
    poll(&format!("agent {id} to be {status}"), TIMEOUT, || async {
        agent(app, id).await.filter(|a| a["status"] == status)
    })
    .await
}

/// Waits until `parent` has `n` live subagents; returns them oldest first.
async fn wait_children(app: &App, parent: &str, n: usize) -> Vec<Value> {
    poll(&format!("{n} subagents of {parent}"), TIMEOUT, || async {
        let snap = snapshot(app).await;
        let kids: Vec<Value> = snap["agents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["parentAgentId"] == parent)
            .cloned()
            .collect();
        (kids.len() == n).then_some(kids)
    })
    .await
}

fn id(agent: &Value) -> String {
    agent["id"].as_str().unwrap().to_string()
}

fn by_title<'a>(agents: &'a [Value], title: &str) -> &'a Value {
    agents
        .iter()
        .find(|a| a["title"] == title)
        .unwrap_or_else(|| panic!("no agent titled {title} in {agents:?}"))
}

/// The agent's record file: `$PASEO_HOME/agents/<cwd-with-dashes>/<id>.json`.
fn record(home: &Path, id: &str) -> Value {
    let name = format!("{id}.json");
    for dir in std::fs::read_dir(home.join("agents")).unwrap().flatten() {
        let path = dir.path().join(&name);
        if path.exists() {
            return serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        }
    }
    panic!("no record for {id} under {}", home.display());
}

fn archived_on_disk(home: &Path, id: &str) -> bool {
    record(home, id)["archivedAt"].is_string()
}

/// Waits until the record of `id` on disk is archived (or not).
async fn wait_archived_on_disk(home: &Path, id: &str, archived: bool) {
    poll(
        &format!("record {id} archived={archived}"),
        TIMEOUT,
        || async { (archived_on_disk(home, id) == archived).then_some(()) },
    )
    .await
}

fn sel_tab(id: &str) -> String {
    format!("[data-testid=\"tab\"][data-agent-id=\"{id}\"]")
}

fn sel_row(id: &str) -> String {
    format!("[data-testid=\"track-row\"][data-agent-id=\"{id}\"]")
}

fn sel_ws(ws: &str) -> String {
    format!("[data-testid=\"workspace-row\"][data-workspace-id=\"{ws}\"]")
}

fn sel_pane(id: &str) -> String {
    format!("[data-testid=\"agent-pane\"][data-agent-id=\"{id}\"]")
}

/// The text of the first element matching `selector` (its DOM text; WebKitWebDriver's own
/// element text reads "" for elements that clip their overflow with an ellipsis).
async fn text(app: &App, selector: &str) -> Option<String> {
    let script =
        "const el = document.querySelector(arguments[0]); return el ? el.textContent : null;";
    app.execute(script, vec![json!(selector)])
        .await
        .as_str()
        .map(str::to_string)
}

/// Waits until the text of `selector` satisfies `check`; returns it.
async fn wait_text(app: &App, selector: &str, check: impl Fn(&str) -> bool) -> String {
    let mut last = None;
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let now = text(app, selector).await;
        if let Some(t) = now.as_deref().filter(|t| check(t)) {
            return t.to_string();
        }
        last = now.or(last);
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for the text of {selector}; last: {last:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn count(app: &App, selector: &str) -> usize {
    app.find_all(selector).await.len()
}

/// Waits until exactly `n` elements match `selector`.
async fn wait_count(app: &App, selector: &str, n: usize) {
    poll(&format!("{n} × {selector}"), TIMEOUT, || async {
        (count(app, selector).await == n).then_some(())
    })
    .await
}

/// Opens a root agent the way a user does: its workspace in the sidebar, then the agent in the
/// workspace's home tab.
async fn open_root(app: &App, agent: &Value) {
    app.click(&sel_ws(agent["workspaceId"].as_str().unwrap()))
        .await;
    app.click(&tid("tab-home")).await;
    app.click(&format!(
        "[data-testid=\"workspace-agent\"][data-agent-id=\"{}\"]",
        id(agent)
    ))
    .await;
    app.wait_for(&sel_pane(&id(agent))).await;
}

/// Clicks the × of an agent's tab (selecting the tab first, as its × shows on the active tab).
async fn click_tab_close(app: &App, id: &str) {
    app.click(&sel_tab(id)).await;
    app.wait_for_attr(&sel_tab(id), "aria-selected", "true")
        .await;
    app.click(&format!("{} [data-testid=\"tab-close\"]", sel_tab(id)))
        .await;
}

async fn row_action(app: &App, id: &str, action: &str) {
    app.click(&format!("{} [data-testid=\"{action}\"]", sel_row(id)))
        .await;
}

// ---------------------------------------------------------------------------------------------
// Tab close

#[tokio::test]
async fn closing_a_running_root_agents_tab_asks_first_and_archives_it_with_its_subagents() {
    let h = Harness::new("close_running_root_tab");
    let app = launch(&h).await;
    let dir = work_dir(&h, "app");
    let script = spawn_script(
        &[kid("kid-1", "sleep 300"), kid("kid-2", "echo kid two done")],
        "echo 'split into two parts'\nsleep 300",
    );
    let lead = create_shell(&app, &dir, "lead", &script).await;
    let lead_id = id(&lead);
    let kids = wait_children(&app, &lead_id, 2).await;
    open_root(&app, &lead).await;
    app.wait_for_attr(&sel_pane(&lead_id), "data-status", "running")
        .await;
    wait_count(&app, &tid("track-row"), 2).await;
    wait_text(&app, &tid("track-counts"), |t| t.contains("2 total")).await;
    app.screenshot("running-lead").await;

    // Cancel: everything stays as it was.
    app.click(&format!(
        "{} [data-testid=\"tab-close\"]",
        sel_tab(&lead_id)
    ))
    .await;
    h.answer_dialog("Archive running agent?", Answer::Cancel)
        .await;
    assert_eq!(count(&app, &sel_tab(&lead_id)).await, 1);
    assert_eq!(
        agent(&app, &lead_id).await.unwrap()["status"],
        json!("running")
    );
    assert!(!archived_on_disk(h.home(), &lead_id));
    for k in &kids {
        assert!(agent(&app, &id(k)).await.is_some());
    }

    // OK: the agent and its subagents are archived, on disk too, and the tab is gone.
    app.click(&format!(
        "{} [data-testid=\"tab-close\"]",
        sel_tab(&lead_id)
    ))
    .await;
    h.answer_dialog("Archive running agent?", Answer::Ok).await;
    wait_count(&app, &sel_tab(&lead_id), 0).await;
    for a in std::iter::once(&lead).chain(kids.iter()) {
        wait_archived_on_disk(h.home(), &id(a), true).await;
        let rec = record(h.home(), &id(a));
        assert_ne!(rec["lastStatus"], json!("running"), "{rec}");
    }
    assert!(agent(&app, &lead_id).await.is_none());
    app.screenshot("after-archive").await;
    app.quit().await;
}
