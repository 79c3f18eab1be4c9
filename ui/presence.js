// Tells the backend what the user is looking at in this window — whether it has focus and which
// agent's tab it shows — so no desktop notification is raised for an agent already in view.
// Reported on focus changes and after every redraw, and only when it changed.
import * as backend from './backend.js';
import * as layout from './layout.js';
import { afterFlush } from './render.js';
import { ui } from './window-state.js';

let last = '';

export function reportPresence() {
  const focused = document.visibilityState === 'visible' && document.hasFocus();
  const agentId = ui.view === 'agent' ? layout.activeAgentId() : null;
  const key = `${focused}|${agentId}`;
  if (key === last) return;
  last = key;
  // A failed report is tried again at the next change.
  backend.windowPresence(focused, agentId).catch(() => {
    last = '';
  });
}

export function followPresence() {
  window.addEventListener('focus', reportPresence);
  window.addEventListener('blur', reportPresence);
  document.addEventListener('visibilitychange', reportPresence);
  afterFlush(reportPresence);
}
