// Start-up: app info, this window's saved layout, the backend's events, then the fleet snapshot
// with the cards of the first screen only (the selected workspace's agents, the open tabs'), and
// after that screen shows, the other cards in pages. This machine's fleet is one of the window's
// sources (sync.js): its events are followed from the first moment, held while the snapshot
// loads and applied after it above the snapshot's number. Marks the first screen in the page's performance timeline (`paseo-ready`, for
// benches/scroll.rs) and <body data-ready> for scripts once every card is in (`paseo-whole`);
// the bench's launch breakdown reads the steps between too (`paseo-boot` … `paseo-painted`).
import * as backend from './backend.js';
import { errorMessage } from './dom.js';
import { addNotice, addError, loadSnapshot, applyEvent, addCards, fleet } from './store.js';
import * as layout from './layout.js';
import { invalidate, flush } from './render.js';
import { ui } from './window-state.js';
import { ALL, showVersion, showBackendError } from './views.js';
import * as sync from './sync.js';
import * as timelines from './timeline-model.js';
import { setStatusLanguage } from './status.js';
import { openAgent } from './gestures/tabs.js';
import { loadArchived, reloadArchivedSoon } from './archived-list.js';
import { startHosts } from './hosts.js';

export async function boot() {
  performance.mark('paseo-boot');
  window.addEventListener('pagehide', () => layout.flush());
  invalidate('status', 'pane');
  layout.setSaveErrorHandler((error) => addError("Could not save this window's layout", error));
  try {
    // Each call is a round trip through the app's main thread, which a large data root's load
    // keeps busy: the calls that do not depend on one another go together.
    followHere();
    const [info, win] = await Promise.all([
      backend.appInfo(),
      backend.windowLayout(),
      // Before the snapshot is asked: an event after it is held until it is in, never missed.
      backend.listen('paseo://event', sync.onEvent),
    ]);
    ui.info = info;
    setStatusLanguage(info.statusLanguage);
    showVersion(ui.info.version);
    ui.label = win.label;
    document.body.dataset.window = win.label;
    layout.restore(win.layout);
    if (win.notice) addNotice('warning', win.notice);
    // The tray's attention entries: show that agent (main window only).
    const opening =
      win.label === 'main' &&
      backend.listen('paseo://open-agent', (payload) => {
        if (payload?.agentId) openAgent(payload.agentId);
      });
    // The hosts (SPEC 17) while this machine's first screen loads: their rows, then their
    // fleets as each snapshot arrives.
    const hosts = startHosts();
    const tabs = Object.values(layout.layout.groups).flatMap((g) => g.tabs);
    let loaded;
    let kept = false;
    await sync.sync(sync.HERE, async () => {
      performance.mark('paseo-asked');
      const snap = await backend.fleetSnapshot({ workspaceId: layout.layout.selected, agentIds: tabs });
      performance.mark('paseo-answered');
      // The backend's state, now that it has loaded the data root (the window opened meanwhile).
      loaded = backend.appInfo();
      loadSnapshot(snap);
      kept = true;
      performance.mark('paseo-kept');
      return snap.seq;
    });
    if (!kept) throw failedHere;
    await Promise.all([opening, hosts]);
    ui.info = await loaded;
    performance.mark('paseo-info');
    if (layout.prune()) layout.save();
    ui.backend = { kind: 'ready' };
    if (layout.layout.archivedOpen) loadArchived();
    performance.mark('paseo-render');
    invalidate(...ALL);
    flush();
    performance.mark('paseo-ready');
    // The frame that shows it, laid out and painted (the bench's breakdown): what `flush` left
    // to the browser is not in `paseo-ready`.
    requestAnimationFrame(() => setTimeout(() => performance.mark('paseo-painted'), 0));
    await loadRest();
    document.body.dataset.ready = 'true';
    performance.mark('paseo-whole');
  } catch (error) {
    ui.backend = { kind: 'error', message: errorMessage(error) };
    showBackendError(ui.backend.message);
    document.body.dataset.ready = 'error';
  }
}

/** Why this machine's first snapshot could not be had (sync.js reports it to `failed`). */
let failedHere = null;

/**
 * Makes this machine's fleet one of the window's sources: after the first screen's snapshot
 * (`boot`), a catch-up loads the whole fleet again and what the open panes show.
 */
function followHere() {
  sync.follow(sync.HERE, {
    load: async () => {
      const snap = await backend.fleetSnapshot();
      loadSnapshot(snap);
      return snap.seq;
    },
    apply: (event) => applyEvent(event),
    settled: () => {
      // The first screen's snapshot is boot's to follow up; a catch-up's, this.
      if (ui.backend.kind !== 'ready') return;
      timelines.reloadAll();
      if (layout.prune()) layout.save();
      reloadArchivedSoon();
    },
    failed: (error) => {
      if (ui.backend.kind === 'ready') addError('Could not reload the fleet', error);
      else failedHere = error;
    },
  });
}

/** Cards per page while the rest of the fleet loads: each page a short task of the main thread. */
const PAGE = 5000;

/** Loads the cards the first snapshot left out, a page at a time, until the fleet is whole. */
async function loadRest() {
  let after = null;
  while (!fleet.whole) {
    const page = await backend.fleetCards(after, PAGE);
    // A resync meanwhile loaded the whole fleet.
    if (fleet.whole) break;
    addCards(page, page.next === null);
    after = page.next;
  }
  if (layout.prune()) layout.save();
}
