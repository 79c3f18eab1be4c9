// The archived list at the bottom of the sidebar: opening it, loading it (one line per archive
// gesture, grouped by batch), Restore (a whole batch, or one member with what was archived below
// it) — which asks before bringing a subagent whose parent is still archived back as a root
// agent — and opening an archived agent read-only. This machine's archived agents first, then
// each host's (SPEC 17), every section paged on its own; a host's come from it (`archivedAgents
// {host}`), which also tells the backend where they live, so their timelines and restores go
// there. The list's loading is in ../archived-list.js.
import * as backend from '../backend.js';
import { addError } from '../store.js';
import * as layout from '../layout.js';
import { invalidate } from '../render.js';
import { agentName } from '../status.js';
import { ui } from '../window-state.js';
import { openAgent } from './tabs.js';
import { closeMembers } from '../components/batch-members.js';
import { arrived, findArchived, loadArchived, reloadArchivedSoon } from '../archived-list.js';

export { loadArchived, loadMoreArchived, reloadArchivedSoon } from '../archived-list.js';

/**
 * Restores the batch `id` was archived in; with `member`, only `id` and the members of its batch
 * below it (the rest stays archived, SPEC 5).
 */
export async function restore(id, { member = false } = {}) {
  if (ui.archived.busy.has(id)) return;
  ui.archived.busy.add(id);
  invalidate('archived', 'pane');
  try {
    let restored;
    try {
      restored = await backend.restoreAgent(id, false, member);
    } catch (error) {
      if (error.code !== 'conflict' || !/parent/.test(error.message)) throw error;
      const name = agentName(findArchived(id));
      const ok = await backend.confirm(
        'Restore as a root agent?',
        `The parent of “${name}” is still archived, so it cannot go back into its parent's track.\n\nRestore “${name}” as a root agent instead?`,
        'Restore as root',
      );
      if (!ok) return;
      restored = await backend.restoreAgent(id, true, member);
    }
    // What was being read is live again: the read-only view gives way to the agent.
    const reading = ui.readOnly?.id === id;
    if (ui.readOnly && restored?.includes(ui.readOnly.id)) ui.readOnly = null;
    // Bring the restored agent up where the user can see it (a root agent opens as a tab), but
    // closed: SPEC 5 restores a batch closed, and starting its process is for when it is used
    // (a prompt), not for a restore the user may only want to read.
    const head = await arrived([id, restored?.[0]], findArchived(id)?.host ? 5000 : 0);
    if (head && (!head.parentAgentId || reading)) openAgent(head.id, { wake: false });
  } catch (error) {
    addError('Could not restore', error);
  } finally {
    ui.archived.busy.delete(id);
    reloadArchivedSoon(0);
    invalidate('pane');
  }
}

/** Shows an archived agent read-only in the pane: its timeline from disk, and Restore. */
export function openArchived(id) {
  const agent = findArchived(id);
  if (!agent) return;
  closeMembers();
  ui.formOpen = false;
  ui.readOnly = agent;
  invalidate('tabs', 'pane');
}

export function closeArchived() {
  ui.readOnly = null;
  invalidate('tabs', 'pane');
}

/** The read-only view's Restore: this agent and what was archived below it. */
export function restoreArchived(id) {
  return restore(id, { member: true });
}

export function toggleArchived() {
  layout.setArchivedOpen(!layout.layout.archivedOpen);
  if (layout.layout.archivedOpen) loadArchived();
  invalidate('archived');
}
