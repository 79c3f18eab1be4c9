//! The Changes view's commands: what an agent changed, one file's diff, and the
//! user's actions on it. The UI asks with a native confirm before each action.

use super::{agent_id, runtime, Answer};
use crate::state::AppState;
use paseo_core::runtime::{AgentChanges, AgentDiff};
use paseo_core::workspaces::changes::{Discarded, GhStatus, Merged, Page};
use tauri::State;

#[tauri::command]
pub async fn agent_changes(state: State<'_, AppState>, agent_id: String) -> Answer<AgentChanges> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.agent_changes(id).await?)
}

/// A page of one changed file's diff (`offset`, `limit` in diff lines).
#[tauri::command]
pub async fn agent_diff(
    state: State<'_, AppState>,
    agent_id: String,
    path: String,
    offset: usize,
    limit: usize,
) -> Answer<AgentDiff> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?
        .agent_diff(id, path, Page { offset, limit })
        .await?)
}

/// Commits everything in the agent's working tree; answers the new commit.
#[tauri::command]
pub async fn commit_agent_changes(
    state: State<'_, AppState>,
    agent_id: String,
    message: String,
) -> Answer<String> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.commit_agent_changes(id, message).await?)
}

/// Merges a worktree agent's branch into its base branch.
#[tauri::command]
pub async fn merge_agent_changes(state: State<'_, AppState>, agent_id: String) -> Answer<Merged> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.merge_agent_changes(id).await?)
}

/// Discards the agent's uncommitted work, kept first in a snapshot commit.
#[tauri::command]
pub async fn discard_agent_changes(
    state: State<'_, AppState>,
    agent_id: String,
) -> Answer<Option<Discarded>> {
    let id = self::agent_id("agentId", &agent_id)?;
    let rt = runtime(&state)?;
    let title = rt.get(id).await?.record.title;
    Ok(rt.discard_agent_changes(id, title).await?)
}

/// Opens the agent's folder, or one changed file, in the user's editor.
#[tauri::command]
pub async fn open_in_editor(
    state: State<'_, AppState>,
    agent_id: String,
    path: Option<String>,
) -> Answer<String> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.open_in_editor(id, path).await?)
}

/// Whether a pull request can be opened (gh installed and signed in), or why not.
#[tauri::command]
pub async fn pr_status(state: State<'_, AppState>, agent_id: String) -> Answer<GhStatus> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.pr_status(id).await?)
}

/// Pushes the agent's branch and opens a pull request into its base; answers its URL.
#[tauri::command]
pub async fn create_pr(
    state: State<'_, AppState>,
    agent_id: String,
    title: String,
    body: String,
) -> Answer<String> {
    let id = self::agent_id("agentId", &agent_id)?;
    Ok(runtime(&state)?.create_pr(id, title, body).await?)
}
