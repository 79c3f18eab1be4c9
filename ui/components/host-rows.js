// The hosts in the sidebar (SPEC 17, UI.md "Hosts"): one group per configured host, under
// this machine's projects — a row with the host's name, a state dot and the state in words
// ("connected", "connecting…", "disconnected (last seen 14:02)", "can't connect" with ssh's own
// message and, when it would help, "Install on host…"), "Remove host", and under it the host's
// projects and workspaces, the same rows as this machine's. A host that is not connected keeps
// its last known rows, greyed but readable and clickable. "Add a host…" ends the list.
import { h, reconcile, setAttr, setText } from '../dom.js';
import { stateAttr, stateWords } from '../hosts.js';

const CLOCK = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });

/** "14:02": when a disconnected host was last seen. */
function clock(iso) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? '' : CLOCK.format(t);
}

export class HostRows {
  /** actions: {addHost(anchor), removeHost(name), installHost(name)} */
  constructor(actions) {
    this.actions = actions;
    this.list = h('div', { class: 'hosts', role: 'group', 'aria-label': 'Hosts' });
    this.add = h(
      'button',
      {
        class: 'ghost wide add-host',
        type: 'button',
        dataset: { testid: 'add-host' },
        title: 'Run agents on another machine you reach with ssh',
        'aria-haspopup': 'dialog',
        onclick: (e) => actions.addHost(e.currentTarget),
      },
      h('span', { 'aria-hidden': 'true' }, '+ '),
      'Add a host…',
    );
    this.el = h('div', { class: 'host-section' }, this.list, this.add);
  }

  /** hosts: ui/hosts.js entries; renderProjects(listEl, hostName) fills a host's project rows. */
  render(hosts, renderProjects) {
    reconcile(
      this.list,
      hosts,
      (e) => e.name,
      (e) => this.create(e.name),
      (el, e) => this.update(el, e, renderProjects),
    );
  }

  create(name) {
    const dot = h('span', { class: 'host-dot', 'aria-hidden': 'true' }, '●');
    const title = h('span', { class: 'host-name' }, name);
    const word = h('div', { class: 'host-state', dataset: { testid: 'host-state' } });
    const remove = h(
      'button',
      {
        class: 'small ghost host-remove',
        type: 'button',
        dataset: { testid: 'host-remove' },
        'aria-label': `Remove host ${name}`,
        title: `Remove ${name} from config.json (nothing on it stops)`,
        onclick: () => this.actions.removeHost(name),
      },
      'Remove',
    );
    const why = h('div', { class: 'host-why', dataset: { testid: 'host-why' } });
    const install = h(
      'button',
      {
        class: 'small host-install',
        type: 'button',
        dataset: { testid: 'host-install' },
        onclick: () => this.actions.installHost(name),
      },
      'Install on host…',
    );
    const projects = h('div', { class: 'projects', role: 'group', 'aria-label': `Workspaces on ${name}` });
    const el = h(
      'section',
      { class: 'host-row', dataset: { testid: 'host-row', host: name } },
      h('div', { class: 'host-head' }, dot, title, h('span', { class: 'spacer' }), remove),
      word,
      why,
      h('div', { class: 'host-actions' }, install),
      projects,
    );
    el._parts = { word, why, install, remove, projects };
    return el;
  }

  update(el, entry, renderProjects) {
    const { word, why, install, remove, projects } = el._parts;
    const [said, reason] = stateWords(entry, clock);
    setText(word, said);
    setText(why, reason);
    why.hidden = !reason;
    setAttr(why, 'title', reason || null);
    setAttr(el, 'data-state', stateAttr(entry));
    setAttr(el, 'aria-busy', entry.busy ? 'true' : null);
    setAttr(el, 'aria-label', `${entry.name}, ${said}`);
    setAttr(el, 'title', `${entry.name} — ssh ${entry.ssh}`);
    install.parentNode.hidden = !(entry.installHelps && entry.state !== 'connected');
    install.disabled = Boolean(entry.busy);
    remove.disabled = Boolean(entry.busy);
    renderProjects(projects, entry.name);
  }
}
