// An archived agent opened from the archived list, read-only (SPEC 5: archive is a soft delete,
// the record and its timeline stay): its header marked "archived", its timeline paged from disk,
// and Restore. No composer, no track, no Changes, nothing that could start or change it: it has
// no runtime, and looking must not give it one.
import { h, setAttr, setText, ago, dateTimeText } from '../dom.js';
import { fleet, providerLabel } from '../store.js';
import { agentName, glyph } from '../status.js';
import { TimelineView } from './timeline.js';

export class ArchivedView {
  /** actions: {open(id), restoreArchived(id), closeArchived()} */
  constructor(actions, invalidateTimeline) {
    this.actions = actions;
    this.agentId = null;
    this.title = h('h1', { class: 'agent-title', dataset: { testid: 'agent-title' } });
    this.provider = h('span', { class: 'meta' });
    this.tag = h(
      'span',
      { class: 'archived-tag', dataset: { testid: 'archived-view-tag' } },
      'archived · read-only',
    );
    // As the agent pane's: a path too long loses its start, never its last folder.
    this.cwdText = h('bdi', { dir: 'ltr' });
    this.cwd = h('span', { class: 'cwd mono' }, this.cwdText);
    this.when = h('span', { class: 'meta' });
    this.restore = h(
      'button',
      {
        class: 'small primary',
        type: 'button',
        dataset: { testid: 'archived-view-restore' },
        onclick: () => this.agentId && this.actions.restoreArchived(this.agentId),
      },
      'Restore',
    );
    this.close = h(
      'button',
      {
        class: 'small ghost',
        type: 'button',
        dataset: { testid: 'archived-view-close' },
        'aria-label': 'Close the archived agent',
        onclick: () => this.actions.closeArchived(),
      },
      'Close',
    );
    this.note = h('span', { class: 'archived-note' });
    this.error = h('div', {
      class: 'agent-error',
      role: 'status',
      dataset: { testid: 'archived-view-error' },
    });
    this.timeline = new TimelineView(
      {
        // Links in notices lead only to live agents; an archived one has no tab to open.
        open: (id) => this.actions.open(id),
        canOpen: (id) => fleet.agents.has(id),
        commands: () => false,
      },
      invalidateTimeline,
    );
    this.el = h(
      'section',
      { class: 'agent-pane archived-view', dataset: { testid: 'archived-view' } },
      h(
        'header',
        { class: 'agent-header' },
        h('div', { class: 'line' }, glyph('done', 'archived'), this.title, this.provider, this.tag),
        h('div', { class: 'line sub' }, this.cwd, this.when),
      ),
      h(
        'div',
        { class: 'archived-banner', role: 'note' },
        this.note,
        h('span', { class: 'spacer' }),
        this.restore,
        this.close,
      ),
      this.error,
      this.timeline.wrap,
    );
  }

  /** agent: the archived agent's snapshot (from the archived list); model: its timeline. */
  render(agent, model, busy) {
    const switched = this.agentId !== agent.id;
    this.agentId = agent.id;
    const name = agentName(agent);
    setAttr(this.el, 'data-agent-id', agent.id);
    setAttr(this.el, 'aria-label', `Archived agent ${name}, read-only`);
    setText(this.title, name);
    setAttr(this.title, 'title', name);
    setText(this.provider, providerLabel(agent.provider));
    // A host's (SPEC 17): its timeline and its restore are the host's.
    setText(this.tag, agent.host ? `archived · read-only · on ${agent.host}` : 'archived · read-only');
    setText(this.cwdText, agent.cwd);
    setAttr(this.cwd, 'title', agent.cwd);
    setText(this.when, `archived ${ago(agent.archivedAt)}`);
    setAttr(this.when, 'title', dateTimeText(agent.archivedAt));
    setText(this.note, 'Read-only: an archived agent does not run.');
    const under =
      agent.parentAgentId && !fleet.agents.has(agent.parentAgentId)
        ? ' Its parent is archived too: it would come back as a root agent.'
        : '';
    setAttr(this.restore, 'title', `Bring it back closed, with what was archived below it.${under}`);
    this.restore.disabled = busy;
    setAttr(this.restore, 'aria-label', `Restore ${name}`);
    const error = agent.lastError ?? '';
    setText(this.error, error ? `Its last turn failed: ${error}` : '');
    this.error.hidden = !error;
    if (switched || this.timeline.model !== model) this.timeline.attach(model);
    this.renderTimeline();
  }

  renderTimeline() {
    this.timeline.render();
    const m = this.timeline.model;
    if (m?.loaded && m.items.length === 0 && !m.error) this.timeline.setStatus('Nothing in its timeline.');
  }

  hidden() {
    this.timeline.release();
  }
}
