// The window's agent cards: a Map of id → card, each card as the backend sends it (paseo-core's
// runtime/window.rs `AgentCard`, in snapshots, pages and events alike), and the whole-fleet
// questions asked of them. Plain data and functions, no DOM: tests/ui/cards.rs checks them.
//
// What a card repeats (its provider, status, workspace, cwd… and its parent's id) is kept as the
// one string the window already holds, not as the copy each JSON parse makes: at 100,000 agents
// the copies would be most of the page's heap.

/** The fields of a card: what lists, tabs, tracks and headers render. */
export const CARD = [
  'id',
  'title',
  'name',
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
  'treeBudget',
  'subagents',
  'schedule',
];

/** A card's instants, as epoch milliseconds (numbers, not one more string each). */
export const INSTANTS = ['createdAt', 'updatedAt', 'lastActivityAt'];

/** The fields whose few values many cards share. */
const SHARED = [
  'provider',
  'status',
  'workspaceId',
  'cwd',
  'bucket',
  'statusWord',
  'look',
  'power',
  'attentionReason',
  'schedule',
];

/** Shared values, each kept once for the page's life (there are few: providers, cwds…). */
const strings = new Map();

function shared(value) {
  if (typeof value !== 'string') return value;
  const had = strings.get(value);
  if (had !== undefined) return had;
  strings.set(value, value);
  return value;
}

/**
 * An agent's card from its whole snapshot (a command's answer, `get_agent`'s): absent, false and
 * zero fields left out as the backend does, its instants in milliseconds.
 */
export function cardOf(agent) {
  const card = {};
  for (const key of CARD) {
    const value = agent[key];
    if (value !== undefined && value !== null && value !== false && value !== 0) card[key] = value;
  }
  for (const key of INSTANTS) if (typeof card[key] === 'string') card[key] = Date.parse(card[key]);
  // A whole snapshot says its schedule in its labels (SPEC 20), as the card's `schedule`.
  if (!card.schedule && agent.labels?.schedule) card.schedule = agent.labels.schedule;
  return card;
}

/** Keeps `card` in `fleet.agents` (replacing the agent's older one); returns it. */
export function keepCard(fleet, card) {
  for (const key of SHARED) if (key in card) card[key] = shared(card[key]);
  const parent = card.parentAgentId && fleet.agents.get(card.parentAgentId);
  if (parent) card.parentAgentId = parent.id;
  fleet.agents.set(card.id, card);
  return card;
}

/** Keeps a track ({parentAgentId, members, counts?}) in `fleet.tracks`; returns the parent's id. */
export function keepTrackOf(fleet, track) {
  const parent = track.parentAgentId;
  const m = track.members;
  // A parent whose last child went is not kept: most of a big fleet's agents have no track.
  if (m.length)
    fleet.tracks.set(
      parent,
      m.map((id) => fleet.agents.get(id)?.id ?? id),
    );
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

/**
 * Keeps the cards and tracks of a snapshot or page ({agents, tracks, quietCounts}: the counts of
 * its quiet tracks, once per size); `skip(card)` leaves a card out (one the window already has
 * newer, or of an agent archived meanwhile), and `skipTrack(track)` a track.
 */
export function keepCards(
  fleet,
  { agents, tracks, quietCounts = [] },
  { skip = () => false, skipTrack = () => false } = {},
) {
  for (const [size, counts] of quietCounts) fleet.quietCounts.set(size, counts);
  for (const card of agents) if (!skip(card)) keepCard(fleet, card);
  for (const track of tracks) if (!skipTrack(track)) keepTrackOf(fleet, track);
}

/** Root agents (no parent) of a workspace, newest first (an agent without an instant last). */
export function rootsOf(agents, workspaceId) {
  const out = [];
  for (const card of agents.values())
    if (!card.parentAgentId && card.workspaceId === workspaceId) out.push(card);
  return out.sort((x, y) => (y.createdAt || 0) - (x.createdAt || 0));
}

/** Every agent of a workspace (subagents included). */
export function agentsOf(agents, workspaceId) {
  const out = [];
  for (const card of agents.values()) if (card.workspaceId === workspaceId) out.push(card);
  return out;
}

/** The workspace of the agent active last among those `known(workspaceId)` accepts, or null. */
export function latestIn(agents, known) {
  let best = null;
  let bestAt = 0;
  for (const card of agents.values()) {
    const at = card.lastActivityAt || card.updatedAt || 0;
    if (at > bestAt && card.workspaceId && known(card.workspaceId)) {
      best = card.workspaceId;
      bestAt = at;
    }
  }
  return best;
}
