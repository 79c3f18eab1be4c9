// Find in the open agent's timeline (Ctrl+F): the backend searches the agent's whole timeline,
// what is paged out to disk included, and answers the items with matches; the bar counts them
// ("3 of 12"), steps through them (Enter / Shift+Enter, ↑ ↓), pages each one in and highlights
// it. A new query cancels the search before it; Escape closes the bar.
import * as backend from '../backend.js';
import { h, setText } from '../dom.js';

const DEBOUNCE_MS = 150;

export class FindBar {
  /** agentId(): the pane's agent; timeline: its TimelineView. */
  constructor(agentId, timeline) {
    this.agentId = agentId;
    this.timeline = timeline;
    this.query = '';
    this.result = null;
    /** The current match: its item (index into hits) and which match in that item. */
    this.at = { hit: -1, k: 0 };
    this.generation = 0;
    this.input = h('input', {
      type: 'search',
      class: 'find-input',
      placeholder: 'Find in the timeline',
      'aria-label': 'Find in the timeline',
      spellcheck: 'false',
      autocomplete: 'off',
      dataset: { testid: 'find-input' },
      oninput: () => this.schedule(),
      onkeydown: (e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          this.step(e.shiftKey ? -1 : 1);
        }
        if (e.key === 'Escape') {
          e.preventDefault();
          this.close();
          this.timeline.el.focus();
        }
      },
    });
    this.count = h('span', { class: 'find-count muted', role: 'status', dataset: { testid: 'find-count' } });
    const button = (label, testid, text, onclick) =>
      h(
        'button',
        {
          class: 'small ghost',
          type: 'button',
          title: label,
          'aria-label': label,
          dataset: { testid },
          onclick,
        },
        text,
      );
    this.prev = button('Previous match (Shift+Enter)', 'find-prev', '↑', () => this.step(-1));
    this.next = button('Next match (Enter)', 'find-next', '↓', () => this.step(1));
    this.el = h(
      'div',
      { class: 'find-bar', role: 'search', hidden: true, dataset: { testid: 'find-bar' } },
      this.input,
      this.count,
      this.prev,
      this.next,
      button('Close (Esc)', 'find-close', '×', () => this.close()),
    );
    timeline.decorate = (seq, el) => this.mark(seq, el);
  }

  get open() {
    return !this.el.hidden;
  }

  show() {
    this.el.hidden = false;
    this.input.focus();
    this.input.select();
    if (this.input.value.trim() && !this.result) this.search();
  }

  close() {
    if (!this.open) return;
    this.el.hidden = true;
    this.generation++;
    clearTimeout(this.timer);
    backend.cancelTimelineSearch().catch(() => {});
    this.result = null;
    this.query = '';
    setText(this.count, '');
    this.timeline.eachNode((seq, el) => unmark(el));
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.search(), DEBOUNCE_MS);
  }

  async search() {
    const query = this.input.value;
    const agent = this.agentId();
    const gen = ++this.generation;
    this.query = query.trim() ? query : '';
    this.result = null;
    this.at = { hit: -1, k: 0 };
    this.timeline.eachNode((seq, el) => unmark(el));
    if (!this.query || !agent) {
      setText(this.count, '');
      this.updateButtons();
      return;
    }
    setText(this.count, 'Searching…');
    let result;
    try {
      result = await backend.searchTimeline(agent, this.query);
    } catch (error) {
      if (gen === this.generation && error.code !== 'canceled') setText(this.count, error.message);
      return;
    }
    if (gen !== this.generation) return;
    this.result = result;
    this.hitIndex = new Map(result.hits.map((hit, i) => [hit.seq, i]));
    this.timeline.eachNode((seq, el) => this.mark(seq, el));
    if (result.hits.length) {
      // The newest match first, as the user is usually at the end of the timeline.
      const last = result.hits.length - 1;
      await this.go(last, result.hits[last].count - 1);
    } else {
      this.showCount();
    }
  }

  /** The number of the current match among all of them (1-based). */
  ordinal() {
    const hits = this.result?.hits ?? [];
    let n = 0;
    for (let i = 0; i < this.at.hit; i++) n += hits[i].count;
    return n + this.at.k + 1;
  }

  showCount() {
    const r = this.result;
    if (!r) return;
    if (r.total === 0) setText(this.count, 'No matches');
    else setText(this.count, `${this.ordinal()} of ${r.total}${r.truncated ? '+' : ''}`);
    this.updateButtons();
  }

  updateButtons() {
    const none = !this.result?.total;
    this.prev.disabled = none;
    this.next.disabled = none;
  }

  /** Moves to the next (1) or previous (-1) match, wrapping around. */
  async step(dir) {
    if (this.input.value !== this.query && this.input.value.trim()) {
      clearTimeout(this.timer);
      await this.search();
      return;
    }
    const hits = this.result?.hits ?? [];
    if (!hits.length) return;
    let { hit, k } = this.at;
    k += dir;
    if (k >= (hits[hit]?.count ?? 0)) {
      hit = (hit + 1) % hits.length;
      k = 0;
    }
    if (k < 0) {
      hit = (hit - 1 + hits.length) % hits.length;
      k = hits[hit].count - 1;
    }
    await this.go(hit, k);
  }

  async go(hit, k) {
    this.at = { hit, k };
    this.showCount();
    const seq = this.result.hits[hit].seq;
    const gen = this.generation;
    const el = await this.timeline.reveal(seq);
    if (gen !== this.generation || !el) return;
    for (const m of this.timeline.el.querySelectorAll('mark.find-hit.current')) {
      m.classList.remove('current');
      delete m.dataset.testid;
    }
    const marks = el.querySelectorAll('mark.find-hit');
    const mark = marks[Math.min(k, marks.length - 1)];
    if (mark) {
      mark.classList.add('current');
      mark.dataset.testid = 'find-current';
      mark.scrollIntoView({ block: 'center' });
    }
  }

  /** Highlights the query in an item element the timeline just built, if it has matches. */
  mark(seq, el) {
    if (!this.query || !this.hitIndex?.has(seq)) return;
    highlight(el, this.query);
  }
}

/** Wraps each case-insensitive occurrence of `query` in the item's body text in <mark>. */
function highlight(el, query) {
  unmark(el);
  const needle = query.toLowerCase();
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) =>
      n.parentElement?.closest('.who') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const nodes = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
  for (const node of nodes) {
    const text = node.nodeValue;
    const lower = text.toLowerCase();
    // Lowercasing keeps lengths for the scripts a timeline holds; where it would not, skip.
    if (lower.length !== text.length) continue;
    let from = 0;
    let i = lower.indexOf(needle, from);
    if (i < 0) continue;
    const frag = document.createDocumentFragment();
    while (i >= 0) {
      frag.append(text.slice(from, i), h('mark', { class: 'find-hit' }, text.slice(i, i + needle.length)));
      from = i + needle.length;
      i = lower.indexOf(needle, from);
    }
    frag.append(text.slice(from));
    node.replaceWith(frag);
  }
}

function unmark(el) {
  const marks = el.querySelectorAll('mark.find-hit');
  if (!marks.length) return;
  for (const m of marks) m.replaceWith(m.textContent);
  el.normalize();
}
