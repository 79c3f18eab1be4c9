// The archived list at the bottom of the sidebar: opening it, loading it (one line per archive
// gesture, grouped by batch), and Restore — which asks before bringing a subagent whose parent
// is still archived back as a root agent.
import * as backend from '../backend.js';
import { fleet, addError } from '../store.js';
import * as layout from '../layout.js';
import { invalidate } from '../render.js';
import { agentName } from '../status.js';
import { ui } from '../window-state.js';
import { openAgent } from './tabs.js';

export async function restore(id) {
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
    addError('Could not restore', error);
  } finally {
    ui.archived.busy.delete(id);
    reloadArchivedSoon(0);
  }
}

export function toggleArchived() {
  layout.setArchivedOpen(!layout.layout.archivedOpen);
  if (layout.layout.archivedOpen) loadArchived();
  invalidate('archived');
}

let archivedTimer = 0;

/** Reloads the open list shortly (several archives in a row load it once). */
export function reloadArchivedSoon(delay = 150) {
  if (!layout.layout.archivedOpen) return;
  clearTimeout(archivedTimer);
  archivedTimer = setTimeout(loadArchived, delay);
}

export async function loadArchived() {
  try {
    ui.archived.batches = batches(await backend.archivedAgents(500));
  } catch (error) {
    addError('Could not list the archived agents', error);
  }
  invalidate('archived');
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
      for (let cur = m, hops = 0; cur && hops <= b.members.length; cur = byId.get(cur.parentAgentId), hops++) {
        if (cur.parentAgentId === head.id) return true;
      }
      return false;
    };
    return { head, members: b.members, tree: b.members.every((m) => m === head || under(m)) };
  });
}
