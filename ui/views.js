// The window's areas and what draws them: builds the components once, registers each area's
// redraw with render.js (sidebar, archived list, tabs, pane, timeline, notices, status bar), and
// decides what the pane region shows. Gestures arrive as `actions`; nothing here calls the backend.
import { h } from './dom.js';
import { fleet } from './store.js';
import * as layout from './layout.js';
import * as timelines from './timeline-model.js';
import { register, invalidate, flush } from './render.js';
import { ui } from './window-state.js';
import { hostList } from './hosts.js';
import { Sidebar } from './components/sidebar.js';
import { TabStrip } from './components/tab-strip.js';
import { AgentPane } from './components/agent-pane.js';
import { NewAgentForm } from './components/new-agent-form.js';
import { WorkspaceHome } from './components/workspace-home.js';
import { ArchivedView } from './components/archived-view.js';
import { renderWelcome } from './components/welcome.js';
import { renderNotices } from './components/notices.js';
import { renderStatus } from './components/status-bar.js';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

/** Every area; a fresh snapshot redraws them all. */
export const ALL = ['sidebar', 'archived', 'tabs', 'pane', 'notices', 'status'];

const region = $('pane-region');
let sidebar;
let tabStrip;
let pane;
let form;
let archivedView;

function currentView() {
  if (!fleet.loaded) return 'loading';
  if (ui.formOpen) return 'form';
  if (ui.readOnly) return 'archived';
  const id = layout.activeAgentId();
  if (id && fleet.agents.has(id)) return 'agent';
  if (layout.layout.selected && fleet.workspaces.has(layout.layout.selected)) return 'home';
  if (fleet.workspaces.size === 0 && fleet.agents.size === 0) return 'welcome';
  return 'home';
}

/** Builds the components with the gestures they call and registers every area's redraw. */
export function mountViews(actions) {
  sidebar = new Sidebar($('sidebar'), actions);
  tabStrip = new TabStrip($('tab-strip'), actions);
  pane = new AgentPane(actions, () => invalidate('timeline'));
  form = new NewAgentForm({
    create: actions.createAgent,
    cancel: actions.closeForm,
    pickFolder: actions.pickFolder,
  });
  const home = new WorkspaceHome(actions);
  archivedView = new ArchivedView(actions, () => invalidate('timeline'));

  register('sidebar', () => {
    sidebar.render({
      selected: layout.layout.selected,
      collapsedProjects: new Set(layout.layout.collapsedProjects),
      hosts: hostList(),
    });
  });
  register('archived', () => {
    ui.archived.open = layout.layout.archivedOpen;
    // The count is every archived agent the list can show: this machine's and each connected
    // host's (SPEC 17); its title says how many are where.
    const connected = hostList().filter((e) => e.state === 'connected');
    const here = fleet.counts.archived ?? 0;
    const there = connected.map((e) => [e.name, e.counts?.archived ?? 0]);
    ui.archived.count = there.reduce((n, [, c]) => n + c, here);
    const away = hostList().filter((e) => e.state !== 'connected');
    ui.archived.countTitle = hostList().length
      ? [
          `${ui.archived.count} archived: ${here} on this computer`,
          ...there.map(([n, c]) => `${c} on ${n}`),
          ...away.map((e) => `${e.name} not connected`),
        ].join(', ')
      : null;
    sidebar.renderArchived(
      ui.archived,
      hostList().map((e) => ({ name: e.name, state: e.state })),
    );
  });
  register('tabs', () => {
    const g = layout.currentGroup();
    tabStrip.render({
      workspaceId: layout.layout.selected,
      tabs: g.tabs,
      active: g.active,
      formOpen: ui.formOpen,
      readOnly: !!ui.readOnly,
    });
  });
  register('pane', () => {
    const view = currentView();
    if (view !== ui.view) {
      if (ui.view === 'agent') pane.hidden();
      if (ui.view === 'archived') archivedView.hidden();
      ui.view = view;
      region.dataset.view = view;
      if (view === 'agent') region.replaceChildren(pane.el);
      else if (view === 'form') region.replaceChildren(form.el);
      else if (view === 'archived') region.replaceChildren(archivedView.el);
      else if (view === 'home') {
        region.replaceChildren(home.el);
        home.cameIntoView();
      } else if (view === 'welcome') renderWelcome(region, ui.info, actions);
      else region.replaceChildren(h('div', { class: 'loading muted' }, 'Loading…'));
    }
    if (view === 'agent') {
      const id = layout.activeAgentId();
      pane.render(fleet.agents.get(id), timelines.modelFor(id));
    } else if (view === 'archived') {
      archivedView.render(
        ui.readOnly,
        timelines.modelFor(ui.readOnly.id),
        ui.archived.busy.has(ui.readOnly.id),
      );
    } else if (view === 'home') {
      home.render(layout.layout.selected ?? fleet.workspaces.keys().next().value);
    }
  });
  register('timeline', () => {
    if (ui.view === 'agent') pane.renderTimeline();
    else if (ui.view === 'archived') archivedView.renderTimeline();
  });
  register('notices', () => renderNotices($('notices')));
  register('status', () => {
    if (ui.backend.kind === 'ready')
      renderStatus($('status-bar'), {
        kind: 'ready',
        info: ui.info,
        counts: fleet.counts,
        mcpUrl: fleet.mcpUrl,
        containment: fleet.containment,
        said: fleet.said,
        open: actions.open,
        agents: () => [...fleet.agents.values()],
        hosts: hostList(),
      });
    else renderStatus($('status-bar'), ui.backend);
  });
}

export function showVersion(version) {
  sidebar.setVersion(version);
}

/** Scrolls the agent's tab into view. */
export function revealTab(id) {
  tabStrip.reveal(id);
}

/** Focuses the agent's tab, or the home tab for null. */
export function focusTab(id) {
  const el = id ? document.querySelector(`[data-testid="tab"][data-agent-id="${id}"]`) : $('tab-home');
  el?.focus();
}

export function focusComposer() {
  pane.focusComposer();
}

/** Opens the find bar of the agent pane (Ctrl+F). */
export function openFind() {
  if (ui.view === 'agent') pane.openFind();
}

/** Builds the new-agent form afresh with `workspaceId` preselected (shown once `ui.formOpen`). */
export function resetForm(workspaceId) {
  form.open(workspaceId);
}

export function focusForm() {
  form.focus();
}

/** Replaces the pane region with what went wrong when the backend did not answer at start-up. */
export function showBackendError(message) {
  region.replaceChildren(
    h(
      'div',
      { class: 'welcome' },
      h('h1', {}, 'The backend did not answer'),
      h('p', { class: 'error', dataset: { testid: 'backend-error' } }, message),
    ),
  );
  ui.view = 'error';
  invalidate('status');
  flush();
}
