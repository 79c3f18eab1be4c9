// Sidebar: the app's identity and where its data lives. Workspaces grouped by project join it
// when the backend serves them.
import { h, mount } from '../dom.js';

export function renderSidebar(el, info) {
  mount(el,
    h('header', { class: 'sidebar-head' },
      h('img', { class: 'mark', src: 'assets/paseo.svg', alt: '' }),
      h('span', { class: 'product' }, info.product),
      h('span', { class: 'muted version', dataset: { testid: 'app-version' } }, `v${info.version}`)),
    h('section', { class: 'sidebar-section' },
      h('h2', {}, 'Data root'),
      h('p', { class: 'path', title: info.dataRoot, dataset: { testid: 'data-root' } }, info.dataRoot)),
    h('section', { class: 'sidebar-section' },
      h('h2', {}, 'Logs'),
      h('p', { class: 'path', title: info.logDir, dataset: { testid: 'log-dir' } }, info.logDir)));
}
