// Start-up: app info, this window's saved layout, the backend's events, then the fleet snapshot.
// Events that arrive while the snapshot loads are held and applied after it, so the window never
// shows an agent state older than one it has already seen. Marks <body data-ready> for scripts, and
// the moment in the page's performance timeline (`paseo-ready`, for benches/scroll.rs).
import * as backend from './backend.js';
import { errorMessage } from './dom.js';
import { addNotice, addError, loadSnapshot, applyEvent } from './store.js';
import * as layout from './layout.js';
import { invalidate, flush } from './render.js';
import { ui } from './window-state.js';
import { ALL, showVersion, showBackendError } from './views.js';
import { resync, resyncSoon } from './resync.js';
import { openAgent } from './gestures/tabs.js';
import { loadArchived } from './gestures/archived.js';

export async function boot() {
  window.addEventListener('pagehide', () => layout.flush());
  invalidate('status', 'pane');
  layout.setSaveErrorHandler((error) => addError("Could not save this window's layout", error));
  try {
    ui.info = await backend.appInfo();
    showVersion(ui.info.version);
    const win = await backend.windowLayout();
    ui.label = win.label;
    document.body.dataset.window = win.label;
    layout.restore(win.layout);
    if (win.notice) addNotice('warning', win.notice);
    let early = [];
    await backend.listen('paseo://event', (ev) => (early ? early.push(ev) : applyEvent(ev)));
    await backend.listen('paseo://resync', () => resync());
    if (win.label === 'main') {
      // The tray's attention entries: show that agent.
      await backend.listen('paseo://open-agent', (payload) => {
        if (payload?.agentId) openAgent(payload.agentId);
      });
    }
    const snap = await backend.fleetSnapshot();
    loadSnapshot(snap);
    const raced = early;
    early = null;
    for (const ev of raced) applyEvent(ev, { guard: true });
    if (
      raced.some(
        (ev) => ev.type === 'workspaceUpdated' || ev.type === 'trackChanged' || ev.type === 'countsChanged',
      )
    )
      resyncSoon(500);
    if (layout.prune()) layout.save();
    ui.backend = { kind: 'ready' };
    if (layout.layout.archivedOpen) loadArchived();
    invalidate(...ALL);
    flush();
    document.body.dataset.ready = 'true';
    performance.mark('paseo-ready');
  } catch (error) {
    ui.backend = { kind: 'error', message: errorMessage(error) };
    showBackendError(ui.backend.message);
    document.body.dataset.ready = 'error';
  }
}
