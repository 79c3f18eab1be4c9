//! The commands the webview may invoke (through ui/backend.js). Each one also needs a permission
//! in src-tauri/permissions/app.toml, granted in src-tauri/capabilities, or the ACL refuses it.

use crate::state::{AppState, FleetCounts};
use crate::windows::{self, Layouts, WindowsError};
use paseo_core::model::{AgentId, Status, TimelineItem, TurnOrigin, WorkspaceId};
use paseo_core::runtime::window::WindowQuery;
use paseo_core::runtime::{
    AgentSnapshot, CreateAgent, RuntimeError, RuntimeHandle, WorkspaceSnapshot, WorkspaceTarget,
};
use paseo_core::workspaces::worktree::WorktreeTarget;
use paseo_headless::data_root;
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, Runtime, State};

/// What a failed command answers: a stable code the UI can act on and a message for the user.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub code: String,
    pub message: String,
    /// The input at fault, by its path (`workspace.source.target.newBranch`), when one is: the
    /// UI points at that control instead of parsing the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl CommandError {
    fn new(code: &str, message: impl Into<String>) -> Self {
        CommandError {
            code: code.to_string(),
            message: message.into(),
            field: None,
        }
    }
}

impl From<RuntimeError> for CommandError {
    fn from(e: RuntimeError) -> Self {
        let mut error = CommandError::new(e.code(), e.to_string());
        error.field = e.field().map(String::from);
        error
    }
}

mod changes;
mod search;
pub use changes::*;
mod menu;
pub use menu::*;
pub use search::*;

type Answer<T> = Result<T, CommandError>;

fn runtime(state: &AppState) -> Answer<RuntimeHandle> {
    state
        .runtime()
        .ok_or_else(|| CommandError::new("stopped", "the backend is not running"))
}

fn agent_id(field: &str, s: &str) -> Answer<AgentId> {
    s.parse().map_err(|e: paseo_core::model::ModelError| {
        CommandError::new("invalid", format!("{field}: {e}"))
    })
}

fn workspace_id(field: &str, s: &str) -> Answer<WorkspaceId> {
    s.parse().map_err(|e: paseo_core::model::ModelError| {
        CommandError::new("invalid", format!("{field}: {e}"))
    })
}

/// What the shell shows about the running app.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub product: String,
    pub version: String,
    pub mode: &'static str,
    pub pid: u32,
    pub data_root: String,
    pub log_dir: String,
    /// "running" once the backend holds the data root, else "stopped".
    pub backend: &'static str,
    /// ISO 8601 UTC.
    pub started_at: String,
    pub counts: FleetCounts,
    pub counts_line: String,
    /// Where agents reach the MCP server (from `$PASEO_HOME/mcp.json`), once it runs.
    pub mcp_url: Option<String>,
}

#[tauri::command]
pub fn app_info<R: Runtime>(app: AppHandle<R>, state: State<'_, AppState>) -> AppInfo {
    let package = app.package_info();
    let started = state.backend_started_at();
    let counts = state.counts();
    let mcp_url = std::fs::read(paseo_core::store::Layout::new(state.data_root()).mcp_json_path())
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["url"].as_str().map(String::from));
    AppInfo {
        product: package.name.clone(),
        version: package.version.to_string(),
        mode: state.mode().as_str(),
        pid: std::process::id(),
        data_root: state.data_root().display().to_string(),
        log_dir: data_root::log_dir(state.data_root()).display().to_string(),
        backend: if started.is_some() {
            "running"
        } else {
            "stopped"
        },
        started_at: started
            .unwrap_or_else(|| state.created_at())
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        counts,
        counts_line: counts.summary(),
        mcp_url,
    }
}

/// Asks the user with the native confirm (SPEC 10): Cancel and a verb button naming the
/// gesture. Resolves to whether the user chose the action.
#[tauri::command]
pub async fn confirm_action<R: Runtime>(
    app: AppHandle<R>,
    confirm: crate::native::Confirm,
) -> Answer<bool> {
    crate::native::ask(&app, confirm)
        .await
        .map_err(|e| match e {
            crate::native::NativeError::Show(_) => CommandError::new("error", e.to_string()),
            _ => CommandError::new("invalid", e.to_string()),
        })
}

/// Everything a window needs to render, with a compact card per agent (`AgentCard`), or a page
/// of cards (`query`, paseo-core's runtime/window.rs); events (`paseo://event`) keep it current.
/// Sent as the JSON text the runtime wrote, not re-encoded.
#[tauri::command]
pub async fn fleet_snapshot(
    state: State<'_, AppState>,
    query: Option<WindowQuery>,
) -> Answer<tauri::ipc::Response> {
    // A window opens while the backend still loads the data root: its first ask waits for it.
    let rt = state
        .runtime_started()
        .await
        .ok_or_else(|| CommandError::new("stopped", "the backend is not running"))?;
    let json = rt
        .window_snapshot(query.unwrap_or(WindowQuery::Whole))
        .await?;
    Ok(tauri::ipc::Response::new(json))
}

/// One agent's whole snapshot (config, system prompt, last message…): what a window's cards
/// leave out, for the pane that shows it.
#[tauri::command]
pub async fn get_agent(state: State<'_, AppState>, agent_id: String) -> Answer<AgentSnapshot> {
    Ok(runtime(&state)?
        .get(self::agent_id("agentId", &agent_id)?)
        .await?)
}

/// One page of the archived agents (most recently archived first) and how many there are.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedPage {
    pub agents: Vec<AgentSnapshot>,
    pub total: usize,
}

/// Archived agents, most recently archived first, a page at a time.
#[tauri::command]
pub async fn archived_agents(
    state: State<'_, AppState>,
    offset: Option<usize>,
    limit: Option<usize>,
) -> Answer<ArchivedPage> {
    let (agents, total) = runtime(&state)?
        .archived(offset.unwrap_or(0), limit.unwrap_or(500).min(10_000))
        .await?;
    Ok(ArchivedPage { agents, total })
}

/// The new-agent form.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewAgentForm {
    pub provider: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    /// An existing workspace…
    #[serde(default)]
    pub workspace_id: Option<String>,
    /// …or a directory (a new workspace is registered for it).
    #[serde(default)]
    pub directory: Option<String>,
    /// …or a new git worktree (the same checks and errors as `create_worktree`).
    #[serde(default)]
    pub worktree: Option<NewWorktree>,
    #[serde(default)]
    pub auto_archive: bool,
    /// Run it outside the sandbox (SPEC 16): the user's choice, made in the form.
    #[serde(default)]
    pub unconfined: bool,
}

/// A new worktree of the repository containing `repo` (an absolute path), as MCP
/// `create_agent`'s `workspace.source` of kind `worktree`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewWorktree {
    pub repo: String,
    pub target: WorktreeTarget,
}

#[tauri::command]
pub async fn create_agent(state: State<'_, AppState>, form: NewAgentForm) -> Answer<AgentSnapshot> {
    let rt = runtime(&state)?;
    let workspace = match (
        form.workspace_id.as_deref(),
        form.directory.as_deref(),
        form.worktree,
    ) {
        (Some(w), None, None) if !w.is_empty() => WorkspaceTarget::Existing {
            id: workspace_id("workspaceId", w)?,
            cwd: None,
        },
        (None, Some(d), None) if !d.trim().is_empty() => WorkspaceTarget::Directory {
            path: d.trim().to_string(),
        },
        (None, None, Some(NewWorktree { repo, target })) => WorkspaceTarget::Worktree {
            repo: Some(repo.trim().to_string()),
            target,
        },
        _ => {
            return Err(CommandError::new(
                "invalid",
                "workspace: choose a workspace, a directory or a new worktree",
            ))
        }
    };
    let mut req = CreateAgent::new(form.provider.trim(), workspace);
    req.model = form.model;
    req.mode = form.mode;
    req.title = form.title;
    req.initial_prompt = form.prompt.filter(|p| !p.trim().is_empty());
    req.auto_archive = form.auto_archive;
    req.unconfined = form.unconfined;
    Ok(rt.create(req).await?)
}

#[tauri::command]
pub async fn send_prompt(
    state: State<'_, AppState>,
    agent_id: String,
    prompt: String,
) -> Answer<AgentSnapshot> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?
        .prompt(id, prompt, TurnOrigin::User, None)
        .await?)
}

/// Interrupts the current turn; answers once it has ended.
#[tauri::command]
pub async fn cancel_agent(state: State<'_, AppState>, agent_id: String) -> Answer<Status> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.cancel(id).await?)
}

/// Stops the agent's process (it stays resumable).
#[tauri::command]
pub async fn stop_agent(state: State<'_, AppState>, agent_id: String) -> Answer<()> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.stop(id).await?)
}

/// Archives the agent and its subagents; answers once that is durable.
#[tauri::command]
pub async fn archive_agent(state: State<'_, AppState>, agent_id: String) -> Answer<Vec<AgentId>> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.archive(id).await?)
}

/// "Archive finished": every child of the parent that is not running, as one batch.
#[tauri::command]
pub async fn archive_finished(
    state: State<'_, AppState>,
    parent_id: String,
) -> Answer<Vec<AgentId>> {
    let id = self::agent_id("parentId", &parent_id)?;
    Ok(runtime(&state)?.archive_finished(id).await?)
}

#[tauri::command]
pub async fn detach_agent(state: State<'_, AppState>, agent_id: String) -> Answer<AgentSnapshot> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.detach(id).await?)
}

/// Undoes a detach: the agent goes back under `parentId` if that narrows power (SPEC 14).
/// `check` only answers whether it may.
#[tauri::command]
pub async fn reattach_agent(
    state: State<'_, AppState>,
    agent_id: String,
    parent_id: String,
    check: Option<bool>,
) -> Answer<()> {
    let id = self::agent_id("agentId", &agent_id)?;
    let parent = self::agent_id("parentId", &parent_id)?;
    Ok(runtime(&state)?
        .reattach(id, parent, check.unwrap_or(false))
        .await?)
}

/// Restores the archive batch the agent was archived in, or with `member` only the agent and
/// the members of its batch below it. `asRoot` restores agents whose parent is still archived
/// as root agents (after the user confirmed).
#[tauri::command]
pub async fn restore_agent(
    state: State<'_, AppState>,
    agent_id: String,
    as_root: Option<bool>,
    member: Option<bool>,
) -> Answer<Vec<AgentId>> {
    let id = self::agent_id("agentId", &agent_id)?;
    let rt = runtime(&state)?;
    let as_root = as_root.unwrap_or(false);
    Ok(if member.unwrap_or(false) {
        rt.restore_member(id, as_root).await?
    } else {
        rt.restore(id, as_root).await?
    })
}

#[tauri::command]
pub async fn answer_permission(
    state: State<'_, AppState>,
    agent_id: String,
    request_id: String,
    allow: bool,
) -> Answer<()> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?
        .answer_permission(id, request_id, allow)
        .await?)
}

/// The user opened the agent: its "finished" or "error" attention is seen.
#[tauri::command]
pub async fn mark_seen(state: State<'_, AppState>, agent_id: String) -> Answer<()> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.mark_seen(id).await?)
}

/// The user opened a closed agent: its session resumes (SPEC 2 `closed → initializing`).
/// Answers whether a session was started.
#[tauri::command]
pub async fn wake_agent(state: State<'_, AppState>, agent_id: String) -> Answer<bool> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.wake(id).await?)
}

/// Timeline items with `seq < before` (0 or absent: the newest), at most `limit`, oldest first.
#[tauri::command]
pub async fn timeline(
    state: State<'_, AppState>,
    agent_id: String,
    before: Option<u64>,
    limit: Option<usize>,
) -> Answer<Vec<TimelineItem>> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?
        .timeline(id, before.unwrap_or(0), limit.unwrap_or(200))
        .await?)
}

/// Registers a workspace for a directory (an existing one for the same directory is reused).
#[tauri::command]
pub async fn add_workspace(state: State<'_, AppState>, path: String) -> Answer<WorkspaceSnapshot> {
    Ok(runtime(&state)?.add_workspace(path).await?)
}

/// Archives a workspace; refused (code `busy`) while agents run in it unless `confirmed` (the
/// user confirmed archiving although agents run). A worktree's files are never discarded:
/// what is left in it is committed on its branch before it is removed (SPEC 15).
#[tauri::command]
pub async fn archive_workspace(
    state: State<'_, AppState>,
    workspace_id: String,
    confirmed: Option<bool>,
) -> Answer<Vec<AgentId>> {
    let id = self::workspace_id("workspaceId", &workspace_id)?;
    let even_if_running = confirmed.unwrap_or(false);
    Ok(runtime(&state)?
        .archive_workspace(id, even_if_running)
        .await?)
}

/// Names a workspace; an empty name clears it (it is called by its branch or folder again).
#[tauri::command]
pub async fn rename_workspace(
    state: State<'_, AppState>,
    workspace_id: String,
    name: String,
) -> Answer<WorkspaceSnapshot> {
    let id = self::workspace_id("workspaceId", &workspace_id)?;
    Ok(runtime(&state)?.rename_workspace(id, &name).await?)
}

/// What a window gets back at start: who it is and the layout it had.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowLayout {
    /// `main`, or `window-N` for the windows "New window" opened.
    pub label: String,
    /// The layout this window saved last (opaque to the backend), if any.
    pub layout: Option<serde_json::Value>,
    /// A problem reading the saved layouts, to show once.
    pub notice: Option<String>,
}

impl From<WindowsError> for CommandError {
    fn from(e: WindowsError) -> Self {
        let code = match e {
            WindowsError::InvalidLayout(_) => "invalid",
            WindowsError::Write { .. } => "io",
            WindowsError::Open(_) => "window",
        };
        CommandError::new(code, e.to_string())
    }
}

/// The calling window's saved layout (each window only ever sees its own).
#[tauri::command]
pub fn window_layout_get<R: Runtime>(
    window: tauri::Window<R>,
    layouts: State<'_, Layouts>,
) -> WindowLayout {
    let label = window.label().to_string();
    WindowLayout {
        layout: layouts.get(&label),
        notice: layouts.take_notice(),
        label,
    }
}

/// Saves the calling window's layout (atomically, in `$PASEO_HOME/windows.json`).
#[tauri::command]
pub fn window_layout_set<R: Runtime>(
    window: tauri::Window<R>,
    layouts: State<'_, Layouts>,
    layout: serde_json::Value,
) -> Answer<()> {
    Ok(layouts.set(window.label(), layout)?)
}

/// Opens another client window with its own layout; answers its label. Async: building a
/// window from the main thread's command handler would wait on the main thread itself.
#[tauri::command]
pub async fn new_window<R: Runtime>(
    app: AppHandle<R>,
    layouts: State<'_, Layouts>,
) -> Answer<String> {
    let label = layouts.fresh_label(|label| app.get_webview_window(label).is_some());
    // Saved at once, so the window comes back after a restart even if it never saves a layout.
    layouts.set(&label, serde_json::json!({}))?;
    if let Err(error) = windows::open_extra(&app, &label) {
        let _ = layouts.remove(&label);
        return Err(error.into());
    }
    Ok(label)
}

/// The invoke handler with every command, for `Builder::invoke_handler`.
pub fn handler<R: Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
    tauri::generate_handler![
        app_info,
        confirm_action,
        open_settings,
        quit_app,
        fleet_snapshot,
        get_agent,
        archived_agents,
        create_agent,
        send_prompt,
        cancel_agent,
        stop_agent,
        archive_agent,
        archive_finished,
        detach_agent,
        reattach_agent,
        restore_agent,
        answer_permission,
        mark_seen,
        wake_agent,
        timeline,
        search_timeline,
        cancel_timeline_search,
        add_workspace,
        archive_workspace,
        rename_workspace,
        window_layout_get,
        window_layout_set,
        new_window,
        agent_changes,
        agent_diff,
        commit_agent_changes,
        merge_agent_changes,
        discard_agent_changes,
        open_in_editor,
        pr_status,
        create_pr,
        crate::notify::commands::window_presence,
        crate::notify::commands::notification_settings,
        crate::notify::commands::set_notification_settings
    ]
}
