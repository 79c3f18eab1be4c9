// The agent pane region's overview: what this Paseo process is and where it keeps its data.
import { h, mount } from '../dom.js';

function row(label, value, testid) {
  return [h('dt', {}, label), h('dd', { dataset: { testid } }, value)];
}

export function renderOverview(el, info) {
  const started = new Date(info.startedAt);
  mount(el,
    h('div', { class: 'overview', dataset: { testid: 'overview-pane' } },
      h('h1', {}, `${info.product} is running`),
      h('p', { class: 'muted' }, 'Agents you start, and the subagents they create, appear here as tabs.'),
      h('dl', { class: 'facts' },
        row('Version', info.version, 'fact-version'),
        row('Mode', info.mode, 'fact-mode'),
        row('Process', `pid ${info.pid}`, 'fact-pid'),
        row('Started', started.toLocaleString(), 'fact-started'),
        row('Agents', info.countsLine, 'fact-counts'),
        row('Data root', info.dataRoot, 'fact-data-root'),
        row('Logs', info.logDir, 'fact-log-dir'))));
}

export function renderOverviewError(el, message) {
  mount(el,
    h('div', { class: 'overview' },
      h('h1', {}, 'The backend did not answer'),
      h('p', { class: 'error', dataset: { testid: 'backend-error' } }, message)));
}
