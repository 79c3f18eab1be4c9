// An archived batch's members, listed from the archived list's "+ N more": which agents one
// archive gesture put away together, each with its provider and the status it had (SPEC 5).
// A popup like the menu: Escape or a click elsewhere closes it.
import { h } from '../dom.js';
import { agentName } from '../status.js';
import { providerLabel } from '../store.js';

let open = null;

export function closeMembers() {
  if (!open) return;
  document.removeEventListener('mousedown', open.onDoc, true);
  open.el.remove();
  open = null;
}

/** batch: {head, members}; lists every member, the head first. */
export function openMembers(anchor, batch) {
  const same = open?.anchor === anchor;
  closeMembers();
  if (same) return;
  const members = [batch.head, ...batch.members.filter((m) => m.id !== batch.head.id)];
  const el = h('div', {
    class: 'menu batch-members', role: 'dialog', 'aria-label': 'Archived together', dataset: { testid: 'archived-members' },
    onkeydown: (e) => { if (e.key === 'Escape') { e.preventDefault(); closeMembers(); anchor.focus(); } },
  },
  h('div', { class: 'menu-title muted' }, `Archived together (${members.length})`),
  h('ul', {}, members.map((m) => h('li', { dataset: { testid: 'archived-member', agentId: m.id } },
    h('span', { class: 'member-name' }, agentName(m)),
    h('span', { class: 'muted' }, ` · ${providerLabel(m.provider)} · ${m.status === 'error' ? 'failed' : m.status}`)))),
  h('div', { class: 'muted member-note' }, 'Restore brings the whole batch back.'));
  const box = anchor.getBoundingClientRect();
  el.style.left = `${Math.max(8, box.left)}px`;
  el.style.bottom = `${Math.max(8, window.innerHeight - box.top + 4)}px`;
  document.body.append(el);
  const onDoc = (e) => { if (!el.contains(e.target) && e.target !== anchor) closeMembers(); };
  document.addEventListener('mousedown', onDoc, true);
  open = { el, anchor, onDoc };
}
