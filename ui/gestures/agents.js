// Agent and window gestures: the new-agent form (open, create, cancel), adding a workspace with
// the folder picker, a new window, detaching a subagent, stopping a turn, and the app menu.
import * as backend from '../backend.js';
import { fleet, addError, applyEvent, cardOf } from '../store.js';
import * as layout from '../layout.js';
import { invalidate } from '../render.js';
import { openMenu, closeMenu } from '../components/menu.js';
import { ui } from '../window-state.js';
import { resetForm, focusForm, focusComposer } from '../views.js';
import { HERE, syncSoon } from '../sync.js';
import { notificationsItem } from './notifications.js';
import { openAbout } from '../components/about.js';
import * as undo from './undo.js';
import { addHost } from './hosts.js';

export function showForm(wsId) {
  closeMenu();
  resetForm(wsId ?? layout.layout.selected);
  ui.formOpen = true;
  ui.readOnly = null;
  invalidate('tabs', 'pane');
  requestAnimationFrame(focusForm);
}

export function closeForm() {
  ui.formOpen = false;
  invalidate('tabs', 'pane');
}

export async function createAgent(f) {
  // One request: the backend (or the host's) finds or makes the directory's workspace with it.
  const agent = await backend.createAgent(f);
  const card = cardOf(agent);
  if (f.host) card.host = f.host;
  applyEvent({ type: 'agentUpdated', agent: card }, { guard: true });
  ui.formOpen = false;
  layout.openTab(agent.workspaceId, agent.id);
  if (!fleet.workspaces.has(agent.workspaceId)) syncSoon(f.host ?? HERE, 100);
  invalidate('sidebar', 'tabs', 'pane');
  requestAnimationFrame(focusComposer);
}

/** Where the folder picker starts: beside the selected workspace (projects tend to be siblings). */
function pickerStart() {
  const ws = fleet.workspaces.get(layout.layout.selected) ?? fleet.workspaces.values().next().value;
  if (!ws) return null;
  const parent = ws.cwd.replace(/\/+$/, '').replace(/\/[^/]*$/, '');
  return parent || '/';
}

/** The new-agent form's folder picker. */
export function pickFolder() {
  return backend.pickFolder('Choose a directory for the agent', pickerStart());
}

export async function addWorkspace() {
  closeMenu();
  let path;
  try {
    path = await backend.pickFolder('Add a workspace', pickerStart());
  } catch (error) {
    addError('Could not open the folder picker', error);
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
    addError(`Could not add ${path}`, error);
  }
}

export async function newWindow() {
  closeMenu();
  try {
    await backend.newWindow();
  } catch (error) {
    addError('Could not open a new window', error);
  }
}

export async function detach(id) {
  const parentId = fleet.agents.get(id)?.parentAgentId;
  try {
    await backend.detachAgent(id);
  } catch (error) {
    addError('Could not detach the subagent', error);
    return;
  }
  if (parentId) await undo.detached(id, parentId);
}

/** Stops the agent's turn if one is running (the keyboard's Ctrl+.). */
export function stopTurn(id) {
  if (fleet.agents.get(id)?.status !== 'running') return;
  backend.cancelAgent(id).catch((error) => addError('Could not stop the turn', error));
}

export async function showMenu(anchor) {
  const notifications = await notificationsItem();
  openMenu(
    anchor,
    [
      { label: 'New agent', shortcut: 'Ctrl+N', testid: 'menu-new-agent', run: () => showForm() },
      { label: 'New window', shortcut: 'Ctrl+Shift+N', testid: 'menu-new-window', run: () => newWindow() },
      { label: 'Add a workspace…', testid: 'menu-add-workspace', run: () => addWorkspace() },
      { label: 'Add a host…', testid: 'menu-add-host', run: () => addHost(anchor) },
      notifications,
      { label: 'Settings (config.json)', testid: 'menu-settings', run: () => openSettings() },
      { label: 'About Paseo', testid: 'menu-about', run: () => showAbout(anchor) },
      { label: 'Quit Paseo', testid: 'menu-quit', run: () => quit() },
    ].filter(Boolean),
  );
}

/** Opens config.json with the system opener (SPEC 9's settings live there). */
export async function openSettings() {
  try {
    await backend.openSettings();
  } catch (error) {
    addError('Could not open the settings', error);
  }
}

export async function showAbout(anchor) {
  try {
    openAbout(anchor, await backend.appInfo());
  } catch (error) {
    addError('Could not read the app information', error);
  }
}

/** Quits the whole app (every window), asking first when agents are running. */
export function quit() {
  closeMenu();
  backend.quitApp().catch((error) => addError('Could not quit', error));
}
