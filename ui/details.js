// The whole snapshot of the agents a pane shows: a window keeps only a card per agent; the pane
// asks the backend for the rest (model, last error, last message), the agent's events (cards)
// keep the card's part of it current, and a turn's start or end fetches it again (ui/store.js).
import * as backend from './backend.js';
import { dropDetail, gotDetail, wantDetail } from './store.js';

/** Makes sure the window has (or is fetching) agent `id`'s whole snapshot. */
export function ensureDetail(id) {
  if (!id || !wantDetail(id)) return;
  backend.getAgent(id).then(gotDetail, () => dropDetail(id));
}

const fetching = new Set();

/** Fetches agent `id`'s whole snapshot again (one fetch at a time per agent). */
export function refreshDetail(id) {
  if (fetching.has(id)) return;
  fetching.add(id);
  backend
    .getAgent(id)
    .then(gotDetail, () => {})
    .finally(() => fetching.delete(id));
}
