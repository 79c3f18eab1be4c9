// This window's layout (SPEC 7: tabs are per window): which workspace is selected, the agent tabs
// of each workspace and the active one, and small view preferences. Saved through the backend
// (per window label, $PASEO_HOME/windows.json) shortly after every change, restored at start.
import * as backend from './backend.js';
import { fleet, latestWorkspace } from './store.js';

const SAVE_DELAY_MS = 250;

export const layout = {
  /** The selected workspace id, or null. */
  selected: null,
  /** workspace id → {tabs: [agent id], active: agent id | null}. */
  groups: {},
  /** Agent ids whose subagents track is collapsed. */
  collapsedTracks: [],
  /** Project ids collapsed in the sidebar. */
  collapsedProjects: [],
  archivedOpen: false,
};

let saveTimer = 0;
let saving = Promise.resolve();
let onSaveError = () => {};

export function setSaveErrorHandler(fn) {
  onSaveError = fn;
}

/** Adopts a saved layout, keeping only what still makes sense. */
export function restore(saved) {
  if (!saved || typeof saved !== 'object') return;
  if (typeof saved.selected === 'string') layout.selected = saved.selected;
  if (saved.groups && typeof saved.groups === 'object') {
    for (const [ws, group] of Object.entries(saved.groups)) {
      if (!group || !Array.isArray(group.tabs)) continue;
      const tabs = group.tabs.filter((id) => typeof id === 'string');
      layout.groups[ws] = { tabs, active: typeof group.active === 'string' ? group.active : null };
    }
  }
  for (const key of ['collapsedTracks', 'collapsedProjects']) {
    if (Array.isArray(saved[key])) layout[key] = saved[key].filter((id) => typeof id === 'string');
  }
  layout.archivedOpen = saved.archivedOpen === true;
}

/**
 * Whether agents and workspaces the window does not hold yet may still come (a host still
 * connecting, SPEC 17): their tabs and the selection wait for them. Set by ui/hosts.js.
 */
let stillLoading = () => false;

export function keepUnknownWhile(loading) {
  stillLoading = loading;
}

/** Drops tabs of agents that are gone and workspaces that are gone; keeps a sane selection. */
export function prune() {
  let changed = false;
  for (const [ws, group] of Object.entries(layout.groups)) {
    // A host still connecting has not sent its agents yet (SPEC 17): their tabs wait for it.
    const tabs = group.tabs.filter((id) => fleet.agents.has(id) || stillLoading());
    if (tabs.length !== group.tabs.length) changed = true;
    group.tabs = [...new Set(tabs)];
    if (group.active && !group.tabs.includes(group.active)) {
      group.active = group.tabs[group.tabs.length - 1] ?? null;
      changed = true;
    }
    if (!fleet.workspaces.has(ws) && group.tabs.length === 0 && !stillLoading()) {
      delete layout.groups[ws];
      changed = true;
    }
  }
  if (
    layout.selected &&
    !fleet.workspaces.has(layout.selected) &&
    !layout.groups[layout.selected]?.tabs.length &&
    !stillLoading()
  ) {
    layout.selected = null;
    changed = true;
  }
  if (!layout.selected && fleet.workspaces.size > 0) {
    layout.selected = firstWorkspaceId();
    changed = true;
  }
  return changed;
}

function firstWorkspaceId() {
  // The one with the most recent agent activity, else the first one.
  const best = latestWorkspace((ws) => fleet.workspaces.has(ws));
  return best ?? fleet.workspaces.keys().next().value ?? null;
}

export function group(ws) {
  if (!ws) return { tabs: [], active: null };
  if (!layout.groups[ws]) layout.groups[ws] = { tabs: [], active: null };
  return layout.groups[ws];
}

/** The selected workspace's tabs. */
export function currentGroup() {
  return group(layout.selected);
}

export function activeAgentId() {
  return layout.selected ? (layout.groups[layout.selected]?.active ?? null) : null;
}

/** Opens `agentId` as a tab of workspace group `ws` (appended), makes it active, selects `ws`. */
export function openTab(ws, agentId) {
  const g = group(ws);
  if (!g.tabs.includes(agentId)) g.tabs.push(agentId);
  g.active = agentId;
  layout.selected = ws;
  save();
}

/** The group a tab of `agentId` lives in, if it is open in this window. */
export function groupOf(agentId) {
  if (layout.selected && layout.groups[layout.selected]?.tabs.includes(agentId)) return layout.selected;
  for (const [ws, g] of Object.entries(layout.groups)) if (g.tabs.includes(agentId)) return ws;
  return null;
}

/** Removes the agent's tab from every group of this window; the neighbour becomes active. */
export function closeTab(agentId) {
  let changed = false;
  for (const g of Object.values(layout.groups)) {
    const i = g.tabs.indexOf(agentId);
    if (i < 0) continue;
    g.tabs.splice(i, 1);
    if (g.active === agentId) g.active = g.tabs[Math.min(i, g.tabs.length - 1)] ?? null;
    changed = true;
  }
  if (changed) save();
  return changed;
}

export function activate(ws, agentId) {
  const g = group(ws);
  g.active = agentId;
  layout.selected = ws;
  save();
}

export function select(ws) {
  layout.selected = ws;
  save();
}

export function toggleIn(key, id) {
  const list = layout[key];
  const i = list.indexOf(id);
  if (i >= 0) list.splice(i, 1);
  else list.push(id);
  save();
  return i < 0;
}

export function setArchivedOpen(open) {
  layout.archivedOpen = open;
  save();
}

function snapshot() {
  const groups = {};
  for (const [ws, g] of Object.entries(layout.groups)) {
    if (g.tabs.length || ws === layout.selected) groups[ws] = { tabs: g.tabs, active: g.active };
  }
  return {
    version: 1,
    selected: layout.selected,
    groups,
    // Until the window has every card, one it lacks may still come.
    collapsedTracks: fleet.whole
      ? layout.collapsedTracks.filter((id) => fleet.agents.has(id))
      : layout.collapsedTracks,
    collapsedProjects: layout.collapsedProjects,
    archivedOpen: layout.archivedOpen,
  };
}

/** Saves soon (changes within the delay are written once). */
export function save() {
  clearTimeout(saveTimer);
  saveTimer = setTimeout(flush, SAVE_DELAY_MS);
}

/** Saves now; resolves once the backend has written it. */
export function flush() {
  clearTimeout(saveTimer);
  saveTimer = 0;
  const data = snapshot();
  saving = saving.then(() => backend.saveWindowLayout(data)).catch((error) => onSaveError(error));
  return saving;
}
