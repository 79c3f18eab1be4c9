// Rendering is coalesced per animation frame: events and gestures only mark areas dirty, and each
// dirty area is redrawn once in the next frame, however many events arrived in between. A timer
// backs the frame up, so a window the compositor does not paint (hidden to the tray, covered)
// still catches up, just less often.
const renderers = new Map();
const after = [];
const dirty = new Set();
let frame = 0;
let timer = 0;
const BACKUP_MS = 250;

/** Registers the function that redraws `area`. */
export function register(area, fn) {
  renderers.set(area, fn);
}

/** Runs `fn` after every redraw (e.g. to report what the window now shows). */
export function afterFlush(fn) {
  after.push(fn);
}

/** Marks areas dirty; they redraw in the next frame. */
export function invalidate(...areas) {
  for (const area of areas) dirty.add(area);
  if (!frame) frame = requestAnimationFrame(flush);
  if (!timer) timer = setTimeout(flush, BACKUP_MS);
}

/** Redraws every dirty area now. */
export function flush() {
  cancelAnimationFrame(frame);
  clearTimeout(timer);
  frame = 0;
  timer = 0;
  // Renderers may mark more areas; those wait for the next frame.
  const areas = [...dirty];
  dirty.clear();
  for (const area of areas) {
    const fn = renderers.get(area);
    if (!fn) continue;
    try {
      fn();
    } catch (error) {
      console.error(`rendering ${area} failed`, error);
    }
  }
  for (const fn of after) fn();
}
