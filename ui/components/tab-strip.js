// The tab strip: this window's agent tabs for the selected workspace, each with its status glyph
// and a close ×, after a home tab listing the workspace's agents, and a + for a new agent. The
// home tab, the new-agent tab and + stay pinned; the agent tabs shrink, then scroll between them,
// with arrows and a menu of every tab when they overflow; the active tab is kept in view.
import { h, reconcile, setAttr, setText } from '../dom.js';
import { fleet, workspaceName } from '../store.js';
import { agentBucket, agentLabel, agentLook, agentName, glyph, updateGlyph } from '../status.js';
import { openTabList } from './tab-list.js';
import { SlideGuard } from '../slide-guard.js';

export class TabStrip {
  /** actions: {home(), activate(id), close(id), newAgent()} */
  constructor(el, actions) {
    this.el = el;
    this.actions = actions;
    this.home = h(
      'div',
      {
        class: 'tab home',
        role: 'tab',
        tabindex: '0',
        dataset: { testid: 'tab-home' },
        onclick: () => actions.home(),
        onkeydown: (e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            actions.home();
          }
        },
      },
      h('span', { class: 'glyph home-glyph', 'aria-hidden': 'true' }, '⌂'),
      h('span', { class: 'tab-title' }),
    );
    this.tabs = h('div', { class: 'tabs', onscroll: () => this.updateOverflow() });
    const arrow = (dir, label) =>
      h(
        'button',
        {
          class: `tab-scroll tab-scroll-${dir < 0 ? 'left' : 'right'}`,
          type: 'button',
          tabindex: '-1',
          hidden: true,
          title: label,
          'aria-label': label,
          dataset: { testid: dir < 0 ? 'tabs-scroll-left' : 'tabs-scroll-right' },
          onclick: () =>
            this.tabs.scrollBy({
              left: dir * Math.max(120, this.tabs.clientWidth * 0.7),
              behavior: 'smooth',
            }),
        },
        dir < 0 ? '‹' : '›',
      );
    this.left = arrow(-1, 'Scroll the tabs left');
    this.right = arrow(1, 'Scroll the tabs right');
    this.more = h(
      'button',
      {
        class: 'tab-more',
        type: 'button',
        hidden: true,
        title: 'All tabs',
        'aria-label': 'All tabs',
        'aria-haspopup': 'menu',
        'aria-expanded': 'false',
        dataset: { testid: 'tabs-overflow' },
        onclick: () =>
          openTabList(this.more, this.list, (id) => (id ? actions.activate(id) : actions.home())),
      },
      '⌄',
    );
    this.form = h(
      'div',
      { class: 'tab form-tab', role: 'tab', 'aria-selected': 'true', dataset: { testid: 'tab-new-agent' } },
      h('span', { class: 'glyph', 'aria-hidden': 'true' }, '+'),
      h('span', { class: 'tab-title' }, 'New agent'),
    );
    this.plus = h(
      'button',
      {
        class: 'tab-plus',
        type: 'button',
        title: 'New agent (Ctrl+N)',
        'aria-label': 'New agent',
        dataset: { testid: 'new-agent' },
        onclick: () => actions.newAgent(),
      },
      '+',
    );
    this.el.replaceChildren(this.home, this.left, this.tabs, this.right, this.form, this.more, this.plus);
    this.list = [];
    // A closed tab's neighbour slides under a pointer that has not moved (slide-guard.js).
    this.guard = new SlideGuard();
    // Whether the tabs overflow is read once the frame is laid out, never during a render (a
    // read there forces a layout of its own, the whole window's on its first frame): from the
    // sizes of the strip (a narrower window must not hide the active tab; tabs closed until the
    // rest fit shrink it) and of each tab (one added or renamed while they overflow).
    this.sizes = new ResizeObserver(() => (this.shown ? this.reveal(this.shown) : this.updateOverflow()));
    this.sizes.observe(this.tabs);
    // Arrow keys move the focus along the tabs (Enter or Space then opens one).
    this.el.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
      const tabs = [...this.el.querySelectorAll('[role="tab"]:not([hidden])')];
      const i = tabs.indexOf(document.activeElement);
      if (i < 0) return;
      e.preventDefault();
      tabs[(i + (e.key === 'ArrowRight' ? 1 : -1) + tabs.length) % tabs.length].focus();
    });
  }

  /** view: {workspaceId, tabs: [id], active: id | null, formOpen, readOnly: an archived agent covers the tabs} */
  render(view) {
    const ws = fleet.workspaces.get(view.workspaceId);
    this.home.hidden = !view.workspaceId;
    setText(this.home.lastChild, ws ? workspaceName(ws) : 'Workspace');
    setAttr(this.home, 'title', ws ? `${ws.cwd} — its agents` : '');
    setAttr(this.home, 'aria-label', ws ? `Workspace ${workspaceName(ws)}: its agents` : 'Workspace');
    // The form or an archived agent read-only covers the pane: no tab is the one shown.
    const covered = view.formOpen || view.readOnly;
    const homeActive = !view.active && !covered;
    setAttr(this.home, 'aria-selected', homeActive ? 'true' : 'false');
    this.home.classList.toggle('active', homeActive);
    this.form.hidden = !view.formOpen;
    this.form.classList.toggle('active', view.formOpen);

    const agents = view.tabs.map((id) => fleet.agents.get(id)).filter(Boolean);
    const before = this.tabs._keyed;
    reconcile(
      this.tabs,
      agents,
      (a) => a.id,
      (a) => this.create(a.id),
      (el, a) => this.update(el, a, !covered && a.id === view.active),
    );
    for (const [id, el] of before ?? []) if (!this.tabs._keyed.has(id)) this.sizes.unobserve(el);
    // What the overflow menu lists: every tab in the order shown, the home tab first.
    this.list = [
      ...(view.workspaceId
        ? [
            {
              id: null,
              name: ws ? workspaceName(ws) : 'Workspace',
              look: 'home',
              label: 'its agents',
              active: homeActive,
            },
          ]
        : []),
      ...agents.map((a) => ({
        id: a.id,
        name: agentName(a),
        look: agentLook(a),
        label: agentLabel(a),
        active: !covered && a.id === view.active,
      })),
    ];
    const active = !covered && view.active;
    if (active !== this.shown) {
      this.shown = active;
      if (active) requestAnimationFrame(() => this.reveal(active));
    }
  }

  /** Shows the scroll arrows and the tab menu only while the agent tabs do not all fit. */
  updateOverflow() {
    const t = this.tabs;
    const over = t.scrollWidth > t.clientWidth + 1;
    this.more.hidden = !over;
    this.left.hidden = !over;
    this.right.hidden = !over;
    this.left.disabled = t.scrollLeft <= 0;
    this.right.disabled = t.scrollLeft + t.clientWidth >= t.scrollWidth - 1;
  }

  create(id) {
    const g = glyph('done');
    const title = h('span', { class: 'tab-title' });
    // A host's agent carries the host's name, small and grey (UI.md).
    const host = h('span', { class: 'tab-host', dataset: { testid: 'tab-host' }, hidden: true });
    // A schedule's run carries its schedule's name the same way (SPEC 20).
    const sched = h('span', {
      class: 'tab-host tab-schedule',
      dataset: { testid: 'tab-schedule' },
      hidden: true,
    });
    const close = h(
      'button',
      {
        class: 'tab-close',
        type: 'button',
        tabindex: '-1',
        dataset: { testid: 'tab-close' },
        onclick: (e) => {
          e.stopPropagation();
          if (!this.guard.blocks(e)) this.actions.close(id);
        },
      },
      '×',
    );
    const el = h(
      'div',
      {
        class: 'tab',
        role: 'tab',
        tabindex: '0',
        dataset: { testid: 'tab', agentId: id },
        onclick: () => this.actions.activate(id),
        onauxclick: (e) => {
          if (e.button === 1) {
            e.preventDefault();
            if (!this.guard.blocks(e)) this.actions.close(id);
          }
        },
        onkeydown: (e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            this.actions.activate(id);
          }
          if (e.key === 'Delete') {
            e.preventDefault();
            this.actions.close(id);
          }
        },
      },
      g,
      title,
      sched,
      host,
      close,
    );
    el._parts = { g, title, sched, host, close };
    this.sizes.observe(el);
    return el;
  }

  update(el, agent, active) {
    const { g, title, sched, host, close } = el._parts;
    setText(host, agent.host ?? '');
    host.hidden = !agent.host;
    setText(sched, agent.schedule ? `◷ ${agent.schedule}` : '');
    sched.hidden = !agent.schedule;
    const bucket = agentBucket(agent);
    const label = agentLabel(agent);
    const name = agentName(agent);
    updateGlyph(g, agentLook(agent), label);
    setText(title, name);
    setAttr(
      el,
      'title',
      `${name} — ${label}${agent.parentAgentId ? ' (subagent)' : ''}${agent.host ? ` · on ${agent.host}` : ''}`,
    );
    setAttr(el, 'aria-selected', active ? 'true' : 'false');
    setAttr(el, 'data-status', agent.status);
    el.classList.toggle('active', active);
    el.classList.toggle('sub', Boolean(agent.parentAgentId));
    // A root agent's × archives it (SPEC 7), so it looks unlike a subagent's view-only ×.
    close.classList.toggle('archives', !agent.parentAgentId);
    const closeWhat = agent.parentAgentId ? `Close the tab of ${name}` : `Archive ${name}`;
    setAttr(close, 'aria-label', closeWhat);
    setAttr(
      close,
      'title',
      agent.parentAgentId ? 'Close tab (the subagent keeps running)' : 'Close and archive (Ctrl+W)',
    );
  }

  /** Scrolls the agent's tab into view within the strip (the pinned parts never move). */
  reveal(id) {
    const el = this.tabs._keyed?.get(id);
    if (!el) return;
    const t = this.tabs;
    const left = el.offsetLeft - t.offsetLeft;
    if (left < t.scrollLeft) t.scrollLeft = left;
    else if (left + el.offsetWidth > t.scrollLeft + t.clientWidth)
      t.scrollLeft = left + el.offsetWidth - t.clientWidth;
    this.updateOverflow();
  }
}
