// The archived list's loading, apart from its gestures (gestures/archived.js) so what only
// reloads it (an undo, an event, a resync) imports no gesture: this machine's archived agents
// first, then each host's (SPEC 17), every section paged on its own (`archivedAgents {host}`,
// which also tells the backend where a host's live), grouped by archive batch.

import * as backend from './backend.js';
import { hostList } from './hosts.js';
import { fleet, addError } from './store.js';
import * as layout from './layout.js';
import { invalidate } from './render.js';
import { ui } from './window-state.js';

let archivedTimer = 0;

/** Reloads the open list shortly (several archives in a row load it once). */
export function reloadArchivedSoon(delay = 150) {
  if (!layout.layout.archivedOpen) return;
  clearTimeout(archivedTimer);
  archivedTimer = setTimeout(loadArchived, delay);
}

// Thousands of archive gestures add up over months: the list comes a page at a time.
const PAGE = 500;

/** The archived agent `id` as listed: this machine's, or a host's (tagged with `host`). */
export function findArchived(id) {
  const here = ui.archived.loaded.find((a) => a.id === id);
  if (here) return here;
  for (const section of ui.archived.hosts.values()) {
    const there = section.loaded.find((a) => a.id === id);
    if (there) return there;
  }
  return undefined;
}

/**
 * The first of `ids` in the fleet, waiting up to `ms` for it: a host's restored agent comes back
 * by the host's event, which may follow the restore's answer by a moment.
 */
export async function arrived(ids, ms) {
  for (let waited = 0; ; waited += 100) {
    for (const id of ids) if (id && fleet.agents.has(id)) return fleet.agents.get(id);
    if (waited >= ms) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The list of `host` (null: this machine's): {loaded, total, batches, loadingMore}. */
function sectionOf(host) {
  if (!host) return ui.archived;
  let section = ui.archived.hosts.get(host);
  if (!section)
    ui.archived.hosts.set(host, (section = { loaded: [], total: 0, batches: null, loadingMore: false }));
  return section;
}

async function page(host, offset, limit) {
  const answer = await backend.archivedAgents(offset, limit, host);
  if (host) for (const a of answer.agents) a.host = host;
  return answer;
}

/**
 * (Re)loads the open list from the top, as many agents as were shown (at least a page): this
 * machine's, and each connected host's. A host not connected keeps no rows (they could be
 * neither read nor restored now); its section says so.
 */
export async function loadArchived() {
  const names = new Set(hostList().map((e) => e.name));
  for (const name of [...ui.archived.hosts.keys()]) if (!names.has(name)) ui.archived.hosts.delete(name);
  const loads = [null, ...hostList().map((e) => e.name)].map(async (host) => {
    const section = sectionOf(host);
    if (host && hostList().find((e) => e.name === host)?.state !== 'connected') {
      show(section, [], 0);
      return;
    }
    try {
      const got = await page(host, 0, Math.min(10000, Math.max(PAGE, section.loaded.length)));
      show(section, got.agents, got.total);
    } catch (error) {
      // A host that dropped meanwhile: its section says it is not connected.
      if (host && error?.code === 'disconnected') show(section, [], 0);
      else
        addError(
          host ? `Could not list the archived agents on ${host}` : 'Could not list the archived agents',
          error,
        );
    }
  });
  await Promise.all(loads);
  invalidate('archived');
}

/** "Show more" of a section (`host`, or this machine's): the next page below the ones shown. */
export async function loadMoreArchived(host = null) {
  const section = sectionOf(host);
  if (section.loadingMore) return;
  section.loadingMore = true;
  invalidate('archived');
  try {
    const got = await page(host, section.loaded.length, PAGE);
    const seen = new Set(section.loaded.map((a) => a.id));
    show(section, [...section.loaded, ...got.agents.filter((a) => !seen.has(a.id))], got.total);
  } catch (error) {
    addError(
      host ? `Could not list more archived agents on ${host}` : 'Could not list more archived agents',
      error,
    );
  } finally {
    section.loadingMore = false;
  }
  invalidate('archived');
}

function show(section, agents, total) {
  section.loaded = agents;
  section.total = total;
  section.batches = batches(agents);
  // Restored meanwhile (another window, or a whole batch): nothing archived is left to read.
  if (ui.readOnly && fleet.agents.has(ui.readOnly.id)) ui.readOnly = null;
}

/**
 * Archived agents grouped by archive gesture: {head, members, tree}; `tree` when every member
 * sits under the head (an agent archived with its subagents, not "Archive finished").
 */
function batches(list) {
  const byBatch = new Map();
  for (const a of list) {
    const key = a.archiveBatchId ?? a.id;
    let b = byBatch.get(key);
    if (!b) byBatch.set(key, (b = { members: [] }));
    b.members.push(a);
  }
  return [...byBatch.values()].map((b) => {
    const ids = new Set(b.members.map((m) => m.id));
    const heads = b.members.filter((m) => !m.parentAgentId || !ids.has(m.parentAgentId));
    // A batch of several unrelated agents ("Archive finished") shows its oldest as the head.
    heads.sort((x, y) => (x.createdAt < y.createdAt ? -1 : 1));
    const head = heads[0] ?? b.members[0];
    const byId = new Map(b.members.map((m) => [m.id, m]));
    const under = (m) => {
      for (
        let cur = m, hops = 0;
        cur && hops <= b.members.length;
        cur = byId.get(cur.parentAgentId), hops++
      ) {
        if (cur.parentAgentId === head.id) return true;
      }
      return false;
    };
    return { head, members: b.members, tree: b.members.every((m) => m === head || under(m)) };
  });
}
