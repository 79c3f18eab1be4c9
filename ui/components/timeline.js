// The agent's timeline: user prompts, assistant text, tool calls (collapsed to one line), process
// output, errors and system notices. Only a window of items is in the DOM: the newest few hundred
// while following the tail, more as the user scrolls up (paged back from disk when needed), so an
// agent streaming thousands of items a second never grows the page without bound.
import { h, timeText } from '../dom.js';
import { termText } from './term-text.js';
import { lookGlyph } from '../status.js';

/**
 * Items in the DOM while following the newest ones: a screenful or two. An agent streaming
 * ≈ 2,000 items a second brings ≈ 200 every 100 ms, and each is built, laid out and dropped
 * again; fewer kept means less of that work between the user's clicks (SPEC 12: responsive;
 * docs/benchmarks.md). Scrolling up adds older ones (`extendUp`).
 */
const FOLLOW_WINDOW = 100;
/** Items in the DOM at most while the user reads further up. */
const MAX_NODES = 1500;
/** Items added per step when scrolling towards either end. */
const STEP = 100;
const EDGE_PX = 160;

const TOOL_ARG_KEYS = [
  'command',
  'cmd',
  'file_path',
  'path',
  'pattern',
  'url',
  'query',
  'description',
  'prompt',
];

/** The one-line summary of a tool call's input. */
export function toolSummary(input) {
  if (input === null || input === undefined) return '';
  if (typeof input !== 'object') return oneLine(String(input));
  for (const key of TOOL_ARG_KEYS) {
    if (typeof input[key] === 'string' && input[key]) return oneLine(input[key]);
  }
  if (Array.isArray(input.command)) return oneLine(input.command.join(' '));
  const first = Object.values(input).find((v) => typeof v === 'string' && v);
  return first ? oneLine(first) : oneLine(JSON.stringify(input));
}

function oneLine(text) {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

function duration(fromIso, toIso) {
  const ms = Date.parse(toIso) - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return '';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function item(kind, it, who, ...body) {
  return h(
    'div',
    {
      class: `item k-${kind}`,
      dataset: { testid: 'timeline-item', kind: it.kind, seq: String(it.seq) },
    },
    h('div', { class: 'who', title: timeText(it.ts) }, who),
    ...body,
  );
}

function renderItem(it, prev, ctx) {
  switch (it.kind) {
    case 'user':
      // A shell agent's prompts are commands: monospace, like its output.
      return item(
        'user',
        it,
        'you',
        clamped(h('div', { class: `body text${ctx.commands() ? ' mono' : ''}` }, it.text), it.text),
      );
    case 'assistant':
      return item('assistant', it, 'assistant', h('div', { class: 'body text' }, it.text));
    case 'reasoning':
      return item('reasoning', it, 'thinking', h('div', { class: 'body text' }, it.text));
    case 'output': {
      const stream = it.stream === 'stderr' ? 'stderr' : 'stdout';
      const continues =
        prev &&
        prev.kind === 'output' &&
        (prev.stream === 'stderr' ? 'stderr' : 'stdout') === stream &&
        prev.turn === it.turn;
      const el = item(
        `output ${stream}`,
        it,
        continues ? '' : stream,
        h('pre', { class: 'body mono' }, termText(it.text, it.runs)),
      );
      if (continues) el.classList.add('cont');
      return el;
    }
    case 'error':
      return item(
        'error',
        it,
        'error',
        h('div', { class: 'body text' }, h('span', { class: 'mark', 'aria-hidden': 'true' }, '⚠ '), it.text),
      );
    case 'system':
      return renderSystem(it, ctx);
    case 'permission':
      return item(
        'permission',
        it,
        'permission',
        h(
          'div',
          { class: 'body text' },
          it.text,
          it.input ? h('code', { class: 'perm-input' }, ` ${toolSummary(it.input)}`) : null,
        ),
      );
    case 'tool_call':
      return renderToolCall(it);
    case 'tool_result':
    default: {
      const summary = h(
        'summary',
        {},
        h('span', { class: 'tool-name' }, it.kind === 'tool_result' ? 'result' : it.kind),
        h('span', { class: 'tool-arg' }, oneLine(it.text || '')),
      );
      return item(
        'tool',
        it,
        '',
        h('details', { class: 'body tool' }, summary, h('pre', { class: 'mono tool-out' }, it.text)),
      );
    }
  }
}

const CLAMP_LINES = 12;

/** Long prompts show their first lines, with a button for the rest. */
function clamped(body, text) {
  const lines = (text.match(/\n/g) ?? []).length + 1;
  if (lines <= CLAMP_LINES) return body;
  body.classList.add('clamp');
  const more = h('button', { class: 'link more', type: 'button' }, `Show all ${lines} lines`);
  more.addEventListener('click', () => {
    const open = body.classList.toggle('clamp');
    more.textContent = open ? `Show all ${lines} lines` : 'Show less';
  });
  return h('div', { class: 'body-wrap' }, body, more);
}

// Every outcome a notice may carry (paseo-core's model/notice.rs `NoticeOutcome`); a word from
// another build shows plain.
const OUTCOME_CLASS = {
  completed: 's-attention',
  failed: 's-failed',
  canceled: 's-done',
  needs_permission: 's-needs_input',
  archived: 's-done',
};

/**
 * A finish notice (SPEC 4) from the item's own fields, never parsed back from its text: the
 * child's title and the outcome in the app's words, then the child's error and last message
 * exactly as the child wrote them, set off as quoted text (SPEC 14: visibly the child's).
 */
function renderNotice(it, n, ctx) {
  const name = n.childTitle || 'agent';
  const link =
    n.childId && ctx.canOpen(n.childId)
      ? h(
          'button',
          {
            class: 'link',
            type: 'button',
            title: n.childId,
            onclick: () => ctx.open(n.childId),
            'aria-label': `Open ${name}`,
          },
          name,
        )
      : h('b', { title: n.childId ?? '' }, name);
  const quote = (testid, label, text) =>
    h(
      'figure',
      { class: 'notice-quote', dataset: { testid } },
      h('figcaption', {}, label),
      h('blockquote', {}, text),
    );
  return item(
    'system finish',
    it,
    'ℹ',
    h(
      'div',
      { class: 'body', dataset: { testid: 'timeline-notice' } },
      h(
        'div',
        { class: 'notice-head' },
        link,
        ' ',
        h(
          'span',
          { class: OUTCOME_CLASS[n.outcome] ?? '', dataset: { testid: 'notice-outcome' } },
          String(n.outcome || '').replace(/_/g, ' '),
        ),
      ),
      n.error ? quote('notice-error', 'its error', n.error) : null,
      n.excerpt ? quote('notice-excerpt', 'its last message', n.excerpt) : null,
    ),
  );
}

/** A system item: a finish notice from its fields (older text-only ones get theirs from the backend), else its text. */
function renderSystem(it, ctx) {
  if (it.notice && typeof it.notice === 'object') return renderNotice(it, it.notice, ctx);
  return item('system', it, 'ℹ', h('div', { class: 'body text' }, it.text));
}

function renderToolCall(it) {
  const status = h('span', {});
  setToolStatus(status, 'pending', '…', 'running');
  const out = h('pre', { class: 'mono tool-out', hidden: true });
  const details = h(
    'details',
    { class: 'body tool' },
    h(
      'summary',
      {},
      h('span', { class: 'tool-name' }, it.toolName || 'tool'),
      h('span', { class: 'tool-arg' }, toolSummary(it.input)),
      status,
    ),
    h('pre', { class: 'mono tool-in' }, JSON.stringify(it.input ?? {}, null, 2)),
    out,
  );
  const el = item('tool', it, '', details);
  el._tool = { status, out, ts: it.ts };
  return el;
}

/** The status at the end of a call's line: its class, what it shows, and its accessible name. */
function setToolStatus(status, state, text, name) {
  status.className = `tool-status ${state}`;
  status.textContent = text;
  status.title = name;
  status.setAttribute('aria-label', name);
}

/** Shows a call that has not run yet as waiting for the user's permission (or not any more). */
function markAwaiting(callEl, on) {
  if (callEl.dataset.result) return;
  if (on) {
    setToolStatus(
      callEl._tool.status,
      'awaiting',
      `${lookGlyph('needs_input')} waiting for you`,
      'waiting for your permission',
    );
    callEl.dataset.awaiting = 'true';
  } else {
    setToolStatus(callEl._tool.status, 'pending', '…', 'running');
    delete callEl.dataset.awaiting;
  }
}

/** Puts a tool result into its call's line: ✓ or ✗, the time it took, and the output. */
function fillToolResult(callEl, it) {
  const { status, out, ts } = callEl._tool;
  const took = duration(ts, it.ts);
  setToolStatus(
    status,
    it.isError ? 'failed' : 'ok',
    `${it.isError ? '✗' : '✓'}${took ? ` ${took}` : ''}`,
    it.isError ? 'failed' : 'done',
  );
  out.textContent = it.text || '';
  out.hidden = !it.text;
  callEl.dataset.result = it.isError ? 'error' : 'ok';
  delete callEl.dataset.awaiting;
}

/** Per agent, the items (by seq) whose details the user opened. */
const opened = new Map();

function openedIn(agentId) {
  if (agentId == null) return new Set();
  let set = opened.get(agentId);
  if (!set) opened.set(agentId, (set = new Set()));
  return set;
}

export class TimelineView {
  /** ctx: {open(agentId), canOpen(agentId)} for links in notices. */
  constructor(ctx, invalidate) {
    this.ctx = ctx;
    this.invalidate = invalidate;
    this.status = h('div', { class: 'timeline-status', dataset: { testid: 'timeline-status' } });
    this.list = h('div', { class: 'timeline-list' });
    this.jump = h(
      'button',
      {
        class: 'jump-latest',
        type: 'button',
        hidden: true,
        onclick: () => this.toLatest(),
        dataset: { testid: 'timeline-latest' },
      },
      '↓ Latest',
    );
    this.el = h(
      'div',
      {
        class: 'timeline',
        role: 'log',
        'aria-label': 'Timeline',
        tabindex: '0',
        dataset: { testid: 'timeline' },
      },
      this.status,
      this.list,
    );
    this.wrap = h('div', { class: 'timeline-wrap' }, this.el, this.jump);
    this.model = null;
    this.onModel = () => this.invalidate();
    this.el.addEventListener('scroll', () => this.onScroll(), { passive: true });
    // Only the user leaves the tail: layout changes (items appended, trimmed, a status line
    // shown) also fire scroll events, sometimes after more items arrived.
    const touched = () => {
      this.userAt = performance.now();
    };
    for (const type of ['wheel', 'pointerdown', 'keydown', 'touchstart']) {
      this.el.addEventListener(type, touched, { passive: true });
    }
    this.userAt = -Infinity;
    // The call id the agent's pending permission is about, if any.
    this.awaiting = null;
    // The items (by seq) whose details the user opened: a redraw builds them open again.
    this.opened = openedIn(null);
    this.reset();
  }

  reset() {
    for (const seq of this.nodes?.keys() ?? []) this.keepOpen(seq);
    this.list.replaceChildren();
    this.nodes = new Map();
    this.calls = new Map();
    this.first = 0;
    this.last = 0;
    this.follow = true;
    this.autoTop = -1;
  }

  attach(model) {
    if (this.model === model) return;
    if (this.model) this.model.listeners.delete(this.onModel);
    this.release();
    // Cleared first, so what was open is kept with the agent it belongs to: it stays open when
    // the user comes back, and in a new model of it (a resync fetches it again), an item's seq
    // being its place in the timeline for good.
    this.reset();
    this.opened = openedIn(model?.agentId);
    this.model = model;
    if (model) model.listeners.add(this.onModel);
  }

  /**
   * Nothing of the model is on screen any more (another agent's tab, or no agent at all): it may
   * drop its oldest items again. A pin left behind would keep every item a background agent
   * streams from then on.
   */
  release() {
    if (this.model) this.model.pinnedFrom = Infinity;
  }

  render() {
    const m = this.model;
    if (!m) return;
    if (!m.loaded) {
      this.setStatus('Loading…');
      return;
    }
    if (m.items.length === 0) {
      this.setStatus(
        m.error
          ? `Could not load the timeline: ${m.error.message}`
          : 'Nothing here yet. Send a prompt to start a turn.',
      );
      return;
    }
    // The status line sits above the items: set it before scrolling, so the scroll position
    // is computed on the final layout.
    const atStart = this.nodes.size > 0 && this.first <= m.firstSeq && m.atStart;
    this.setStatus(
      atStart || (this.nodes.size === 0 && m.atStart && m.items.length <= FOLLOW_WINDOW)
        ? 'Start of the timeline'
        : m.loadingOlder
          ? 'Loading older items…'
          : '',
    );
    if (this.nodes.size === 0 || this.last < m.firstSeq || this.first > m.lastSeq) {
      // First render, or the model moved on past the window (it dropped what we showed).
      this.reset();
      this.last = m.lastSeq;
      this.first = Math.max(m.firstSeq, m.lastSeq - FOLLOW_WINDOW + 1);
      this.list.append(this.build(this.first, this.last));
      this.follow = true;
      this.toBottom();
    } else if (this.follow) {
      if (m.lastSeq - this.last >= FOLLOW_WINDOW) {
        // More came since the last frame than the window holds: build only what it keeps,
        // not every item only to drop it at once.
        this.reset();
        this.last = m.lastSeq;
        this.first = Math.max(m.firstSeq, m.lastSeq - FOLLOW_WINDOW + 1);
        this.list.append(this.build(this.first, this.last));
      } else if (m.lastSeq > this.last) {
        this.list.append(this.build(this.last + 1, m.lastSeq));
        this.last = m.lastSeq;
        this.trimTop(this.last - FOLLOW_WINDOW + 1);
      }
      this.toBottom();
    } else if (m.lastSeq > this.last && this.nodes.size < MAX_NODES) {
      // Reading further up: new items join below without moving the view, up to a bound.
      const to = Math.min(m.lastSeq, this.last + (MAX_NODES - this.nodes.size));
      this.list.append(this.build(this.last + 1, to));
      this.last = to;
    }
    m.pinnedFrom = this.first;
    this.jump.hidden = this.follow && this.last >= m.lastSeq;
  }

  /** Marks the call `callId` (a pending permission's) as waiting for the user; null clears. */
  setAwaiting(callId) {
    const next = callId ?? null;
    if (next === this.awaiting) return;
    const prev = this.awaiting && this.calls.get(this.awaiting);
    if (prev) markAwaiting(prev, false);
    this.awaiting = next;
    const el = next && this.calls.get(next);
    if (el) markAwaiting(el, true);
  }

  setStatus(text) {
    if (this.status.textContent !== text) this.status.textContent = text;
    this.status.hidden = !text;
  }

  build(from, to) {
    const frag = document.createDocumentFragment();
    const m = this.model;
    for (let seq = from; seq <= to; seq++) {
      const it = m.at(seq);
      if (!it) continue;
      if (it.kind === 'tool_result' && it.callId && this.calls.has(it.callId)) {
        fillToolResult(this.calls.get(it.callId), it);
        this.nodes.set(seq, null);
        continue;
      }
      const el = renderItem(it, m.at(seq - 1), this.ctx);
      if (this.opened.has(seq)) el.querySelector('details')?.setAttribute('open', '');
      this.decorate?.(seq, el);
      if (it.kind === 'tool_call' && it.callId) {
        this.calls.set(it.callId, el);
        if (it.callId === this.awaiting) markAwaiting(el, true);
      }
      this.nodes.set(seq, el);
      frag.append(el);
    }
    return frag;
  }

  /** Remembers whether the item `seq` shows its details open, before its element goes. */
  keepOpen(seq) {
    const details = this.nodes.get(seq)?.querySelector('details');
    if (!details) return;
    if (details.open) this.opened.add(seq);
    else this.opened.delete(seq);
  }

  remove(seq) {
    this.keepOpen(seq);
    const el = this.nodes.get(seq);
    this.nodes.delete(seq);
    if (!el) return;
    if (el._tool) {
      for (const [id, call] of this.calls) if (call === el) this.calls.delete(id);
    }
    el.remove();
  }

  trimTop(newFirst) {
    for (let seq = this.first; seq < newFirst; seq++) this.remove(seq);
    this.first = Math.max(this.first, newFirst);
  }

  trimBottom(newLast) {
    for (let seq = this.last; seq > newLast; seq--) this.remove(seq);
    this.last = Math.min(this.last, newLast);
  }

  toBottom() {
    this.el.scrollTop = this.el.scrollHeight;
    // Remembered so the scroll event this causes is not taken for the user scrolling away:
    // by the time it arrives more items may have been appended below.
    this.autoTop = this.el.scrollTop;
  }

  toLatest() {
    this.reset();
    this.invalidate();
  }

  onScroll() {
    const m = this.model;
    if (!m || !this.nodes.size) return;
    const el = this.el;
    if (this.follow && (Math.abs(el.scrollTop - this.autoTop) < 2 || performance.now() - this.userAt > 1000))
      return;
    const nearBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (nearBottom && this.last < m.lastSeq) {
      const to = Math.min(m.lastSeq, this.last + STEP);
      this.list.append(this.build(this.last + 1, to));
      this.last = to;
      if (this.nodes.size > MAX_NODES) this.keepScroll(() => this.trimTop(this.last - MAX_NODES + 1));
    }
    this.follow = nearBottom && this.last >= m.lastSeq;
    this.jump.hidden = this.follow;
    if (el.scrollTop < EDGE_PX) this.extendUp();
  }

  /**
   * Shows item `seq` (paging it back from disk if needed) scrolled to the middle of the view;
   * resolves to its element, or null when it cannot be shown. Leaves following the tail.
   */
  async reveal(seq) {
    const m = this.model;
    if (!m) return null;
    while (m.firstSeq > seq && !m.atStart) {
      // A page reaching it at once (bounded per call), not a hundred small ones.
      const added = await m.loadOlder(Math.min(5000, m.firstSeq - seq + STEP));
      if (!added || this.model !== m) break;
    }
    if (this.model !== m || !m.at(seq)) return null;
    if (!this.nodes.has(seq)) {
      this.reset();
      this.first = Math.max(m.firstSeq, seq - STEP);
      this.last = Math.min(m.lastSeq, seq + STEP);
      this.list.append(this.build(this.first, this.last));
      m.pinnedFrom = this.first;
    }
    const el = this.nodes.get(seq) ?? this.calls.get(m.at(seq)?.callId);
    if (!el) return null;
    this.follow = false;
    this.userAt = performance.now();
    el.scrollIntoView({ block: 'center' });
    this.jump.hidden = false;
    return el;
  }

  /** Calls `fn(seq, el)` for each item element in the DOM now. */
  eachNode(fn) {
    for (const [seq, el] of this.nodes) if (el) fn(seq, el);
  }

  keepScroll(change) {
    // Keeps what the user looks at in place while nodes are added or removed above it.
    const anchor = this.list.firstElementChild ? this.el.scrollHeight - this.el.scrollTop : 0;
    change();
    this.el.scrollTop = this.el.scrollHeight - anchor;
  }

  async extendUp() {
    const m = this.model;
    if (this.first > m.firstSeq) {
      const from = Math.max(m.firstSeq, this.first - STEP);
      const before = this.el.scrollHeight;
      this.list.prepend(this.build(from, this.first - 1));
      this.first = from;
      this.el.scrollTop += this.el.scrollHeight - before;
      if (this.nodes.size > MAX_NODES) {
        this.trimBottom(this.first + MAX_NODES - 1);
        this.follow = false;
      }
      m.pinnedFrom = this.first;
      this.render();
      return;
    }
    if (m.atStart || m.loadingOlder) return;
    this.setStatus('Loading older items…');
    const added = await m.loadOlder();
    if (this.model === m && added > 0 && this.el.scrollTop < EDGE_PX) this.extendUp();
    else this.invalidate();
  }
}
