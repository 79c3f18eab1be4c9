//! The desktop UI end to end, in the real webview over WebDriver: tab close (archive with a
//! native confirm for a running root agent, layout-only for a subagent), the subagents track
//! (open, detach, archive X, "Archive finished"), several windows, workspace activity, the
//! archived list with restore, the layout kept per window across restarts, the new-agent form,
//! and the permission prompt with tool calls from the real Claude Code CLI (against a scripted
//! stand-in for the Anthropic API). Other agents are real shell agents; subagents are created the
//! way agents create them, through the MCP server with the parent's own token. Each test checks
//! what the DOM shows and, where it matters, what is on disk.

mod common;

// The scripted Anthropic Messages API the core's Claude tests use, for the real Claude Code CLI.
#[allow(dead_code)]
#[path = "../src-tauri/core/tests/support/anthropic.rs"]
mod anthropic;

use anthropic::{bash_script, AnthropicStandIn, Input};
use common::{poll, tid, Answer, App, Harness, TIMEOUT};
use fantoccini::key::Key;
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

/// Registers (or reuses) the workspace for `dir` through the UI's backend seam.
async fn add_workspace(app: &App, dir: &Path) -> Value {
    let ws = app
        .call_ui(
            "/backend.js",
            "addWorkspace",
            vec![json!(dir.display().to_string())],
        )
        .await;
    assert!(ws.get("error").is_none(), "add_workspace: {ws}");
    ws
}

/// A shell agent in the workspace for `dir`, as the new-agent form makes it (the directory's
/// workspace is registered, or reused, first).
async fn create_shell(app: &App, dir: &Path, title: &str, prompt: &str) -> Value {
    let ws = add_workspace(app, dir).await;
    create(
        app,
        json!({"provider": "shell", "title": title, "prompt": prompt,
            "workspaceId": ws["workspaceId"], "autoArchive": false}),
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

/// Clicks `selector` like `App::click`, but retries (bounded) while WebKitWebDriver finds the
/// element not interactable yet, printing what was at its centre the first time.
async fn click(app: &App, selector: &str) {
    let deadline = std::time::Instant::now() + TIMEOUT;
    let mut reported = false;
    loop {
        let element = app.wait_for(selector).await;
        match element.click().await {
            Ok(()) => return,
            Err(error) => {
                if !reported {
                    reported = true;
                    let diag = app.execute("const el = document.querySelector(arguments[0]); const r = el.getBoundingClientRect(); const at = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); return {rect: [r.x, r.y, r.width, r.height], inner: [innerWidth, innerHeight], at: at ? at.outerHTML.slice(0, 120) : null, vis: document.visibilityState, focus: document.hasFocus()}", vec![json!(selector)]).await;
                    eprintln!("click {selector}: {error:?}; {diag}");
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "cannot click {selector}: {error:?}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
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
    click(app, &sel_ws(agent["workspaceId"].as_str().unwrap())).await;
    click(app, &tid("tab-home")).await;
    click(
        app,
        &format!(
            "[data-testid=\"workspace-agent\"][data-agent-id=\"{}\"]",
            id(agent)
        ),
    )
    .await;
    app.wait_for(&sel_pane(&id(agent))).await;
}

/// Clicks the × of an agent's tab (selecting the tab first, as its × shows on the active tab).
async fn click_tab_close(app: &App, id: &str) {
    click(app, &sel_tab(id)).await;
    app.wait_for_attr(&sel_tab(id), "aria-selected", "true")
        .await;
    click(app, &format!("{} [data-testid=\"tab-close\"]", sel_tab(id))).await;
}

async fn row_action(app: &App, id: &str, action: &str) {
    click(app, &format!("{} [data-testid=\"{action}\"]", sel_row(id))).await;
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
    click(
        &app,
        &format!("{} [data-testid=\"tab-close\"]", sel_tab(&lead_id)),
    )
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
    click(
        &app,
        &format!("{} [data-testid=\"tab-close\"]", sel_tab(&lead_id)),
    )
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

#[tokio::test]
async fn closing_a_subagents_tab_only_closes_the_view_and_the_track_reopens_it() {
    let h = Harness::new("close_subagent_tab");
    let app = launch(&h).await;
    let dir = work_dir(&h, "app");
    let lead = create_shell(
        &app,
        &dir,
        "lead",
        &spawn_script(&[kid("worker", "sleep 300")], "echo handed off"),
    )
    .await;
    let lead_id = id(&lead);
    let worker = wait_children(&app, &lead_id, 1).await.remove(0);
    let worker_id = id(&worker);
    wait_status(&app, &lead_id, "idle").await;
    open_root(&app, &lead).await;
    row_action(&app, &worker_id, "track-open").await;
    app.wait_for_attr(&sel_pane(&worker_id), "data-status", "running")
        .await;
    // The subagent's header links to its parent.
    wait_text(&app, &tid("parent-link"), |t| t.contains("lead")).await;
    app.screenshot("subagent-tab").await;

    // No dialog: the tab closes, the agent keeps running and stays in its parent's track.
    click_tab_close(&app, &worker_id).await;
    wait_count(&app, &sel_tab(&worker_id), 0).await;
    assert!(h.windows("Archive running agent?", true).await.is_empty());
    app.wait_for(&sel_pane(&lead_id)).await;
    app.wait_for_attr(&sel_row(&worker_id), "data-status", "running")
        .await;
    assert_eq!(
        agent(&app, &worker_id).await.unwrap()["status"],
        json!("running")
    );
    assert!(!archived_on_disk(h.home(), &worker_id));

    // The track opens it again.
    row_action(&app, &worker_id, "track-open").await;
    app.wait_for(&sel_tab(&worker_id)).await;
    app.wait_for(&sel_pane(&worker_id)).await;
    // And the parent link goes back.
    click(&app, &tid("parent-link")).await;
    app.wait_for(&sel_pane(&lead_id)).await;

    // The keyboard: Ctrl+Tab to the next tab, Ctrl+L to the composer, Ctrl+W closes the
    // subagent's tab (again without a dialog).
    let input = app.find(&tid("composer-input")).await;
    input
        .send_keys(&format!("{}{}{}", Key::Control, Key::Tab, Key::Null))
        .await
        .unwrap();
    app.wait_for(&sel_pane(&worker_id)).await;
    app.find("body")
        .await
        .send_keys(&format!("{}l{}", Key::Control, Key::Null))
        .await
        .unwrap();
    let focused = app
        .execute("return document.activeElement?.dataset.testid", vec![])
        .await;
    assert_eq!(focused, json!("composer-input"));
    app.find(&tid("composer-input"))
        .await
        .send_keys(&format!("{}w{}", Key::Control, Key::Null))
        .await
        .unwrap();
    wait_count(&app, &sel_tab(&worker_id), 0).await;
    app.wait_for(&sel_pane(&lead_id)).await;
    assert_eq!(
        agent(&app, &worker_id).await.unwrap()["status"],
        json!("running")
    );
    app.quit().await;
}

// ---------------------------------------------------------------------------------------------
// The subagents track

#[tokio::test]
async fn track_archive_takes_the_subtree_and_detach_makes_a_running_root() {
    let h = Harness::new("track_archive_detach");
    let app = launch(&h).await;
    let dir = work_dir(&h, "app");
    // "mid" creates a subagent of its own, so archiving it from the track takes a subtree.
    let mid_script = spawn_script(&[kid("leaf", "sleep 300")], "sleep 300");
    let lead = create_shell(
        &app,
        &dir,
        "lead",
        &spawn_script(
            &[kid("mid", &mid_script), kid("loner", "sleep 300")],
            "echo ok",
        ),
    )
    .await;
    let lead_id = id(&lead);
    let kids = wait_children(&app, &lead_id, 2).await;
    let mid = id(by_title(&kids, "mid"));
    let loner = id(by_title(&kids, "loner"));
    let leaf = id(&wait_children(&app, &mid, 1).await[0]);
    open_root(&app, &lead).await;
    wait_count(&app, &tid("track-row"), 2).await;
    app.wait_for_attr(&sel_row(&loner), "data-status", "running")
        .await;
    app.screenshot("track").await;

    // Archive X: asks, then the row and its subtree are archived (on disk too).
    row_action(&app, &mid, "track-archive").await;
    h.screenshot_screen("archive-subagent-dialog");
    h.answer_dialog("Archive subagent?", Answer::Ok).await;
    wait_count(&app, &sel_row(&mid), 0).await;
    for archived in [&mid, &leaf] {
        wait_archived_on_disk(h.home(), archived, true).await;
    }
    wait_text(&app, &tid("track-counts"), |t| t.contains("1 total")).await;

    // Detach: no dialog; the row leaves the track; the agent keeps running as a root agent.
    row_action(&app, &loner, "track-detach").await;
    wait_count(&app, &tid("track"), 1).await;
    poll("the track to hide", TIMEOUT, || async {
        (!app.is_shown(&tid("track")).await).then_some(())
    })
    .await;
    let detached = wait_status(&app, &loner, "running").await;
    assert!(detached["parentAgentId"].is_null(), "{detached}");
    let rec = record(h.home(), &loner);
    assert!(
        rec["labels"].get("paseo.parent-agent-id").is_none(),
        "{rec}"
    );
    assert!(rec["archivedAt"].is_null());

    // As a root agent now, closing its tab archives it (asking first, as it runs).
    open_root(&app, &detached).await;
    click(
        &app,
        &format!("{} [data-testid=\"tab-close\"]", sel_tab(&loner)),
    )
    .await;
    h.answer_dialog("Archive running agent?", Answer::Ok).await;
    wait_archived_on_disk(h.home(), &loner, true).await;
    wait_count(&app, &sel_tab(&loner), 0).await;
    // The former parent was not touched.
    assert!(!archived_on_disk(h.home(), &lead_id));
    app.quit().await;
}

#[tokio::test]
async fn archive_finished_then_restore_from_the_archived_list() {
    let h = Harness::new("archive_finished_restore");
    let app = launch(&h).await;
    let dir = work_dir(&h, "app");
    let lead = create_shell(
        &app,
        &dir,
        "lead",
        &spawn_script(
            &[
                kid("done-1", "echo one"),
                kid("done-2", "echo two"),
                kid("busy", "sleep 300"),
            ],
            "echo ok",
        ),
    )
    .await;
    let lead_id = id(&lead);
    let kids = wait_children(&app, &lead_id, 3).await;
    let (done1, done2, busy) = (
        id(by_title(&kids, "done-1")),
        id(by_title(&kids, "done-2")),
        id(by_title(&kids, "busy")),
    );
    for k in [&done1, &done2] {
        wait_status(&app, k, "idle").await;
    }
    open_root(&app, &lead).await;
    wait_count(&app, &tid("track-row"), 3).await;

    // One confirm, then every subagent that is not running goes; the running one stays.
    click(&app, &tid("track-archive-finished")).await;
    h.answer_dialog("Archive finished subagents?", Answer::Ok)
        .await;
    wait_count(&app, &tid("track-row"), 1).await;
    app.wait_for(&sel_row(&busy)).await;
    for k in [&done1, &done2] {
        wait_archived_on_disk(h.home(), k, true).await;
    }
    assert!(!archived_on_disk(h.home(), &busy));
    assert_eq!(
        record(h.home(), &done1)["archiveBatchId"],
        record(h.home(), &done2)["archiveBatchId"],
        "one gesture, one batch"
    );

    // The archived list shows the batch as one line; Restore brings both back into the track.
    click(&app, &tid("archived-toggle")).await;
    wait_count(&app, &format!("{} li", tid("archived-list")), 1).await;
    wait_text(&app, &tid("archived-list"), |t| t.contains("+ 1 more")).await;
    app.screenshot("archived-list").await;
    click(
        &app,
        &format!("{} {}", tid("archived-list"), tid("restore")),
    )
    .await;
    wait_count(&app, &tid("track-row"), 3).await;
    for k in [&done1, &done2] {
        wait_archived_on_disk(h.home(), k, false).await;
    }
    wait_count(&app, &format!("{} li", tid("archived-list")), 0).await;

    // A restore whose parent is archived asks first and brings the agent back as a root agent.
    row_action(&app, &done1, "track-archive").await;
    h.answer_dialog("Archive subagent?", Answer::Ok).await;
    wait_archived_on_disk(h.home(), &done1, true).await;
    click(
        &app,
        &format!("{} [data-testid=\"tab-close\"]", sel_tab(&lead_id)),
    )
    .await;
    h.answer_dialog("Archive agent with running subagents?", Answer::Ok)
        .await;
    wait_archived_on_disk(h.home(), &lead_id, true).await;
    let done1_restore = format!(
        "{} [data-testid=\"restore\"][data-agent-id=\"{done1}\"]",
        tid("archived-list")
    );
    click(&app, &done1_restore).await;
    h.answer_dialog("Restore as a root agent?", Answer::Ok)
        .await;
    wait_archived_on_disk(h.home(), &done1, false).await;
    let restored = agent(&app, &done1).await.unwrap();
    assert!(restored["parentAgentId"].is_null(), "{restored}");
    assert!(archived_on_disk(h.home(), &lead_id));
    // A restored root agent opens as a tab.
    app.wait_for(&sel_tab(&done1)).await;
    app.quit().await;
}

// ---------------------------------------------------------------------------------------------
// Windows

async fn window_handles(app: &App, n: usize) -> Vec<fantoccini::wd::WindowHandle> {
    poll(&format!("{n} windows"), TIMEOUT, || async {
        let handles = app.client().windows().await.ok()?;
        (handles.len() == n).then_some(handles)
    })
    .await
}

/// Switches the WebDriver session to the window labelled `label` (one of `n`) once it is ready.
async fn switch_to(app: &App, label: &str, n: usize) {
    poll(&format!("window {label} to be ready"), TIMEOUT, || async {
        for handle in window_handles(app, n).await {
            app.client().switch_to_window(handle).await.ok()?;
            let found = app
                .client()
                .execute(
                    // Ready, and laid out at its real size (a new window starts small).
                    "return [document.body.dataset.window || '', document.body.dataset.ready || '', innerWidth >= 1000 && innerHeight >= 600]",
                    vec![],
                )
                .await
                .ok()?;
            if found == json!([label, "true", true]) {
                return Some(());
            }
        }
        None
    })
    .await
}

#[tokio::test]
async fn each_window_keeps_its_own_tabs_but_archive_reaches_every_window() {
    let h = Harness::new("two_windows");
    let app = launch(&h).await;
    let dir = work_dir(&h, "app");
    let lead = create_shell(
        &app,
        &dir,
        "lead",
        &spawn_script(&[kid("helper", "sleep 300")], "echo ok"),
    )
    .await;
    let lead_id = id(&lead);
    let helper = id(&wait_children(&app, &lead_id, 1).await[0]);
    wait_status(&app, &lead_id, "idle").await;

    // Window A (main): lead and its helper open.
    open_root(&app, &lead).await;
    row_action(&app, &helper, "track-open").await;
    app.wait_for(&sel_tab(&helper)).await;

    // Window B through the menu: its own, empty layout; then the same two tabs.
    click(&app, &tid("app-menu")).await;
    click(&app, &tid("menu-new-window")).await;
    h.wait_window_visible("Paseo — window 2", true).await;
    switch_to(&app, "window-2", 2).await;
    assert_eq!(count(&app, &tid("tab")).await, 0);
    open_root(&app, &lead).await;
    row_action(&app, &helper, "track-open").await;
    app.wait_for(&sel_tab(&helper)).await;

    // A tab closed in A stays open in B.
    switch_to(&app, "main", 2).await;
    click_tab_close(&app, &helper).await;
    wait_count(&app, &sel_tab(&helper), 0).await;
    switch_to(&app, "window-2", 2).await;
    assert_eq!(count(&app, &sel_tab(&helper)).await, 1);
    assert_eq!(count(&app, &sel_tab(&lead_id)).await, 1);

    // An archive in A (closing the root's tab) removes both tabs in B.
    switch_to(&app, "main", 2).await;
    click_tab_close(&app, &lead_id).await;
    h.answer_dialog("Archive agent with running subagents?", Answer::Ok)
        .await;
    wait_count(&app, &sel_tab(&lead_id), 0).await;
    switch_to(&app, "window-2", 2).await;
    wait_count(&app, &tid("tab"), 0).await;
    wait_archived_on_disk(h.home(), &helper, true).await;
    app.quit().await;
}

// ---------------------------------------------------------------------------------------------
// Workspace activity

#[tokio::test]
async fn workspace_status_running_subagents_lift_their_roots_workspace_failed_ones_do_not() {
    let h = Harness::new("workspace_status");
    let app = launch(&h).await;
    let home_dir = work_dir(&h, "app");
    let other_dir = work_dir(&h, "elsewhere");
    // Both subagents work in another workspace; only the running one counts, and only for the
    // workspace of its root agent.
    let runner = Kid {
        directory: Some(other_dir.clone()),
        ..kid("runner", "sleep 300")
    };
    let failer = Kid {
        directory: Some(other_dir.clone()),
        ..kid("failer", "echo failing >&2; exit 3")
    };
    let lead = create_shell(
        &app,
        &home_dir,
        "lead",
        &spawn_script(&[runner, failer], "echo ok"),
    )
    .await;
    let lead_id = id(&lead);
    let kids = wait_children(&app, &lead_id, 2).await;
    let runner = id(by_title(&kids, "runner"));
    let failer = id(by_title(&kids, "failer"));
    wait_status(&app, &lead_id, "idle").await;
    wait_status(&app, &failer, "error").await;
    wait_status(&app, &runner, "running").await;
    let home_ws = lead["workspaceId"].as_str().unwrap().to_string();
    let other_ws = by_title(&kids, "runner")["workspaceId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(home_ws, other_ws);

    // The root's workspace shows running (not failed: a failed subagent does not escalate it);
    // the subagents' own workspace shows nothing.
    app.wait_for_attr(&sel_ws(&home_ws), "data-status", "running")
        .await;
    app.wait_for_attr(&sel_ws(&other_ws), "data-status", "none")
        .await;
    wait_text(&app, &sel_ws(&home_ws), |t| t.contains("running")).await;
    app.screenshot("workspace-running").await;

    // Once the running subagent stops, the root's workspace shows the root's own state: its
    // finished, unseen turn — still not "failed".
    let stopped = app
        .call_ui("/backend.js", "cancelAgent", vec![json!(runner)])
        .await;
    assert!(stopped.get("error").is_none(), "{stopped}");
    app.wait_for_attr(&sel_ws(&home_ws), "data-status", "attention")
        .await;
    app.wait_for_attr(&sel_ws(&other_ws), "data-status", "none")
        .await;
    // Opening the root marks it seen: the workspace is done.
    open_root(&app, &lead).await;
    app.wait_for_attr(&sel_ws(&home_ws), "data-status", "done")
        .await;
    app.quit().await;
}

// ---------------------------------------------------------------------------------------------
// Layout and the new-agent form

/// Waits until `$PASEO_HOME/windows.json` holds a layout for `label` satisfying `check`.
async fn wait_saved_layout(home: &Path, label: &str, check: impl Fn(&Value) -> bool) -> Value {
    poll(&format!("the saved layout of {label}"), TIMEOUT, || async {
        let bytes = std::fs::read(home.join("windows.json")).ok()?;
        let saved: Value = serde_json::from_slice(&bytes).ok()?;
        let layout = saved["windows"][label].clone();
        check(&layout).then_some(layout)
    })
    .await
}

#[tokio::test]
async fn each_windows_layout_is_saved_and_restored_after_a_restart() {
    let h = Harness::new("layout_restart");
    let app = launch(&h).await;
    let dir = work_dir(&h, "app");
    let one = create_shell(&app, &dir, "one", "echo one").await;
    let two = create_shell(&app, &dir, "two", "echo two").await;
    let three = create_shell(&app, &dir, "three", "echo three").await;
    for a in [&one, &two, &three] {
        wait_status(&app, &id(a), "idle").await;
    }
    let ws = one["workspaceId"].as_str().unwrap().to_string();
    open_root(&app, &one).await;
    open_root(&app, &two).await;
    open_root(&app, &three).await;
    // Ctrl+PageUp goes back one tab: "two" is active.
    app.execute(
        "document.dispatchEvent(new KeyboardEvent('keydown', {code: 'PageUp', key: 'PageUp', ctrlKey: true, bubbles: true}))",
        vec![],
    )
    .await;
    app.wait_for(&sel_pane(&id(&two))).await;

    // A second window with only "three", opened with the keyboard shortcut.
    app.execute(
        "document.dispatchEvent(new KeyboardEvent('keydown', {code: 'KeyN', key: 'N', ctrlKey: true, shiftKey: true, bubbles: true}))",
        vec![],
    )
    .await;
    switch_to(&app, "window-2", 2).await;
    open_root(&app, &three).await;
    let want_main = json!([id(&one), id(&two), id(&three)]);
    wait_saved_layout(h.home(), "main", |l| {
        l["groups"][&ws]["tabs"] == want_main && l["groups"][&ws]["active"] == json!(id(&two))
    })
    .await;
    wait_saved_layout(h.home(), "window-2", |l| {
        l["groups"][&ws]["tabs"] == json!([id(&three)])
    })
    .await;
    app.quit().await;
    poll("the app to release the data root", TIMEOUT, || async {
        h.lock_is_free().then_some(())
    })
    .await;

    // After a restart both windows come back with their own tabs.
    let app = launch(&h).await;
    switch_to(&app, "main", 2).await;
    app.wait_for(&sel_pane(&id(&two))).await;
    let tabs: Vec<String> = {
        let mut ids = Vec::new();
        for el in app.find_all(&tid("tab")).await {
            ids.push(el.attr("data-agent-id").await.unwrap().unwrap());
        }
        ids
    };
    assert_eq!(json!(tabs), want_main);
    app.wait_for_attr(&sel_tab(&id(&two)), "aria-selected", "true")
        .await;
    switch_to(&app, "window-2", 2).await;
    wait_count(&app, &tid("tab"), 1).await;
    app.wait_for(&sel_pane(&id(&three))).await;

    // Closing the extra window forgets it: the next launch opens only the main window.
    h.close_window("Paseo — window 2").await;
    wait_saved_layout(h.home(), "window-2", Value::is_null).await;
    app.quit().await;
}

#[tokio::test]
async fn the_new_agent_form_shows_unavailable_providers_disabled_and_creates_an_agent() {
    let h = Harness::new("new_agent_form");
    std::fs::write(
        h.home().join("config.json"),
        r#"{"providers": {"ghost": {"kind": "command", "command": ["no-such-binary-xyz"]}}}"#,
    )
    .unwrap();
    let app = launch(&h).await;
    let dir = work_dir(&h, "fresh");

    // First launch: the welcome pane offers both ways in.
    app.wait_for(&tid("welcome")).await;
    assert!(app.is_shown(&tid("welcome-add-workspace")).await);
    app.screenshot("welcome").await;
    click(&app, &tid("welcome-new-agent")).await;
    app.wait_for(&tid("new-agent-form")).await;

    // The unavailable provider is there, disabled, with its reason; the shell is available.
    let ghost = "[data-testid=\"provider-option\"][data-provider=\"ghost\"]";
    app.wait_for_attr(ghost, "data-available", "false").await;
    let disabled = app
        .execute(
            "return document.querySelector(arguments[0] + ' input').disabled",
            vec![json!(ghost)],
        )
        .await;
    assert_eq!(disabled, json!(true));
    let reason = wait_text(&app, &format!("{ghost} {}", tid("provider-reason")), |t| {
        !t.is_empty()
    })
    .await;
    assert!(reason.contains("no-such-binary-xyz"), "{reason}");
    let shell = "[data-testid=\"provider-option\"][data-provider=\"shell\"]";
    app.wait_for_attr(shell, "data-available", "true").await;
    app.screenshot("new-agent-form").await;

    // A missing directory is refused with a clear message, and nothing is created.
    click(&app, &format!("{shell} input")).await;
    click(&app, &tid("new-agent-submit")).await;
    wait_text(&app, &tid("new-agent-error"), |t| t.contains("directory")).await;
    assert_eq!(snapshot(&app).await["agents"], json!([]));

    // Filled in: the agent starts, its tab opens, its first prompt runs, the workspace appears.
    let directory = app.find(&tid("new-agent-directory")).await;
    directory
        .send_keys(&dir.display().to_string())
        .await
        .unwrap();
    app.find(&tid("new-agent-title"))
        .await
        .send_keys("hello")
        .await
        .unwrap();
    app.find(&tid("new-agent-prompt"))
        .await
        .send_keys("echo hi from paseo")
        .await
        .unwrap();
    click(&app, &tid("new-agent-submit")).await;
    app.wait_for(&tid("agent-pane")).await;
    wait_text(&app, &tid("timeline"), |t| t.contains("hi from paseo")).await;
    let created = snapshot(&app).await["agents"][0].clone();
    assert_eq!(created["title"], json!("hello"));
    assert_eq!(created["provider"], json!("shell"));
    assert_eq!(created["cwd"], json!(dir.display().to_string()));
    app.wait_for(&sel_tab(&id(&created))).await;
    app.wait_for(&sel_ws(created["workspaceId"].as_str().unwrap()))
        .await;
    app.wait_for_attr(&sel_pane(&id(&created)), "data-status", "idle")
        .await;

    // The composer: Send is disabled while empty; a prompt runs and shows in the timeline.
    let send_disabled = || async {
        app.execute(
            "return document.querySelector('[data-testid=\"composer-send\"]').disabled",
            vec![],
        )
        .await
    };
    assert_eq!(send_disabled().await, json!(true));
    app.find(&tid("composer-input"))
        .await
        .send_keys("echo second turn")
        .await
        .unwrap();
    assert_eq!(send_disabled().await, json!(false));
    click(&app, &tid("composer-send")).await;
    wait_text(&app, &tid("timeline"), |t| t.contains("second turn")).await;
    app.quit().await;
}

// ---------------------------------------------------------------------------------------------
// The permission prompt, with the real Claude Code CLI

/// The `n`th tool call line (from 1) in the pane `pane`, once there is one.
async fn tool_call(app: &App, pane: &str, n: usize) -> String {
    let script = "const calls = document.querySelectorAll(arguments[0] + ' [data-testid=\"timeline-item\"][data-kind=\"tool_call\"]'); \
        const el = calls[arguments[1] - 1]; return el ? el.dataset.seq : null;";
    let seq = poll(&format!("tool call {n} in {pane}"), TIMEOUT, || async {
        app.execute(script, vec![json!(pane), json!(n)])
            .await
            .as_str()
            .map(str::to_string)
    })
    .await;
    format!("{pane} [data-testid=\"timeline-item\"][data-seq=\"{seq}\"]")
}

#[tokio::test]
async fn a_claude_agents_tool_call_waits_for_the_permission_prompt_in_the_pane() {
    let h = Harness::new("permission_prompt");
    let api = AnthropicStandIn::start(|req| bash_script(req.input())).await;
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
    let app = launch(&h).await;
    let dir = work_dir(&h, "repo");
    let ws = add_workspace(&app, &dir).await;
    let builder = create(
        &app,
        json!({"provider": "claude", "model": "standin-model", "title": "builder",
            "prompt": "please use bash allowed-file", "workspaceId": ws["workspaceId"],
            "autoArchive": false}),
    )
    .await;
    let builder_id = id(&builder);
    open_root(&app, &builder).await;
    let pane = sel_pane(&builder_id);

    // The model asks for Bash: the prompt names the tool and the command, the agent and its
    // workspace need the user, the call waits collapsed, and nothing has run.
    let prompt = wait_text(&app, &tid("permission"), |t| t.contains("Bash")).await;
    assert!(prompt.contains("touch allowed-file"), "{prompt}");
    assert!(prompt.contains("builder"), "{prompt}");
    app.wait_for_attr(&pane, "data-bucket", "needs_input").await;
    app.wait_for_attr(
        &sel_ws(ws["workspaceId"].as_str().unwrap()),
        "data-status",
        "needs_input",
    )
    .await;
    let call = tool_call(&app, &pane, 1).await;
    let summary = wait_text(&app, &format!("{call} summary"), |t| t.contains("Bash")).await;
    assert!(summary.contains("touch allowed-file"), "{summary}");
    let open = |sel: String| {
        let app = &app;
        async move {
            app.execute(
                "return document.querySelector(arguments[0]).open",
                vec![json!(sel)],
            )
            .await
        }
    };
    assert_eq!(open(format!("{call} details")).await, json!(false));
    // The call line itself says it waits for the user.
    app.wait_for_attr(&call, "data-awaiting", "true").await;
    wait_text(&app, &format!("{call} .tool-status"), |t| {
        t.contains("waiting for you")
    })
    .await;
    assert!(!dir.join("allowed-file").exists());
    app.screenshot("permission").await;

    // Allow: the command runs, its result fills the call line, the model sees it, the turn ends.
    click(&app, &tid("permission-allow")).await;
    wait_text(&app, &tid("timeline"), |t| {
        t.contains("tool result: bash-ran error=false")
    })
    .await;
    app.wait_for_attr(&call, "data-result", "ok").await;
    let awaiting = app
        .execute(
            "return document.querySelector(arguments[0]).dataset.awaiting ?? null",
            vec![json!(call)],
        )
        .await;
    assert_eq!(awaiting, Value::Null);
    assert!(dir.join("allowed-file").exists());
    app.wait_for_attr(&pane, "data-status", "idle").await;
    assert!(!app.is_shown(&tid("permission")).await);
    // The call opens on a click to show its input and output.
    click(&app, &format!("{call} summary")).await;
    assert_eq!(open(format!("{call} details")).await, json!(true));
    let input = wait_text(&app, &format!("{call} .tool-in"), |t| !t.is_empty()).await;
    assert!(
        input.contains("\"description\": \"make a file\""),
        "{input}"
    );
    let output = format!("{call} .tool-out");
    wait_text(&app, &output, |t| t.trim() == "bash-ran").await;
    assert!(app.is_shown(&output).await);
    app.screenshot("tool-call-open").await;

    // Deny, on the next turn from the composer: the tool fails, no file, the model is told.
    app.find(&tid("composer-input"))
        .await
        .send_keys("please use bash denied-file")
        .await
        .unwrap();
    click(&app, &tid("composer-send")).await;
    wait_text(&app, &tid("permission"), |t| {
        t.contains("touch denied-file")
    })
    .await;
    app.wait_for_attr(&pane, "data-bucket", "needs_input").await;
    let denied = tool_call(&app, &pane, 2).await;
    app.wait_for_attr(&denied, "data-awaiting", "true").await;
    click(&app, &tid("permission-deny")).await;
    wait_text(&app, &tid("timeline"), |t| t.contains("error=true")).await;
    app.wait_for_attr(&denied, "data-result", "error").await;
    app.wait_for_attr(&pane, "data-status", "idle").await;
    assert!(!dir.join("denied-file").exists());
    assert!(!app.is_shown(&tid("permission")).await);
    app.screenshot("denied").await;

    let results: Vec<bool> = api
        .requests()
        .iter()
        .filter_map(|r| match r.input() {
            Input::ToolResult { is_error, .. } => Some(is_error),
            _ => None,
        })
        .collect();
    assert_eq!(results, [false, true], "tool results the model saw");
    app.quit().await;
}

// ---------------------------------------------------------------------------------------------
// The timeline

#[tokio::test]
async fn the_timeline_pages_older_items_back_from_disk_when_scrolled_up() {
    let h = Harness::new("timeline_paging");
    let app = launch(&h).await;
    let dir = work_dir(&h, "app");
    // Lines alternate between stdout and stderr with a pause, so each is its own item: more
    // than the 2,000 the backend keeps in memory, so the oldest pages come from disk.
    let script = "perl -MTime::HiRes=sleep -e '$|=1; select(STDERR); $|=1; select(STDOUT); \
        for my $i (1..1400) { print STDOUT \"out $i\\n\"; sleep 0.0003; print STDERR \"err $i\\n\"; sleep 0.0003; }'";
    let chatty = create_shell(&app, &dir, "chatty", script).await;
    let chatty_id = id(&chatty);
    poll("the turn to end", Duration::from_secs(60), || async {
        agent(&app, &chatty_id)
            .await
            .filter(|a| a["status"] == "idle")
    })
    .await;
    let newest = app
        .call_ui(
            "/backend.js",
            "timeline",
            vec![json!(chatty_id), Value::Null, json!(1)],
        )
        .await;
    let last_seq = newest[0]["seq"].as_u64().unwrap();
    assert!(
        last_seq > 2100,
        "only {last_seq} items: not enough to page from disk"
    );

    open_root(&app, &chatty).await;
    app.wait_for(&format!(
        "[data-testid=\"timeline-item\"][data-seq=\"{last_seq}\"]"
    ))
    .await;
    let shown = count(&app, &tid("timeline-item")).await;
    assert!(
        shown <= 200,
        "{shown} items in the DOM while following the tail"
    );

    // Scrolling up pages older items in, down to the first one (the prompt), and the DOM stays
    // bounded.
    let first = "[data-testid=\"timeline-item\"][data-seq=\"1\"]";
    poll(
        "the first item after scrolling up",
        Duration::from_secs(60),
        || async {
            // The Home key, as a user reading back would press it.
            let timeline = app.find(&tid("timeline")).await;
            timeline.send_keys(&Key::Home.to_string()).await.ok()?;
            (count(&app, first).await == 1).then_some(())
        },
    )
    .await;
    assert_eq!(
        app.find(first).await.attr("data-kind").await.unwrap(),
        Some("user".to_string())
    );
    wait_text(&app, &tid("timeline-status"), |t| {
        t.contains("Start of the timeline")
    })
    .await;
    let shown = count(&app, &tid("timeline-item")).await;
    assert!(shown <= 1500, "{shown} items in the DOM");
    // The way back to the newest items.
    click(&app, &tid("timeline-latest")).await;
    app.wait_for(&format!(
        "[data-testid=\"timeline-item\"][data-seq=\"{last_seq}\"]"
    ))
    .await;
    app.quit().await;
}

// ---------------------------------------------------------------------------------------------
// Screenshots for the README (run by hand: cargo test --test ui -- --ignored docs_screenshots)

async fn fleet_screens(h: &Harness, name: &str) {
    let app = launch(h).await;
    let app_dir = work_dir(h, "app");
    let api_dir = work_dir(h, "api");
    let plan = spawn_script(
        &[
            kid("tests", "echo 'running the test suite…'; sleep 600"),
            kid("lint", "echo 'lint: 0 problems'"),
            kid(
                "migrate",
                "echo 'migration 0042 failed: column exists' >&2; exit 3",
            ),
            kid("docs", "sleep 600"),
        ],
        "echo 'Split the login feature into tests, lint, a migration and docs.'\nsleep 600",
    );
    std::fs::write(app_dir.join("plan.sh"), plan).unwrap();
    let review = create_shell(
        &app,
        &app_dir,
        "review",
        "git status --short 2>/dev/null; echo 'review: 2 comments'",
    )
    .await;
    let lead = create_shell(&app, &app_dir, "lead", "sh plan.sh").await;
    let notes = create_shell(&app, &api_dir, "api-notes", "echo 'GET /users: 200 OK'").await;
    let lead_id = id(&lead);
    let kids = wait_children(&app, &lead_id, 4).await;
    wait_status(&app, &id(by_title(&kids, "migrate")), "error").await;
    wait_status(&app, &id(by_title(&kids, "lint")), "idle").await;
    wait_status(&app, &id(&review), "idle").await;
    wait_status(&app, &id(&notes), "idle").await;
    open_root(&app, &review).await;
    open_root(&app, &lead).await;
    row_action(&app, &id(by_title(&kids, "tests")), "track-open").await;
    click(&app, &sel_tab(&lead_id)).await;
    app.wait_for(&sel_pane(&lead_id)).await;
    wait_count(&app, &tid("track-row"), 4).await;
    app.execute("document.activeElement?.blur()", vec![]).await;
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/screenshots");
    std::fs::create_dir_all(&docs).unwrap();
    let shot = app.screenshot(name).await;
    std::fs::copy(&shot, docs.join(format!("{name}.png"))).unwrap();
    if name.ends_with("light") {
        click(&app, &tid("new-agent")).await;
        app.wait_for(&tid("new-agent-form")).await;
        let shot = app.screenshot("new-agent").await;
        std::fs::copy(&shot, docs.join("new-agent.png")).unwrap();
    }
    app.quit().await;
}

#[tokio::test]
#[ignore = "writes docs/screenshots; run by hand"]
async fn docs_screenshots() {
    fleet_screens(&Harness::new("docs_light"), "fleet-light").await;
    let dark = Harness::builder("docs_dark")
        .env("GTK_THEME", "Adwaita:dark")
        .build();
    fleet_screens(&dark, "fleet-dark").await;
}

// ---------------------------------------------------------------------------------------------
// Problems at load, and the folder picker

#[tokio::test]
async fn problems_found_at_load_are_shown_as_notices() {
    let h = Harness::new("load_notices");
    // A record that cannot be parsed, and a config.json with a wrong field.
    let bad_dir = h.home().join("agents").join("tmp-broken");
    std::fs::create_dir_all(&bad_dir).unwrap();
    let bad = bad_dir.join("0b6c2a3e-1111-4222-8333-444455556666.json");
    std::fs::write(
        &bad,
        b"{\"id\": \"0b6c2a3e-1111-4222-8333-444455556666\", truncated",
    )
    .unwrap();
    std::fs::write(h.home().join("config.json"), br#"{"providers": 3}"#).unwrap();
    let app = launch(&h).await;
    wait_count(&app, &tid("notice"), 2).await;
    let text = text(&app, &tid("notices")).await.unwrap();
    assert!(
        text.contains("0b6c2a3e-1111-4222-8333-444455556666.json"),
        "{text}"
    );
    assert!(text.contains("quarantine"), "{text}");
    assert!(text.contains("config.json"), "{text}");
    // Nothing was dropped: the file was moved aside.
    assert!(!bad.exists());
    assert_eq!(
        std::fs::read_dir(h.home().join("quarantine"))
            .unwrap()
            .count(),
        1
    );
    app.screenshot("notices").await;
    // Dismissed, a notice goes away.
    click(&app, &tid("notice-dismiss")).await;
    wait_count(&app, &tid("notice"), 1).await;
    app.quit().await;
}

#[tokio::test]
async fn add_a_workspace_with_the_native_folder_picker() {
    let h = Harness::new("folder_picker");
    let app = launch(&h).await;
    let first = work_dir(&h, "app");
    let picked = work_dir(&h, "picked");
    let ws = add_workspace(&app, &first).await;
    app.wait_for(&sel_ws(ws["workspaceId"].as_str().unwrap()))
        .await;

    // The GTK folder chooser opens beside the selected workspace; type the other folder's
    // path into its location field, go there, and choose it.
    click(&app, &tid("add-workspace")).await;
    let picker = poll("the folder picker", TIMEOUT, || async {
        h.windows("Add a workspace", true).await.first().copied()
    })
    .await;
    let xdotool = |args: &[&str]| {
        std::process::Command::new("xdotool")
            .env("DISPLAY", h.display())
            .args(["windowfocus", "--sync", &picker.to_string()])
            .args(args)
            .status()
            .unwrap()
            .success()
    };
    assert!(xdotool(&["key", "--delay", "100", "ctrl+l"]));
    assert!(xdotool(&[
        "type",
        "--delay",
        "5",
        &format!("{}/", picked.display())
    ]));
    assert!(xdotool(&["key", "--delay", "300", "Return"]));
    h.screenshot_screen("folder-picker");
    // Return in the location field enters the folder; Open (Return again) chooses it.
    if !h.windows("Add a workspace", true).await.is_empty() {
        assert!(xdotool(&["key", "--delay", "300", "Return"]));
    }
    let added = poll("the picked workspace", TIMEOUT, || async {
        snapshot(&app).await["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["cwd"] == json!(picked.display().to_string()))
            .cloned()
    })
    .await;
    let row = sel_ws(added["workspaceId"].as_str().unwrap());
    app.wait_for_attr(&row, "aria-current", "true").await;
    app.wait_for(&tid("workspace-home")).await;
    app.quit().await;
}
