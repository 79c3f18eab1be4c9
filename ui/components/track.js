// The subagents track (SPEC 7): a collapsible panel directly above the composer listing the
// agent's live subagents, oldest first, with live counts in its header, row actions (open, detach,
// archive) and "Archive finished". Rows are virtualised: only the rows in view are in the DOM, so
// a track of a thousand subagents costs what a track of twenty does.
import { h, mount, setAttr, setText, RowWindow } from '../dom.js';
import { countsLine } from './counts-line.js';
import { fleet, trackOf, providerLabel } from '../store.js';
import {
  agentBucket,
  agentLabel,
  agentLook,
  agentName,
  changesText,
  glyph,
  reachOf,
  setPower,
  setReach,
  updateGlyph,
} from '../status.js';
import { agentUsage, treeUsageText } from '../usage.js';
import { SlideGuard } from '../slide-guard.js';

const ROW_PX = 28;
const OVERSCAN = 6;

export class TrackView {
  /** actions: {open(id), detach(id), archive(id), archiveFinished(parentId), toggle(parentId)} */
  constructor(actions) {
    this.actions = actions;
    this.parentId = null;
    this.collapsed = false;
    // A detached or archived row's neighbour slides under a pointer that has not moved.
    this.guard = new SlideGuard();
    this.toggle = h(
      'button',
      {
        class: 'track-toggle',
        type: 'button',
        'aria-expanded': 'true',
        dataset: { testid: 'track-toggle' },
        onclick: () => this.actions.toggle(this.parentId),
      },
      h('span', { class: 'chev', 'aria-hidden': 'true' }, '▾'),
      h('span', {}, 'Subagents'),
    );
    this.counts = h('span', { class: 'track-counts', dataset: { testid: 'track-counts' } });
    this.finished = h(
      'button',
      {
        class: 'small',
        type: 'button',
        dataset: { testid: 'track-archive-finished' },
        title: 'Archive every subagent that is not running',
        onclick: () => this.actions.archiveFinished(this.parentId),
      },
      'Archive finished',
    );
    this.spacer = h('div', { class: 'track-spacer' });
    this.body = h('div', { class: 'track-body', role: 'list', 'aria-label': 'Subagents' }, this.spacer);
    this.el = h(
      'section',
      { class: 'track', 'aria-label': 'Subagents', dataset: { testid: 'track' } },
      h(
        'div',
        { class: 'track-head' },
        this.toggle,
        this.counts,
        h('span', { class: 'spacer' }),
        this.finished,
      ),
      this.body,
    );
    this.window = new RowWindow(this.spacer, {
      rowPx: ROW_PX,
      overscan: OVERSCAN,
      create: (id) => this.createRow(id),
      elementOf: (row) => row.el,
      update: (row, i) => this.updateRow(row, fleet.agents.get(this.members[i])),
    });
    this.body.addEventListener('scroll', () => this.renderRows(), { passive: true });
    this.members = [];
  }

  /** Shows the track of `parentId` (hidden when it has no subagents). */
  render(parentId, collapsed) {
    if (parentId !== this.parentId) {
      this.parentId = parentId;
      this.body.scrollTop = 0;
      this.window.clear();
    }
    const track = trackOf(parentId);
    this.members = track.members.filter((id) => fleet.agents.has(id));
    this.el.hidden = this.members.length === 0;
    this.el.dataset.agentId = parentId;
    if (this.el.hidden) return;
    this.collapsed = collapsed;
    setAttr(this.toggle, 'aria-expanded', collapsed ? 'false' : 'true');
    setAttr(this.toggle, 'aria-label', collapsed ? 'Show subagents' : 'Hide subagents');
    setText(this.toggle.firstChild, collapsed ? '▸' : '▾');
    const line = track.counts.line;
    const key = line.map((p) => p.text).join(' · ');
    // Rebuilt only when the words change: a link keeps its focus while rows update.
    if (this.counts.dataset.line !== key) {
      this.counts.dataset.line = key;
      mount(
        this.counts,
        countsLine(
          line,
          (kind) =>
            this.members.map((id) => fleet.agents.get(id)).filter((a) => a && agentBucket(a) === kind),
          this.actions.open,
        ),
      );
    }
    // The core counts what its "Archive finished" would take (paseo-core engine/plan.rs).
    const finishedCount = track.counts.finished ?? 0;
    this.finished.disabled = finishedCount === 0;
    setAttr(
      this.finished,
      'aria-label',
      `Archive ${finishedCount} finished subagent${finishedCount === 1 ? '' : 's'}`,
    );
    this.body.hidden = collapsed;
    this.el.classList.toggle('collapsed', collapsed);
    if (!collapsed) {
      this.spacer.style.height = `${this.members.length * ROW_PX}px`;
      this.renderRows();
    }
  }

  renderRows() {
    if (this.collapsed || this.el.hidden) return;
    this.window.render(
      this.members.length,
      (i) => this.members[i],
      this.body.scrollTop,
      this.body.clientHeight,
      10,
    );
  }

  createRow(id) {
    const g = glyph('done');
    const title = h('span', { class: 'row-title' });
    const provider = h('span', { class: 'row-provider' });
    const power = h('span', { class: 'power-tag', dataset: { testid: 'track-power' } });
    const reach = h('span', { class: 'power-tag reach-tag', dataset: { testid: 'track-reach' } });
    const status = h('span', { class: 'row-status' });
    const changes = h('span', {
      class: 'row-changes mono',
      dataset: { testid: 'track-changes' },
      title: 'Files changed on disk, lines added and removed',
    });
    const usage = h('span', { class: 'row-usage', dataset: { testid: 'track-usage' } });
    const open = h(
      'button',
      {
        class: 'small ghost',
        type: 'button',
        dataset: { testid: 'track-open' },
        onclick: () => this.actions.open(id),
      },
      'Open',
    );
    const detach = h(
      'button',
      {
        class: 'small ghost',
        type: 'button',
        dataset: { testid: 'track-detach' },
        onclick: (e) => this.guard.blocks(e) || this.actions.detach(id),
      },
      'Detach',
    );
    const archive = h(
      'button',
      {
        class: 'small ghost icon danger',
        type: 'button',
        dataset: { testid: 'track-archive' },
        onclick: (e) => this.guard.blocks(e) || this.actions.archive(id),
      },
      '×',
    );
    const el = h(
      'div',
      {
        class: 'track-row',
        role: 'listitem',
        dataset: { testid: 'track-row', agentId: id },
        ondblclick: () => this.actions.open(id),
      },
      g,
      title,
      provider,
      h('span', { class: 'row-power' }, power, reach),
      status,
      changes,
      usage,
      h('span', { class: 'row-actions' }, open, detach, archive),
    );
    return { el, g, title, provider, power, reach, status, changes, usage, open, detach, archive };
  }

  updateRow(row, agent) {
    if (!agent) return;
    const bucket = agentBucket(agent);
    const label = agentLabel(agent);
    const name = agentName(agent);
    updateGlyph(row.g, agentLook(agent), label);
    setAttr(row.el, 'data-status', agent.status);
    setAttr(row.el, 'data-bucket', bucket);
    setText(row.title, name);
    setAttr(row.title, 'title', name);
    setText(row.provider, providerLabel(agent.provider));
    setPower(row.power, agent.power);
    setReach(row.reach, reachOf(agent));
    setText(row.status, label);
    row.status.className = `row-status s-${agentLook(agent)}`;
    setText(row.changes, changesText(agent));
    setText(row.usage, treeUsageText(agent));
    setAttr(row.usage, 'title', agentUsage(agent).title || null);
    setAttr(row.open, 'aria-label', `Open ${name}`);
    setAttr(row.detach, 'aria-label', `Detach ${name}`);
    setAttr(row.archive, 'aria-label', `Archive ${name}`);
    setAttr(row.detach, 'title', 'Detach: it keeps running as a root agent');
    setAttr(row.archive, 'title', 'Archive (asks first)');
  }
}
