// The hosts of the window (SPEC 17, docs/hosts.md): each configured host's connection state
// (`listHosts`), and its fleet — agents, workspaces, projects — kept in the store's maps beside
// this machine's, each tagged with `host`, so every view and gesture works on them unchanged (the
// backend routes a request by the agent or workspace id it names). A host's fleet is one of the
// window's sources (sync.js): its own snapshot (`syncSnapshot {host}`), then its numbered events,
// caught up as this machine's are. A disconnected host's last known fleet stays (greyed); a
// reconnect (`paseo://host-state` connected) loads a new snapshot, so nothing that happened
// meanwhile is missed or shown twice.
import * as backend from './backend.js';
import { addNotice, applyEvent, dropHostFleet, loadHostFleet } from './store.js';
import * as layout from './layout.js';
import * as timelines from './timeline-model.js';
import { invalidate } from './render.js';
import * as sync from './sync.js';

/**
 * name → {name, ssh, state, lastSeen, error, code, installHelps, agents, counts, providers,
 * loaded (its fleet is in the store), busy ('installing' | 'removing' | null), problem (what the
 * last gesture on it said)}.
 */
export const hosts = new Map();

/** The hosts in config.json's order. */
export function hostList() {
  return [...hosts.values()];
}

/** How often the states are asked for when the backend sends no `paseo://host-state`. */
const POLL_MS = 2000;

let listing = null;
let again = false;

/**
 * Asks the backend for the hosts and their states (coalesced: a call while one is under way
 * asks once more after it), and loads the fleet of each host that is connected and not loaded.
 */
export function refreshHosts() {
  if (listing) {
    again = true;
    return listing;
  }
  listing = (async () => {
    try {
      do {
        again = false;
        adopt(await backend.listHosts());
      } while (again);
    } catch (error) {
      console.warn('listHosts failed', error);
    } finally {
      listing = null;
    }
  })();
  return listing;
}

/** Whether a host's agents may still come (it is connecting, or its snapshot is on its way). */
export function hostsLoading() {
  for (const e of hosts.values())
    if (e.state === 'connecting' || (e.state === 'connected' && !e.loaded && !e.noSync)) return true;
  return false;
}
layout.keepUnknownWhile(hostsLoading);

function adopt(list) {
  const loading = hostsLoading();
  const names = new Set(list.map((h) => h.name));
  let changed = false;
  const wanted = [];
  for (const name of [...hosts.keys()]) {
    if (names.has(name)) continue;
    hosts.delete(name);
    sync.unfollow(name);
    dropHostFleet(name);
    changed = true;
  }
  const ordered = new Map();
  for (const info of list) {
    const had = hosts.get(info.name);
    const entry = had ?? { loaded: false, busy: null, problem: null, providers: [] };
    if (!had) follow(entry, info.name);
    const before = had ? key(had) : '';
    const wasConnected = had?.state === 'connected';
    Object.assign(entry, {
      name: info.name,
      ssh: info.ssh,
      state: info.state,
      lastSeen: info.lastSeen ?? null,
      error: info.error ?? null,
      code: info.code ?? null,
      installHelps: Boolean(info.installHelps),
      agents: info.agents ?? 0,
      counts: info.counts ?? null,
    });
    if (entry.state === 'connected' && !wasConnected) entry.problem = null;
    if (key(entry) !== before) changed = true;
    ordered.set(info.name, entry);
    // Connected since the last look (this window's first, or a reconnect): its fleet is loaded.
    if (entry.state === 'connected' && (!wasConnected || (!entry.loaded && !entry.noSync)))
      wanted.push(info.name);
  }
  if (changed || [...ordered.keys()].join() !== [...hosts.keys()].join()) {
    hosts.clear();
    for (const [name, entry] of ordered) hosts.set(name, entry);
    invalidate('sidebar', 'status', 'archived');
  }
  for (const name of wanted) syncHost(name);
  // A host that will not send its agents now (it failed): the tabs that waited for it go.
  if (loading && !hostsLoading() && layout.prune()) {
    layout.save();
    invalidate('tabs', 'pane');
  }
}

/** What a host row shows, to redraw only when it changed. */
function key(e) {
  return JSON.stringify([
    e.ssh,
    e.state,
    e.lastSeen,
    e.error,
    e.installHelps,
    e.agents,
    e.busy,
    e.problem,
    e.counts,
  ]);
}

/** Makes `entry` one of the window's sources: its snapshot, and its events applied to it. */
function follow(entry, name) {
  sync.follow(name, {
    load: async () => {
      const { seq, snap } = await backend.hostSnapshot(name);
      if (hosts.get(name) !== entry) return seq;
      loadHostFleet(name, snap);
      entry.providers = snap.providers ?? [];
      entry.loaded = true;
      entry.noSync = false;
      return seq;
    },
    apply: (event) => apply(entry, event),
    settled: () => {
      timelines.reloadAll();
      settle(entry);
    },
    failed: (error) => {
      // Not connected after all (it dropped meanwhile): the next `connected` loads it. A backend
      // that cannot give a host's snapshot is not asked again until the host reconnects.
      if (error?.code !== 'disconnected') {
        entry.noSync = true;
        console.warn(`syncSnapshot of ${name} failed`, error);
      }
      settle(entry);
    },
  });
}

function settle(entry) {
  if (layout.prune()) layout.save();
  invalidate('sidebar', 'tabs', 'pane');
  // After the frame that draws it (benches/hosts.rs times launch → a host's fleet listed).
  if (entry.loaded) requestAnimationFrame(() => performance.mark(`paseo-host-listed:${entry.name}`));
}

/** Loads the host's snapshot, then the events it sent meanwhile that are newer. */
export function syncHost(name) {
  return sync.sync(name);
}

function apply(entry, event) {
  const host = entry.name;
  switch (event.type) {
    case 'agentUpdated':
    case 'agentArchived':
      event.agent.host = host;
      applyEvent(event);
      return;
    case 'workspaceUpdated':
      event.workspace.host = host;
      applyEvent(event);
      return;
    case 'countsChanged':
      entry.counts = event.counts;
      invalidate('sidebar', 'status', 'archived');
      return;
    case 'notice':
      addNotice(event.level, `${host}: ${event.message}`);
      return;
    default:
      applyEvent(event);
  }
}

/** `paseo://host-state` {host, state, lastSeen?, error?, code?, installHelps?}. */
function onHostState(message) {
  const entry = hosts.get(message?.host);
  if (!entry) {
    refreshHosts();
    return;
  }
  entry.state = message.state;
  entry.lastSeen = message.lastSeen ?? entry.lastSeen;
  entry.error = message.error ?? null;
  entry.code = message.code ?? null;
  entry.installHelps = Boolean(message.installHelps);
  // Connected again (or its mirror rebuilt from a new snapshot): the window's copy follows.
  if (message.state === 'connected') syncHost(entry.name);
  invalidate('sidebar', 'status', 'pane', 'archived');
  refreshHosts();
}

/**
 * Lists the hosts and starts loading the connected ones' fleets, then follows their states and
 * events. This machine's first screen does not wait for them: a host's fleet arrives under its
 * row when its snapshot does, and meanwhile the layout keeps the tabs and the selection a
 * loading host may hold (`hostsLoading`).
 */
export async function startHosts() {
  // A host's event before its row is listed: the list brings it.
  sync.onUnknown(() => refreshHosts());
  await backend.listen('paseo://host-state', onHostState);
  await refreshHosts();
  setInterval(refreshHosts, POLL_MS);
}

/** The host a workspace or agent belongs to (null: this machine). */
export function hostOf(item) {
  return item?.host ?? null;
}

/** The words of a host's state for its row: [word, why (or '')]. */
export function stateWords(entry, timeOf) {
  if (entry.busy === 'installing') return ['installing…', ''];
  if (entry.busy === 'removing') return ['removing…', ''];
  switch (entry.state) {
    case 'connected':
      return ['connected', entry.problem ?? ''];
    case 'connecting':
      return ['connecting…', entry.problem ?? ''];
    case 'disconnected':
      return [
        entry.lastSeen ? `disconnected (last seen ${timeOf(entry.lastSeen)})` : 'disconnected',
        entry.problem ?? entry.error ?? '',
      ];
    default:
      return ["can't connect", entry.problem ?? entry.error ?? ''];
  }
}

/** SPEC 13's `data-state` of a host row: connected, connecting, disconnected or error. */
export function stateAttr(entry) {
  return ['connected', 'connecting', 'disconnected'].includes(entry.state) ? entry.state : 'error';
}
