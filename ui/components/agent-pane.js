// The agent pane: header (title, provider, model, status, cwd, workspace, usage, parent link), the
// timeline, the permission prompt when the provider asks, the subagents track directly above the
// composer, and the composer. One pane is reused for whichever agent tab is active.
import { h, setAttr, setText } from '../dom.js';
import { detailOf, fleet, providerInfo, providerLabel, workspaceName } from '../store.js';
import {
  agentBucket,
  agentLabel,
  agentLook,
  agentName,
  glyph,
  reachOf,
  setPower,
  setReach,
  updateGlyph,
} from '../status.js';
import { TimelineView, toolSummary } from './timeline.js';
import { TrackView } from './track.js';
import { hosts } from '../hosts.js';
import { Composer } from './composer.js';
import { FindBar } from './find-bar.js';
import { ChangesView } from './changes-view.js';
import { agentUsage } from '../usage.js';
import { BudgetControl, budgetHeldText, raiseButton } from './budget.js';

/**
 * The header's workspace words: its name, then its branch unless the name is the branch (a
 * worktree's workspace is named after it), so nothing shows twice.
 */
export function workspaceLine(ws) {
  if (!ws) return '';
  const name = workspaceName(ws);
  return `workspace ${name}${ws.branch && ws.branch !== name ? ` · ${ws.branch}` : ''}`;
}

export class AgentPane {
  /**
   * actions: {open(id, opts), send, interrupt, answerPermission(id, requestId, allow), detail(id),
   * detach, archiveChild, archiveFinished, toggleTrack, isTrackCollapsed(id), changes: see ChangesView}
   */
  constructor(actions, invalidateTimeline) {
    this.actions = actions;
    this.agentId = null;
    this.glyph = glyph('done');
    this.title = h('h1', { class: 'agent-title', dataset: { testid: 'agent-title' } });
    this.provider = h('span', { class: 'meta', dataset: { testid: 'agent-provider' } });
    // The host it runs on (SPEC 17); hidden for this machine's agents.
    this.host = h('span', { class: 'host-tag', dataset: { testid: 'agent-host' }, hidden: true });
    this.power = h('span', { class: 'power-tag', dataset: { testid: 'agent-power' } });
    this.reach = h('span', { class: 'power-tag reach-tag', dataset: { testid: 'agent-reach' } });
    this.statusWord = h('span', { class: 'status-word', dataset: { testid: 'agent-status' } });
    // How long the running turn has run, ticking (the last run's time is shown once it ends).
    this.elapsed = h('span', {
      class: 'meta elapsed',
      dataset: { testid: 'agent-elapsed' },
      title: 'How long this turn has been running',
      hidden: true,
    });
    this.runningSince = null;
    this.ticker = null;
    // Right-to-left outside, left-to-right inside: a path too long loses its start (the
    // ellipsis goes on the clipped side), never its last folder.
    this.cwdText = h('bdi', { dir: 'ltr' });
    this.cwd = h('span', { class: 'cwd mono', dataset: { testid: 'agent-cwd' } }, this.cwdText);
    this.workspace = h('span', { class: 'meta', dataset: { testid: 'agent-workspace' } });
    this.usage = h('span', { class: 'meta usage', dataset: { testid: 'agent-usage' } });
    this.budget = new BudgetControl();
    this.parent = h('button', {
      class: 'link parent-link',
      type: 'button',
      dataset: { testid: 'parent-link' },
      onclick: () => {
        const id = fleet.agents.get(this.agentId)?.parentAgentId;
        if (id) this.actions.open(id, { here: true });
      },
    });
    // Timeline or Changes (what the agent changed on disk) in the pane's body, chosen per agent:
    // another agent opens on its own choice (its timeline, unless Changes was chosen for it).
    this.showChanges = false;
    this.changesFor = new Set();
    this.changesToggle = h(
      'button',
      {
        class: 'small ghost changes-toggle',
        type: 'button',
        'aria-pressed': 'false',
        dataset: { testid: 'changes-toggle' },
        title: 'Show what changed on disk where this agent works (its own worktree, or the shared folder)',
        onclick: () => this.setChanges(!this.showChanges),
      },
      'Changes',
    );
    this.changes = new ChangesView(actions.changes);
    this.changes.el.hidden = true;
    this.header = h(
      'header',
      { class: 'agent-header' },
      h(
        'div',
        { class: 'line' },
        this.glyph,
        this.title,
        this.host,
        this.provider,
        this.power,
        this.reach,
        h('span', { class: 'status-pill' }, this.statusWord),
        this.elapsed,
        h('span', { class: 'spacer' }),
        this.changesToggle,
        this.parent,
      ),
      h('div', { class: 'line sub' }, this.cwd, this.workspace, this.usage, this.budget.el),
    );
    this.lastError = h('div', { class: 'agent-error', role: 'status', dataset: { testid: 'agent-error' } });
    this.timeline = new TimelineView(
      {
        open: (id) => this.actions.open(id, { here: true }),
        canOpen: (id) => fleet.agents.has(id),
        commands: () => providerInfo(fleet.agents.get(this.agentId)?.provider)?.kind === 'shell',
      },
      invalidateTimeline,
    );
    this.find = new FindBar(() => this.agentId, this.timeline);
    this.permission = h('div', { class: 'permission', role: 'alert', dataset: { testid: 'permission' } });
    this.track = new TrackView({
      open: (id) => this.actions.open(id, { here: true }),
      detach: (id) => this.actions.detach(id),
      archive: (id) => this.actions.archiveChild(id),
      archiveFinished: (id) => this.actions.archiveFinished(id),
      toggle: (id) => this.actions.toggleTrack(id),
    });
    this.composer = new Composer({ send: actions.send, interrupt: actions.interrupt });
    this.el = h(
      'section',
      { class: 'agent-pane', dataset: { testid: 'agent-pane' } },
      this.header,
      this.lastError,
      this.find.el,
      this.timeline.wrap,
      this.changes.el,
      this.permission,
      this.track.el,
      this.composer.el,
    );
  }

  /** Shows the Changes view (true) or the timeline (false). */
  setChanges(on) {
    this.showChanges = on;
    if (this.agentId) {
      if (on) this.changesFor.add(this.agentId);
      else this.changesFor.delete(this.agentId);
    }
    this.changesToggle.setAttribute('aria-pressed', String(on));
    this.changesToggle.classList.toggle('active', on);
    this.timeline.wrap.hidden = on;
    this.changes.el.hidden = !on;
    if (on && this.agentId) this.changes.show(this.agentId);
  }

  /**
   * Renders `agent` (the active tab's card) with the timeline model `model`; what its card leaves
   * out (model, last error) comes from its whole snapshot once the window has it.
   */
  render(agent, model) {
    const switched = this.agentId !== agent.id;
    if (switched) this.find.close();
    this.agentId = agent.id;
    this.actions.detail(agent.id);
    const detail = detailOf(agent.id);
    // The Changes view follows the agent: a new agent loads, a turn boundary reloads.
    const moment = `${agent.status}/${agent.turnCount ?? 0}`;
    if (switched && this.changesFor.has(agent.id) !== this.showChanges) this.setChanges(!this.showChanges);
    else if (this.showChanges) {
      if (switched) this.changes.show(agent.id);
      else if (moment !== this.moment) this.changes.refreshSoon();
    }
    this.moment = moment;
    const bucket = agentBucket(agent);
    const label = agentLabel(agent);
    const name = agentName(agent);
    setAttr(this.el, 'data-agent-id', agent.id);
    setAttr(this.el, 'data-status', agent.status);
    setAttr(this.el, 'data-bucket', bucket);
    setAttr(this.el, 'aria-label', `Agent ${name}`);
    updateGlyph(this.glyph, agentLook(agent), label);
    setText(this.title, name);
    setAttr(this.title, 'title', name);
    const model_ = detail?.config?.model;
    // While its host is not connected the pane shows what was last known, and says so.
    const away = agent.host && hosts.get(agent.host)?.state !== 'connected';
    setText(this.host, agent.host ? `on ${agent.host}${away ? ' · not connected' : ''}` : '');
    this.host.hidden = !agent.host;
    this.host.classList.toggle('host-away', Boolean(away));
    setAttr(
      this.host,
      'title',
      !agent.host
        ? null
        : away
          ? `${agent.host} is not connected: this is its last known state; the app reconnects by itself`
          : `Runs on the host ${agent.host}, as your user there`,
    );
    setText(this.provider, `${providerLabel(agent.provider)}${model_ ? ` · ${model_}` : ''}`);
    setPower(this.power, agent.power);
    setReach(this.reach, reachOf(agent));
    setText(this.statusWord, label);
    this.statusWord.className = `status-word s-${agentLook(agent)}`;
    setText(this.cwdText, agent.cwd);
    setAttr(this.cwd, 'title', agent.cwd);
    const ws = fleet.workspaces.get(agent.workspaceId);
    const wsText = workspaceLine(ws);
    setText(this.workspace, wsText);
    setAttr(this.workspace, 'title', wsText || null);
    const running = agent.status === 'running';
    const usage = agentUsage(agent);
    // While a turn runs, the previous run's "6ms · exit 0" would read as this one's.
    const stale = running && !agent.usage && !agent.treeUsage;
    setText(this.usage, usage.text);
    setAttr(this.usage, 'title', usage.title || null);
    this.usage.hidden = !usage.text || stale;
    this.budget.render(agent);
    this.setRunningSince(running && Number.isFinite(agent.lastActivityAt) ? agent.lastActivityAt : null);
    const parent = agent.parentAgentId ? fleet.agents.get(agent.parentAgentId) : null;
    this.parent.hidden = !parent;
    if (parent) {
      setText(this.parent, `↑ ${agentName(parent)}`);
      setAttr(this.parent, 'aria-label', `Open the parent agent ${agentName(parent)}`);
      setAttr(this.parent, 'title', 'Parent agent');
    }
    // The banner explains an error the timeline does not show (an interrupted run, a full
    // disk); a failed turn's error item (and the output above it) already says it once. An
    // agent keeps its last turn's failure when it is closed (restored from the archive closed,
    // SPEC 5, or by a quit) and when it resumes, until its next prompt clears it (SPEC 2):
    // still flagged here, though its status is no longer `error`.
    // A held turn the user denied failed nothing: the timeline shows their answer.
    const last = agent.look === 'denied' || detail?.lastError === DENIED ? '' : (detail?.lastError ?? '');
    const error =
      agent.status === 'error'
        ? last && !errorShown(model, last)
          ? last
          : ''
        : last && agent.status !== 'running'
          ? `Its last turn failed: ${last}`
          : '';
    setText(this.lastError, error);
    this.lastError.hidden = !error;

    this.renderPermission(agent);
    this.track.render(agent.id, this.actions.isTrackCollapsed(agent.id));
    this.composer.render(agent);
    if (switched || this.timeline.model !== model) this.timeline.attach(model);
    this.timeline.setAwaiting(agent.pendingPermission?.callId);
    this.timeline.render();
  }

  /** Starts (a turn start in ms), moves or stops (null) the elapsed-time clock. */
  setRunningSince(since) {
    if (since === this.runningSince) return;
    this.runningSince = since;
    clearInterval(this.ticker);
    this.ticker = null;
    this.elapsed.hidden = since === null;
    if (since === null) return;
    this.tick();
    this.ticker = setInterval(() => this.tick(), 1000);
  }

  tick() {
    if (this.runningSince === null) return;
    setText(this.elapsed, elapsedText(Date.now() - this.runningSince));
  }

  renderTimeline() {
    this.timeline.render();
  }

  /** The pane left the screen (the home tab, the form): its timeline holds on to nothing. */
  hidden() {
    this.timeline.release();
    this.setRunningSince(null);
  }

  renderPermission(agent) {
    const p = agent.pendingPermission;
    this.permission.hidden = !p;
    if (!p) {
      this.permission.replaceChildren();
      this.permission._request = null;
      return;
    }
    if (this.permission._request === `${agent.id}/${p.requestId}`) return;
    this.permission._request = `${agent.id}/${p.requestId}`;
    const answer = (allow) => async (event) => {
      const buttons = this.permission.querySelectorAll('button');
      for (const b of buttons) b.disabled = true;
      try {
        await this.actions.answerPermission(agent.id, p.requestId, allow);
      } catch (error) {
        for (const b of buttons) b.disabled = false;
        event.target.closest('.permission')?.querySelector('.perm-error')?.replaceChildren(error.message);
      }
    };
    this.permission.replaceChildren(
      glyph('needs_input'),
      p.kind === 'budget'
        ? budgetHeldText(agent, p)
        : isHeld(p)
          ? heldText(agent, p)
          : h(
              'div',
              { class: 'perm-text' },
              h('div', {}, h('b', {}, agentName(agent)), ' asks to use ', h('code', {}, p.toolName)),
              p.description ? h('div', { class: 'muted' }, p.description) : null,
              h('code', { class: 'perm-input mono' }, toolSummary(p.input)),
              h('div', { class: 'perm-error error' }),
            ),
      h(
        'div',
        { class: 'perm-actions' },
        h(
          'button',
          {
            class: 'primary',
            type: 'button',
            dataset: { testid: 'permission-allow' },
            onclick: answer(true),
          },
          'Allow',
        ),
        p.kind === 'budget' ? raiseButton(p) : null,
        h(
          'button',
          { type: 'button', dataset: { testid: 'permission-deny' }, onclick: answer(false) },
          'Deny',
        ),
      ),
    );
  }

  /** Ctrl+F: the find bar, on the timeline. */
  openFind() {
    if (this.showChanges) this.setChanges(false);
    this.find.show();
  }

  focusComposer() {
    this.composer.focus();
  }
}

/** "4s", "1m 05s", "1h 02m": how long a turn has run. */
export function elapsedText(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const pad = (n) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h ${pad(Math.floor(s / 60) % 60)}m`;
}

/** Whether the latest turn's items end in the error item `message` starts with. */
function errorShown(model, message) {
  const items = model?.items ?? [];
  for (let i = items.length - 1; i >= 0 && i >= items.length - 20; i--) {
    const it = items[i];
    if (it.kind === 'error') return message === it.text || message.startsWith(`${it.text}: `);
    if (it.kind === 'user') return false;
  }
  return false;
}

/** A turn held by the app (SPEC 14), not a provider's question. */
/** The error a denied held turn ends with (paseo-core model/status.rs `DENIED`). */
const DENIED = 'denied by the user';

function isHeld(p) {
  return p.kind === 'heldStart';
}

/** Why the app held the turn (SPEC 14): each way it has more power than the agent that asked. */
function heldWhy(reasons) {
  const list = Array.isArray(reasons) && reasons.length ? reasons : [{ kind: 'mode' }];
  return list
    .map((r) => {
      if (r.kind === 'reach')
        return `It would work in ${r.cwd}, outside ${r.callerCwd}, where the agent that asked may write.`;
      if (r.kind === 'unconfined')
        return 'It would run unconfined (outside the sandbox), while the agent that asked is contained.';
      return 'It acts without asking, while the agent that asked asks first.';
    })
    .join(' ');
}

/** "‹lead› wants to start a ‹shell› agent in ‹cwd›", provider and mode, why, the whole prompt. */
function heldText(agent, p) {
  const input = p.input || {};
  const caller = fleet.agents.get(input.caller);
  return h(
    'div',
    { class: 'perm-text', dataset: { testid: 'permission-held' } },
    h(
      'div',
      {},
      h('b', {}, caller ? agentName(caller) : 'An agent'),
      ' wants to start a ',
      h('b', {}, providerLabel(input.provider)),
      ' agent in ',
      h('code', {}, input.cwd || agent.cwd),
    ),
    h(
      'div',
      { class: 'muted' },
      `${providerLabel(input.provider)} · mode ${input.mode || 'default'} · ${heldWhy(input.reasons)} ` +
        'Nothing runs until you allow it.',
    ),
    h('pre', { class: 'perm-prompt mono', dataset: { testid: 'permission-prompt' } }, input.prompt ?? ''),
    h('div', { class: 'perm-error error' }),
  );
}
