// The one seam between the UI and the backend: every command, event and native dialog goes
// through here, and no other module touches window.__TAURI__. Served to a plain browser, it
// fails with a clear error instead of undefined-property crashes.
//
// Three commands reach the backend: `call` carries one request of the core's API (paseo-core's
// api/request.rs: `{kind, ...fields}`, answered `{kind, value}`), `window` what only a window
// has (its layout, presence, another window, the menu's app entries) and `confirm_action` the
// native confirm. The named functions below keep the components' vocabulary over them.

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

/** One request of the core's API as the user; resolves to the answer's value. */
async function request(kind, fields = {}) {
  const answer = await call('call', { request: { kind, ...fields } });
  return answer.value ?? null;
}

/** One of the window's own actions (commands/window.rs in the shell). */
function windowAction(kind, fields = {}) {
  return call('window', { action: { kind, ...fields } });
}

/** Facts about the running app: version, data root, log folder, pid, backend state, counts. */
export function appInfo() {
  return windowAction('appInfo');
}

/** Opens $PASEO_HOME/config.json with the system opener; resolves to its path. */
export function openSettings() {
  return windowAction('openSettings');
}

/** Quits the app (the tray's Quit: a native confirm first when agents are running). */
export function quitApp() {
  return windowAction('quit');
}

/**
 * Everything a window renders from: agents (cards: what lists, tabs, tracks and headers show;
 * instants in epoch milliseconds; paseo-core's runtime/window.rs `AgentCard`), workspaces,
 * projects, tracks ({parentAgentId, members, counts?}; `quietCounts` [size, counts] for those
 * without), providers, counts, notices. `first` ({workspaceId, agentIds}): only the cards the
 * first screen shows (`whole` is then false, and `fleetCards` has the rest); without it, every card.
 */
export function fleetSnapshot(first) {
  return first ? request('fleetFirstScreen', first) : request('fleetSnapshot');
}

/**
 * A page of up to `limit` cards, oldest first, created after `after` (the previous page's
 * `next`; null: from the oldest): {agents, tracks, quietCounts, next}.
 */
export function fleetCards(after = null, limit = 5000) {
  return request('fleetCards', { after, limit });
}

/** One agent's whole snapshot: its card's fields plus config (model, system prompt), last message, last error… */
export function getAgent(agentId) {
  return request('getAgent', { agentId });
}

/**
 * A page of archived agents, most recently archived first: {agents, total}; with `host`, that
 * connected host's (SPEC 17).
 */
export function archivedAgents(offset = 0, limit = 500, host = null) {
  return request('archivedAgents', { offset, limit, ...(host ? { host } : {}) });
}

/** Where the form says the agent works, as the create request's `workspace`. */
function workspaceOf(form) {
  const directory = (form.directory ?? '').trim();
  if (form.worktree && !form.workspaceId && !directory) {
    return { kind: 'worktree', repo: (form.worktree.repo ?? '').trim(), target: form.worktree.target };
  }
  if (form.workspaceId && !directory && !form.worktree)
    return { kind: 'existing', workspaceId: form.workspaceId };
  // A directory that already has a workspace gets the agent there, not a second workspace: the
  // core's rule (`reuse`), here or on a host.
  if (directory && !form.workspaceId && !form.worktree)
    return { kind: 'directory', path: directory, reuse: true };
  throw new BackendError(
    'invalid',
    'workspace: choose a workspace, a directory or a new worktree',
    'workspace',
  );
}

/**
 * form: {provider, model?, mode?, title?, prompt?, autoArchive, unconfined, and one of workspaceId,
 * directory, or worktree: {repo, target: {kind: 'branch-off', newBranch, base?} |
 * {kind: 'checkout-branch', branch}}}: one request, the worktree made with the agent.
 */
export async function createAgent(form) {
  return request('createAgent', {
    provider: form.provider,
    workspace: workspaceOf(form),
    model: form.model ?? null,
    mode: form.mode ?? null,
    title: form.title ?? null,
    prompt: form.prompt?.trim() ? form.prompt : null,
    autoArchive: Boolean(form.autoArchive),
    unconfined: Boolean(form.unconfined),
    // The configured host it runs on (SPEC 17); absent: this machine.
    ...(form.host ? { host: form.host } : {}),
  });
}

/** Sends the user's prompt; resolves to the agent right after. */
export async function sendPrompt(agentId, prompt) {
  const sent = await request('prompt', { agentId, prompt });
  return sent.agent;
}

/** Interrupts the current turn; resolves to the agent once the turn has ended. */
export function cancelAgent(agentId) {
  return request('cancel', { agentId });
}

/** Archives the agent and its subagents; resolves once that is durable. */
export function archiveAgent(agentId) {
  return request('archive', { agentId });
}

/**
 * What archiving the agent would take along and stop: {heads: [{id, title, provider, running,
 * subagents, runningSubagents}], kept: []}, for its confirm dialog.
 */
export function archivePlan(agentId) {
  return request('archivePlan', { agentId });
}

/** What "Archive finished" on the parent would archive (`heads`) and leave (`kept`: {id, title, provider, why}). */
export function finishedPlan(parentId) {
  return request('finishedPlan', { parentId });
}

/** Archives every subagent of the parent that is not running, as one batch. */
export function archiveFinished(parentId) {
  return request('archiveFinished', { parentId });
}

export function detachAgent(agentId) {
  return request('detach', { agentId });
}

/**
 * The undo of a detach: the agent goes back under `parentId` if that narrows power (SPEC 14),
 * else a `conflict` saying why; `check` only asks.
 */
export function reattachAgent(agentId, parentId, check = false) {
  return request('reattach', { agentId, parentId, check });
}

/**
 * Restores the batch the agent was archived in, or with `member` only the agent and what was
 * archived below it; `asRoot` after the user agreed to a conflict.
 */
export function restoreAgent(agentId, asRoot = false, member = false) {
  return request('restore', { agentId, asRoot, member });
}

export function answerPermission(agentId, requestId, allow) {
  return request('answerPermission', { agentId, requestId, allow });
}

/** Sets, raises or (null) clears an agent's budget (SPEC 18); resolves to the agent after. */
export function setBudget(agentId, budget) {
  return request('setBudget', { agentId, budget });
}

export function markSeen(agentId) {
  return request('markSeen', { agentId });
}

/** Resumes a closed agent's session (closed → initializing); resolves to whether it started one. */
export function wakeAgent(agentId) {
  return request('wake', { agentId });
}

/** Timeline items with seq < before (absent: the newest), at most `limit`, oldest first. */
export function timeline(agentId, before, limit = 200) {
  return request('timeline', { agentId, before: before ?? null, limit });
}

/**
 * Finds `query` (case-insensitive) in the agent's whole timeline, the part paged out to disk
 * included: {hits: [{seq, count}], total, truncated}. A later search (or cancelTimelineSearch)
 * from this window cancels it: it then rejects with code `canceled`.
 */
export function searchTimeline(agentId, query) {
  return request('searchTimeline', { agentId, query });
}

export function cancelTimelineSearch() {
  return request('cancelSearch');
}

export function addWorkspace(path) {
  return request('addWorkspace', { path });
}

/** Names a workspace; an empty name clears it. Resolves to the workspace. */
export function renameWorkspace(workspaceId, name) {
  return request('renameWorkspace', { workspaceId, name });
}

/** Removes (archives) a workspace and archives its agents; `confirmed` once the user agreed to stop running ones. */
export function archiveWorkspace(workspaceId, confirmed) {
  return request('archiveWorkspace', { workspaceId, evenIfRunning: Boolean(confirmed) });
}

/** {label, layout, notice}: who this window is and the layout it saved last. */
export function windowLayout() {
  return windowAction('layout');
}

export function saveWindowLayout(layout) {
  return windowAction('saveLayout', { layout });
}

/** Opens another client window; resolves to its label. */
export function newWindow() {
  return windowAction('newWindow');
}

/** What the agent changed on disk: {files, totals, baseBranch, workspaceKind, branch, …}. */
export function agentChanges(agentId) {
  return request('changes', { agentId });
}

/** A page of one changed file's diff: {file, hunks, totalLines, offset, nextOffset}. */
export function agentDiff(agentId, path, offset = 0, limit = 1000) {
  return request('diff', { agentId, path, offset, limit });
}

export function commitAgentChanges(agentId, message) {
  return request('commit', { agentId, message });
}

export function mergeAgentChanges(agentId) {
  return request('merge', { agentId });
}

export function discardAgentChanges(agentId) {
  return request('discard', { agentId });
}

/** Opens the agent's folder, or one changed file (`path`), in the user's editor. */
export function openInEditor(agentId, path) {
  return request('openInEditor', { agentId, path: path ?? null });
}

/** {state: 'ready'} or {state: 'unavailable', reason}. */
export function prStatus(agentId) {
  return request('prStatus', { agentId });
}

export function createPr(agentId, title, body) {
  return request('createPr', { agentId, title, body });
}

/**
 * config.json `hosts` with each one's state (SPEC 17, docs/hosts.md): [{name, ssh, command?,
 * state: connecting | connected | disconnected | failed, lastSeen?, error?, code?,
 * installHelps?, agents, counts}].
 */
export function listHosts() {
  return request('listHosts');
}

/** Adds {name, ssh} to config.json `hosts` and connects; a bad field is `invalid` naming `host.<field>`. */
export function addHost(name, ssh) {
  return request('addHost', { host: { name, ssh } });
}

/** Removes the host from config.json `hosts`; nothing on the host stops. */
export function removeHost(name) {
  return request('removeHost', { name });
}

/** Copies this app's paseo-headless to the host's ~/.local/bin (after the user confirmed), then connects. */
export function installHost(name) {
  return request('installHost', { name });
}

/** The fields naming where a schedule request runs: a host's name, or nothing for this machine. */
const on = (host) => (host ? { host } : {});

/**
 * config.json `schedules` (SPEC 20) of this machine or of `host` (where they run), each {name,
 * entry (as config.json has it), words, paused, next: [three due times], last?: {due, at, what:
 * started | passed | failed, agentId?, late?, why?}}.
 */
export function listSchedules(host = null) {
  return request('listSchedules', on(host));
}

/** {words, next: [three due times]} of a `cron`, `every` or `at` as typed; `invalid` naming it. */
export function previewSchedule(when, host = null) {
  return request('previewSchedule', { ...when, ...on(host) });
}

/** Saves `schedule` (config.json's shape) as new or in place of `replaces`; `invalid` names `schedule.<field>`. */
export function saveSchedule(schedule, replaces = null, host = null) {
  return request('saveSchedule', { schedule, ...(replaces ? { replaces } : {}), ...on(host) });
}

export function deleteSchedule(name, host = null) {
  return request('deleteSchedule', { name, ...on(host) });
}

export function pauseSchedule(name, paused, host = null) {
  return request('pauseSchedule', { name, paused, ...on(host) });
}

/** Starts a run of the schedule now. */
export function runSchedule(name, host = null) {
  return request('runSchedule', { name, ...on(host) });
}

/**
 * A connected host's window snapshot and the number of the last host event it reflects:
 * {seq, snap} (snap as fleetSnapshot's); `disconnected` while the host is not connected.
 */
export async function hostSnapshot(host) {
  const answer = await request('syncSnapshot', { host });
  return { seq: answer.seq, snap: answer.window };
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
  const chosen = await tauri().dialog.open({
    directory: true,
    multiple: false,
    title,
    defaultPath: from || undefined,
  });
  return Array.isArray(chosen) ? (chosen[0] ?? null) : (chosen ?? null);
}

/** Tells the app whether this window has focus and which agent's tab it shows (no desktop notification for that agent then). */
export function windowPresence(focused, agentId) {
  return windowAction('presence', { focused, agentId: agentId ?? null });
}

/** config.json `notifications`: {enabled, permission, error, finished, subagentFinished}. */
export function notificationSettings() {
  return request('notificationSettings');
}

/** Writes `notifications` into config.json and applies it; resolves to the settings in force. */
export function setNotificationSettings(settings) {
  return request('setNotificationSettings', { settings });
}
