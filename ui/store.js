// The window's copy of the fleet: loaded from a snapshot, kept current by backend events. Applying
// an event only updates maps and marks what changed; rendering happens once per frame elsewhere.
import { errorMessage } from './dom.js';
import { Keyed } from './keyed.js';
import { Cards, Tracks } from './cards.js';

/**
 * The fields a window keeps of every agent (its card): what lists, tabs, tracks and headers
 * render. The snapshot sends only these (paseo-core's runtime/window.rs `AgentCard`); an event's
 * whole snapshot is cut down to them. The rest (config, last message, last error…) is fetched
 * for the few agents a pane shows (`fleet.details`).
 */
const CARD = [
  'id',
  'title',
  'provider',
  'status',
  'parentAgentId',
  'workspaceId',
  'cwd',
  'bucket',
  'statusWord',
  'look',
  'power',
  'requiresAttention',
  'needsYou',
  'attentionReason',
  'createdAt',
  'updatedAt',
  'lastActivityAt',
  'pendingPermission',
  'waitingForSlot',
  'queuePlace',
  'changes',
  'usage',
  'treeUsage',
  'lastRun',
  'turnCount',
  'unconfined',
];

/** How many agents' whole snapshots a window keeps (the panes shown last). */
const DETAILS_KEPT = 8;

/** A card's instants, held as epoch milliseconds (numbers, not one more string each). */
const INSTANTS = ['createdAt', 'updatedAt', 'lastActivityAt'];

/**
 * An agent's card from its whole snapshot (an event's): absent, false and zero fields left out
 * as the backend does, its instants in milliseconds.
 */
export function cardOf(agent) {
  const card = {};
  for (const key of CARD) {
    const value = agent[key];
    if (value !== undefined && value !== null && value !== false && value !== 0) card[key] = value;
  }
  for (const key of INSTANTS) if (typeof card[key] === 'string') card[key] = Date.parse(card[key]);
  return card;
}

export const fleet = {
  loaded: false,
  home: '',
  mcpUrl: null,
  /** {state: on | off | unavailable, engine, message}: whether agents are contained (SPEC 16). */
  containment: null,
  /** id → agent card (unarchived agents only), in columns (`Cards`) for size (docs/scale.md). */
  agents: new Cards(),
  /** id → the agent's whole snapshot (null while it is fetched), for the panes shown last; oldest first. */
  details: new Map(),
  /** id → workspace snapshot (unarchived). */
  workspaces: new Map(),
  /** id → project record. */
  projects: new Map(),
  /**
   * parent id → its track's members: the ids of its unarchived children, oldest first (the
   * backend's order), held as the agents' places in `agents` (`Tracks`). Also the page's index
   * of children (`childrenOf`). Read with `trackOf`.
   */
  tracks: new Tracks(new Cards()),
  /**
   * parent id → {running, needsYou, total}, only for tracks with a child running or needing
   * you: any other track's counts are 0, 0 and its size. Tens of thousands of parents would
   * otherwise keep two more objects each (docs/scale.md).
   */
  trackCounts: new Keyed(),
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

/** fn(change): change is {kind, ...}; kinds: snapshot, agent, detail, archived, timeline, workspace, track, counts, notice, said. */
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
  const parent = track.parentAgentId;
  const m = track.members;
  // A parent whose last child went is not kept: most of a big fleet's agents have no track.
  if (m.length) fleet.tracks.set(parent, m);
  else fleet.tracks.delete(parent);
  const c = track.counts;
  if (c && (c.running || c.queued || c.needsYou || c.failed || c.finished !== c.total))
    fleet.trackCounts.set(parent, c);
  else {
    fleet.trackCounts.delete(parent);
    if (c) fleet.quietCounts.set(c.total, c);
  }
  return parent;
}

/** Replaces everything with a fresh snapshot. */
export function loadSnapshot(snap) {
  fleet.home = snap.home;
  fleet.mcpUrl = snap.mcpUrl;
  fleet.containment = snap.containment || null;
  fleet.agents = snap.agents;
  // Events may have been missed (a resync): what a pane shows is fetched again.
  fleet.details = new Map();
  fleet.workspaces = new Map(snap.workspaces.map((w) => [w.workspaceId, w]));
  fleet.projects = new Map(snap.projects.map((p) => [p.projectId, p]));
  fleet.tracks = snap.tracks;
  fleet.trackCounts = new Keyed(snap.trackCounts);
  fleet.quietCounts = new Map(snap.quietCounts);
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
 * Applies one `paseo://event`. `guard` (at start-up, for events that raced the snapshot) skips
 * agent states older than the ones already held.
 */
export function applyEvent(ev, { guard = false } = {}) {
  switch (ev.type) {
    case 'agentUpdated': {
      const agent = cardOf(ev.agent);
      const old = fleet.agents.get(agent.id);
      if (guard && old && old.updatedAt > agent.updatedAt) return;
      fleet.agents.set(agent.id, agent);
      if (fleet.details.has(agent.id))
        fleet.details.set(agent.id, withParts(ev.agent, fleet.details.get(agent.id)));
      emit({ kind: 'agent', agent, old });
      return;
    }
    case 'agentArchived': {
      const agent = ev.agent;
      fleet.tracks.unslot(agent.id);
      const had = fleet.agents.delete(agent.id);
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
 * An agent's whole snapshot with what one of an agent at rest leaves out (`atRest`: its system
 * prompt and last message, still in its record file) taken from `from`, another snapshot of it
 * that has them. They cannot have changed since: whatever changes them brings the agent out of
 * rest. Otherwise `full` itself.
 */
function withParts(full, from) {
  if (!full?.atRest || !from || from.atRest) return full;
  const whole = { ...full, config: { ...full.config } };
  delete whole.atRest;
  if ('lastMessage' in from) whole.lastMessage = from.lastMessage;
  if (from.config && 'systemPrompt' in from.config) whole.config.systemPrompt = from.config.systemPrompt;
  return whole;
}

/**
 * A fetched whole snapshot, kept unless an event brought a newer one meanwhile (which then takes
 * the parts an at-rest one leaves out from it) or it is no longer wanted.
 */
export function gotDetail(full) {
  if (!fleet.details.has(full.id)) return;
  const had = fleet.details.get(full.id);
  if (had && had.updatedAt > full.updatedAt) {
    if (!had.atRest) return;
    fleet.details.set(full.id, withParts(had, full));
  } else {
    fleet.details.set(full.id, full);
  }
  emit({ kind: 'detail', agentId: full.id });
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
  return fleet.agents.rootsIn(workspaceId);
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
    if (w !== ws && !w.name && !w.archivedAt && w.cwd === ws.cwd && sharesOlder(w, ws)) before++;
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
