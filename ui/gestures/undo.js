// Undo for the soft gestures (closing a root agent's tab, a track archive, "Archive finished",
// Detach): each shows the toast with what it did, and Undo puts back exactly that — the archive
// batch restored (SPEC 5: closed, links intact) with this window's tabs where they were, or the
// detached agent back under its parent when that narrows power (SPEC 14), else the toast says
// why it cannot.
import * as backend from '../backend.js';
import * as layout from '../layout.js';
import { fleet, descendants } from '../store.js';
import { agentName } from '../status.js';
import { invalidate } from '../render.js';
import { Toast } from '../components/toast.js';
import { reloadArchivedSoon } from '../archived-list.js';

let toast = null;

function theToast() {
  toast ??= new Toast(document.querySelector('.main') ?? document.body);
  return toast;
}

/** Where this window shows tabs of `heads` and their subagents, to put them back on undo. */
export function tabPlaces(heads) {
  const ids = new Set();
  for (const id of heads) {
    ids.add(id);
    for (const d of descendants(id)) ids.add(d.id);
  }
  const places = [];
  for (const [ws, g] of Object.entries(layout.layout.groups)) {
    g.tabs.forEach((id, index) => {
      if (ids.has(id)) places.push({ ws, id, index, active: g.active === id });
    });
  }
  return { places, selected: layout.layout.selected };
}

function putBack({ places, selected }) {
  for (const p of [...places].sort((a, b) => a.index - b.index)) {
    const g = layout.group(p.ws);
    if (!g.tabs.includes(p.id)) g.tabs.splice(Math.min(p.index, g.tabs.length), 0, p.id);
    if (p.active) g.active = p.id;
  }
  // The tab the gesture closed was in view: the undo shows it again.
  if (places.some((p) => p.active && p.ws === selected)) layout.layout.selected = selected;
  layout.save();
  invalidate('sidebar', 'tabs', 'pane');
}

/**
 * After an archive gesture: `ids` as the backend archived them (one batch), `text` the toast's
 * words, `places` from tabPlaces before the archive.
 */
export function archived(ids, text, places) {
  if (!ids?.length) return;
  theToast().show(text, async () => {
    await backend.restoreAgent(ids[0], false);
    putBack(places);
    reloadArchivedSoon(0);
  });
}

/** Words for "what went": the head's name, and how many came along. */
export function archivedText(agent, archivedIds) {
  const more = archivedIds.length - 1;
  return `“${agentName(agent)}” archived${more > 0 ? ` with ${more === 1 ? '1 subagent' : `${more} subagents`}` : ''}`;
}

/**
 * After a detach of `id` from `parentId`: offers Undo only when the backend says the agent may
 * go back (re-attaching may only narrow power), else says why not.
 */
export async function detached(id, parentId) {
  const name = agentName(fleet.agents.get(id));
  const parent = agentName(fleet.agents.get(parentId));
  const text = `“${name}” is now a root agent`;
  try {
    await backend.reattachAgent(id, parentId, true);
  } catch (error) {
    const why = String(error?.message ?? error).replace(/^cannot put \S+ back under \S+: /, '');
    theToast().show(`${text}. It cannot go back under “${parent}”: ${why}.`);
    return;
  }
  theToast().show(text, () => backend.reattachAgent(id, parentId, false));
}

/** Ctrl+Z: the toast's Undo, when one is offered; answers whether there was one. */
export function undoLast() {
  if (!toast || toast.el.hidden || toast.undo.hidden) return false;
  toast.runUndo();
  return true;
}
