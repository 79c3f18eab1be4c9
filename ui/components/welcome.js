// First launch (an empty data root): what Paseo is, and the two ways to start — add a workspace,
// or create an agent right away (the built-in shell agent works with nothing else installed).
import { h, mount } from '../dom.js';

export function renderWelcome(el, info, actions) {
  mount(
    el,
    h(
      'div',
      { class: 'welcome', dataset: { testid: 'welcome' } },
      h('h1', {}, 'Welcome to Paseo'),
      h(
        'p',
        {},
        'Run coding agents side by side — Claude Code, Codex, any command-line agent, or the built-in shell agent — and keep track of the subagents they start.',
      ),
      h(
        'div',
        { class: 'welcome-actions' },
        h(
          'button',
          {
            class: 'primary',
            type: 'button',
            dataset: { testid: 'welcome-add-workspace' },
            onclick: () => actions.addWorkspace(),
          },
          'Add a workspace',
        ),
        h(
          'button',
          { type: 'button', dataset: { testid: 'welcome-new-agent' }, onclick: () => actions.newAgent() },
          'New agent',
        ),
      ),
      h(
        'p',
        { class: 'muted' },
        'A workspace is a folder your agents work in. The shell agent runs each prompt as a script in a fresh shell there, so you can try Paseo with nothing else installed.',
      ),
      info
        ? h(
            'dl',
            { class: 'facts' },
            h('dt', {}, 'Data'),
            h('dd', { dataset: { testid: 'data-root' } }, info.dataRoot),
            h('dt', {}, 'Logs'),
            h('dd', { dataset: { testid: 'log-dir' } }, info.logDir),
            h('dt', {}, 'Process'),
            h('dd', { dataset: { testid: 'fact-pid' } }, `pid ${info.pid}`),
          )
        : null,
    ),
  );
}
