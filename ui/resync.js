// Catching up when events alone cannot: reloads the whole fleet snapshot — when the backend says
// this window missed events (`paseo://resync`), or when an event names something it never saw.
import * as backend from './backend.js';
import { addError, loadSnapshot } from './store.js';
import * as layout from './layout.js';
import * as timelines from './timeline-model.js';
import { reloadArchivedSoon } from './archived-list.js';

let resyncTimer = 0;

/** Resyncs after `delay` ms (several requests in a row resync once). */
export function resyncSoon(delay = 300) {
  clearTimeout(resyncTimer);
  resyncTimer = setTimeout(resync, delay);
}

export async function resync() {
  try {
    const snap = await backend.fleetSnapshot();
    loadSnapshot(snap);
    timelines.reloadAll();
    if (layout.prune()) layout.save();
    reloadArchivedSoon();
  } catch (error) {
    addError('Could not reload the fleet', error);
  }
}
