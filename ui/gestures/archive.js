// Archiving from the UI: closing a root agent's tab, a track row's ×, and "Archive finished".
// All three take one confirm-then-archive path; they differ only in what they archive, how the
// dialog words it, and which backend call does it. Restoring lives in archived.js.
import * as backend from '../backend.js';
import { plural } from '../dom.js';
import { fleet, addError } from '../store.js';
import { agentName } from '../status.js';
import { ui } from '../window-state.js';
import * as undo from './undo.js';

/**
 * The one path every archive gesture takes. `plan()`: what the core says the gesture touches
 * (paseo-core model/archive_plan.rs: `heads`, each {id, title, provider, running, subagents,
 * runningSubagents}, and the children it leaves in `kept`), asked as the gesture starts;
 * `dialog(plan)`: the confirm to show, {title, message, restores: 'it' | 'them', action?} (the
 * button's verb, "Archive" unless given), or null when nothing needs asking; `call()`: the
 * backend call; `failure`: the notice's words when a call fails. `key` names the gesture while
 * it runs, so a second click does nothing. `said(ids)`: the undo toast's words once the
 * archive is durable.
 */
async function confirmThenArchive({ key, plan, dialog, call, failure, said }) {
  if (ui.closing.has(key)) return;
  // Held from the first click: a second click while the confirm is up must not ask again.
  ui.closing.add(key);
  try {
    const touched = named(await plan());
    if (touched.heads.length === 0) return;
    // Where this window shows them, before the archive closes those tabs: Undo reopens them there.
    const places = undo.tabPlaces(touched.heads.map((a) => a.id));
    const ask = dialog(touched);
    if (ask) {
      const ok = await backend.confirm(
        ask.title,
        `${ask.message}\n\nYou can restore ${ask.restores} from the archived list.`,
        ask.action ?? 'Archive',
      );
      if (!ok) return;
    }
    const ids = await call();
    undo.archived(ids, said(ids), places);
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
    plan: () => backend.archivePlan(agent.id),
    dialog: ({ heads: [a] }) => {
      if (a.running) {
        const subs = a.subagents > 0 ? ` and its ${plural(a.subagents, 'subagent')}` : ' and its subagents';
        return {
          title: 'Archive running agent?',
          message: `“${a.name}” is still running. Archiving it will stop it${subs}.`,
          restores: 'it',
          action: 'Archive and stop',
        };
      }
      if (a.runningSubagents === 0) return null;
      const n = a.runningSubagents;
      return {
        title: 'Archive agent with running subagents?',
        message: `${plural(n, 'subagent')} of “${a.name}” ${n === 1 ? 'is' : 'are'} still running. Archiving “${a.name}” will stop ${n === 1 ? 'it' : 'them'}.`,
        restores: 'it',
        action: 'Archive and stop',
      };
    },
    call: () => backend.archiveAgent(agent.id),
    failure: `Could not archive “${agentName(agent)}”`,
    said: (ids) => undo.archivedText(agent, ids),
  });
}

/** A track row's ×: always asks, naming the subtree and whatever in it still runs. */
export function archiveChild(id) {
  const agent = fleet.agents.get(id);
  return confirmThenArchive({
    key: id,
    plan: () => backend.archivePlan(id),
    dialog: ({ heads: [a] }) => {
      let message = `Archive “${a.name}”${a.subagents ? ` and its ${plural(a.subagents, 'subagent')}` : ''}?`;
      const n = a.runningSubagents;
      if (a.running) message += ' It is still running: archiving stops it.';
      else if (n)
        message += ` ${plural(n, 'of them is', 'of them are')} still running: archiving stops ${n === 1 ? 'it' : 'them'}.`;
      return {
        title: 'Archive subagent?',
        message,
        restores: 'it',
        action: a.running || n ? 'Archive and stop' : 'Archive',
      };
    },
    call: () => backend.archiveAgent(id),
    failure: `Could not archive “${agentName(agent)}”`,
    said: (ids) => undo.archivedText(agent, ids),
  });
}

/** Names for a dialog: the first few, then how many more (a track may hold hundreds). */
function names(list) {
  const shown = list.slice(0, 8).join(', ');
  return list.length > 8 ? `${shown} and ${list.length - 8} more` : shown;
}

/** The plan's agents with the names the dialogs give them. */
function named(plan) {
  const name = (a) => ({ ...a, name: agentName(a) });
  return { heads: plan.heads.map(name), kept: plan.kept.map(name) };
}

/**
 * What the track's "Archive finished" does, in the dialog's words: the subagents of `parentId`
 * the core counts as finished go (paseo-core engine/plan.rs, the rule "Archive finished"
 * archives by), with their own subagents; the others stay and the dialog says why, so it names
 * everything the gesture touches (UI.md). Returns {archive: [id], kept: [{id, name, why}], message}.
 */
export async function finishedPlan(parentId) {
  return finishedWords(parentId, named(await backend.finishedPlan(parentId)));
}

/** A head the dialog must not call finished: its turn failed, or the user denied its start. */
const notFinished = (k) => k.word === 'failed' || k.word === 'denied';

function finishedWords(parentId, { heads, kept }) {
  const parent = fleet.agents.get(parentId);
  const nested = heads.reduce((n, kid) => n + kid.subagents, 0);
  // Each as its row says it (the core's word): a failed one is named as failed, never finished.
  const mixed = heads.some(notFinished);
  const what = mixed
    ? `${plural(heads.length, 'subagent')} that ${heads.length === 1 ? 'is' : 'are'} not running`
    : plural(heads.length, 'finished subagent');
  const list = heads.map((k) => (notFinished(k) ? `“${k.name}” (${k.word})` : `“${k.name}”`));
  let message = `Archive ${what} of “${agentName(parent)}”: ${names(list)}${nested ? `, with their ${plural(nested, 'own subagent')}` : ''}?`;
  if (kept.length)
    message += `\n\nLeft as ${kept.length === 1 ? 'it is' : 'they are'}: ${names(kept.map((k) => `“${k.name}” (${k.why})`))}.`;
  return {
    archive: heads.map((a) => a.id),
    kept: kept.map(({ id, name, why }) => ({ id, name, why })),
    message,
  };
}

/** The track's "Archive finished": the finished subagents of `parentId` (see finishedPlan), in one batch. */
export function archiveFinished(parentId) {
  return confirmThenArchive({
    key: `finished:${parentId}`,
    plan: () => backend.finishedPlan(parentId),
    dialog: (plan) => ({
      title: plan.heads.some(notFinished)
        ? 'Archive the subagents that are not running?'
        : 'Archive finished subagents?',
      message: finishedWords(parentId, plan).message,
      restores: 'them',
    }),
    call: () => backend.archiveFinished(parentId),
    failure: 'Could not archive the subagents',
    said: (ids) => `${plural(ids.length, 'subagent')} of “${agentName(fleet.agents.get(parentId))}” archived`,
  });
}
