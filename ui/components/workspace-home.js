// A workspace's home tab: its root agents (newest first) with their state and subagent counts,
// so agents without a tab in this window — started by other windows or by agents — are one click
// away.
import { h, reconcile, setAttr, setText, ago } from '../dom.js';
import { fleet, rootsIn, descendants, providerLabel, workspaceName } from '../store.js';
import { agentBucket, agentLabel, agentName, changesText, glyph, updateGlyph, workspaceLabel } from '../status.js';

export class WorkspaceHome {
  /** actions: {open(id), newAgent(wsId)} */
  constructor(actions) {
    this.actions = actions;
    this.wsId = null;
    this.title = h('h1', {});
    this.cwd = h('div', { class: 'cwd mono muted' });
    this.state = h('span', { class: 'status-word' });
    this.list = h('div', { class: 'ws-agents', role: 'list', 'aria-label': 'Agents in this workspace' });
    this.empty = h('p', { class: 'muted' }, 'No agents here yet.');
    this.el = h('div', { class: 'ws-home', dataset: { testid: 'workspace-home' } },
      h('header', { class: 'ws-home-head' },
        h('div', {}, h('div', { class: 'line' }, this.title, this.state), this.cwd),
        h('button', { class: 'primary', type: 'button', dataset: { testid: 'workspace-new-agent' }, onclick: () => this.actions.newAgent(this.wsId) }, 'New agent here')),
      this.list, this.empty);
  }

  render(wsId) {
    this.wsId = wsId;
    const ws = fleet.workspaces.get(wsId);
    setText(this.title, ws ? workspaceName(ws) : 'Workspace');
    setText(this.cwd, ws ? ws.cwd : '');
    setText(this.state, workspaceLabel(ws?.bucket ?? null));
    this.state.className = `status-word s-${ws?.bucket ?? 'none'}`;
    const roots = rootsIn(wsId);
    this.empty.hidden = roots.length > 0;
    reconcile(this.list, roots, (a) => a.id, (a) => this.create(a.id), (el, a) => this.update(el, a));
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
    updateGlyph(g, bucket, label);
    setText(name, agentName(agent));
    setText(word, label);
    word.className = `wa-word s-${bucket}`;
    const kids = descendants(agent.id).length;
    setText(meta, [providerLabel(agent.provider), kids ? `${kids} subagent${kids === 1 ? '' : 's'}` : null, ago(agent.lastActivityAt || agent.createdAt)].filter(Boolean).join(' · '));
    setAttr(el, 'aria-label', `Open ${agentName(agent)}, ${label}`);
    setAttr(el, 'data-status', agent.status);
  }
}
