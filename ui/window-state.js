// What this window shows beyond its saved layout (layout.js) and the fleet (store.js): the
// transient state the views read and the gestures change. Never persisted.
export const ui = {
  /** app_info, once booted. */
  info: null,
  label: 'main',
  formOpen: false,
  /** The archived agent shown read-only in the pane (its snapshot from the archived list), if any. */
  readOnly: null,
  backend: { kind: 'connecting' },
  /**
   * This machine's archived list ({loaded, total, batches, loadingMore}), and `hosts`: host name →
   * that host's, each paged on its own (SPEC 17).
   */
  archived: { open: false, count: 0, batches: null, loaded: [], total: 0, busy: new Set(), hosts: new Map() },
  /** Archives in progress, by gesture (see gestures/archive.js): a second click does nothing. */
  closing: new Set(),
  seenInFlight: new Set(),
  wakeInFlight: new Set(),
  /** What the pane region shows: loading, form, archived, agent, home, welcome or error. */
  view: null,
};
