// The ☰ menu's About: what this app is and where it keeps things (version, data root, logs,
// the MCP address), each path selectable for copying. A popup like the menu: Escape, a click
// elsewhere or Close dismisses it.
import { h } from '../dom.js';
import { closePopup, showPopup } from '../popup.js';

/** Closes About (or whichever popup is open), the focus back on the menu button. */
export const closeAbout = () => closePopup(true);

/** info: backend.appInfo()'s answer. */
export function openAbout(anchor, info) {
  const row = (label, value, testid) => [
    h('dt', {}, label),
    h('dd', { class: 'mono', dataset: { testid } }, value),
  ];
  const close = h(
    'button',
    { type: 'button', class: 'small', dataset: { testid: 'about-close' }, onclick: () => closeAbout() },
    'Close',
  );
  const el = h(
    'div',
    {
      class: 'menu about',
      role: 'dialog',
      'aria-label': 'About Paseo',
      dataset: { testid: 'about' },
    },
    h('div', { class: 'about-title' }, `${info.product} ${info.version}`),
    h(
      'dl',
      { class: 'about-facts' },
      row('Version', info.version, 'about-version'),
      row('Data root', info.dataRoot, 'about-data-root'),
      row('Logs', info.logDir, 'about-logs'),
      info.mcpUrl ? row('MCP server', info.mcpUrl, 'about-mcp') : null,
    ),
    h('div', { class: 'about-actions' }, close),
  );
  showPopup(anchor, el, { focus: close });
}
