// The whole snapshot of the agents a pane shows (docs/scale.md): a window keeps only a compact card
// per agent; the pane asks the backend once for the rest (model, last error, last message) and
// the agent's events keep it current from then on (ui/store.js).
import * as backend from './backend.js';
import { dropDetail, gotDetail, wantDetail } from './store.js';

/** Makes sure the window has (or is fetching) agent `id`'s whole snapshot. */
export function ensureDetail(id) {
  if (!id || !wantDetail(id)) return;
  backend.getAgent(id).then(gotDetail, () => dropDetail(id));
}
