// Archiving from the UI: closing a root agent's tab, a track row's ×, and "Archive finished".
// All three take one confirm-then-archive path; they differ only in what they archive, how the
// dialog words it, and which backend call does it. Restoring lives in archived.js.
import * as backend from '../backend.js';
import { plural } from '../dom.js';
import { fleet, addError, descendants, childrenOf, isFinished } from '../store.js';
import { agentName, isActive } from '../status.js';
import { ui } from '../window-state.js';

/** What archiving `agent` takes with it, in the numbers the dialogs name. */
function reach(agent) {
  const kids = descendants(agent.id);
  return { name: agentName(agent), running: isActive(agent), subagents: kids.length, runningSubagents: kids.filter(isActive).length };
}

/**
 * The one path every archive gesture takes. `heads`: the agents archived (each with its
 * subagents); `dialog(reaches)`: the confirm to show, {title, message, restores: 'it' | 'them'},
 * or null when nothing needs asking; `call()`: the backend call; `failure`: the notice's words
 * when the call fails. `key` names the gesture while it runs, so a second click does nothing.
 */
async function confirmThenArchive({ key, heads, dialog, call, failure }) {
  if (heads.length === 0 || ui.closing.has(key)) return;
  const ask = dialog(heads.map(reach));
  if (ask) {
    // Default OK / Cancel buttons: GTK then puts Cancel first and focused, the safe default.
    const ok = await backend.confirm(ask.title, `${ask.message}\n\nYou can restore ${ask.restores} from the archived list.`);
    if (!ok) return;
  }
  ui.closing.add(key);
  try {
    await call();
  } catch (error) {
    addError(failure, error);
  } finally {
    ui.closing.delete(key);
  }
}

/** Closing a root agent's tab archives it with its subagents, asking only when that stops something. */
export function archiveRoot(agent) {
  return confirmThenArchive({
    key: agent.id,
    heads: [agent],
    dialog: ([a]) => {
      if (a.running) {
        const subs = a.subagents > 0 ? ` and its ${plural(a.subagents, 'subagent')}` : ' and its subagents';
        return { title: 'Archive running agent?', message: `“${a.name}” is still running. Archiving it will stop it${subs}.`, restores: 'it' };
      }
      if (a.runningSubagents === 0) return null;
      const n = a.runningSubagents;
      return {
        title: 'Archive agent with running subagents?',
        message: `${plural(n, 'subagent')} of “${a.name}” ${n === 1 ? 'is' : 'are'} still running. Archiving “${a.name}” will stop ${n === 1 ? 'it' : 'them'}.`,
        restores: 'it',
      };
    },
    call: () => backend.archiveAgent(agent.id),
    failure: `Could not archive “${agentName(agent)}”`,
  });
}

/** A track row's ×: always asks, naming the subtree and whatever in it still runs. */
export function archiveChild(id) {
  const agent = fleet.agents.get(id);
  return confirmThenArchive({
    key: id,
    heads: agent ? [agent] : [],
    dialog: ([a]) => {
      let message = `Archive “${a.name}”${a.subagents ? ` and its ${plural(a.subagents, 'subagent')}` : ''}?`;
      const n = a.runningSubagents;
      if (a.running) message += ' It is still running: archiving stops it.';
      else if (n) message += ` ${plural(n, 'of them is', 'of them are')} still running: archiving stops ${n === 1 ? 'it' : 'them'}.`;
      return { title: 'Archive subagent?', message, restores: 'it' };
    },
    call: () => backend.archiveAgent(id),
    failure: `Could not archive “${agentName(agent)}”`,
  });
}

/** The track's "Archive finished": every subagent of `parentId` that is not running, in one batch. */
export function archiveFinished(parentId) {
  const parent = fleet.agents.get(parentId);
  return confirmThenArchive({
    key: `finished:${parentId}`,
    heads: parent ? childrenOf(parentId).filter(isFinished) : [],
    dialog: (finished) => {
      const nested = finished.reduce((n, kid) => n + kid.subagents, 0);
      const n = finished.length;
      return {
        title: 'Archive finished subagents?',
        message: `Archive the ${plural(n, 'subagent')} of “${agentName(parent)}” that ${n === 1 ? 'is' : 'are'} not running${nested ? `, with their ${plural(nested, 'own subagent')}` : ''}?`,
        restores: 'them',
      };
    },
    call: () => backend.archiveFinished(parentId),
    failure: 'Could not archive the finished subagents',
  });
}
