// The menu of every tab (the ⌄ at the end of an overflowing tab strip): each tab with its status
// glyph and word, the active one marked; choosing one shows it. Closes on Escape, on a click
// elsewhere or after a choice; arrow keys move between entries.
import { h } from '../dom.js';
import { glyph } from '../status.js';
import { closePopup, popupOf, showPopup } from '../popup.js';

/** tabs: [{id (null: home), name, look, label, active}]; choose(id) shows one. */
export function openTabList(anchor, tabs, choose) {
  if (popupOf(anchor)) {
    closePopup();
    return;
  }
  const buttons = tabs.map((t) =>
    h(
      'button',
      {
        type: 'button',
        role: 'menuitemradio',
        'aria-checked': String(t.active),
        class: t.active ? 'active' : null,
        title: `${t.name} — ${t.label}`,
        dataset: { testid: 'tabs-overflow-item', agentId: t.id ?? undefined },
        onclick: () => {
          closePopup();
          choose(t.id);
        },
      },
      t.look === 'home'
        ? h('span', { class: 'glyph home-glyph', 'aria-hidden': 'true' }, '⌂')
        : glyph(t.look, t.label),
      h('span', { class: 'tab-list-name' }, t.name),
      h('span', { class: 'muted tab-list-word' }, t.label),
    ),
  );
  const el = h(
    'div',
    {
      class: 'menu tab-list',
      role: 'menu',
      'aria-label': 'All tabs',
      dataset: { testid: 'tabs-overflow-menu' },
    },
    buttons,
  );
  showPopup(anchor, el, {
    items: buttons,
    focus: buttons.find((b) => b.classList.contains('active')) ?? buttons[0],
    align: 'right',
    gap: 2,
  });
}
