// The hosts' sections of the sidebar's archived list (SPEC 17), below this machine's rows: one per
// configured host, headed "On <host>", with that host's archive gestures (the same rows as this
// machine's, restorable and openable read-only) and its own "Show more". A host not connected has
// no rows to offer (its agents could be neither read nor restored now): its section says so,
// greyed. A host's page is at most a few hundred rows, so these are plain rows, not virtualised.
import { h, reconcile, setAttr, setText } from '../dom.js';

export class ArchivedHosts {
  /**
   * actions: {moreArchived(host)}; rows: {create(id, batchesOf), update(el, batch, busy)} — the
   * sidebar's archived rows.
   */
  constructor(actions, rows) {
    this.actions = actions;
    this.rows = rows;
    this.el = h('div', { class: 'archived-hosts' });
  }

  /** hosts: [{name, state}] in config.json's order; sections: name → its list; busy: restores under way. */
  render(hosts, sections, busy) {
    reconcile(
      this.el,
      hosts,
      (e) => e.name,
      (e) => this.create(e.name),
      (el, e) => this.update(el, e, sections.get(e.name), busy),
    );
  }

  create(name) {
    const title = h('span', { class: 'archived-host-name' }, `On ${name}`);
    const state = h('span', {
      class: 'archived-host-state muted',
      dataset: { testid: 'archived-host-state' },
    });
    const list = h('ul', { class: 'archived-host-rows', 'aria-label': `Archived agents on ${name}` });
    const note = h('p', { class: 'muted archived-empty' });
    const more = h('button', {
      class: 'small ghost archived-more',
      type: 'button',
      dataset: { testid: 'archived-host-more', host: name },
      onclick: () => this.actions.moreArchived(name),
    });
    const el = h(
      'section',
      { class: 'archived-host', dataset: { testid: 'archived-host', host: name } },
      h('div', { class: 'archived-host-head' }, title, state),
      list,
      note,
      more,
    );
    el._parts = { state, list, note, more, batches: [] };
    return el;
  }

  update(el, entry, section, busy) {
    const { state, list, note, more } = el._parts;
    const connected = entry.state === 'connected';
    setAttr(el, 'data-state', connected ? 'connected' : 'disconnected');
    el.classList.toggle('offline', !connected);
    setText(state, connected ? '' : entry.state === 'connecting' ? 'connecting…' : 'not connected');
    const batches = connected ? (section?.batches ?? []) : [];
    el._parts.batches = batches;
    reconcile(
      list,
      batches,
      (b) => b.head.id,
      (b) => this.rows.create(b.head.id, () => el._parts.batches),
      (row, b) => this.rows.update(row, b, busy),
    );
    const loading = connected && section?.batches == null;
    setText(
      note,
      !connected
        ? 'Its archived agents show when it is connected.'
        : loading
          ? 'Loading…'
          : batches.length === 0
            ? 'Nothing archived.'
            : '',
    );
    note.hidden = connected && batches.length > 0;
    const shown = section?.loaded.length ?? 0;
    const total = section?.total ?? 0;
    more.hidden = !connected || !(total > shown);
    setText(
      more,
      section?.loadingMore
        ? 'Loading…'
        : `Show more (${shown.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} shown)`,
    );
    more.disabled = section?.loadingMore ?? false;
  }
}
