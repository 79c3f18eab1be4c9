// A workspace's home tab: its root agents (newest first) with their state and subagent counts,
// so agents without a tab in this window — started by other windows or by agents — are one click
// away. Rows are virtualised like the track's: only those in view are in the DOM, so a workspace
// with ten thousand agents opens and scrolls like one with ten.
import { h, setAttr, setText, ago, RowWindow } from '../dom.js';

const ROW_PX = 32;
const OVERSCAN = 10;
import { fleet, rootsIn, descendants, providerLabel, workspaceName } from '../store.js';
import { agentBucket, agentLabel, agentLook, agentName, changesText, glyph, updateGlyph, workspaceLabel } from '../status.js';
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
      class: 'ws-name-input', type: 'text', maxlength: '100', hidden: true, 'aria-label': 'Workspace name',
      dataset: { testid: 'workspace-name-input' },
      onkeydown: (e) => {
        if (e.key === 'Enter') { e.preventDefault(); this.finishRename(true); }
        if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); this.finishRename(false); }
      },
      onblur: () => this.finishRename(true),
    });
    this.branch = h('span', { class: 'ws-branch muted mono', dataset: { testid: 'workspace-branch' } });
    this.cwd = h('div', { class: 'cwd mono muted' });
    this.state = h('span', { class: 'status-word' });
    this.usage = h('div', { class: 'usage muted', dataset: { testid: 'workspace-usage' } });
    this.list = h('div', { class: 'ws-agents', role: 'list', 'aria-label': 'Agents in this workspace' });
    this.empty = h('p', { class: 'muted' }, 'No agents here yet.');
    this.el = h('div', { class: 'ws-home', dataset: { testid: 'workspace-home' } },
      h('header', { class: 'ws-home-head' },
        h('div', { class: 'ws-home-title' }, h('div', { class: 'line' }, this.title, this.nameInput, this.branch, this.state), this.cwd, this.usage),
        h('div', { class: 'ws-home-actions' },
          h('button', { class: 'ghost', type: 'button', title: 'Give this workspace a name', dataset: { testid: 'workspace-rename' }, onclick: () => this.startRename() }, 'Rename'),
          h('button', { class: 'ghost', type: 'button', title: 'Remove this workspace and archive its agents', dataset: { testid: 'workspace-remove' }, onclick: () => this.actions.removeWorkspace(this.wsId) }, 'Remove…'),
          h('button', { class: 'primary', type: 'button', dataset: { testid: 'workspace-new-agent' }, onclick: () => this.actions.newAgent(this.wsId) }, 'New agent here'))),
      this.list, this.empty);
    this.roots = [];
    this.window = new RowWindow(this.list, {
      rowPx: ROW_PX, overscan: OVERSCAN, create: (id) => this.create(id),
      update: (el, i) => this.update(el, fleet.agents.get(this.roots[i])),
    });
    this.el.addEventListener('scroll', () => this.renderRows(), { passive: true });
  }

  render(wsId) {
    this.wsId = wsId;
    const ws = fleet.workspaces.get(wsId);
    if (this.renaming !== wsId) this.stopRenaming();
    setText(this.title, ws ? workspaceName(ws) : 'Workspace');
    const branch = ws?.kind === 'worktree' ? `⎇ ${ws.branch ?? 'worktree'}` : (ws?.branch ?? '');
    setText(this.branch, branch && branch !== workspaceName(ws) ? branch : '');
    setAttr(this.branch, 'title', ws?.branch ? `Branch ${ws.branch}` : null);
    setText(this.cwd, ws ? ws.cwd : '');
    setText(this.state, workspaceLabel(ws?.bucket ?? null));
    this.state.className = `status-word s-${ws?.bucket ?? 'none'}`;
    const usage = usageText(ws?.usage);
    setText(this.usage, usage ? `All agents, archived included: ${usage}` : '');
    setAttr(this.usage, 'title', usageTitle(ws?.usage, 'All agents in this workspace') || null);
    this.usage.hidden = !usage;
    if (this.shownWs !== wsId) {
      this.shownWs = wsId;
      this.el.scrollTop = 0;
    }
    this.roots = rootsIn(wsId).map((a) => a.id);
    this.empty.hidden = this.roots.length > 0;
    this.list.style.height = `${this.roots.length * ROW_PX}px`;
    this.renderRows();
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
    this.window.render(this.roots.length, (i) => (fleet.agents.has(this.roots[i]) ? this.roots[i] : null),
      this.el.scrollTop - this.list.offsetTop, this.el.clientHeight, 20);
  }

  create(id) {
    const g = glyph('done');
    const name = h('span', { class: 'wa-name' });
    const meta = h('span', { class: 'wa-meta muted' });
    const word = h('span', { class: 'wa-word' });
    const changes = h('span', { class: 'wa-changes mono', dataset: { testid: 'workspace-agent-changes' } });
    const el = h('button', { class: 'ws-agent', type: 'button', role: 'listitem', dataset: { testid: 'workspace-agent', agentId: id }, onclick: () => this.actions.open(id) },
      g, name, word, changes, meta);
    el._parts = { g, name, meta, word, changes };
    return el;
  }

  update(el, agent) {
    const { g, name, meta, word, changes } = el._parts;
    setText(changes, changesText(agent));
    const bucket = agentBucket(agent);
    const label = agentLabel(agent);
    updateGlyph(g, agentLook(agent), label);
    setText(name, agentName(agent));
    setText(word, label);
    word.className = `wa-word s-${agentLook(agent)}`;
    const kids = descendants(agent.id).length;
    setText(meta, [providerLabel(agent.provider), kids ? `${kids} subagent${kids === 1 ? '' : 's'}` : null, treeUsageText(agent) || null, ago(agent.lastActivityAt || agent.createdAt)].filter(Boolean).join(' · '));
    setAttr(el, 'aria-label', `Open ${agentName(agent)}, ${label}`);
    setAttr(el, 'data-status', agent.status);
  }
}
