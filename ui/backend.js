// The one seam between the UI and the backend: every command, event and native dialog goes
// through here, and no other module touches window.__TAURI__. Served to a plain browser, it
// fails with a clear error instead of undefined-property crashes.

function tauri() {
  const api = window.__TAURI__;
  if (!api || !api.core) {
    throw new Error('Paseo backend unavailable: this page is not running inside the Paseo app');
  }
  return api;
}

/**
 * A failed command: `code` is stable (invalid, not_found, conflict, busy, …), `message` is for
 * people, `field` (when known) is the path of the input at fault, e.g. `workspace.source.repo`.
 */
export class BackendError extends Error {
  constructor(code, message, field = null) {
    super(message);
    this.code = code;
    this.field = field;
  }
}

// Rejections arrive as {code, message} objects or strings; give callers a BackendError.
async function call(command, args) {
  try {
    return await tauri().core.invoke(command, args);
  } catch (error) {
    if (error instanceof Error) throw error;
    if (error && typeof error === 'object' && 'message' in error) {
      throw new BackendError(error.code || 'error', String(error.message), error.field ?? null);
    }
    throw new BackendError('error', typeof error === 'string' ? error : JSON.stringify(error));
  }
}

/** Facts about the running app: version, data root, log folder, pid, backend state, counts. */
export function appInfo() {
  return call('app_info');
}

/** Opens $PASEO_HOME/config.json with the system opener; resolves to its path. */
export function openSettings() {
  return call('open_settings');
}

/** Quits the app (the tray's Quit: a native confirm first when agents are running). */
export function quitApp() {
  return call('quit_app');
}

/**
 * Everything a window renders from: agents (cards: what lists, tabs, tracks and headers show;
 * instants in epoch milliseconds; paseo-core's runtime/window.rs `AgentCard`), workspaces,
 * projects, tracks ({parentAgentId, members, counts?}), providers, counts, notices. `first`
 * ({workspaceId, agentIds}): only the cards the first screen shows (`whole` is then false, and
 * `fleetCards` has the rest); without it, every card.
 */
export function fleetSnapshot(first) {
  return call('fleet_snapshot', { query: first ? { kind: 'first', ...first } : { kind: 'whole' } });
}

/**
 * A page of up to `limit` cards, oldest first, created after `after` (the previous page's
 * `next`; null: from the oldest): {agents, tracks, next}.
 */
export function fleetCards(after = null, limit = 5000) {
  return call('fleet_snapshot', { query: { kind: 'after', after, limit } });
}

/** One agent's whole snapshot: its card's fields plus config (model, system prompt), last message, last error… */
export function getAgent(agentId) {
  return call('get_agent', { agentId });
}

/** A page of archived agents, most recently archived first: {agents, total}. */
export function archivedAgents(offset = 0, limit = 500) {
  return call('archived_agents', { offset, limit });
}

/**
 * form: {provider, model?, mode?, title?, prompt?, autoArchive, unconfined, and one of workspaceId,
 * directory, or worktree: {repo, target: {kind: 'branch-off', newBranch, base?} |
 * {kind: 'checkout-branch', branch}}}
 */
export function createAgent(form) {
  return call('create_agent', { form });
}

export function sendPrompt(agentId, prompt) {
  return call('send_prompt', { agentId, prompt });
}

/** Interrupts the current turn; resolves once it has ended. */
export function cancelAgent(agentId) {
  return call('cancel_agent', { agentId });
}

/** Archives the agent and its subagents; resolves once that is durable. */
export function archiveAgent(agentId) {
  return call('archive_agent', { agentId });
}

/** Archives every subagent of the parent that is not running, as one batch. */
export function archiveFinished(parentId) {
  return call('archive_finished', { parentId });
}

export function detachAgent(agentId) {
  return call('detach_agent', { agentId });
}

/**
 * The undo of a detach: the agent goes back under `parentId` if that narrows power (SPEC 14),
 * else a `conflict` saying why; `check` only asks.
 */
export function reattachAgent(agentId, parentId, check = false) {
  return call('reattach_agent', { agentId, parentId, check });
}

/**
 * Restores the batch the agent was archived in, or with `member` only the agent and what was
 * archived below it; `asRoot` after the user agreed to a conflict.
 */
export function restoreAgent(agentId, asRoot = false, member = false) {
  return call('restore_agent', { agentId, asRoot, member });
}

export function answerPermission(agentId, requestId, allow) {
  return call('answer_permission', { agentId, requestId, allow });
}

export function markSeen(agentId) {
  return call('mark_seen', { agentId });
}

/** Resumes a closed agent's session (closed → initializing); resolves to whether it started one. */
export function wakeAgent(agentId) {
  return call('wake_agent', { agentId });
}

/** Timeline items with seq < before (absent: the newest), at most `limit`, oldest first. */
export function timeline(agentId, before, limit = 200) {
  return call('timeline', { agentId, before: before ?? null, limit });
}

/**
 * Finds `query` (case-insensitive) in the agent's whole timeline, the part paged out to disk
 * included: {hits: [{seq, count}], total, truncated}. A later search (or cancelTimelineSearch)
 * from this window cancels it: it then rejects with code `canceled`.
 */
export function searchTimeline(agentId, query) {
  return call('search_timeline', { agentId, query });
}

export function cancelTimelineSearch() {
  return call('cancel_timeline_search');
}

export function addWorkspace(path) {
  return call('add_workspace', { path });
}

/** Names a workspace; an empty name clears it. Resolves to the workspace. */
export function renameWorkspace(workspaceId, name) {
  return call('rename_workspace', { workspaceId, name });
}

/** Removes (archives) a workspace and archives its agents; `confirmed` once the user agreed to stop running ones. */
export function archiveWorkspace(workspaceId, confirmed) {
  return call('archive_workspace', { workspaceId, confirmed });
}

/** {label, layout, notice}: who this window is and the layout it saved last. */
export function windowLayout() {
  return call('window_layout_get');
}

export function saveWindowLayout(layout) {
  return call('window_layout_set', { layout });
}

/** Opens another client window; resolves to its label. */
export function newWindow() {
  return call('new_window');
}

/** What the agent changed on disk: {files, totals, baseBranch, workspaceKind, branch, …}. */
export function agentChanges(agentId) {
  return call('agent_changes', { agentId });
}

/** A page of one changed file's diff: {file, hunks, totalLines, offset, nextOffset}. */
export function agentDiff(agentId, path, offset = 0, limit = 1000) {
  return call('agent_diff', { agentId, path, offset, limit });
}

export function commitAgentChanges(agentId, message) {
  return call('commit_agent_changes', { agentId, message });
}

export function mergeAgentChanges(agentId) {
  return call('merge_agent_changes', { agentId });
}

export function discardAgentChanges(agentId) {
  return call('discard_agent_changes', { agentId });
}

/** Opens the agent's folder, or one changed file (`path`), in the user's editor. */
export function openInEditor(agentId, path) {
  return call('open_in_editor', { agentId, path: path ?? null });
}

/** {state: 'ready'} or {state: 'unavailable', reason}. */
export function prStatus(agentId) {
  return call('pr_status', { agentId });
}

export function createPr(agentId, title, body) {
  return call('create_pr', { agentId, title, body });
}

/** Subscribes to a backend event; resolves to a function that unsubscribes. */
export function listen(event, handler) {
  return tauri().event.listen(event, (message) => handler(message.payload));
}

/**
 * Asks with the app's native confirm (SPEC 10) and resolves to true when the user chose
 * `action`, the verb on the button that does the gesture ("Archive", "Commit", "Quit"; never a
 * bare OK). Cancel is the other button, focused first; Escape cancels too. Every destructive or
 * cascading gesture goes through this, naming what will happen.
 */
export function confirm(title, message, action) {
  return call('confirm_action', { confirm: { title, message, action } });
}

/** The native folder picker (starting in `from` when given); resolves to the chosen path or null. */
export async function pickFolder(title, from) {
  const chosen = await tauri().dialog.open({ directory: true, multiple: false, title, defaultPath: from || undefined });
  return Array.isArray(chosen) ? chosen[0] ?? null : chosen ?? null;
}

/** Tells the app whether this window has focus and which agent's tab it shows (no desktop notification for that agent then). */
export function windowPresence(focused, agentId) {
  return call('window_presence', { focused, agentId: agentId ?? null });
}

/** config.json `notifications`: {enabled, permission, error, finished, subagentFinished}. */
export function notificationSettings() {
  return call('notification_settings');
}

/** Writes `notifications` into config.json and applies it; resolves to the settings in force. */
export function setNotificationSettings(settings) {
  return call('set_notification_settings', { settings });
}
