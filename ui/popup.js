// One popup at a time, whichever it is (the ☰ menu, About, the tab list, the counts' lists, an
// archived batch's members): placed at its anchor (below it, or above when asked or when there
// is no room; left- or right-aligned, kept inside the window), closed by Escape (the focus goes
// back to the anchor), by a press elsewhere, or by its owner; arrow keys move between its items.
let open = null;

/** Closes the open popup, if any; `refocus` gives the focus back to its anchor. */
export function closePopup(refocus = false) {
  if (!open) return;
  const { el, anchor, onDoc } = open;
  open = null;
  document.removeEventListener('mousedown', onDoc, true);
  el.remove();
  if (anchor.hasAttribute('aria-haspopup')) anchor.setAttribute('aria-expanded', 'false');
  if (refocus) anchor.focus();
}

/** Whether the open popup is `anchor`'s (a second click on an anchor closes its popup). */
export function popupOf(anchor) {
  return open?.anchor === anchor;
}

/**
 * Shows `el` at `anchor` in place of any other popup. `items`: what the arrow keys move between;
 * `focus`: what gets the focus (the first item unless given); `align`: 'left' or 'right';
 * `place`: 'below', 'above' or 'auto' (below unless there is no room).
 */
export function showPopup(
  anchor,
  el,
  { items = [], focus = items[0], align = 'left', place = 'below', gap = 4 } = {},
) {
  closePopup();
  el.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      closePopup(true);
    } else if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && items.length) {
      e.preventDefault();
      const i = items.indexOf(document.activeElement);
      const n = items.length;
      items[e.key === 'ArrowDown' ? (i + 1) % n : (i - 1 + n) % n].focus();
    }
  });
  document.body.append(el);
  const box = anchor.getBoundingClientRect();
  const above =
    place === 'above' || (place === 'auto' && window.innerHeight - box.bottom < el.offsetHeight + 2 * gap);
  if (above) el.style.bottom = `${Math.max(8, window.innerHeight - box.top + gap)}px`;
  else el.style.top = `${box.bottom + gap}px`;
  const left = align === 'right' ? box.right - el.offsetWidth : box.left;
  el.style.left = `${Math.max(8, Math.min(left, window.innerWidth - el.offsetWidth - 8))}px`;
  if (anchor.hasAttribute('aria-haspopup')) anchor.setAttribute('aria-expanded', 'true');
  const onDoc = (e) => {
    if (!el.contains(e.target) && !anchor.contains(e.target)) closePopup();
  };
  document.addEventListener('mousedown', onDoc, true);
  open = { el, anchor, onDoc };
  focus?.focus();
}
