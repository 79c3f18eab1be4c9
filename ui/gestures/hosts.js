// Host gestures (SPEC 17): "Add a host…" (the dialog, then `addHost`), "Remove host" and
// "Install on host…", each destructive or reaching another machine after a native confirm that
// says what will happen (UI.md).
import * as backend from '../backend.js';
import { addError, dropHostFleet } from '../store.js';
import * as layout from '../layout.js';
import { invalidate } from '../render.js';
import { closeMenu } from '../components/menu.js';
import { openHostDialog } from '../components/host-dialog.js';
import { hosts, refreshHosts } from '../hosts.js';

export function addHost(anchor) {
  closeMenu();
  openHostDialog(anchor, async ({ name, ssh }) => {
    await backend.addHost(name, ssh);
    await refreshHosts();
  });
}

export async function removeHost(name) {
  const entry = hosts.get(name);
  if (!entry || entry.busy) return;
  let ok;
  try {
    ok = await backend.confirm(
      `Remove the host ${name}?`,
      `${name} (ssh ${entry.ssh}) leaves config.json and this window closes its connection and its tabs. ` +
        `Nothing on ${name} stops: its agents keep running there, and adding it again shows them.`,
      'Remove',
    );
  } catch (error) {
    addError('Could not ask', error);
    return;
  }
  if (!ok) return;
  entry.busy = 'removing';
  invalidate('sidebar');
  try {
    await backend.removeHost(name);
    hosts.delete(name);
    dropHostFleet(name);
    if (layout.prune()) layout.save();
  } catch (error) {
    entry.problem = `Could not remove it: ${error.message}`;
  } finally {
    entry.busy = null;
  }
  invalidate('sidebar', 'tabs', 'pane');
  refreshHosts();
}

export async function installHost(name) {
  const entry = hosts.get(name);
  if (!entry || entry.busy) return;
  let ok;
  try {
    const info = await backend.appInfo();
    ok = await backend.confirm(
      `Install Paseo on ${name}?`,
      `This copies this app's paseo-headless ${info.version} over ssh ${entry.ssh} to ` +
        `~/.local/bin/paseo-headless on ${name} (replacing the one there, if any), then connects. ` +
        `${name} must be the same kind of machine as this one.`,
      'Install',
    );
  } catch (error) {
    addError('Could not ask', error);
    return;
  }
  if (!ok) return;
  entry.busy = 'installing';
  entry.problem = null;
  invalidate('sidebar');
  try {
    await backend.installHost(name);
  } catch (error) {
    entry.problem = `Install failed: ${error.message}`;
  } finally {
    entry.busy = null;
  }
  invalidate('sidebar');
  refreshHosts();
}
