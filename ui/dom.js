// A tiny element builder so components stay declarative without a framework or a build step.

/**
 * h('div', { class: 'x', dataset: { testid: 'y' }, onclick: f }, child, 'text', [more])
 * Attributes starting with "on" become listeners; null/false attributes and children are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'dataset') {
      for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) el.dataset[k] = v;
    } else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  el.append(...flatten(children));
  return el;
}

function flatten(children) {
  return children
    .flat(Infinity)
    .filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c))));
}

/** Replaces all children of `el`. */
export function mount(el, ...children) {
  el.replaceChildren(...flatten(children));
}

/** Sets an attribute only when it changes (or removes it for null), sparing style recalcs. */
export function setAttr(el, name, value) {
  if (value === null || value === undefined || value === false) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
    return;
  }
  const text = value === true ? '' : String(value);
  if (el.getAttribute(name) !== text) el.setAttribute(name, text);
}

/** Sets textContent only when it changes. */
export function setText(el, text) {
  const value = String(text ?? '');
  if (el.textContent !== value) el.textContent = value;
}

/** The last path element, for showing directories by name. */
export function basename(path) {
  const parts = String(path || '')
    .split(/[\\/]+/)
    .filter(Boolean);
  return parts.length ? parts[parts.length - 1] : String(path || '/');
}

// Each made once, with the fields Date's toLocale*String() show by default: those build a new
// formatter on every call (≈ 0.2 ms here), which a list of a thousand rows paid on every redraw.
const DATE = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'numeric', day: 'numeric' });
const TIME = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: 'numeric', second: 'numeric' });
const DATE_TIME = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
});

const HOUR_MINUTE = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const MONTH_DAY = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

function formatted(format, iso) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? '' : format.format(t);
}

/** The local date and time of an ISO timestamp ('' if it is not one). */
export const dateTimeText = (iso) => formatted(DATE_TIME, iso);

/** The local time of day of an ISO timestamp ('' if it is not one). */
export const timeText = (iso) => formatted(TIME, iso);

/** The same to the minute ("07:00"), and its day ("Dec 24"): a due time as a row says it. */
export const minuteText = (iso) => formatted(HOUR_MINUTE, iso);
export const dayText = (iso) => formatted(MONTH_DAY, iso);

/** "3 min ago" style, for archived times. */
/** `at`: an ISO 8601 instant or epoch milliseconds (an agent card's). */
export function ago(at) {
  const t = typeof at === 'number' ? at : Date.parse(at);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, (Date.now() - t) / 1000);
  if (s < 45) return 'just now';
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return DATE.format(t);
}

export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

export function errorMessage(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Keyed list update: makes `parent`'s children the elements for `items` in order, reusing the
 * element of every key seen before (so focus, scroll and open state survive), creating new ones
 * with `create(item)` and refreshing each with `update(el, item)`.
 */
export function reconcile(parent, items, keyOf, create, update) {
  const old = parent._keyed ?? new Map();
  const next = new Map();
  let at = parent.firstElementChild;
  for (const item of items) {
    const key = keyOf(item);
    let el = old.get(key);
    if (!el) el = create(item);
    update(el, item);
    next.set(key, el);
    if (el !== at) parent.insertBefore(el, at);
    else at = at.nextElementSibling;
  }
  for (const [key, el] of old) if (!next.has(key)) el.remove();
  parent._keyed = next;
}

/**
 * A list of fixed-height rows of which only those in view, and `overscan` more either side, are
 * in the DOM (the workspace home, the subagents track, the archived list: thousands of rows
 * scroll like a few). `parent` holds the rows, placed absolutely at their offsets; `create(key)`
 * makes a row (an element, or what `elementOf` finds one in) and `update(row, i)` fills it.
 */
export class RowWindow {
  constructor(parent, { rowPx, overscan, create, update, elementOf = (row) => row }) {
    Object.assign(this, { parent, rowPx, overscan, create, update, elementOf });
    /** key → row, for the rows in the DOM. */
    this.rows = new Map();
  }

  /**
   * Shows the rows of a list of `count` keys (`keyAt(i)`; null skips one) seen from `top` over
   * `height` pixels (`fallback` rows before the first layout). A row out of view stays while it
   * holds the focus and is still listed.
   */
  render(count, keyAt, top, height, fallback) {
    const px = this.rowPx;
    const seen = height || px * fallback;
    const from = Math.max(0, Math.floor(top / px) - this.overscan);
    const to = Math.min(count, Math.ceil((top + seen) / px) + this.overscan);
    const wanted = new Set();
    for (let i = from; i < to; i++) {
      const key = keyAt(i);
      if (key === null || key === undefined) continue;
      wanted.add(key);
      let row = this.rows.get(key);
      if (!row) {
        row = this.create(key);
        this.rows.set(key, row);
        this.parent.append(this.elementOf(row));
      }
      this.elementOf(row).style.transform = `translateY(${i * px}px)`;
      this.update(row, i);
    }
    for (const [key, row] of this.rows) {
      if (wanted.has(key)) continue;
      const el = this.elementOf(row);
      // Looked up only for the focused row: a set of every key built on each scroll event was
      // garbage for the collector, whose pauses showed as dropped frames.
      if (el.contains(document.activeElement) && listed(count, keyAt, key)) continue;
      el.remove();
      this.rows.delete(key);
    }
  }

  /** Takes every row out of the DOM. */
  clear() {
    for (const row of this.rows.values()) this.elementOf(row).remove();
    this.rows.clear();
  }
}

function listed(count, keyAt, key) {
  for (let i = 0; i < count; i++) if (keyAt(i) === key) return true;
  return false;
}

let measurer = null;

/**
 * The first of `texts` (longest first) that fits `el`'s content box on one line in its own font;
 * the last one when none does. A textarea wraps its placeholder and then cuts it off, so the
 * caller picks a shorter wording instead. Before layout (width 0) the first one is kept.
 */
export function firstThatFits(el, texts) {
  const style = getComputedStyle(el);
  const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  if (!(room > 0)) return texts[0];
  measurer ??= document.createElement('canvas').getContext('2d');
  measurer.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  return texts.find((text) => measurer.measureText(text).width <= room) ?? texts[texts.length - 1];
}
