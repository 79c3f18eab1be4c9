// The app menu (the ☰ button in the sidebar): New agent, New window, Add a workspace, and the
// keyboard shortcuts. A small popup that closes on Escape, on a click elsewhere or after a choice.
import { h } from '../dom.js';
import { shortcutList } from './shortcuts.js';

let open = null;

export function closeMenu() {
  if (!open) return;
  const { el, anchor, onDoc } = open;
  open = null;
  document.removeEventListener('mousedown', onDoc, true);
  el.remove();
  anchor.setAttribute('aria-expanded', 'false');
}

/** items: [{label, shortcut, testid, run, checked?}]; `checked` (true/false) makes an on/off item. */
export function openMenu(anchor, items) {
  if (open) {
    closeMenu();
    return;
  }
  const buttons = items.map((item) => {
    const toggle = typeof item.checked === 'boolean';
    return h('button', {
      type: 'button', role: toggle ? 'menuitemcheckbox' : 'menuitem', dataset: { testid: item.testid },
      'aria-checked': toggle ? String(item.checked) : undefined,
      onclick: () => { closeMenu(); item.run(); },
    }, h('span', {}, item.label), toggle ? h('span', { class: 'menu-check' }, item.checked ? '✓ on' : 'off') : null,
    item.shortcut ? h('kbd', {}, item.shortcut) : null);
  });
  const el = h('div', {
    class: 'menu', role: 'menu', 'aria-label': 'Paseo menu', dataset: { testid: 'menu' },
    onkeydown: (e) => {
      const i = buttons.indexOf(document.activeElement);
      if (e.key === 'Escape') { e.preventDefault(); closeMenu(); anchor.focus(); }
      if (e.key === 'ArrowDown') { e.preventDefault(); buttons[(i + 1) % buttons.length].focus(); }
      if (e.key === 'ArrowUp') { e.preventDefault(); buttons[(i - 1 + buttons.length) % buttons.length].focus(); }
    },
  }, buttons,
  h('div', { class: 'menu-sep', role: 'separator' }),
  h('div', { class: 'menu-title muted' }, 'Keyboard'),
  shortcutList());
  const box = anchor.getBoundingClientRect();
  el.style.top = `${box.bottom + 4}px`;
  el.style.left = `${Math.max(8, box.left)}px`;
  document.body.append(el);
  anchor.setAttribute('aria-expanded', 'true');
  const onDoc = (e) => {
    if (!el.contains(e.target) && e.target !== anchor) closeMenu();
  };
  document.addEventListener('mousedown', onDoc, true);
  open = { el, anchor, onDoc };
  buttons[0]?.focus();
}
