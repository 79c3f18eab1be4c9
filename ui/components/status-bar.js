// Status line: backend state, process and fleet counts, always visible at the bottom.
import { h, mount } from '../dom.js';

export function renderStatus(el, state) {
  el.dataset.state = state.kind;
  if (state.kind === 'connecting') {
    mount(el, h('span', { dataset: { testid: 'status-line' } }, 'Connecting to the backend…'));
    return;
  }
  if (state.kind === 'error') {
    mount(el, h('span', { class: 'error', dataset: { testid: 'status-line' } }, `Backend unavailable: ${state.message}`));
    return;
  }
  const info = state.info;
  mount(el,
    h('span', { dataset: { testid: 'status-line' } },
      h('span', { class: `dot ${info.backend}`, 'aria-hidden': 'true' }, '●'),
      ` Backend ${info.backend} · pid ${info.pid} · ${info.countsLine}`),
    h('span', { class: 'muted' }, `${info.product} ${info.version}`));
}
