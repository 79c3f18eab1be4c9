// The window's composition root: hands the components every gesture they can start (one table),
// then follows the fleet and the keyboard, and boots. Where things live: views.js draws, events.js
// turns fleet changes into redraws, gestures/ turns clicks into backend calls, boot.js starts up.
import * as backend from './backend.js';
import * as layout from './layout.js';
import { invalidate } from './render.js';
import { mountViews } from './views.js';
import { followChanges } from './events.js';
import { listenKeyboard } from './keyboard.js';
import { boot } from './boot.js';
import { followPresence } from './presence.js';
import * as tabs from './gestures/tabs.js';
import * as archive from './gestures/archive.js';
import * as archived from './gestures/archived.js';
import * as agents from './gestures/agents.js';
import * as changes from './gestures/changes.js';
import * as workspaces from './gestures/workspaces.js';
import * as hosts from './gestures/hosts.js';
import { ensureDetail } from './details.js';

mountViews({
  // Tabs and workspaces.
  open: tabs.openAgent,
  activate: tabs.activateTab,
  home: tabs.showHome,
  close: tabs.closeTab,
  select: tabs.selectWorkspace,
  renameWorkspace: workspaces.renameWorkspace,
  removeWorkspace: workspaces.removeWorkspace,
  toggleProject: (id) => {
    layout.toggleIn('collapsedProjects', id);
    invalidate('sidebar');
  },
  // Agents, the new-agent form and the app menu.
  newAgent: agents.showForm,
  createAgent: agents.createAgent,
  closeForm: agents.closeForm,
  pickFolder: agents.pickFolder,
  addWorkspace: agents.addWorkspace,
  // Hosts (SPEC 17).
  addHost: hosts.addHost,
  removeHost: hosts.removeHost,
  installHost: hosts.installHost,
  menu: agents.showMenu,
  send: backend.sendPrompt,
  interrupt: backend.cancelAgent,
  answerPermission: backend.answerPermission,
  // What the pane shows beyond an agent's card (its model, last error).
  detail: ensureDetail,
  // The subagents track.
  detach: agents.detach,
  archiveChild: archive.archiveChild,
  archiveFinished: archive.archiveFinished,
  toggleTrack: (id) => {
    layout.toggleIn('collapsedTracks', id);
    invalidate('pane');
  },
  isTrackCollapsed: (id) => layout.layout.collapsedTracks.includes(id),
  // The Changes view.
  changes,
  // The archived list.
  toggleArchived: archived.toggleArchived,
  restore: archived.restore,
  restoreMember: (id) => archived.restore(id, { member: true }),
  openArchived: archived.openArchived,
  closeArchived: archived.closeArchived,
  restoreArchived: archived.restoreArchived,
  moreArchived: archived.loadMoreArchived,
});
followChanges();
followPresence();
listenKeyboard();
boot();
