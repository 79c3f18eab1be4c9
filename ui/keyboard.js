// The window's keyboard shortcuts (UI.md; the app menu lists them): new agent, new window, close
// tab, next / previous tab, tab by number, focus the composer, stop the turn. Enter and Esc in the
// composer are the composer's own.
import * as layout from './layout.js';
import { ui } from './window-state.js';
import { focusComposer } from './views.js';
import { activateTab, closeTab, cycleTab } from './gestures/tabs.js';
import { showForm, closeForm, newWindow, stopTurn } from './gestures/agents.js';
import { closeArchived } from './gestures/archived.js';

export function listenKeyboard() {
  document.addEventListener('keydown', onKey);
}

function onKey(e) {
  const ctrl = e.ctrlKey || e.metaKey;
  if (!ctrl) return;
  const key = e.code;
  if (key === 'KeyN' && e.shiftKey) { e.preventDefault(); newWindow(); }
  else if (key === 'KeyN') { e.preventDefault(); showForm(); }
  else if (key === 'KeyW') {
    e.preventDefault();
    if (ui.formOpen) { closeForm(); return; }
    // The read-only view covers the active tab: closing acts on what is shown, never on the
    // hidden tab (whose close could archive it).
    if (ui.readOnly) { closeArchived(); return; }
    const id = layout.activeAgentId();
    if (id) closeTab(id);
  } else if (key === 'Tab' || key === 'PageDown' || key === 'PageUp') {
    e.preventDefault();
    cycleTab(key === 'PageUp' || (key === 'Tab' && e.shiftKey) ? -1 : 1);
  } else if (key === 'KeyL') {
    e.preventDefault();
    if (ui.view === 'agent') focusComposer();
  } else if (key === 'Period') {
    e.preventDefault();
    if (!ui.readOnly) stopTurn(layout.activeAgentId());
  } else if (/^Digit[1-9]$/.test(key)) {
    const tabs = layout.currentGroup().tabs;
    const id = tabs[Number(key.slice(5)) - 1];
    if (id) { e.preventDefault(); activateTab(id); }
  }
}
