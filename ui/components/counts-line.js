// The counts line of the track header and the status bar (SPEC 7): the parts the backend worded
// (paseo-core model/tally.rs; the window only lays them out), "needs you" and "failed" as links
// that list the agents they count. A small popup like the ☰ menu: it closes on Escape, on a click
// elsewhere or when an agent is chosen.
import { h } from '../dom.js';
import { agentLabel, agentLook, agentName, glyph } from '../status.js';
import { closePopup, popupOf, showPopup } from '../popup.js';

/** The parts that are links: each counts exactly the agents whose rows say its word. */
const LINKS = new Set(['needs_input', 'failed']);

/** Lists `agents` under `anchor`; choosing one calls `pick(id)`. */
function openList(anchor, heading, agents, pick) {
  if (popupOf(anchor)) {
    closePopup();
    return;
  }
  const buttons = agents.map((a) =>
    h(
      'button',
      {
        type: 'button',
        role: 'menuitem',
        dataset: { testid: 'count-list-item', agentId: a.id },
        onclick: () => {
          closePopup();
          pick(a.id);
        },
      },
      glyph(agentLook(a), agentLabel(a)),
      h('span', { class: 'count-list-name' }, agentName(a)),
      h('span', { class: 'muted' }, agentLabel(a)),
    ),
  );
  const el = h(
    'div',
    {
      class: 'menu count-list',
      role: 'menu',
      'aria-label': heading,
      dataset: { testid: 'count-list' },
    },
    h('div', { class: 'menu-title muted' }, heading),
    buttons,
  );
  // Above the anchor when there is no room below (the status bar and the track sit low).
  showPopup(anchor, el, { items: buttons, place: 'auto' });
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
      out.push(
        h(
          'button',
          {
            class: 'count-link',
            type: 'button',
            'aria-haspopup': 'menu',
            'aria-expanded': 'false',
            title: `Show the agents counted: ${p.text}`,
            dataset: { testid: 'count-link', kind: p.kind },
            onclick: (e) => openList(e.currentTarget, p.text, agentsOf(p.kind), pick),
          },
          p.text,
        ),
      );
    } else {
      out.push(p.text);
    }
  }
  return out;
}
