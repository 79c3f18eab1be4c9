// The Changes view's gestures: read what an agent changed and one file's diff, and
// the user's actions on it, each after a native confirm naming what will happen. Git's own
// error comes back as the message; nothing is retried behind the user's back.
// Each confirm's button is its verb (Commit, Merge, Discard); Cancel is first and focused.
import * as backend from '../backend.js';
import { detailOf, fleet } from '../store.js';
import { agentName } from '../status.js';

export function load(agentId) {
  return backend.agentChanges(agentId);
}

export function diff(agentId, path, offset = 0) {
  return backend.agentDiff(agentId, path, offset, 500);
}

/**
 * The message Commit all proposes: the agent's title and the start of its last message (from
 * its whole snapshot, which the window has for the pane's agent).
 */
export function commitMessage(agentId) {
  const agent = detailOf(agentId) ?? fleet.agents.get(agentId);
  const title = agent ? agentName(agent) : 'agent';
  const last =
    (agent?.lastMessage ?? '')
      .trim()
      .split('\n')
      .find((l) => l.trim()) ?? '';
  return last ? `${title}\n\n${last.slice(0, 400)}` : title;
}

/**
 * The confirm's title names where the commit lands: the branch checked out where the agent
 * works, which for an agent without its own worktree is the folder's branch, shared.
 */
export function commitTitle(changes) {
  return changes?.branch ? `Commit to ${changes.branch}?` : 'Commit on a detached HEAD?';
}

/** Resolves to a result line for the view, or null when the user cancelled. */
export async function commitAll(agentId, message, changes) {
  const files = changes.totals.files;
  const where = changes.branch ? `branch ${changes.branch}` : 'a detached HEAD (no branch)';
  const shared =
    changes.workspaceKind === 'worktree'
      ? "this agent's own worktree"
      : `${changes.root}, shared by every agent working there`;
  const ok = await backend.confirm(
    commitTitle(changes),
    `Commit ${files} changed file${files === 1 ? '' : 's'} (untracked ones included) to ${where} in ${shared}, with the message:\n\n${message}`,
    'Commit',
  );
  if (!ok) return null;
  const commit = await backend.commitAgentChanges(agentId, message);
  return `Committed ${commit.slice(0, 10)}.`;
}

/**
 * The agents an action stops first (SPEC 15: Discard and Merge stop every agent working in that
 * checkout), as a sentence for the confirm; empty when none has a process.
 */
export function stopsLine(agents, where) {
  const list = agents ?? [];
  if (list.length === 0) return '';
  const names = list
    .slice(0, 5)
    .map((a) => a.name || a.title)
    .join(', ');
  const more = list.length > 5 ? ` and ${list.length - 5} more` : '';
  const who = list.length === 1 ? 'the agent' : `all ${list.length} agents`;
  return `\n\nThis first stops ${who} working in ${where} (${names}${more}); ${list.length === 1 ? 'it stays' : 'they stay'} resumable.`;
}

/** "“build” and “long soak”": the agents of a list, quoted. */
function quoted(list) {
  const names = list.map((a) => `“${a.name || a.title}”`);
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : (names[0] ?? '');
}

/**
 * Why a merge cannot happen now, before the user is asked anything: an agent has a turn running
 * in the checkout where the base branch is, and a merge writes there (SPEC 15). Null when none.
 */
export function mergeWaits(base, changes) {
  const blockers = changes?.mergeBlockers ?? [];
  if (blockers.length === 0) return null;
  const one = blockers.length === 1;
  return `Merge into ${base} waits: ${quoted(blockers)} ${one ? 'has' : 'have'} a turn running in ${changes.baseCheckout}, where ${base} is checked out, and a merge would write into ${one ? 'its' : 'their'} files. Stop ${one ? 'that turn' : 'those turns'} first (${one ? 'the agent stays' : 'the agents stay'} resumable), then merge.`;
}

export async function merge(agentId, branch, base, changes) {
  const waits = mergeWaits(base, changes);
  if (waits) throw new Error(waits);
  const ok = await backend.confirm(
    `Merge into ${base}?`,
    `Merge the agent's branch ${branch ?? ''} into ${base} (fast-forward when possible, else a merge commit). A conflict aborts the merge and changes nothing.${stopsLine(changes?.checkoutAgents, 'its worktree')}`,
    'Merge',
  );
  if (!ok) return null;
  const m = await backend.mergeAgentChanges(agentId);
  const how =
    m.kind === 'fast-forward' ? 'fast-forwarded' : m.kind === 'up-to-date' ? 'already up to date' : 'merged';
  return `${m.baseBranch} ${how} at ${m.commit.slice(0, 10)}.`;
}

export async function discard(agentId, files, changes) {
  const root = changes?.root ?? 'the checkout';
  const what = changes?.workspaceKind === 'worktree' ? 'worktree' : 'repository';
  const ok = await backend.confirm(
    'Discard the changes?',
    `Reset the whole ${what} at ${root} to HEAD: the uncommitted changes in ${files} file${files === 1 ? '' : 's'} and the new files go, whichever agent or person made them.${stopsLine(changes?.checkoutAgents, root)}\n\nThey are kept first in a snapshot commit (refs/paseo/discarded/…), so they can be brought back.`,
    'Discard',
  );
  if (!ok) return null;
  const d = await backend.discardAgentChanges(agentId);
  return d ? `Discarded; kept in ${d.reference}.` : 'Nothing to discard.';
}

export async function openInEditor(agentId, path) {
  const program = await backend.openInEditor(agentId, path);
  return `Opened ${path ?? 'the folder'} with ${program}.`;
}

export function prStatus(agentId) {
  return backend.prStatus(agentId);
}

export async function createPr(agentId, branch, base) {
  const agent = detailOf(agentId) ?? fleet.agents.get(agentId);
  const title = agent ? agentName(agent) : 'Agent work';
  const ok = await backend.confirm(
    'Create pull request?',
    `Push ${branch} and open a pull request into ${base} titled "${title}" with gh?`,
    'Create pull request',
  );
  if (!ok) return null;
  const url = await backend.createPr(agentId, title, (agent?.lastMessage ?? '').slice(0, 4000));
  return `Pull request: ${url}`;
}
