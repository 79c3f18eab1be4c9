// Every keyboard shortcut of the window, as the ☰ menu lists them (UI.md "Keyboard"). One list,
// so what the menu says and what keyboard.js, the composer and the find bar do stay together.
import { h } from '../dom.js';

export const SHORTCUTS = [
  ['Ctrl+N', 'New agent'],
  ['Ctrl+Shift+N', 'New window'],
  ['Ctrl+W', 'Close tab (a root agent is archived)'],
  ['Ctrl+Tab / Ctrl+PgDn', 'Next tab'],
  ['Ctrl+Shift+Tab / Ctrl+PgUp', 'Previous tab'],
  ['Ctrl+1 … Ctrl+8', 'Tab by its place (Ctrl+1 is ⌂, the workspace)'],
  ['Ctrl+9', 'Last tab'],
  ['Ctrl+L', 'Focus the composer'],
  ['Enter', 'Send (Shift+Enter: new line)'],
  ['Esc / Ctrl+.', 'Stop the running turn'],
  ['Ctrl+F', 'Find in the timeline (Enter: next, Shift+Enter: previous)'],
  ['Ctrl+Z', 'Undo the last archive or detach (while its toast shows)'],
];

/** The shortcuts as a definition list, for a menu. */
export function shortcutList() {
  return h(
    'dl',
    { class: 'shortcuts', dataset: { testid: 'shortcuts' } },
    SHORTCUTS.map(([keys, what]) => [h('dt', {}, h('kbd', {}, keys)), h('dd', {}, what)]),
  );
}
