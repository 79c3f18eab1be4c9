// Tab strip: this window's tabs. Agent tabs (data-testid "tab") join the overview tab later.
import { h, mount } from '../dom.js';

export function renderTabStrip(el) {
  mount(el,
    h('div', { class: 'tab active', role: 'tab', 'aria-selected': 'true', dataset: { testid: 'tab-overview' } },
      h('span', { class: 'glyph', 'aria-hidden': 'true' }, '◆'),
      h('span', {}, 'Overview')));
}
