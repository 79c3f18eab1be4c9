// The window's keyboard shortcuts (UI.md; the app menu lists them): new agent, new window, close
// tab, next / previous tab, tab by its place, focus the composer, stop the turn, find in the
// timeline, and the undo toast's Undo. Enter and Esc in the composer are the composer's own.
// components/shortcuts.js lists them for the menu.
import * as layout from './layout.js';
import { ui } from './window-state.js';
import { focusComposer, focusTab, openFind } from './views.js';
import { activateTab, closeTab, cycleTab, showHome } from './gestures/tabs.js';
import { showForm, closeForm, newWindow, stopTurn } from './gestures/agents.js';
import { undoLast } from './gestures/undo.js';
import { closeArchived } from './gestures/archived.js';

export function listenKeyboard() {
  document.addEventListener('keydown', onKey);
}

function onKey(e) {
  const ctrl = e.ctrlKey || e.metaKey;
  if (!ctrl) return;
  const key = e.code;
  if (key === 'KeyN' && e.shiftKey) {
    e.preventDefault();
    newWindow();
  } else if (key === 'KeyN') {
    e.preventDefault();
    showForm();
  } else if (key === 'KeyW') {
    e.preventDefault();
    if (ui.formOpen) {
      closeForm();
      return;
    }
    // The read-only view covers the active tab: closing acts on what is shown, never on the
    // hidden tab (whose close could archive it).
    if (ui.readOnly) {
      closeArchived();
      return;
    }
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
  } else if (key === 'KeyZ' && !e.shiftKey) {
    // The undo toast's Undo; in a text field Ctrl+Z stays the field's own.
    if (!e.target.closest?.('input, textarea, [contenteditable]') && undoLast()) e.preventDefault();
  } else if (/^Digit[1-9]$/.test(key)) {
    // The tabs as shown: Ctrl+1 is the workspace's ⌂ tab, Ctrl+2… the agent tabs in order, and
    // Ctrl+9 the last tab, as in browsers.
    if (!layout.layout.selected) return;
    const order = [null, ...layout.currentGroup().tabs];
    const n = Number(key.slice(5));
    const i = n === 9 ? order.length - 1 : n - 1;
    if (i >= order.length) return;
    e.preventDefault();
    const id = order[i];
    if (id) activateTab(id);
    else showHome();
    requestAnimationFrame(() => focusTab(id));
  } else if (key === 'KeyF' && !e.shiftKey) {
    if (ui.view !== 'agent') return;
    e.preventDefault();
    openFind();
  }
}
