// The window's controller: boots from the backend (app info, this window's saved layout, the
// fleet snapshot), keeps the fleet current from events, turns gestures into backend calls (with
// native confirms where something would be destroyed), and redraws dirty areas once per frame.
import * as backend from './backend.js';
import { h, errorMessage, plural } from './dom.js';
import { fleet, onChange, loadSnapshot, applyEvent, addNotice, descendants, rootOf, childrenOf, isFinished } from './store.js';
import * as layout from './layout.js';
import * as timelines from './timeline-model.js';
import { register, invalidate, flush } from './render.js';
import { agentName, isActive } from './status.js';
import { Sidebar } from './components/sidebar.js';
import { TabStrip } from './components/tab-strip.js';
import { AgentPane } from './components/agent-pane.js';
import { NewAgentForm } from './components/new-agent-form.js';
import { WorkspaceHome } from './components/workspace-home.js';
import { renderWelcome } from './components/welcome.js';
import { renderNotices } from './components/notices.js';
import { renderStatus } from './components/status-bar.js';
import { openMenu, closeMenu } from './components/menu.js';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

/** What this window shows beyond the layout; not persisted. */
const ui = {
  info: null,
  label: 'main',
  formOpen: false,
  backend: { kind: 'connecting' },
  archived: { open: false, count: 0, batches: null, busy: new Set() },
  /** Agents whose archive or close is in progress (a second click does nothing). */
  closing: new Set(),
  seenInFlight: new Set(),
  view: null,
};

// ------------------------------------------------------------------------------ components

const actions = {
  open: (id, opts) => openAgent(id, opts),
  activate: (id) => activateTab(id),
  home: () => showHome(),
  close: (id) => closeTab(id),
  newAgent: (wsId) => showForm(wsId),
  newWindow: () => newWindow(),
  addWorkspace: () => addWorkspace(),
  select: (wsId) => selectWorkspace(wsId),
  toggleProject: (id) => { layout.toggleIn('collapsedProjects', id); invalidate('sidebar'); },
  toggleArchived: () => toggleArchived(),
  restore: (id) => restore(id),
  menu: (anchor) => showMenu(anchor),
  send: (id, text) => backend.sendPrompt(id, text),
  interrupt: (id) => backend.cancelAgent(id),
  answerPermission: (id, requestId, allow) => backend.answerPermission(id, requestId, allow),
  detach: (id) => detach(id),
  archiveChild: (id) => archiveChild(id),
  archiveFinished: (id) => archiveFinished(id),
  toggleTrack: (id) => { layout.toggleIn('collapsedTracks', id); invalidate('pane'); },
  isTrackCollapsed: (id) => layout.layout.collapsedTracks.includes(id),
};

const sidebar = new Sidebar($('sidebar'), actions);
const tabStrip = new TabStrip($('tab-strip'), actions);
const pane = new AgentPane(actions, () => invalidate('timeline'));
const form = new NewAgentForm({
  create: (f) => createAgent(f),
  cancel: () => { ui.formOpen = false; invalidate('tabs', 'pane'); },
  pickFolder: () => backend.pickFolder('Choose a directory for the agent', pickerStart()),
});
const home = new WorkspaceHome({ open: (id) => openAgent(id), newAgent: (wsId) => showForm(wsId) });
const region = $('pane-region');

function currentView() {
  if (!fleet.loaded) return 'loading';
  if (ui.formOpen) return 'form';
  const id = layout.activeAgentId();
  if (id && fleet.agents.has(id)) return 'agent';
  if (layout.layout.selected && fleet.workspaces.has(layout.layout.selected)) return 'home';
  if (fleet.workspaces.size === 0 && fleet.agents.size === 0) return 'welcome';
  return 'home';
}

register('sidebar', () => {
  sidebar.render({ selected: layout.layout.selected, collapsedProjects: new Set(layout.layout.collapsedProjects) });
});
register('archived', () => {
  ui.archived.open = layout.layout.archivedOpen;
  ui.archived.count = fleet.counts.archived ?? 0;
  sidebar.renderArchived(ui.archived);
});
register('tabs', () => {
  const g = layout.currentGroup();
  tabStrip.render({ workspaceId: layout.layout.selected, tabs: g.tabs, active: g.active, formOpen: ui.formOpen });
});
register('pane', () => {
  const view = currentView();
  if (view !== ui.view) {
    ui.view = view;
    region.dataset.view = view;
    if (view === 'agent') region.replaceChildren(pane.el);
    else if (view === 'form') region.replaceChildren(form.el);
    else if (view === 'home') region.replaceChildren(home.el);
    else if (view === 'welcome') renderWelcome(region, ui.info, actions);
    else region.replaceChildren(h('div', { class: 'loading muted' }, 'Loading…'));
  }
  if (view === 'agent') {
    const id = layout.activeAgentId();
    pane.render(fleet.agents.get(id), timelines.modelFor(id));
  } else if (view === 'home') {
    home.render(layout.layout.selected ?? fleet.workspaces.keys().next().value);
  }
});
register('timeline', () => {
  if (ui.view === 'agent') pane.renderTimeline();
});
register('notices', () => renderNotices($('notices')));
register('status', () => {
  if (ui.backend.kind === 'ready') renderStatus($('status-bar'), { kind: 'ready', info: ui.info, counts: fleet.counts, mcpUrl: fleet.mcpUrl });
  else renderStatus($('status-bar'), ui.backend);
});

const ALL = ['sidebar', 'archived', 'tabs', 'pane', 'notices', 'status'];

// ------------------------------------------------------------------------------ events

onChange((change) => {
  const active = layout.activeAgentId();
  switch (change.kind) {
    case 'snapshot':
      invalidate(...ALL);
      return;
    case 'agent': {
      const { agent, old } = change;
      if (layout.groupOf(agent.id)) invalidate('tabs');
      if (ui.view === 'home') invalidate('pane');
      if (ui.view === 'agent' && (agent.id === active || agent.parentAgentId === active || old?.parentAgentId === active || agent.id === fleet.agents.get(active)?.parentAgentId)) {
        invalidate('pane');
      }
      if (agent.id === active && agent.requiresAttention && ui.view === 'agent' && document.visibilityState === 'visible' && document.hasFocus()) {
        seen(agent);
      }
      return;
    }
    case 'archived': {
      const id = change.agent.id;
      timelines.forget(id);
      if (layout.closeTab(id)) invalidate('tabs', 'pane');
      if (ui.view === 'home' || ui.view === 'agent') invalidate('pane');
      reloadArchivedSoon();
      return;
    }
    case 'timeline':
      timelines.ingest(change.agentId, change.items);
      return;
    case 'workspace':
      // A first workspace (or the selected one archived): select one.
      if ((!layout.layout.selected || !fleet.workspaces.has(layout.layout.selected)) && layout.prune()) layout.save();
      invalidate('sidebar');
      if (ui.view !== 'welcome') invalidate('pane', 'tabs');
      else invalidate('pane');
      if (change.unknownProject) resyncSoon();
      return;
    case 'track':
      if (change.track.parentAgentId === active) invalidate('pane');
      return;
    case 'counts':
      invalidate('status', 'archived');
      return;
    case 'notice':
      invalidate('notices');
      return;
    default:
  }
});

let resyncTimer = 0;
function resyncSoon(delay = 300) {
  clearTimeout(resyncTimer);
  resyncTimer = setTimeout(resync, delay);
}

async function resync() {
  try {
    const snap = await backend.fleetSnapshot();
    loadSnapshot(snap);
    timelines.reloadAll();
    if (layout.prune()) layout.save();
    reloadArchivedSoon();
  } catch (error) {
    addNotice('error', `Could not reload the fleet: ${errorMessage(error)}`);
  }
}

// ------------------------------------------------------------------------------ gestures

function seen(agent) {
  if (!agent?.requiresAttention || agent.attentionReason === 'permission' || ui.seenInFlight.has(agent.id)) return;
  ui.seenInFlight.add(agent.id);
  backend.markSeen(agent.id).catch(() => {}).finally(() => ui.seenInFlight.delete(agent.id));
}

/**
 * Opens an agent's tab and shows it. `here`: from a track or a parent link — the tab joins the
 * selected workspace's tabs; otherwise it joins the tabs of its root agent's workspace.
 */
function openAgent(id, { here = false } = {}) {
  const agent = fleet.agents.get(id);
  if (!agent) {
    addNotice('warning', 'That agent is no longer there (archived?).');
    invalidate('notices');
    return;
  }
  let ws = layout.groupOf(id);
  if (!ws) ws = here && layout.layout.selected ? layout.layout.selected : (rootOf(agent)?.workspaceId ?? agent.workspaceId);
  ui.formOpen = false;
  layout.openTab(ws, id);
  seen(agent);
  invalidate('sidebar', 'tabs', 'pane');
  requestAnimationFrame(() => tabStrip.reveal(id));
}

function activateTab(id) {
  ui.formOpen = false;
  layout.activate(layout.layout.selected, id);
  seen(fleet.agents.get(id));
  invalidate('tabs', 'pane');
}

function showHome() {
  ui.formOpen = false;
  layout.currentGroup().active = null;
  layout.save();
  invalidate('tabs', 'pane');
}

function selectWorkspace(wsId) {
  ui.formOpen = false;
  layout.select(wsId);
  const active = layout.activeAgentId();
  if (active) seen(fleet.agents.get(active));
  invalidate('sidebar', 'tabs', 'pane');
}

function showForm(wsId) {
  closeMenu();
  form.open(wsId ?? layout.layout.selected);
  ui.formOpen = true;
  invalidate('tabs', 'pane');
  requestAnimationFrame(() => form.focus());
}

async function createAgent(f) {
  if (f.directory) {
    // A directory that already has a workspace gets the agent there, not a second workspace.
    const ws = await backend.addWorkspace(f.directory);
    applyEvent({ type: 'workspaceUpdated', workspace: ws });
    const { directory, ...rest } = f;
    f = { ...rest, workspaceId: ws.workspaceId };
  }
  const agent = await backend.createAgent(f);
  applyEvent({ type: 'agentUpdated', agent }, { guard: true });
  ui.formOpen = false;
  layout.openTab(agent.workspaceId, agent.id);
  if (!fleet.workspaces.has(agent.workspaceId)) resyncSoon(100);
  invalidate('sidebar', 'tabs', 'pane');
  requestAnimationFrame(() => pane.focusComposer());
}

/** Where the folder picker starts: beside the selected workspace (projects tend to be siblings). */
function pickerStart() {
  const ws = fleet.workspaces.get(layout.layout.selected) ?? fleet.workspaces.values().next().value;
  if (!ws) return null;
  const parent = ws.cwd.replace(/\/+$/, '').replace(/\/[^/]*$/, '');
  return parent || '/';
}

async function addWorkspace() {
  closeMenu();
  let path;
  try {
    path = await backend.pickFolder('Add a workspace', pickerStart());
  } catch (error) {
    fail('Could not open the folder picker', error);
    return;
  }
  if (!path) return;
  try {
    const ws = await backend.addWorkspace(path);
    applyEvent({ type: 'workspaceUpdated', workspace: ws });
    ui.formOpen = false;
    layout.select(ws.workspaceId);
    invalidate('sidebar', 'tabs', 'pane');
  } catch (error) {
    fail(`Could not add ${path}`, error);
  }
}

async function newWindow() {
  closeMenu();
  try {
    await backend.newWindow();
  } catch (error) {
    fail('Could not open a new window', error);
  }
}

function fail(what, error) {
  addNotice('error', `${what}: ${errorMessage(error)}`);
}

function countWords(kids) {
  const running = kids.filter(isActive).length;
  return { n: kids.length, running };
}

/** Closing a tab: a root agent is archived (asking first if that stops something); a subagent's tab just closes. */
async function closeTab(id) {
  const agent = fleet.agents.get(id);
  if (!agent || agent.parentAgentId) {
    layout.closeTab(id);
    timelines.forget(id);
    invalidate('tabs', 'pane');
    return;
  }
  if (ui.closing.has(id)) return;
  const kids = countWords(descendants(id));
  const name = agentName(agent);
  if (isActive(agent) || kids.running > 0) {
    const title = isActive(agent) ? 'Archive running agent?' : 'Archive agent with running subagents?';
    const subs = kids.n > 0 ? ` and its ${plural(kids.n, 'subagent')}` : ' and its subagents';
    const message = isActive(agent)
      ? `“${name}” is still running. Archiving it will stop it${subs}.`
      : `${plural(kids.running, 'subagent')} of “${name}” ${kids.running === 1 ? 'is' : 'are'} still running. Archiving “${name}” will stop ${kids.running === 1 ? 'it' : 'them'}.`;
    // Default OK / Cancel buttons: GTK then puts Cancel first and focused, the safe default.
    const ok = await backend.confirm(title, `${message}\n\nYou can restore it from the archived list.`);
    if (!ok) return;
  }
  ui.closing.add(id);
  try {
    await backend.archiveAgent(id);
  } catch (error) {
    fail(`Could not archive “${name}”`, error);
  } finally {
    ui.closing.delete(id);
  }
}

async function detach(id) {
  try {
    await backend.detachAgent(id);
  } catch (error) {
    fail('Could not detach the subagent', error);
  }
}

async function archiveChild(id) {
  const agent = fleet.agents.get(id);
  if (!agent || ui.closing.has(id)) return;
  const name = agentName(agent);
  const kids = countWords(descendants(id));
  let message = `Archive “${name}”${kids.n ? ` and its ${plural(kids.n, 'subagent')}` : ''}?`;
  if (isActive(agent)) message += ' It is still running: archiving stops it.';
  else if (kids.running) message += ` ${plural(kids.running, 'of them is', 'of them are')} still running: archiving stops ${kids.running === 1 ? 'it' : 'them'}.`;
  message += '\n\nYou can restore it from the archived list.';
  const ok = await backend.confirm('Archive subagent?', message);
  if (!ok) return;
  ui.closing.add(id);
  try {
    await backend.archiveAgent(id);
  } catch (error) {
    fail(`Could not archive “${name}”`, error);
  } finally {
    ui.closing.delete(id);
  }
}

async function archiveFinished(parentId) {
  const parent = fleet.agents.get(parentId);
  const finished = childrenOf(parentId).filter(isFinished);
  if (!parent || finished.length === 0) return;
  const nested = finished.reduce((n, kid) => n + descendants(kid.id).length, 0);
  const message = `Archive the ${plural(finished.length, 'subagent')} of “${agentName(parent)}” that ${finished.length === 1 ? 'is' : 'are'} not running${nested ? `, with their ${plural(nested, 'own subagent')}` : ''}?\n\nYou can restore them from the archived list.`;
  const ok = await backend.confirm('Archive finished subagents?', message);
  if (!ok) return;
  try {
    await backend.archiveFinished(parentId);
  } catch (error) {
    fail('Could not archive the finished subagents', error);
  }
}

async function restore(id) {
  if (ui.archived.busy.has(id)) return;
  ui.archived.busy.add(id);
  invalidate('archived');
  try {
    let restored;
    try {
      restored = await backend.restoreAgent(id, false);
    } catch (error) {
      if (error.code !== 'conflict' || !/parent/.test(error.message)) throw error;
      const name = agentName(ui.archived.batches?.find((b) => b.head.id === id)?.head);
      const ok = await backend.confirm('Restore as a root agent?',
        `The parent of “${name}” is still archived, so it cannot go back into its parent's track.\n\nRestore “${name}” as a root agent instead?`);
      if (!ok) return;
      restored = await backend.restoreAgent(id, true);
    }
    // Bring the restored agent up where the user can see it (a root agent opens as a tab).
    const head = fleet.agents.get(id) ?? fleet.agents.get(restored?.[0]);
    if (head && !head.parentAgentId) openAgent(head.id);
  } catch (error) {
    fail('Could not restore', error);
  } finally {
    ui.archived.busy.delete(id);
    reloadArchivedSoon(0);
  }
}

function toggleArchived() {
  layout.setArchivedOpen(!layout.layout.archivedOpen);
  if (layout.layout.archivedOpen) loadArchived();
  invalidate('archived');
}

let archivedTimer = 0;
function reloadArchivedSoon(delay = 150) {
  if (!layout.layout.archivedOpen) return;
  clearTimeout(archivedTimer);
  archivedTimer = setTimeout(loadArchived, delay);
}

async function loadArchived() {
  try {
    const list = await backend.archivedAgents(500);
    const batches = new Map();
    for (const a of list) {
      const key = a.archiveBatchId ?? a.id;
      let b = batches.get(key);
      if (!b) batches.set(key, (b = { members: [] }));
      b.members.push(a);
    }
    ui.archived.batches = [...batches.values()].map((b) => {
      const ids = new Set(b.members.map((m) => m.id));
      const heads = b.members.filter((m) => !m.parentAgentId || !ids.has(m.parentAgentId));
      // A batch of several unrelated agents ("Archive finished") shows its oldest as the head.
      heads.sort((x, y) => (x.createdAt < y.createdAt ? -1 : 1));
      const head = heads[0] ?? b.members[0];
      const byId = new Map(b.members.map((m) => [m.id, m]));
      const under = (m) => {
        for (let cur = m, hops = 0; cur && hops <= b.members.length; cur = byId.get(cur.parentAgentId), hops++) {
          if (cur.parentAgentId === head.id) return true;
        }
        return false;
      };
      return { head, members: b.members, tree: b.members.every((m) => m === head || under(m)) };
    });
  } catch (error) {
    fail('Could not list the archived agents', error);
  }
  invalidate('archived');
}

function showMenu(anchor) {
  openMenu(anchor, [
    { label: 'New agent', shortcut: 'Ctrl+N', testid: 'menu-new-agent', run: () => showForm() },
    { label: 'New window', shortcut: 'Ctrl+Shift+N', testid: 'menu-new-window', run: () => newWindow() },
    { label: 'Add a workspace…', testid: 'menu-add-workspace', run: () => addWorkspace() },
  ]);
}

// ------------------------------------------------------------------------------ keyboard

function cycleTab(step) {
  const g = layout.currentGroup();
  const order = [null, ...g.tabs];
  const i = order.indexOf(ui.formOpen ? undefined : g.active);
  const next = order[(Math.max(i, 0) + step + order.length) % order.length];
  if (next) activateTab(next);
  else showHome();
  requestAnimationFrame(() => {
    const el = next ? document.querySelector(`[data-testid="tab"][data-agent-id="${next}"]`) : $('tab-home');
    el?.focus();
  });
}

document.addEventListener('keydown', (e) => {
  const ctrl = e.ctrlKey || e.metaKey;
  if (!ctrl) return;
  const key = e.code;
  if (key === 'KeyN' && e.shiftKey) { e.preventDefault(); newWindow(); }
  else if (key === 'KeyN') { e.preventDefault(); showForm(); }
  else if (key === 'KeyW') {
    e.preventDefault();
    if (ui.formOpen) { ui.formOpen = false; invalidate('tabs', 'pane'); return; }
    const id = layout.activeAgentId();
    if (id) closeTab(id);
  } else if (key === 'Tab' || key === 'PageDown' || key === 'PageUp') {
    e.preventDefault();
    cycleTab(key === 'PageUp' || (key === 'Tab' && e.shiftKey) ? -1 : 1);
  } else if (key === 'KeyL') {
    e.preventDefault();
    if (ui.view === 'agent') pane.focusComposer();
  } else if (key === 'Period') {
    e.preventDefault();
    const id = layout.activeAgentId();
    if (id && fleet.agents.get(id)?.status === 'running') backend.cancelAgent(id).catch((error) => fail('Could not stop the turn', error));
  } else if (/^Digit[1-9]$/.test(key)) {
    const tabs = layout.currentGroup().tabs;
    const id = tabs[Number(key.slice(5)) - 1];
    if (id) { e.preventDefault(); activateTab(id); }
  }
});

// Seeing an agent that finished while the window was in the background.
window.addEventListener('focus', () => {
  const id = layout.activeAgentId();
  if (id && ui.view === 'agent') seen(fleet.agents.get(id));
});

// ------------------------------------------------------------------------------ boot

async function boot() {
  invalidate('status', 'pane');
  layout.setSaveErrorHandler((error) => fail('Could not save this window\'s layout', error));
  try {
    ui.info = await backend.appInfo();
    sidebar.setVersion(ui.info.version);
    const win = await backend.windowLayout();
    ui.label = win.label;
    document.body.dataset.window = win.label;
    layout.restore(win.layout);
    if (win.notice) addNotice('warning', win.notice);
    // Events that arrive while the snapshot loads are applied after it (never older agent states).
    let early = [];
    await backend.listen('paseo://event', (ev) => (early ? early.push(ev) : applyEvent(ev)));
    await backend.listen('paseo://resync', () => resync());
    if (win.label === 'main') {
      // The tray's attention entries: show that agent.
      await backend.listen('paseo://open-agent', (payload) => {
        if (payload?.agentId) openAgent(payload.agentId);
      });
    }
    const snap = await backend.fleetSnapshot();
    loadSnapshot(snap);
    const raced = early;
    early = null;
    for (const ev of raced) applyEvent(ev, { guard: true });
    if (raced.some((ev) => ev.type === 'workspaceUpdated' || ev.type === 'trackChanged' || ev.type === 'countsChanged')) resyncSoon(500);
    if (layout.prune()) layout.save();
    ui.backend = { kind: 'ready' };
    if (layout.layout.archivedOpen) loadArchived();
    invalidate(...ALL);
    flush();
    document.body.dataset.ready = 'true';
  } catch (error) {
    const message = errorMessage(error);
    ui.backend = { kind: 'error', message };
    region.replaceChildren(h('div', { class: 'welcome' },
      h('h1', {}, 'The backend did not answer'),
      h('p', { class: 'error', dataset: { testid: 'backend-error' } }, message)));
    ui.view = 'error';
    invalidate('status');
    flush();
    document.body.dataset.ready = 'error';
  }
}

window.addEventListener('pagehide', () => layout.flush());

boot();
