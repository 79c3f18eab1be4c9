// After a tab closes or a track row leaves, its neighbour slides into its place, and that
// neighbour's × (or Detach) lands under a pointer that has not moved. A double click, or the
// habit of clicking "the same" × again, would then archive an agent the user never aimed at.
// A guard takes the click of a pointer that stayed where the last such click was, within a
// second: it does nothing, and says why in the title of what it ignored. A pointer that moved,
// or a moment's pause, gives clicks back. Keyboard gestures are never guarded.

const STILL_PX = 4;
const WINDOW_MS = 1000;

export class SlideGuard {
  constructor() {
    this.last = null;
    // The pointer moved away from where it clicked: the user aims anew.
    document.addEventListener(
      'pointermove',
      (e) => {
        const last = this.last;
        if (last && (Math.abs(e.clientX - last.x) > STILL_PX || Math.abs(e.clientY - last.y) > STILL_PX))
          this.last = null;
      },
      { passive: true },
    );
  }

  /**
   * Whether the click `event` must be ignored; otherwise remembers it (a pointer click: a
   * keyboard's has `detail` 0) as the one the next must not repeat in place.
   */
  blocks(event) {
    const pointer = event && event.detail > 0;
    const last = this.last;
    const still =
      pointer &&
      last &&
      performance.now() - last.at < WINDOW_MS &&
      Math.abs(event.clientX - last.x) <= STILL_PX &&
      Math.abs(event.clientY - last.y) <= STILL_PX;
    if (still) {
      // Clicking on in place (a triple click, a hand that keeps going) stays guarded.
      last.at = performance.now();
      return true;
    }
    this.last = pointer ? { x: event.clientX, y: event.clientY, at: performance.now() } : null;
    return false;
  }
}
