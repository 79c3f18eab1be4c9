//! What a client asks: one variant per gesture of the window or tool of the MCP server. On the
//! wire a request is one JSON object, `{"kind": "archive", "agentId": "…"}`: the frames the
//! window sends through its one command and a remote host will carry over ssh (SPEC 17).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ApiError;
use crate::config::NotificationsConfig;
use crate::hosts::Host;
use crate::model::{AgentId, Budget, Status, WorkspaceId};
use crate::runtime::WorkspaceTarget;
use crate::workspaces::worktree::WorktreeTarget;

/// One request. Optional fields may be left out; unknown fields are refused, so a misspelt
/// option is an error naming it instead of a silent default.
// One request lives for one call and is moved, never stored in bulk: a big `createAgent` costs
// nothing worth boxing its fields for (and every client would build it differently).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum Request {
    /// What a window renders from, with every agent's card (runtime/window.rs `AgentCard`).
    FleetSnapshot,
    /// One agent's whole snapshot.
    GetAgent {
        agent_id: AgentId,
    },
    /// Agents matching the filter, oldest first, at most `limit` (default 100), and how many
    /// match in all.
    ListAgents {
        #[serde(default)]
        include_archived: bool,
        #[serde(default)]
        parent_id: Option<AgentId>,
        #[serde(default)]
        workspace_id: Option<WorkspaceId>,
        #[serde(default)]
        statuses: Option<Vec<Status>>,
        #[serde(default)]
        limit: Option<usize>,
        /// Only the agents of this configured host (SPEC 17); absent: this machine's and, for
        /// the user, every connected host's.
        #[serde(default)]
        host: Option<String>,
    },
    /// Archived agents, most recently archived first, a page at a time (default 500, at most
    /// 10,000).
    ArchivedAgents {
        #[serde(default)]
        offset: Option<usize>,
        #[serde(default)]
        limit: Option<usize>,
        /// That configured host's archived agents (SPEC 17); absent: this machine's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// A new agent with where it works, one gesture: an existing workspace, a directory, or a
    /// new git worktree made for it (SPEC 8).
    CreateAgent {
        provider: String,
        workspace: WorkspaceTarget,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        mode: Option<String>,
        #[serde(default)]
        title: Option<String>,
        /// The first prompt (blank: none).
        #[serde(default)]
        prompt: Option<String>,
        /// A subagent of the calling agent (else a root agent).
        #[serde(default)]
        subagent: bool,
        #[serde(default)]
        notify_on_finish: Option<bool>,
        #[serde(default)]
        auto_archive: bool,
        /// Outside the sandbox (SPEC 16); an agent asking for it is held (SPEC 14).
        #[serde(default)]
        unconfined: bool,
        #[serde(default)]
        labels: BTreeMap<String, String>,
        /// Names the request for a worktree it makes (an MCP call id).
        #[serde(default)]
        request_id: Option<String>,
        /// Its own budget (SPEC 18); an agent's child gets at most what its tree has left.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<Budget>,
        /// The configured host it runs on (SPEC 17); absent: this machine. The user's only.
        #[serde(default)]
        host: Option<String>,
    },
    /// A git worktree workspace of the repository containing `repo` (default for an agent:
    /// its own cwd).
    CreateWorktree {
        #[serde(default)]
        repo: Option<String>,
        target: WorktreeTarget,
        #[serde(default)]
        request_id: Option<String>,
        /// Made on that configured host, of its repository (SPEC 17); absent: this machine.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// Sends a prompt; background and notification default by the caller (SPEC 8).
    Prompt {
        agent_id: AgentId,
        prompt: String,
        #[serde(default)]
        background: Option<bool>,
        #[serde(default)]
        notify_on_finish: Option<bool>,
    },
    /// Interrupts the current turn; answers the agent once the turn has ended.
    Cancel {
        agent_id: AgentId,
    },
    /// Stops the agent's process (it stays resumable).
    Stop {
        agent_id: AgentId,
    },
    /// Waits until the agent is neither initializing nor running, or needs a permission; at
    /// most `timeoutSecs` (default 600).
    Wait {
        agent_id: AgentId,
        #[serde(default)]
        timeout_secs: Option<f64>,
    },
    /// Archives the agent and its subagents; answers once that is durable.
    Archive {
        agent_id: AgentId,
    },
    /// Every child of the parent that is not running, as one batch.
    ArchiveFinished {
        parent_id: AgentId,
    },
    /// What archiving the agent would take along and stop, for the confirm dialog.
    ArchivePlan {
        agent_id: AgentId,
    },
    /// What "Archive finished" on the parent would archive, and which children it would leave
    /// and why.
    FinishedPlan {
        parent_id: AgentId,
    },
    /// Restores the batch the agent was archived in (with `member`, only it and what was
    /// archived below it), with the workspaces the batch lives in re-added first.
    Restore {
        agent_id: AgentId,
        #[serde(default)]
        as_root: bool,
        #[serde(default)]
        member: bool,
    },
    Detach {
        agent_id: AgentId,
    },
    /// The undo of a detach (SPEC 14); `check` only asks whether it may.
    Reattach {
        agent_id: AgentId,
        parent_id: AgentId,
        #[serde(default)]
        check: bool,
    },
    /// Resumes a closed agent's session; answers whether one started.
    Wake {
        agent_id: AgentId,
    },
    AnswerPermission {
        agent_id: AgentId,
        request_id: String,
        allow: bool,
    },
    /// The user opened the agent: its attention is seen.
    MarkSeen {
        agent_id: AgentId,
    },
    /// Timeline items with `seq < before` (absent or 0: the newest), at most `limit` (default
    /// 200), oldest first.
    Timeline {
        agent_id: AgentId,
        #[serde(default)]
        before: Option<u64>,
        #[serde(default)]
        limit: Option<usize>,
    },
    /// Finds `query` in the agent's whole timeline. A later search with the same `scope` (a
    /// window) cancels this one, which then fails with code `canceled`.
    SearchTimeline {
        agent_id: AgentId,
        query: String,
        #[serde(default)]
        scope: Option<String>,
    },
    /// Stops the running search of `scope`, if any.
    CancelSearch {
        #[serde(default)]
        scope: Option<String>,
    },
    /// What the agent changed on disk (the Changes view).
    Changes {
        agent_id: AgentId,
    },
    /// A page of one changed file's diff, in diff lines.
    Diff {
        agent_id: AgentId,
        path: String,
        #[serde(default)]
        offset: usize,
        #[serde(default = "default_diff_limit")]
        limit: usize,
    },
    Commit {
        agent_id: AgentId,
        message: String,
    },
    /// Keeps the uncommitted work in a snapshot commit, then discards it.
    Discard {
        agent_id: AgentId,
    },
    Merge {
        agent_id: AgentId,
    },
    CreatePr {
        agent_id: AgentId,
        title: String,
        body: String,
    },
    PrStatus {
        agent_id: AgentId,
    },
    /// Opens the agent's folder, or one changed file, in the user's editor.
    OpenInEditor {
        agent_id: AgentId,
        #[serde(default)]
        path: Option<String>,
    },
    AddWorkspace {
        path: String,
        /// Added on that configured host, its directory (SPEC 17); absent: this machine.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// Names a workspace; an empty name clears it.
    RenameWorkspace {
        workspace_id: WorkspaceId,
        name: String,
    },
    /// Archives (removes) a workspace; refused (`busy`) while agents run in it unless
    /// `evenIfRunning`.
    ArchiveWorkspace {
        workspace_id: WorkspaceId,
        #[serde(default)]
        even_if_running: bool,
    },
    /// config.json `notifications`.
    NotificationSettings,
    /// Writes config.json `notifications` (the rest of the file kept).
    SetNotificationSettings {
        settings: NotificationsConfig,
    },
    /// What a window's first screen renders from: the fleet as `fleetSnapshot` has it but with
    /// only the cards that screen shows (the agents of `workspaceId`, else of the workspace
    /// active last, and `agentIds`, its tabs, with their families); `fleetCards` has the rest.
    FleetFirstScreen {
        #[serde(default)]
        workspace_id: Option<String>,
        #[serde(default)]
        agent_ids: Vec<String>,
    },
    /// Up to `limit` (default 5,000, at most 20,000) unarchived agents' cards created after
    /// `after` (the previous page's `next`, [created ms, id]; none: from the oldest), oldest
    /// first, with their tracks and the key to ask after next (null at the end).
    FleetCards {
        #[serde(default)]
        after: Option<(i64, AgentId)>,
        #[serde(default)]
        limit: Option<usize>,
    },
    /// The window's snapshot with the number of the last event it reflects: a client that
    /// numbers its events (a host's, SPEC 17) applies only those after it. With `host`, that
    /// host's, numbered as its events are (`paseo://host-event`).
    SyncSnapshot {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// Sets, raises or (with no `budget`) clears an agent's budget (SPEC 18); turns that
    /// waited on it run. The user's alone: an agent may never widen its own tree's budget.
    SetBudget {
        agent_id: AgentId,
        #[serde(default)]
        budget: Option<Budget>,
    },
    /// config.json `hosts` with each one's connection state and numbers (SPEC 17).
    ListHosts,
    /// Adds a host to config.json `hosts` and connects to it.
    AddHost {
        host: Host,
    },
    /// Removes a host from config.json `hosts`; nothing on the host stops.
    RemoveHost {
        name: String,
    },
    /// Copies this app's paseo-headless to the host's `~/.local/bin` (the window confirms
    /// first), then connects.
    InstallHost {
        name: String,
    },
}

fn default_diff_limit() -> usize {
    1_000
}

impl Request {
    /// Reads one request frame; a bad one is an `invalid` error naming the field at fault
    /// (`kind` for an unknown request).
    pub fn from_json(text: &str) -> Result<Request, ApiError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad_request(&e, None))?;
        Self::from_value(value)
    }

    /// As [`Self::from_json`], from an already parsed value (the window's command).
    pub fn from_value(value: serde_json::Value) -> Result<Request, ApiError> {
        serde_json::from_value(value.clone()).map_err(|e| bad_request(&e, Some(&value)))
    }

    /// The request's `kind`, for logs.
    pub fn kind(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v["kind"].as_str().map(String::from))
            .unwrap_or_default()
    }
}

/// serde names the field in its message (`missing field `agentId``, `unknown variant `x``);
/// the field goes into the error's own slot so a client points at it without parsing. A bad
/// value (`invalid agent id "x"`) is named by the field holding it: serde does not track the
/// path inside a tagged enum.
fn bad_request(e: &serde_json::Error, frame: Option<&serde_json::Value>) -> ApiError {
    let message = e.to_string();
    let quoted = message.split('`').nth(1).map(str::to_string);
    let field = if message.contains("unknown variant") || message.contains("missing field `kind`") {
        Some("kind".to_string())
    } else if message.contains("missing field") || message.contains("unknown field") {
        quoted
    } else {
        frame.and_then(|f| holder(f, "", &message))
    };
    let message = match &field {
        Some(f) if !message.starts_with(f.as_str()) => format!("{f}: {message}"),
        _ => message,
    };
    ApiError {
        code: "invalid".to_string(),
        message,
        field,
    }
}

/// The path of the field in `frame` whose value the message quotes, if one does.
fn holder(frame: &serde_json::Value, prefix: &str, message: &str) -> Option<String> {
    let object = frame.as_object()?;
    object.iter().find_map(|(key, value)| {
        if prefix.is_empty() && key == "kind" {
            return None;
        }
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        let quoted = match value {
            serde_json::Value::String(s) => Some(format!("\"{s}\"")),
            serde_json::Value::Number(n) => Some(n.to_string()),
            serde_json::Value::Bool(b) => Some(format!("`{b}`")),
            serde_json::Value::Object(_) => return holder(value, &path, message),
            _ => None,
        };
        quoted
            .filter(|q| message.contains(q.as_str()))
            .map(|_| path)
    })
}
