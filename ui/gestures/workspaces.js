// Workspace gestures: renaming one (workspaces that share a directory are told apart by their
// names, SPEC 1) and removing one, which archives its agents after a confirm that counts them.
import * as backend from '../backend.js';
import { plural } from '../dom.js';
import { fleet, addError, descendants, inWorkspace, workspaceName } from '../store.js';
import { isActive } from '../status.js';
import { ui } from '../window-state.js';

export async function renameWorkspace(wsId, name) {
  try {
    await backend.renameWorkspace(wsId, name);
  } catch (error) {
    addError(`Could not rename “${workspaceName(fleet.workspaces.get(wsId))}”`, error);
  }
}

/** The agents removing `wsId` archives: its own, with their subagents wherever they work. */
export function workspaceReach(wsId) {
  const ids = new Map();
  for (const a of inWorkspace(wsId)) {
    ids.set(a.id, a);
    for (const d of descendants(a.id)) ids.set(d.id, d);
  }
  const all = [...ids.values()];
  return { total: all.length, running: all.filter(isActive).length };
}

/** Removes a workspace: one confirm naming how many agents go (and how many of them run). */
export async function removeWorkspace(wsId) {
  const ws = fleet.workspaces.get(wsId);
  const key = `workspace:${wsId}`;
  if (!ws || ui.closing.has(key)) return;
  const name = workspaceName(ws);
  const { total, running } = workspaceReach(wsId);
  let message = total
    ? `Its ${plural(total, 'agent')} will be archived${running ? ` (${running} still running: archiving stops ${running === 1 ? 'it' : 'them'})` : ''}.`
    : 'It has no agents.';
  if (ws.kind === 'worktree')
    message += ' Its worktree folder is removed; the branch is kept, with anything left in it committed.';
  if (total) message += '\n\nYou can restore the agents from the archived list.';
  // Held from the first click: a second click while the confirm is up must not ask again.
  ui.closing.add(key);
  try {
    const ok = await backend.confirm(
      'Remove workspace?',
      `Remove “${name}” (${ws.cwd})? ${message}`,
      'Remove',
    );
    if (!ok) return;
    await backend.archiveWorkspace(wsId, true);
  } catch (error) {
    addError(`Could not remove “${name}”`, error);
  } finally {
    ui.closing.delete(key);
  }
}
