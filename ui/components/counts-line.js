// The counts line of the track header and the status bar (SPEC 7): the parts the backend worded
// (paseo-core model/tally.rs; the window only lays them out), "needs you" and "failed" as links
// that list the agents they count. A small popup like the ☰ menu: it closes on Escape, on a click
// elsewhere or when an agent is chosen.
import { h } from '../dom.js';
import { agentLabel, agentLook, agentName, glyph } from '../status.js';

/** The parts that are links: each counts exactly the agents whose rows say its word. */
const LINKS = new Set(['needs_input', 'failed']);

let open = null;

function closeList() {
  if (!open) return;
  const { el, anchor, onDoc } = open;
  open = null;
  document.removeEventListener('mousedown', onDoc, true);
  el.remove();
  anchor.setAttribute('aria-expanded', 'false');
}

/** Lists `agents` under `anchor`; choosing one calls `pick(id)`. */
function openList(anchor, heading, agents, pick) {
  if (open) {
    const same = open.anchor === anchor;
    closeList();
    if (same) return;
  }
  const buttons = agents.map((a) => h('button', {
    type: 'button', role: 'menuitem', dataset: { testid: 'count-list-item', agentId: a.id },
    onclick: () => { closeList(); pick(a.id); },
  }, glyph(agentLook(a), agentLabel(a)), h('span', { class: 'count-list-name' }, agentName(a)),
  h('span', { class: 'muted' }, agentLabel(a))));
  const el = h('div', {
    class: 'menu count-list', role: 'menu', 'aria-label': heading, dataset: { testid: 'count-list' },
    onkeydown: (e) => {
      const i = buttons.indexOf(document.activeElement);
      if (e.key === 'Escape') { e.preventDefault(); closeList(); anchor.focus(); }
      if (e.key === 'ArrowDown' && buttons.length) { e.preventDefault(); buttons[(i + 1) % buttons.length].focus(); }
      if (e.key === 'ArrowUp' && buttons.length) { e.preventDefault(); buttons[(i - 1 + buttons.length) % buttons.length].focus(); }
    },
  }, h('div', { class: 'menu-title muted' }, heading), buttons);
  document.body.append(el);
  // Above the anchor when there is no room below (the status bar and the track sit low).
  const box = anchor.getBoundingClientRect();
  const below = window.innerHeight - box.bottom;
  if (below < el.offsetHeight + 8) el.style.bottom = `${window.innerHeight - box.top + 4}px`;
  else el.style.top = `${box.bottom + 4}px`;
  el.style.left = `${Math.max(8, Math.min(box.left, window.innerWidth - el.offsetWidth - 8))}px`;
  anchor.setAttribute('aria-expanded', 'true');
  const onDoc = (e) => {
    if (!el.contains(e.target) && e.target !== anchor && !anchor.contains(e.target)) closeList();
  };
  document.addEventListener('mousedown', onDoc, true);
  open = { el, anchor, onDoc };
  buttons[0]?.focus();
}

/**
 * The line's elements: `parts` ({kind, count, text}) joined by " · ", each "needs you" or
 * "failed" part with agents a link listing `agentsOf(kind)`; `pick(id)` opens the one chosen.
 */
export function countsLine(parts, agentsOf, pick) {
  const out = [];
  for (const p of parts) {
    if (out.length) out.push(' · ');
    if (LINKS.has(p.kind) && p.count > 0) {
      out.push(h('button', {
        class: 'count-link', type: 'button', 'aria-haspopup': 'menu', 'aria-expanded': 'false',
        title: `Show the agents counted: ${p.text}`,
        dataset: { testid: 'count-link', kind: p.kind },
        onclick: (e) => openList(e.currentTarget, p.text, agentsOf(p.kind), pick),
      }, p.text));
    } else {
      out.push(p.text);
    }
  }
  return out;
}
