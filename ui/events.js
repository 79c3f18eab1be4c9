// From fleet changes to redraws: each change the store reports (an event applied, a snapshot
// loaded) marks the areas it affects dirty and does what follows from it — a finished agent in
// view is seen, an archived agent's tabs close, a workspace never seen before asks for a resync.
import { fleet, onChange, detailStale } from './store.js';
import { refreshDetail } from './details.js';
import * as layout from './layout.js';
import * as timelines from './timeline-model.js';
import { invalidate } from './render.js';
import { ui } from './window-state.js';
import { ALL } from './views.js';
import { HERE, syncSoon } from './sync.js';
import { seen } from './gestures/tabs.js';
import { reloadArchivedSoon } from './archived-list.js';

/** Follows the store, and the window's focus (an agent that finished in the background is seen then). */
export function followChanges() {
  onChange(redrawFor);
  window.addEventListener('focus', () => {
    const id = layout.activeAgentId();
    if (id && ui.view === 'agent') seen(fleet.agents.get(id));
  });
}

function redrawFor(change) {
  const active = layout.activeAgentId();
  switch (change.kind) {
    case 'snapshot':
      invalidate(...ALL);
      // A host's fleet (re)loaded, connected again: its section of the archived list is the
      // host's as it is now.
      if (change.host) reloadArchivedSoon();
      return;
    case 'cards':
      invalidate('tabs', 'pane', 'status');
      return;
    case 'agent': {
      const { agent, old } = change;
      if (detailStale(agent, old)) refreshDetail(agent.id);
      if (layout.groupOf(agent.id)) invalidate('tabs');
      if (ui.view === 'home') invalidate('pane');
      if (
        ui.view === 'agent' &&
        (agent.id === active ||
          agent.parentAgentId === active ||
          old?.parentAgentId === active ||
          agent.id === fleet.agents.get(active)?.parentAgentId)
      ) {
        invalidate('pane');
      }
      if (
        agent.id === active &&
        agent.requiresAttention &&
        ui.view === 'agent' &&
        document.visibilityState === 'visible' &&
        document.hasFocus()
      ) {
        seen(agent);
      }
      return;
    }
    case 'detail':
      if (ui.view === 'agent' && change.agentId === active) invalidate('pane');
      return;
    case 'archived': {
      const id = change.agent.id;
      timelines.forget(id);
      if (layout.closeTab(id)) invalidate('tabs', 'pane');
      if (ui.view === 'home' || ui.view === 'agent') invalidate('pane');
      reloadArchivedSoon();
      return;
    }
    case 'timeline':
      timelines.ingest(change.agentId, change.items);
      return;
    case 'workspace':
      // A first workspace (or the selected one archived): select one.
      if ((!layout.layout.selected || !fleet.workspaces.has(layout.layout.selected)) && layout.prune())
        layout.save();
      invalidate('sidebar');
      if (ui.view !== 'welcome') invalidate('pane', 'tabs');
      else invalidate('pane');
      // A project never seen: this machine's snapshot, or the host's, brings it.
      if (change.unknownProject) syncSoon(change.workspace.host ?? HERE);
      return;
    case 'track':
      if (change.parentAgentId === active) invalidate('pane');
      return;
    case 'counts':
      invalidate('status', 'archived');
      return;
    case 'notice':
      invalidate('notices');
      return;
    case 'said':
      invalidate('status');
      return;
    default:
  }
}
