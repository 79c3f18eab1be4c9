// The ☰ menu's About: what this app is and where it keeps things (version, data root, logs,
// the MCP address), each path selectable for copying. A popup like the menu: Escape, a click
// elsewhere or Close dismisses it.
import { h } from '../dom.js';

let open = null;

export function closeAbout() {
  if (!open) return;
  document.removeEventListener('mousedown', open.onDoc, true);
  open.el.remove();
  const anchor = open.anchor;
  open = null;
  anchor?.focus();
}

/** info: backend.appInfo()'s answer. */
export function openAbout(anchor, info) {
  closeAbout();
  const row = (label, value, testid) => [h('dt', {}, label), h('dd', { class: 'mono', dataset: { testid } }, value)];
  const close = h('button', { type: 'button', class: 'small', dataset: { testid: 'about-close' }, onclick: () => closeAbout() }, 'Close');
  const el = h('div', {
    class: 'menu about', role: 'dialog', 'aria-label': 'About Paseo', dataset: { testid: 'about' },
    onkeydown: (e) => { if (e.key === 'Escape') { e.preventDefault(); closeAbout(); } },
  },
  h('div', { class: 'about-title' }, `${info.product} ${info.version}`),
  h('dl', { class: 'about-facts' },
    row('Version', info.version, 'about-version'),
    row('Data root', info.dataRoot, 'about-data-root'),
    row('Logs', info.logDir, 'about-logs'),
    info.mcpUrl ? row('MCP server', info.mcpUrl, 'about-mcp') : null),
  h('div', { class: 'about-actions' }, close));
  const box = anchor.getBoundingClientRect();
  el.style.top = `${box.bottom + 4}px`;
  el.style.left = `${Math.max(8, box.left)}px`;
  document.body.append(el);
  const onDoc = (e) => { if (!el.contains(e.target)) closeAbout(); };
  document.addEventListener('mousedown', onDoc, true);
  open = { el, anchor, onDoc };
  close.focus();
}
