// The window's copy of the fleet: loaded from a snapshot, kept current by backend events. Applying
// an event only updates maps and marks what changed; rendering happens once per frame elsewhere.
import { errorMessage } from './dom.js';
import {
  CARD,
  INSTANTS,
  cardOf,
  keepCard,
  keepCards,
  keepTrackOf,
  rootsOf,
  latestIn,
  agentsOf,
} from './cards.js';

export { cardOf };

/** How many agents' whole snapshots a window keeps (the panes shown last). */
const DETAILS_KEPT = 8;

export const fleet = {
  loaded: false,
  home: '',
  mcpUrl: null,
  /** {state: on | off | unavailable, engine, message}: whether agents are contained (SPEC 16). */
  containment: null,
  /**
   * id → agent card (unarchived agents only), as the backend sends it (ui/cards.js). Whole once
   * `whole` is true: a window starts with its first screen's cards and loads the rest after.
   */
  agents: new Map(),
  whole: false,
  /** id → the agent's whole snapshot (null while it is fetched), for the panes shown last; oldest first. */
  details: new Map(),
  /** id → workspace snapshot (unarchived). */
  workspaces: new Map(),
  /** id → project record. */
  projects: new Map(),
  /**
   * parent id → its track's members: the ids of its unarchived children, oldest first (the
   * backend's order). Also the page's index of children (`childrenOf`). Read with `trackOf`.
   */
  tracks: new Map(),
  /**
   * parent id → {running, needsYou, total}, only for tracks with a child running or needing
   * you: any other track's counts are 0, 0 and its size (a big fleet's quiet tracks would
   * otherwise keep an object each).
   */
  trackCounts: new Map(),
  /**
   * size → the counts of a quiet track of that size (nothing running, queued, needing you or
   * failed), as the backend words them (paseo-core model/tally.rs): one object per size.
   */
  quietCounts: new Map(),
  providers: [],
  counts: {
    agents: 0,
    running: 0,
    needsYou: 0,
    failed: 0,
    finishedUnseen: 0,
    archived: 0,
    // Nothing to say until the backend's first snapshot.
    tally: { running: 0, queued: 0, needsYou: 0, failed: 0, total: 0, line: [] },
  },
  /** {id, level, message} shown until dismissed. */
  notices: [],
  /** The latest passing news for the status bar ({id, message, agentId}), or null. */
  said: null,
};

/** How long passing news stays in the status bar. */
const SAID_MS = 20000;

let noticeSeq = 0;
const listeners = new Set();

/** fn(change): change is {kind, ...}; kinds: snapshot, cards, agent, detail, archived, timeline, workspace, track, counts, notice, said. */
export function onChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function emit(change) {
  for (const fn of listeners) fn(change);
}

export function addNotice(level, message) {
  fleet.notices.push({ id: ++noticeSeq, level, message });
  emit({ kind: 'notice' });
}

/**
 * News the status bar shows for a while, then drops (a newer one replaces it): it concerns
 * `agentId`, whose timeline keeps it for good.
 */
export function say(message, agentId) {
  const id = ++noticeSeq;
  fleet.said = { id, message, agentId };
  emit({ kind: 'said' });
  setTimeout(() => {
    if (fleet.said?.id !== id) return;
    fleet.said = null;
    emit({ kind: 'said' });
  }, SAID_MS);
}

/** An error notice: `what` failed, and why. */
export function addError(what, error) {
  addNotice('error', `${what}: ${errorMessage(error)}`);
}

export function dismissNotice(id) {
  fleet.notices = fleet.notices.filter((n) => n.id !== id);
  emit({ kind: 'notice' });
}

/** Keeps a backend track ({parentAgentId, members, counts}) from an event; returns the parent's id. */
function keepTrack(track) {
  return keepTrackOf(fleet, track);
}

/**
 * Replaces everything with a fresh snapshot (whole, or the first screen's cards: `addCards`
 * brings the rest).
 */
export function loadSnapshot(snap) {
  const hosts = hostsPart();
  fleet.home = snap.home;
  fleet.mcpUrl = snap.mcpUrl;
  fleet.containment = snap.containment || null;
  fleet.agents = new Map();
  fleet.tracks = new Map();
  fleet.trackCounts = new Map();
  fleet.quietCounts = new Map();
  keepCards(fleet, snap);
  fleet.whole = snap.whole !== false;
  gone = new Set();
  // Events may have been missed (a resync): what a pane shows is fetched again.
  fleet.details = new Map();
  fleet.workspaces = new Map(snap.workspaces.map((w) => [w.workspaceId, w]));
  fleet.projects = new Map(snap.projects.map((p) => [p.projectId, p]));
  putBack(hosts);
  fleet.providers = snap.providers;
  fleet.counts = snap.counts;
  if (!fleet.loaded) {
    // Problems found at load (SPEC 1: a visible notice), once per window.
    for (const message of snap.notices) addNotice('warning', message);
    for (const q of snap.quarantined) {
      // The backend's notices usually name quarantined files already.
      if (snap.notices.some((n) => n.includes(q.to))) continue;
      addNotice('warning', `${q.from} could not be loaded (${q.reason}); it was moved to ${q.to}.`);
    }
  }
  fleet.loaded = true;
  emit({ kind: 'snapshot' });
}

/**
 * What the hosts' snapshots put in the maps (SPEC 17: their agents, workspaces and projects,
 * each tagged with `host`), kept when this machine's own snapshot replaces the rest.
 */
function hostsPart() {
  const agents = [...fleet.agents.values()].filter((a) => a.host);
  const ids = new Set(agents.map((a) => a.id));
  return {
    agents,
    workspaces: [...fleet.workspaces.values()].filter((w) => w.host),
    projects: [...fleet.projects.values()].filter((p) => p.host),
    tracks: [...fleet.tracks].filter(([parent]) => ids.has(parent)),
    trackCounts: [...fleet.trackCounts].filter(([parent]) => ids.has(parent)),
  };
}

function putBack(part) {
  for (const a of part.agents) fleet.agents.set(a.id, a);
  for (const w of part.workspaces) fleet.workspaces.set(w.workspaceId, w);
  for (const p of part.projects) fleet.projects.set(p.projectId, p);
  for (const [parent, members] of part.tracks) fleet.tracks.set(parent, members);
  for (const [parent, counts] of part.trackCounts) fleet.trackCounts.set(parent, counts);
}

/** Forgets everything of `host` the maps hold (before its new snapshot, or once it is removed). */
export function dropHostFleet(host, { quiet = false } = {}) {
  for (const [id, a] of fleet.agents) {
    if (a.host !== host) continue;
    fleet.agents.delete(id);
    fleet.tracks.delete(id);
    fleet.trackCounts.delete(id);
    fleet.details.delete(id);
  }
  for (const [id, w] of fleet.workspaces) if (w.host === host) fleet.workspaces.delete(id);
  for (const [id, p] of fleet.projects) if (p.host === host) fleet.projects.delete(id);
  if (!quiet) emit({ kind: 'snapshot' });
}

/**
 * Replaces what the maps hold of `host` with its snapshot (runtime/window.rs, as this machine's
 * fleetSnapshot), every card, workspace and project tagged with the host's name.
 */
export function loadHostFleet(host, snap) {
  dropHostFleet(host, { quiet: true });
  for (const card of snap.agents) card.host = host;
  keepCards(fleet, snap);
  for (const w of snap.workspaces) fleet.workspaces.set(w.workspaceId, { ...w, host });
  for (const p of snap.projects) fleet.projects.set(p.projectId, { ...p, host });
  emit({ kind: 'snapshot', host });
}

/** Agents archived since the snapshot, while its other cards still come in pages. */
let gone = new Set();

/**
 * Adds a page of the cards a first-screen snapshot left out (`backend.fleetCards`): a card the
 * window holds stays (the first screen's, or an event's: every change since comes as an event),
 * an agent archived meanwhile stays out. `last`: the fleet is whole after it.
 */
export function addCards(page, last) {
  keepCards(fleet, page, {
    skip: (card) => gone.has(card.id) || fleet.agents.has(card.id),
    skipTrack: (track) => fleet.tracks.has(track.parentAgentId),
  });
  if (last) {
    fleet.whole = true;
    gone = new Set();
  }
  emit({ kind: 'cards' });
}

/**
 * Applies one event (sync.js hands it each source's in order). `guard` (for a command's reply
 * applied as an event, which may come after the event itself) skips agent states older than the
 * ones already held.
 */
export function applyEvent(ev, { guard = false } = {}) {
  switch (ev.type) {
    case 'agentUpdated': {
      const old = fleet.agents.get(ev.agent.id);
      if (guard && old && old.updatedAt > ev.agent.updatedAt) return;
      const agent = keepCard(fleet, ev.agent);
      const detail = fleet.details.get(agent.id);
      if (detail) fleet.details.set(agent.id, withCard(detail, agent));
      emit({ kind: 'agent', agent, old });
      return;
    }
    case 'agentArchived': {
      const agent = ev.agent;
      const had = fleet.agents.delete(agent.id);
      if (!fleet.whole) gone.add(agent.id);
      fleet.details.delete(agent.id);
      emit({ kind: 'archived', agent, had });
      return;
    }
    case 'timelineItems':
      emit({ kind: 'timeline', agentId: ev.agentId, items: ev.items });
      return;
    case 'workspaceUpdated': {
      const ws = ev.workspace;
      if (ws.archivedAt) fleet.workspaces.delete(ws.workspaceId);
      else fleet.workspaces.set(ws.workspaceId, ws);
      emit({ kind: 'workspace', workspace: ws, unknownProject: !fleet.projects.has(ws.projectId) });
      return;
    }
    case 'trackChanged':
      emit({ kind: 'track', parentAgentId: keepTrack(ev.track) });
      return;
    case 'countsChanged':
      fleet.counts = ev.counts;
      emit({ kind: 'counts' });
      return;
    case 'notice':
      addNotice(ev.level, ev.message);
      return;
    // An idle agent closed to make room for a waiting start (SPEC 14 maxLiveAgents).
    case 'closedForRoom':
      say(ev.message, ev.agentId);
      return;
    default:
  }
}

/**
 * Marks the agent's whole snapshot as wanted (events keep it from now on) and as shown last;
 * true when it still has to be fetched.
 */
export function wantDetail(id) {
  const had = fleet.details.has(id);
  const full = fleet.details.get(id) ?? null;
  fleet.details.delete(id);
  fleet.details.set(id, full);
  while (fleet.details.size > DETAILS_KEPT) fleet.details.delete(fleet.details.keys().next().value);
  return !had;
}

/**
 * An agent's whole snapshot with its card's fields taken from a newer card (an event's): what
 * only the whole snapshot has (config, last message, last error) is kept, and fetched again
 * when a turn starts or ends (the status changes), which is when it changes.
 */
function withCard(full, card) {
  const whole = { ...full };
  for (const key of CARD) {
    if (INSTANTS.includes(key)) continue;
    if (key in card) whole[key] = card[key];
    else if (typeof whole[key] === 'boolean') whole[key] = false;
    else delete whole[key];
  }
  return whole;
}

/**
 * A fetched whole snapshot, kept unless it is no longer wanted; a card newer than it (an event
 * that came meanwhile) gives it its fields.
 */
export function gotDetail(full) {
  if (!fleet.details.has(full.id)) return;
  const card = fleet.agents.get(full.id);
  const fresh = card && card.updatedAt > Date.parse(full.updatedAt) ? withCard(full, card) : full;
  fleet.details.set(full.id, fresh);
  emit({ kind: 'detail', agentId: full.id });
}

/** Whether the pane's whole snapshot should be fetched again after `agent` changed from `old`. */
export function detailStale(agent, old) {
  return (
    fleet.details.get(agent.id) != null &&
    (!old || old.status !== agent.status || old.turnCount !== agent.turnCount)
  );
}

/** Forgets a wanted snapshot that could not be fetched. */
export function dropDetail(id) {
  if (fleet.details.get(id) === null) fleet.details.delete(id);
}

/** The agent's whole snapshot if this window has it (the pane's agent), else null. */
export function detailOf(id) {
  return fleet.details.get(id) ?? null;
}

/** The parent's live child agents, oldest first: its track's members (the backend keeps the order). */
export function childrenOf(parentId) {
  const out = [];
  for (const id of fleet.tracks.get(parentId) ?? []) {
    const child = fleet.agents.get(id);
    if (child) out.push(child);
  }
  return out;
}

/** Every live descendant of `id` (no cycles followed). */
export function descendants(id) {
  const out = [];
  const seen = new Set([id]);
  const stack = [id];
  while (stack.length) {
    for (const child of childrenOf(stack.pop())) {
      if (seen.has(child.id)) continue;
      seen.add(child.id);
      out.push(child);
      stack.push(child.id);
    }
  }
  return out;
}

/** The top of the agent's parent chain (itself for a root agent). */
export function rootOf(agent) {
  const seen = new Set();
  let current = agent;
  while (current && current.parentAgentId && !seen.has(current.id)) {
    seen.add(current.id);
    const parent = fleet.agents.get(current.parentAgentId);
    if (!parent) break;
    current = parent;
  }
  return current;
}

/** Root agents of a workspace, newest first. */
export function rootsIn(workspaceId) {
  return rootsOf(fleet.agents, workspaceId);
}

/** Every agent of a workspace (subagents included). */
export function inWorkspace(workspaceId) {
  return agentsOf(fleet.agents, workspaceId);
}

/** The workspace of the agent active last among those `known(workspaceId)` accepts, or null. */
export function latestWorkspace(known) {
  return latestIn(fleet.agents, known);
}

export function providerInfo(id) {
  return fleet.providers.find((p) => p.id === id);
}

export function providerLabel(id) {
  return providerInfo(id)?.label ?? id;
}

/**
 * What a workspace is called: its name (the user's, or the title of the agent it was made for),
 * else its branch or folder — with " · 2", " · 3"… for the later of several unnamed workspaces
 * in one directory, so rows that share a directory can be told apart (SPEC 1 `name`).
 */
export function workspaceName(ws) {
  if (!ws) return '';
  if (ws.name) return ws.name;
  const parts = String(ws.cwd).split('/').filter(Boolean);
  const base = ws.displayName || parts[parts.length - 1] || ws.cwd;
  let before = 0;
  for (const w of fleet.workspaces.values()) {
    if (w !== ws && !w.name && !w.archivedAt && w.cwd === ws.cwd && w.host === ws.host && sharesOlder(w, ws))
      before++;
  }
  return before ? `${base} · ${before + 1}` : base;
}

function sharesOlder(w, ws) {
  const a = String(w.createdAt ?? '');
  const b = String(ws.createdAt ?? '');
  return a < b || (a === b && w.workspaceId < ws.workspaceId);
}

/**
 * The parent's track: {parentAgentId, members: [id], counts: {running, queued, needsYou, failed,
 * total, line}} (the backend's counts and their line, paseo-core model/tally.rs).
 */
export function trackOf(parentId) {
  const members = fleet.tracks.get(parentId) ?? [];
  // A quiet track's counts are its size's (the backend sends each size it has).
  const counts = fleet.trackCounts.get(parentId) ?? fleet.quietCounts.get(members.length) ?? NO_COUNTS;
  return { parentAgentId: parentId, members, counts };
}

/** Counts of a track the backend has not counted (none: its members came with their counts). */
const NO_COUNTS = { running: 0, queued: 0, needsYou: 0, failed: 0, total: 0, finished: 0, line: [] };
