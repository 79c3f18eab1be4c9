//! What the UI tests share: shell parents that create subagents over MCP (as agents do), the
//! selectors of SPEC 13's `data-testid`s, opening agents and closing tabs the way a user does,
//! and the archive state of records on disk.

use crate::common::{poll, tid, App, Harness, TIMEOUT};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A harness for `test`, the app launched in it with its UI booted, and a folder "app" to work
/// in.
pub async fn start(test: &str) -> (Harness, App, PathBuf) {
    let h = Harness::new(test);
    let app = h.launch_ready(&[]).await;
    let dir = h.work_dir("app");
    (h, app, dir)
}

/// A subagent a shell parent creates through MCP.
pub struct Kid {
    pub title: String,
    pub prompt: String,
    /// A directory for a new workspace ("create"), or None for the parent's ("current").
    pub directory: Option<PathBuf>,
    /// A new worktree of this repository on a new branch (repo, branch), instead.
    pub worktree: Option<(PathBuf, String)>,
}

pub fn kid(title: &str, prompt: &str) -> Kid {
    Kid {
        title: title.into(),
        prompt: prompt.into(),
        directory: None,
        worktree: None,
    }
}

/// A shell prompt that creates `kids` as subagents with the agent's own MCP token (curl speaking
/// streamable HTTP, as in the core's MCP tests), then runs `tail`. A refused call fails the turn.
pub fn spawn_script(kids: &[Kid], tail: &str) -> String {
    let mut script = String::from("set -e\ntest -n \"$PASEO_MCP_TOKEN\"\nbody=$(mktemp)\n");
    for k in kids {
        let workspace = match (&k.directory, &k.worktree) {
            (_, Some((repo, branch))) => json!({"kind": "create", "source": {"kind": "worktree",
                "repo": repo, "target": {"kind": "branch-off", "newBranch": branch}}}),
            (Some(dir), None) => {
                json!({"kind": "create", "source": {"kind": "directory", "path": dir}})
            }
            (None, None) => json!({"kind": "current"}),
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

/// A shell agent "lead" and the subagents it created.
pub struct Family {
    pub lead: Value,
    pub lead_id: String,
    /// Oldest first.
    pub kids: Vec<Value>,
}

impl Family {
    /// The id of the subagent titled `title`.
    pub fn kid(&self, title: &str) -> String {
        id(by_title(&self.kids, title))
    }
}

/// Creates a shell agent "lead" in `dir` that creates `kids` (over MCP, as agents do) and then
/// runs `tail`; returns once all of them exist.
pub async fn family(app: &App, dir: &Path, kids: &[Kid], tail: &str) -> Family {
    let lead = app
        .create_shell(dir, "lead", &spawn_script(kids, tail))
        .await;
    let lead_id = id(&lead);
    let kids = wait_children(app, &lead_id, kids.len()).await;
    Family {
        lead,
        lead_id,
        kids,
    }
}

/// Waits until `parent` has `n` live subagents; returns them oldest first.
pub async fn wait_children(app: &App, parent: &str, n: usize) -> Vec<Value> {
    poll(&format!("{n} subagents of {parent}"), TIMEOUT, || async {
        let snap = app.fleet_snapshot().await;
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

pub fn id(agent: &Value) -> String {
    agent["id"].as_str().unwrap().to_string()
}

pub fn by_title<'a>(agents: &'a [Value], title: &str) -> &'a Value {
    agents
        .iter()
        .find(|a| a["title"] == title)
        .unwrap_or_else(|| panic!("no agent titled {title} in {agents:?}"))
}

/// The workspace id of an agent or a workspace.
pub fn ws_id(value: &Value) -> &str {
    value["workspaceId"].as_str().unwrap()
}

pub fn archived_on_disk(h: &Harness, id: &str) -> bool {
    h.agent_record(id)["archivedAt"].is_string()
}

/// Waits until the records of `ids` on disk are archived (or not).
pub async fn wait_archived_on_disk(h: &Harness, ids: &[&str], archived: bool) {
    for id in ids {
        poll(
            &format!("record {id} archived={archived}"),
            TIMEOUT,
            || async { (archived_on_disk(h, id) == archived).then_some(()) },
        )
        .await
    }
}

pub fn sel_tab(id: &str) -> String {
    format!("[data-testid=\"tab\"][data-agent-id=\"{id}\"]")
}

/// The × of an agent's tab.
pub fn sel_tab_close(id: &str) -> String {
    format!("{} {}", sel_tab(id), tid("tab-close"))
}

pub fn sel_row(id: &str) -> String {
    format!("[data-testid=\"track-row\"][data-agent-id=\"{id}\"]")
}

pub fn sel_ws(ws: &str) -> String {
    format!("[data-testid=\"workspace-row\"][data-workspace-id=\"{ws}\"]")
}

pub fn sel_pane(id: &str) -> String {
    format!("[data-testid=\"agent-pane\"][data-agent-id=\"{id}\"]")
}

/// Opens a root agent the way a user does: its workspace in the sidebar, then the agent in the
/// workspace's home tab.
pub async fn open_root(app: &App, agent: &Value) {
    app.click(&sel_ws(ws_id(agent))).await;
    app.click(&tid("tab-home")).await;
    app.click(&format!(
        "[data-testid=\"workspace-agent\"][data-agent-id=\"{}\"]",
        id(agent)
    ))
    .await;
    app.wait_for(&sel_pane(&id(agent))).await;
}

/// Clicks the × of an agent's tab (selecting the tab first, as its × shows on the active tab).
pub async fn click_tab_close(app: &App, id: &str) {
    app.click(&sel_tab(id)).await;
    app.wait_for_attr(&sel_tab(id), "aria-selected", "true")
        .await;
    app.click(&sel_tab_close(id)).await;
}

pub async fn row_action(app: &App, id: &str, action: &str) {
    app.click(&format!("{} {}", sel_row(id), tid(action))).await;
}

/// Points the data root's `claude` provider at the pinned Claude Code CLI (installed by
/// scripts/setup.sh), talking to the scripted Anthropic stand-in `api`.
pub fn use_claude(h: &Harness, api: &crate::anthropic::AnthropicStandIn) {
    let cli_home = h.home().parent().unwrap().join("claude-home");
    let claude =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agent-clis/node_modules/.bin/claude");
    assert!(
        claude.exists(),
        "{} missing: run scripts/setup.sh",
        claude.display()
    );
    std::fs::write(
        h.home().join("config.json"),
        json!({"providers": {"claude": {"command": [claude], "env": api.claude_env(&cli_home)}}})
            .to_string(),
    )
    .unwrap();
}

/// Writes an agent record (JSON as SPEC 1 stores it) where the data root of `h` keeps it, as
/// if an earlier run had left it: the app loads it at its next launch.
pub fn put_record(h: &Harness, record: &Value) {
    let cwd = record["cwd"].as_str().expect("the record's cwd");
    let id = record["id"]
        .as_str()
        .and_then(|id| id.parse().ok())
        .expect("the record's id");
    let path = paseo_core::store::Layout::new(h.home()).record_path(cwd, id);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_vec(record).unwrap()).unwrap();
}

/// Runs git in `dir` (as a user with a name and email) and returns its output; fails the test
/// if git does.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Resizes the main window to `width` × 760 px (xdotool, as a window manager would) and waits
/// until the page has that width.
pub async fn resize_window(h: &Harness, app: &App, width: u32) {
    let id = h.wait_for_window("Paseo").await;
    let ok = tokio::process::Command::new("xdotool")
        .env("DISPLAY", h.display())
        .args(["windowsize", &id.to_string(), &width.to_string(), "760"])
        .status()
        .await
        .expect("cannot run xdotool")
        .success();
    assert!(ok, "xdotool windowsize failed");
    poll(&format!("a {width} px wide page"), TIMEOUT, || async {
        let w = app.execute("return innerWidth", vec![]).await;
        (w.as_u64() == Some(u64::from(width))).then_some(())
    })
    .await;
}
