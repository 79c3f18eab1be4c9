// The app menu (the ☰ button in the sidebar): New agent, New window, Add a workspace, and the
// keyboard shortcuts. A small popup that closes on Escape, on a click elsewhere or after a choice.
import { h } from '../dom.js';
import { shortcutList } from './shortcuts.js';
import { closePopup, popupOf, showPopup } from '../popup.js';

/** Closes the menu (or whichever popup is open). */
export const closeMenu = () => closePopup();

/** items: [{label, shortcut, testid, run, checked?}]; `checked` (true/false) makes an on/off item. */
export function openMenu(anchor, items) {
  if (popupOf(anchor)) {
    closePopup();
    return;
  }
  const buttons = items.map((item) => {
    const toggle = typeof item.checked === 'boolean';
    return h(
      'button',
      {
        type: 'button',
        role: toggle ? 'menuitemcheckbox' : 'menuitem',
        dataset: { testid: item.testid },
        'aria-checked': toggle ? String(item.checked) : undefined,
        onclick: () => {
          closeMenu();
          item.run();
        },
      },
      h('span', {}, item.label),
      toggle ? h('span', { class: 'menu-check' }, item.checked ? '✓ on' : 'off') : null,
      item.shortcut ? h('kbd', {}, item.shortcut) : null,
    );
  });
  const el = h(
    'div',
    {
      class: 'menu',
      role: 'menu',
      'aria-label': 'Paseo menu',
      dataset: { testid: 'menu' },
    },
    buttons,
    h('div', { class: 'menu-sep', role: 'separator' }),
    h('div', { class: 'menu-title muted' }, 'Keyboard'),
    shortcutList(),
  );
  showPopup(anchor, el, { items: buttons });
}
