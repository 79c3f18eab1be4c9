// An archived batch's members, listed from the archived list's "+ N more": which agents one
// archive gesture put away together, each with its provider and the status it had (SPEC 5),
// each openable read-only and restorable on its own (with the members archived below it).
// A popup like the menu: Escape or a click elsewhere closes it.
import { h } from '../dom.js';
import { agentLabel, agentName } from '../status.js';
import { providerLabel } from '../store.js';
import { closePopup, popupOf, showPopup } from '../popup.js';

/** Closes the list (or whichever popup is open). */
export const closeMembers = () => closePopup();

/**
 * batch: {head, members}; lists every member, the head first, a member's subagents indented
 * under it. actions: {openArchived(id), restoreMember(id)}; `busy`: restores under way.
 */
export function openMembers(anchor, batch, actions, busy) {
  if (popupOf(anchor)) {
    closePopup();
    return;
  }
  const ids = new Set(batch.members.map((m) => m.id));
  const byId = new Map(batch.members.map((m) => [m.id, m]));
  const depth = (m) => {
    let d = 0;
    for (
      let cur = m;
      cur.parentAgentId && ids.has(cur.parentAgentId) && d < batch.members.length;
      cur = byId.get(cur.parentAgentId)
    )
      d++;
    return d;
  };
  const members = [batch.head, ...batch.members.filter((m) => m.id !== batch.head.id)];
  const below = (m) => batch.members.filter((x) => x !== m && x.parentAgentId === m.id).length;
  const row = (m) => {
    const name = agentName(m);
    const kids = below(m);
    const li = h(
      'li',
      { dataset: { testid: 'archived-member', agentId: m.id } },
      h(
        'button',
        {
          class: 'link member-name',
          type: 'button',
          dataset: { testid: 'archived-member-open', agentId: m.id },
          title: `Open “${name}” read-only`,
          onclick: () => {
            closeMembers();
            actions.openArchived(m.id);
          },
        },
        name,
      ),
      h(
        'span',
        { class: 'muted member-meta' },
        ` · ${providerLabel(m.provider)} · `,
        // The core's word for it: the status it was archived in (model/attention.rs).
        h('span', { class: agentLabel(m) === 'failed' ? 'member-failed' : null }, agentLabel(m)),
      ),
      h('span', { class: 'spacer' }),
      h(
        'button',
        {
          class: 'small ghost',
          type: 'button',
          dataset: { testid: 'archived-member-restore', agentId: m.id },
          disabled: busy?.has(m.id) ?? false,
          title: kids ? `Restore “${name}” and what was archived below it` : `Restore “${name}” only`,
          'aria-label': `Restore ${name}${kids ? ' and what was archived below it' : ''}`,
          onclick: () => {
            closeMembers();
            actions.restoreMember(m.id);
          },
        },
        'Restore',
      ),
    );
    // Set through the CSSOM: the app's CSP allows no inline style attributes.
    li.style.paddingLeft = `${Math.min(depth(m), 6) * 12}px`;
    return li;
  };
  const el = h(
    'div',
    {
      class: 'menu batch-members',
      role: 'dialog',
      'aria-label': 'Archived together',
      dataset: { testid: 'archived-members' },
    },
    h('div', { class: 'menu-title muted' }, `Archived together (${members.length})`),
    h('ul', {}, members.map(row)),
    h(
      'div',
      { class: 'muted member-note' },
      "Restore here brings back one agent with what was archived below it; the others stay archived. The list's Restore brings back all of them.",
    ),
  );
  showPopup(anchor, el, { place: 'above' });
}
