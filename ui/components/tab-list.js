// The menu of every tab (the ⌄ at the end of an overflowing tab strip): each tab with its status
// glyph and word, the active one marked; choosing one shows it. Closes on Escape, on a click
// elsewhere or after a choice; arrow keys move between entries.
import { h } from '../dom.js';
import { glyph } from '../status.js';

let open = null;

function close() {
  if (!open) return;
  const { el, anchor, onDoc } = open;
  open = null;
  document.removeEventListener('mousedown', onDoc, true);
  el.remove();
  anchor.setAttribute('aria-expanded', 'false');
}

/** tabs: [{id (null: home), name, look, label, active}]; choose(id) shows one. */
export function openTabList(anchor, tabs, choose) {
  if (open) {
    close();
    return;
  }
  const buttons = tabs.map((t) => h('button', {
    type: 'button', role: 'menuitemradio', 'aria-checked': String(t.active),
    class: t.active ? 'active' : null, title: `${t.name} — ${t.label}`,
    dataset: { testid: 'tabs-overflow-item', agentId: t.id ?? undefined },
    onclick: () => { close(); choose(t.id); },
  }, t.look === 'home' ? h('span', { class: 'glyph home-glyph', 'aria-hidden': 'true' }, '⌂') : glyph(t.look, t.label),
  h('span', { class: 'tab-list-name' }, t.name), h('span', { class: 'muted tab-list-word' }, t.label)));
  const el = h('div', {
    class: 'menu tab-list', role: 'menu', 'aria-label': 'All tabs', dataset: { testid: 'tabs-overflow-menu' },
    onkeydown: (e) => {
      const i = buttons.indexOf(document.activeElement);
      if (e.key === 'Escape') { e.preventDefault(); close(); anchor.focus(); }
      if (e.key === 'ArrowDown') { e.preventDefault(); buttons[(i + 1) % buttons.length].focus(); }
      if (e.key === 'ArrowUp') { e.preventDefault(); buttons[(i - 1 + buttons.length) % buttons.length].focus(); }
    },
  }, buttons);
  document.body.append(el);
  const box = anchor.getBoundingClientRect();
  el.style.top = `${box.bottom + 2}px`;
  el.style.left = `${Math.max(8, Math.min(box.right - el.offsetWidth, innerWidth - el.offsetWidth - 8))}px`;
  anchor.setAttribute('aria-expanded', 'true');
  const onDoc = (e) => {
    if (!el.contains(e.target) && e.target !== anchor) close();
  };
  document.addEventListener('mousedown', onDoc, true);
  open = { el, anchor, onDoc };
  (buttons.find((b) => b.classList.contains('active')) ?? buttons[0])?.focus();
}
