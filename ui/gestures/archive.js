// Archiving from the UI: closing a root agent's tab, a track row's ×, and "Archive finished".
// Restoring lives in archived.js.
import * as backend from '../backend.js';
import { plural } from '../dom.js';
import { fleet, addError, descendants, childrenOf, isFinished } from '../store.js';
import { agentName, isActive } from '../status.js';
import { ui } from '../window-state.js';

function countWords(kids) {
  const running = kids.filter(isActive).length;
  return { n: kids.length, running };
}

/** Closing a root agent's tab archives it with its subagents, asking only when that stops something. */
export async function archiveRoot(agent) {
  const id = agent.id;
  if (ui.closing.has(id)) return;
  const kids = countWords(descendants(id));
  const name = agentName(agent);
  if (isActive(agent) || kids.running > 0) {
    const title = isActive(agent) ? 'Archive running agent?' : 'Archive agent with running subagents?';
    const subs = kids.n > 0 ? ` and its ${plural(kids.n, 'subagent')}` : ' and its subagents';
    const message = isActive(agent)
      ? `“${name}” is still running. Archiving it will stop it${subs}.`
      : `${plural(kids.running, 'subagent')} of “${name}” ${kids.running === 1 ? 'is' : 'are'} still running. Archiving “${name}” will stop ${kids.running === 1 ? 'it' : 'them'}.`;
    // Default OK / Cancel buttons: GTK then puts Cancel first and focused, the safe default.
    const ok = await backend.confirm(title, `${message}\n\nYou can restore it from the archived list.`);
    if (!ok) return;
  }
  ui.closing.add(id);
  try {
    await backend.archiveAgent(id);
  } catch (error) {
    addError(`Could not archive “${name}”`, error);
  } finally {
    ui.closing.delete(id);
  }
}

export async function archiveChild(id) {
  const agent = fleet.agents.get(id);
  if (!agent || ui.closing.has(id)) return;
  const name = agentName(agent);
  const kids = countWords(descendants(id));
  let message = `Archive “${name}”${kids.n ? ` and its ${plural(kids.n, 'subagent')}` : ''}?`;
  if (isActive(agent)) message += ' It is still running: archiving stops it.';
  else if (kids.running) message += ` ${plural(kids.running, 'of them is', 'of them are')} still running: archiving stops ${kids.running === 1 ? 'it' : 'them'}.`;
  message += '\n\nYou can restore it from the archived list.';
  const ok = await backend.confirm('Archive subagent?', message);
  if (!ok) return;
  ui.closing.add(id);
  try {
    await backend.archiveAgent(id);
  } catch (error) {
    addError(`Could not archive “${name}”`, error);
  } finally {
    ui.closing.delete(id);
  }
}

export async function archiveFinished(parentId) {
  const parent = fleet.agents.get(parentId);
  const finished = childrenOf(parentId).filter(isFinished);
  if (!parent || finished.length === 0) return;
  const nested = finished.reduce((n, kid) => n + descendants(kid.id).length, 0);
  const message = `Archive the ${plural(finished.length, 'subagent')} of “${agentName(parent)}” that ${finished.length === 1 ? 'is' : 'are'} not running${nested ? `, with their ${plural(nested, 'own subagent')}` : ''}?\n\nYou can restore them from the archived list.`;
  const ok = await backend.confirm('Archive finished subagents?', message);
  if (!ok) return;
  try {
    await backend.archiveFinished(parentId);
  } catch (error) {
    addError('Could not archive the finished subagents', error);
  }
}
