// Notices: problems the user should know about (files quarantined at load, a bad config.json, a
// worktree that could not be removed, a failed gesture), shown above the tabs until dismissed.
import { h, reconcile, setText } from '../dom.js';
import { fleet, dismissNotice } from '../store.js';

export function renderNotices(el) {
  el.hidden = fleet.notices.length === 0;
  reconcile(
    el,
    fleet.notices,
    (n) => n.id,
    (n) =>
      h(
        'div',
        {
          class: `notice ${n.level}`,
          role: n.level === 'error' ? 'alert' : 'status',
          dataset: { testid: 'notice', level: n.level },
        },
        h('span', { class: 'notice-mark', 'aria-hidden': 'true' }, n.level === 'error' ? '✕' : '⚠'),
        h('span', { class: 'notice-text' }),
        h(
          'button',
          {
            class: 'icon ghost',
            type: 'button',
            'aria-label': 'Dismiss this notice',
            title: 'Dismiss',
            dataset: { testid: 'notice-dismiss' },
            onclick: () => dismissNotice(n.id),
          },
          '×',
        ),
      ),
    (row, n) => setText(row.querySelector('.notice-text'), n.message),
  );
}
