// Tab gestures: open an agent's tab, activate one, the workspace's home tab, select a workspace,
// close a tab (a root agent's close archives it), cycle through the tabs; and "seen" — looking
// at an agent that finished acknowledges it.
import * as backend from '../backend.js';
import { fleet, addNotice, rootOf } from '../store.js';
import * as layout from '../layout.js';
import * as timelines from '../timeline-model.js';
import { invalidate } from '../render.js';
import { ui } from '../window-state.js';
import { revealTab, focusTab } from '../views.js';
import { archiveRoot } from './archive.js';

/** Acknowledges a finished agent the user is looking at (a permission waits for its answer instead). */
export function seen(agent) {
  if (!agent?.requiresAttention || agent.attentionReason === 'permission' || ui.seenInFlight.has(agent.id))
    return;
  ui.seenInFlight.add(agent.id);
  backend
    .markSeen(agent.id)
    .catch(() => {})
    .finally(() => ui.seenInFlight.delete(agent.id));
}

/**
 * Opening a closed agent resumes its session right away (SPEC 2 `closed → initializing`), so it
 * is ready by the time a prompt is typed; the prompt waits for it meanwhile. Done on opening
 * rather than on the first keystroke: opening says the user is about to use it.
 */
export function wake(agent) {
  if (agent?.status !== 'closed' || ui.wakeInFlight.has(agent.id)) return;
  ui.wakeInFlight.add(agent.id);
  backend
    .wakeAgent(agent.id)
    .catch(() => {})
    .finally(() => ui.wakeInFlight.delete(agent.id));
}

/** The user looks at an agent: it is seen, and woken if it was closed (unless `wake` is false). */
function opened(agent, { wake: wakeIt = true } = {}) {
  seen(agent);
  if (wakeIt) wake(agent);
}

/**
 * Opens an agent's tab and shows it. `here`: from a track or a parent link — the tab joins the
 * selected workspace's tabs; otherwise it joins the tabs of its root agent's workspace.
 * `wake: false`: the tab opens but a closed agent stays closed until it is used.
 */
export function openAgent(id, { here = false, wake: wakeIt = true } = {}) {
  const agent = fleet.agents.get(id);
  if (!agent) {
    addNotice('warning', 'That agent is no longer there (archived?).');
    invalidate('notices');
    return;
  }
  let ws = layout.groupOf(id);
  if (!ws)
    ws =
      here && layout.layout.selected
        ? layout.layout.selected
        : (rootOf(agent)?.workspaceId ?? agent.workspaceId);
  ui.formOpen = false;
  ui.readOnly = null;
  layout.openTab(ws, id);
  opened(agent, { wake: wakeIt });
  invalidate('sidebar', 'tabs', 'pane');
  requestAnimationFrame(() => revealTab(id));
}

export function activateTab(id) {
  ui.formOpen = false;
  ui.readOnly = null;
  layout.activate(layout.layout.selected, id);
  opened(fleet.agents.get(id));
  invalidate('tabs', 'pane');
}

export function showHome() {
  ui.formOpen = false;
  ui.readOnly = null;
  layout.currentGroup().active = null;
  layout.save();
  invalidate('tabs', 'pane');
}

export function selectWorkspace(wsId) {
  ui.formOpen = false;
  ui.readOnly = null;
  layout.select(wsId);
  const active = layout.activeAgentId();
  if (active) opened(fleet.agents.get(active));
  invalidate('sidebar', 'tabs', 'pane');
}

/** Closing a tab: a root agent is archived (asking first if that stops something); a subagent's tab just closes. */
export function closeTab(id) {
  const agent = fleet.agents.get(id);
  if (agent && !agent.parentAgentId) {
    archiveRoot(agent);
    return;
  }
  layout.closeTab(id);
  timelines.forget(id);
  invalidate('tabs', 'pane');
}

/** Moves to the next (`step` 1) or previous (-1) tab, the home tab included, and focuses it. */
export function cycleTab(step) {
  const g = layout.currentGroup();
  const order = [null, ...g.tabs];
  const i = order.indexOf(ui.formOpen ? undefined : g.active);
  const next = order[(Math.max(i, 0) + step + order.length) % order.length];
  if (next) activateTab(next);
  else showHome();
  requestAnimationFrame(() => focusTab(next));
}
