// A workspace's home tab: its root agents with their state and a roll-up of their subagents
// ("12 subagents: 3 running, 1 failed"), so agents without a tab in this window — started by
// other windows or by agents — are one click away. At fifty agents and more a list needs handles:
// it sorts (recent activity, name, status: most urgent first), filters by status and searches
// titles. Rows are virtualised like the track's: only those in view are in the DOM, so a workspace
// with ten thousand agents opens and scrolls like one with ten.
import { h, mount, setAttr, setText, ago, RowWindow } from '../dom.js';
import { countsLine } from './counts-line.js';
import { SchedulesSection } from './schedules.js';

const ROW_PX = 32;
const OVERSCAN = 10;
import { fleet, rootsIn, descendants, providerLabel, workspaceName } from '../store.js';
import {
  agentBucket,
  agentLabel,
  agentLook,
  agentName,
  changesText,
  glyph,
  updateGlyph,
  workspaceLabel,
  urgency,
  lookWord,
} from '../status.js';

const activity = (a) => a.lastActivityAt || a.createdAt || 0;

/** A root's subagents, for the search (a row is found by a subagent's name too). */
function subtree(root) {
  return descendants(root.id)
    .map((id) => (typeof id === 'string' ? fleet.agents.get(id) : id))
    .filter(Boolean);
}

/**
 * Whether the root's row shows state `b`: its own, or one its subagents show in the workspace
 * (the core rolls them up in the root's card: `subagents.shows`, paseo-core model/attention.rs).
 */
function treeShows(root, b) {
  return agentBucket(root) === b || (b !== 'done' && (root.subagents?.shows ?? []).includes(b));
}

/** The most urgent state the row shows (its own, or one its subagents show). */
function treeUrgency(root) {
  const order = urgency();
  let best = order.indexOf(agentBucket(root));
  for (const b of root.subagents?.shows ?? []) best = Math.min(best, order.indexOf(b));
  return best;
}

import { treeUsageText, usageText, usageTitle } from '../usage.js';

export class WorkspaceHome {
  /** actions: {open(id), newAgent(wsId), renameWorkspace(wsId, name), removeWorkspace(wsId)} */
  constructor(actions) {
    this.actions = actions;
    this.wsId = null;
    this.title = h('h1', { dataset: { testid: 'workspace-name' } });
    // Renaming happens in place: the title becomes a field; Enter (or leaving it) saves, Esc
    // cancels. An empty name gives the workspace its branch or folder name back.
    this.nameInput = h('input', {
      class: 'ws-name-input',
      type: 'text',
      maxlength: '100',
      hidden: true,
      'aria-label': 'Workspace name',
      dataset: { testid: 'workspace-name-input' },
      onkeydown: (e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          this.finishRename(true);
        }
        if (e.key === 'Escape') {
          e.preventDefault();
          e.stopPropagation();
          this.finishRename(false);
        }
      },
      onblur: () => this.finishRename(true),
    });
    this.branch = h('span', { class: 'ws-branch muted mono', dataset: { testid: 'workspace-branch' } });
    this.cwd = h('div', { class: 'cwd mono muted' });
    this.state = h('span', { class: 'status-word' });
    this.usage = h('div', { class: 'usage muted', dataset: { testid: 'workspace-usage' } });
    this.counts = h('div', { class: 'ws-counts muted', dataset: { testid: 'workspace-counts' } });
    this.list = h('div', { class: 'ws-agents', role: 'list', 'aria-label': 'Agents in this workspace' });
    this.empty = h('p', { class: 'muted', dataset: { testid: 'home-empty' } }, 'No agents here yet.');
    const redo = () => this.render(this.wsId);
    this.search = h('input', {
      type: 'search',
      placeholder: 'Search titles',
      'aria-label': 'Search agent titles',
      dataset: { testid: 'home-search' },
      spellcheck: 'false',
      oninput: redo,
    });
    this.filter = h(
      'select',
      { 'aria-label': 'Show', dataset: { testid: 'home-filter' }, onchange: redo },
      h('option', { value: '' }, 'All states'),
    );
    this.sort = h(
      'select',
      { 'aria-label': 'Sort by', dataset: { testid: 'home-sort' }, onchange: redo },
      h('option', { value: 'activity' }, 'Recent activity'),
      h('option', { value: 'name' }, 'Name'),
      h('option', { value: 'status' }, 'Status (most urgent first)'),
    );
    this.shown = h('span', { class: 'muted home-shown', dataset: { testid: 'home-shown' } });
    this.tools = h('div', { class: 'home-tools' }, this.search, this.filter, this.sort, this.shown);
    this.el = h(
      'div',
      { class: 'ws-home', dataset: { testid: 'workspace-home' } },
      h(
        'header',
        { class: 'ws-home-head' },
        h(
          'div',
          { class: 'ws-home-title' },
          h('div', { class: 'line' }, this.title, this.nameInput, this.branch, this.state),
          this.cwd,
          this.counts,
          this.usage,
        ),
        h(
          'div',
          { class: 'ws-home-actions' },
          h(
            'button',
            {
              class: 'ghost',
              type: 'button',
              title: 'Give this workspace a name',
              dataset: { testid: 'workspace-rename' },
              onclick: () => this.startRename(),
            },
            'Rename',
          ),
          h(
            'button',
            {
              class: 'ghost',
              type: 'button',
              title: 'Remove this workspace and archive its agents',
              dataset: { testid: 'workspace-remove' },
              onclick: () => this.actions.removeWorkspace(this.wsId),
            },
            'Remove…',
          ),
          h(
            'button',
            {
              class: 'primary',
              type: 'button',
              dataset: { testid: 'workspace-new-agent' },
              onclick: () => this.actions.newAgent(this.wsId),
            },
            'New agent here',
          ),
        ),
      ),
      this.tools,
      this.list,
      this.empty,
    );
    // Below the agents: what runs here on its own (SPEC 20).
    this.schedules = new SchedulesSection({ open: (id) => this.actions.open(id) });
    this.el.append(this.schedules.el);
    this.roots = [];
    this.window = new RowWindow(this.list, {
      rowPx: ROW_PX,
      overscan: OVERSCAN,
      create: (id) => this.create(id),
      update: (el, i) => this.update(el, fleet.agents.get(this.roots[i])),
    });
    // Where the list is in view, as the last layout left it: read after one (a scroll, a
    // resize of the home or of what is above the list), never during a render, where the read
    // would force a layout of its own (on a window's first frame, the whole window's).
    this.seen = { top: 0, height: 0 };
    this.scrolled = 0;
    this.el.addEventListener('scroll', () => this.measure(), { passive: true });
    const sizes = new ResizeObserver(() => this.measure());
    for (const el of [this.el, this.el.firstElementChild, this.tools]) sizes.observe(el);
  }

  /** The home came into view: what may have changed meanwhile elsewhere (schedules) is asked again. */
  cameIntoView() {
    this.schedulesWs = null;
  }

  /** Reads where the list is in view and shows the rows there. */
  measure() {
    this.scrolled = this.el.scrollTop;
    this.seen = { top: this.scrolled - this.list.offsetTop, height: this.el.clientHeight };
    this.renderRows();
  }

  render(wsId) {
    this.wsId = wsId;
    // Asked of the backend when the workspace changes (and then every half minute), not on
    // every change of the fleet this view also follows.
    if (this.schedulesWs !== wsId) {
      this.schedulesWs = wsId;
      this.schedules.render(wsId);
    }
    // One option per state, in the core's words (they arrive with the app info, after this
    // view was built).
    if (this.filter.options.length !== urgency().length + 1) {
      this.filter.replaceChildren(
        this.filter.options[0],
        ...urgency().map((b) => h('option', { value: b }, lookWord(b))),
      );
    }
    const ws = fleet.workspaces.get(wsId);
    if (this.renaming !== wsId) this.stopRenaming();
    setText(this.title, ws ? workspaceName(ws) : 'Workspace');
    const branch = ws?.kind === 'worktree' ? `⎇ ${ws.branch ?? 'worktree'}` : (ws?.branch ?? '');
    setText(this.branch, branch && branch !== workspaceName(ws) ? branch : '');
    setAttr(this.branch, 'title', ws?.branch ? `Branch ${ws.branch}` : null);
    setText(this.cwd, ws ? ws.cwd : '');
    setText(this.state, workspaceLabel(ws?.bucket ?? null));
    this.state.className = `status-word s-${ws?.bucket ?? 'none'}`;
    // Every agent of its trees by their words, as the core counts and words them (the status
    // bar's rule); "needs you" and "failed" list the agents, subagents included, that say so.
    const line = ws?.tally?.line ?? [];
    const key = `${wsId}|${line.map((p) => p.text).join(' · ')}`;
    if (this.counts.dataset.line !== key) {
      this.counts.dataset.line = key;
      const inTrees = (kind) =>
        rootsIn(wsId).flatMap((r) => [r, ...subtree(r)].filter((a) => agentBucket(a) === kind));
      mount(this.counts, countsLine(line, inTrees, this.actions.open));
    }
    const usage = usageText(ws?.usage);
    setText(this.usage, usage ? `All agents, archived included: ${usage}` : '');
    setAttr(this.usage, 'title', usageTitle(ws?.usage, 'All agents in this workspace') || null);
    this.usage.hidden = !usage;
    if (this.shownWs !== wsId) {
      this.shownWs = wsId;
      // Written only when it moved: a write forces a layout (on a window's first frame, the
      // whole window's).
      if (this.scrolled) this.el.scrollTop = 0;
      this.seen = { ...this.seen, top: 0 };
    }
    const all = rootsIn(wsId);
    const roots = this.arrange(all);
    this.roots = roots.map((a) => a.id);
    const narrowed = roots.length !== all.length;
    setText(
      this.shown,
      narrowed ? `${roots.length} of ${all.length}` : `${all.length} agent${all.length === 1 ? '' : 's'}`,
    );
    this.tools.hidden = all.length === 0;
    setText(this.empty, narrowed ? 'No agent matches.' : 'No agents here yet.');
    this.empty.hidden = this.roots.length > 0;
    this.list.style.height = `${this.roots.length * ROW_PX}px`;
    this.renderRows();
  }

  /**
   * The roots the search and the filter leave, in the chosen order. A row stands for its tree:
   * it shows a state its subagents light (a failed or waiting subagent), and a search finds it
   * by a subagent's title too.
   */
  arrange(all) {
    const words = this.search.value.trim().toLowerCase();
    const only = this.filter.value;
    const by = this.sort.value;
    const named = (a) => agentName(a).toLowerCase().includes(words);
    const list = all.filter(
      (r) => (!only || treeShows(r, only)) && (!words || named(r) || subtree(r).some(named)),
    );
    const recent = (a, b) => (activity(b) > activity(a) ? 1 : activity(b) < activity(a) ? -1 : 0);
    if (by === 'name') list.sort((a, b) => agentName(a).localeCompare(agentName(b)) || recent(a, b));
    else if (by === 'status') {
      const urgency = new Map(list.map((r) => [r.id, treeUrgency(r)]));
      list.sort((a, b) => urgency.get(a.id) - urgency.get(b.id) || recent(a, b));
    } else list.sort(recent);
    return list;
  }

  startRename() {
    const ws = fleet.workspaces.get(this.wsId);
    if (!ws) return;
    this.renaming = this.wsId;
    this.nameInput.value = workspaceName(ws);
    this.title.hidden = true;
    this.nameInput.hidden = false;
    this.nameInput.focus();
    this.nameInput.select();
  }

  finishRename(save) {
    if (this.renaming == null) return;
    const wsId = this.renaming;
    const ws = fleet.workspaces.get(wsId);
    const value = this.nameInput.value.trim();
    this.stopRenaming();
    if (save && ws && value !== workspaceName(ws)) this.actions.renameWorkspace(wsId, value);
  }

  stopRenaming() {
    this.renaming = null;
    this.nameInput.hidden = true;
    this.title.hidden = false;
  }

  /** Puts the rows in view (plus a margin) in the DOM, at their places; drops the others. */
  renderRows() {
    this.window.render(
      this.roots.length,
      (i) => (fleet.agents.has(this.roots[i]) ? this.roots[i] : null),
      this.seen.top,
      this.seen.height,
      20,
    );
  }

  create(id) {
    const g = glyph('done');
    const name = h('span', { class: 'wa-name' });
    const meta = h('span', { class: 'wa-meta muted' });
    const word = h('span', { class: 'wa-word' });
    const changes = h('span', { class: 'wa-changes mono', dataset: { testid: 'workspace-agent-changes' } });
    const sched = h('span', { class: 'wa-schedule muted', dataset: { testid: 'workspace-agent-schedule' } });
    const el = h(
      'button',
      {
        class: 'ws-agent',
        type: 'button',
        role: 'listitem',
        dataset: { testid: 'workspace-agent', agentId: id },
        onclick: () => this.actions.open(id),
      },
      g,
      name,
      sched,
      word,
      changes,
      meta,
    );
    el._parts = { g, name, sched, meta, word, changes };
    return el;
  }

  update(el, agent) {
    const { g, name, sched, meta, word, changes } = el._parts;
    setText(changes, changesText(agent));
    setText(sched, agent.schedule ? `◷ ${agent.schedule}` : '');
    const bucket = agentBucket(agent);
    const label = agentLabel(agent);
    updateGlyph(g, agentLook(agent), label);
    setText(name, agentName(agent));
    setText(word, label);
    word.className = `wa-word s-${agentLook(agent)}`;
    setText(
      meta,
      [
        providerLabel(agent.provider),
        // The core's roll-up of its subagents ("12 subagents: 3 running, 1 failed").
        agent.subagents?.word ?? null,
        treeUsageText(agent) || null,
        ago(agent.lastActivityAt || agent.createdAt),
      ]
        .filter(Boolean)
        .join(' · '),
    );
    setAttr(el, 'aria-label', `Open ${agentName(agent)}, ${label}`);
    setAttr(el, 'data-status', agent.status);
  }
}
