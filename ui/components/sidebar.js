// Sidebar: projects, then their workspaces with the live activity bucket (glyph, colour, word),
// this machine's first, then each host's under its row (host-rows.js);
// "Add a workspace" (native folder picker); the archived agents at the bottom, one line per
// archive gesture, each restorable as a whole or one member at a time and openable read-only.
// The archived list is paged by the backend and virtualised here like the workspace home's: only
// the rows in view are in the DOM, so a history of thousands of archive gestures scrolls like a
// short one (docs/scale.md).
import { h, reconcile, setAttr, setText, ago, basename, dateTimeText, RowWindow } from '../dom.js';
import { fleet, workspaceName, providerLabel } from '../store.js';
import { agentName, glyph, updateGlyph, urgency, workspaceLabel } from '../status.js';
import { openMembers } from './batch-members.js';
import { HostRows } from './host-rows.js';
import { ArchivedHosts } from './archived-hosts.js';

/** An archived row's height (styles.css `.archived-row`) and the rows kept beyond the view. */
const ARCH_ROW_PX = 50;
const OVERSCAN = 8;

export class Sidebar {
  /**
   * actions: {menu(anchor), addWorkspace(), select(wsId), toggleProject(id), toggleArchived(), restore(id),
   * restoreMember(id), openArchived(id), moreArchived(host?), and the host rows' (host-rows.js)}
   */
  constructor(el, actions) {
    this.el = el;
    this.actions = actions;
    this.version = h('span', { class: 'muted version', dataset: { testid: 'app-version' } });
    this.menuButton = h(
      'button',
      {
        class: 'icon ghost',
        type: 'button',
        'aria-label': 'Menu',
        'aria-haspopup': 'menu',
        title: 'Menu',
        dataset: { testid: 'app-menu' },
        onclick: (e) => actions.menu(e.currentTarget),
      },
      '☰',
    );
    this.projects = h('div', { class: 'projects', role: 'tree', 'aria-label': 'Workspaces' });
    this.empty = h('p', { class: 'muted sidebar-empty' }, 'No workspaces yet.');
    // With hosts, this machine's projects are a group of their own too (UI.md).
    this.localHead = h(
      'div',
      { class: 'host-head local-head', dataset: { testid: 'local-head' }, hidden: true },
      h('span', { class: 'host-name' }, 'This computer'),
    );
    this.hostRows = new HostRows(actions);
    this.archivedToggle = h(
      'button',
      {
        class: 'archived-toggle',
        type: 'button',
        'aria-expanded': 'false',
        dataset: { testid: 'archived-toggle' },
        onclick: () => actions.toggleArchived(),
      },
      h('span', { class: 'chev', 'aria-hidden': 'true' }, '▸'),
      h('span', {}, 'Archived'),
      h('span', { class: 'count muted' }),
    );
    this.archivedRows = h('ul', { class: 'archived-rows', 'aria-label': 'Archived agents' });
    // Each host's archived agents below this machine's (SPEC 17), in the same scroll.
    this.archivedHosts = new ArchivedHosts(actions, {
      create: (id, batchesOf) => this.createArchived(id, batchesOf),
      update: (el, batch, busy) => this.updateArchived(el, batch, busy),
    });
    this.archivedLocal = h(
      'div',
      { class: 'archived-host-head', dataset: { testid: 'archived-local' }, hidden: true },
      h('span', { class: 'archived-host-name' }, 'On this computer'),
    );
    this.archivedEmpty = h('p', { class: 'muted archived-empty' }, 'Nothing archived.');
    this.archivedMore = h('button', {
      class: 'small ghost archived-more',
      type: 'button',
      dataset: { testid: 'archived-more' },
      onclick: () => actions.moreArchived(),
    });
    this.archivedList = h(
      'div',
      { class: 'archived-list', dataset: { testid: 'archived-list' } },
      this.archivedLocal,
      this.archivedRows,
      this.archivedEmpty,
      this.archivedHosts.el,
    );
    this.archivedList.addEventListener('scroll', () => this.renderArchivedRows(), { passive: true });
    /** The batches shown and the restores under way. */
    this.batches = [];
    this.restoring = null;
    this.archivedWindow = new RowWindow(this.archivedRows, {
      rowPx: ARCH_ROW_PX,
      overscan: OVERSCAN,
      create: (id) => this.createArchived(id),
      update: (el, i) => {
        setAttr(el, 'aria-posinset', String(i + 1));
        setAttr(el, 'aria-setsize', String(this.batches.length));
        this.updateArchived(el, this.batches[i], this.restoring);
      },
    });
    el.replaceChildren(
      h(
        'header',
        { class: 'sidebar-head' },
        h('img', { class: 'mark', src: 'assets/paseo.svg', alt: '' }),
        h('span', { class: 'product' }, 'Paseo'),
        this.version,
        h('span', { class: 'spacer' }),
        this.menuButton,
      ),
      h(
        'div',
        { class: 'sidebar-actions' },
        h(
          'button',
          {
            class: 'ghost wide',
            type: 'button',
            dataset: { testid: 'add-workspace' },
            onclick: () => actions.addWorkspace(),
            title: 'Choose a folder to work in',
          },
          h('span', { 'aria-hidden': 'true' }, '+ '),
          'Add a workspace',
        ),
      ),
      h('div', { class: 'sidebar-scroll' }, this.localHead, this.projects, this.empty, this.hostRows.el),
      // This machine's "Show more" stays in sight below the list, however long its page; a
      // host's sits at the end of its section.
      h('section', { class: 'archived' }, this.archivedToggle, this.archivedList, this.archivedMore),
    );
  }

  setVersion(version) {
    setText(this.version, `v${version}`);
  }

  /** view: {selected, collapsedProjects: Set, hosts: [host entry] (ui/hosts.js)} */
  render(view) {
    // This machine's workspaces, then each host's under its row (SPEC 17).
    const byHost = new Map([[null, []]]);
    for (const h of view.hosts) byHost.set(h.name, []);
    for (const ws of fleet.workspaces.values()) byHost.get(ws.host ?? null)?.push(ws);
    const projects = projectsOf(byHost.get(null));
    this.empty.hidden = projects.length > 0;
    this.localHead.hidden = view.hosts.length === 0;
    this.renderProjects(this.projects, projects, view);
    this.hostRows.render(view.hosts, (list, host) =>
      this.renderProjects(list, projectsOf(byHost.get(host)), view),
    );
  }

  /** Makes `list` hold the rows of `projects` and their workspaces. */
  renderProjects(list, projects, view) {
    reconcile(
      list,
      projects,
      (p) => p.id,
      (p) => this.createProject(p.id),
      (el, p) => this.updateProject(el, p, view),
    );
  }

  createProject(id) {
    const chev = h('span', { class: 'chev', 'aria-hidden': 'true' }, '▾');
    const name = h('span', { class: 'project-name' });
    // A collapsed project still says what is going on inside it (the most urgent bucket).
    const g = glyph('done');
    const word = h('span', { class: 'ws-word' });
    const status = h('span', { class: 'project-status', dataset: { testid: 'project-status' } }, g, word);
    const toggle = h(
      'button',
      {
        class: 'project-toggle',
        type: 'button',
        dataset: { testid: 'project-toggle' },
        onclick: () => this.actions.toggleProject(id),
      },
      chev,
      name,
      status,
    );
    const list = h('div', { class: 'workspaces', role: 'group' });
    const el = h(
      'div',
      { class: 'project', role: 'treeitem', dataset: { testid: 'project', projectId: id } },
      toggle,
      list,
    );
    el._parts = { chev, name, toggle, list, status, g, word };
    return el;
  }

  updateProject(el, p, view) {
    const { chev, name, toggle, list, status, g, word } = el._parts;
    const collapsed = view.collapsedProjects.has(p.id);
    setText(chev, collapsed ? '▸' : '▾');
    setText(name, p.name);
    setAttr(toggle, 'aria-expanded', collapsed ? 'false' : 'true');
    const bucket = mostUrgent(p.workspaces);
    status.hidden = !collapsed || bucket === 'done';
    setAttr(status, 'data-status', bucket);
    if (collapsed) {
      updateGlyph(g, bucket, workspaceLabel(bucket));
      setText(word, bucket === 'done' ? '' : workspaceLabel(bucket));
      word.className = `ws-word s-${bucket}`;
    }
    setAttr(
      toggle,
      'title',
      collapsed && bucket !== 'done' ? `${p.key ?? p.name}\n${workspaceLabel(bucket)}` : (p.key ?? ''),
    );
    setAttr(el, 'aria-expanded', collapsed ? 'false' : 'true');
    list.hidden = collapsed;
    reconcile(
      list,
      collapsed ? [] : p.workspaces,
      (w) => w.workspaceId,
      (w) => this.createWorkspace(w.workspaceId),
      (row, w) => this.updateWorkspace(row, w, view),
    );
  }

  createWorkspace(id) {
    const g = glyph('done');
    const name = h('span', { class: 'ws-name' });
    const sub = h('span', { class: 'ws-sub muted' });
    const word = h('span', { class: 'ws-word' });
    const el = h(
      'button',
      {
        class: 'workspace-row',
        type: 'button',
        dataset: { testid: 'workspace-row', workspaceId: id },
        onclick: () => this.actions.select(id),
      },
      g,
      name,
      sub,
      word,
    );
    el._parts = { g, name, sub, word };
    return el;
  }

  updateWorkspace(el, ws, view) {
    const { g, name, sub, word } = el._parts;
    const bucket = ws.bucket ?? null;
    const label = workspaceLabel(bucket);
    updateGlyph(g, bucket ?? 'done', label);
    if (!bucket) g.classList.add('s-none');
    setText(name, workspaceName(ws));
    const kind =
      ws.kind === 'worktree'
        ? `⎇ ${ws.branch ?? 'worktree'}`
        : ws.branch && ws.branch !== workspaceName(ws)
          ? ws.branch
          : '';
    setText(sub, kind);
    // The word shows when something is going on: what needs you or failed as counted (the core's
    // line, paseo-core model/tally.rs), else the bucket's word; the tooltip has the whole line.
    const line = ws.tally?.line ?? [];
    const urgent = line
      .filter((p) => (p.kind === 'needs_input' || p.kind === 'failed') && p.count > 0)
      .map((p) => p.text)
      .join(' · ');
    setText(word, urgent || (bucket && bucket !== 'done' ? label : ''));
    word.className = `ws-word s-${bucket ?? 'none'}`;
    setAttr(el, 'data-status', bucket ?? 'none');
    const branch = ws.branch
      ? `branch ${ws.branch}`
      : ws.kind === 'worktree'
        ? 'worktree'
        : 'not a git branch';
    setAttr(
      el,
      'title',
      `${workspaceName(ws)} · ${branch}\n${ws.cwd}\n${label}${line.length ? ` (${line.map((p) => p.text).join(' · ')})` : ''}`,
    );
    setAttr(el, 'aria-label', `${workspaceName(ws)}, ${label}`);
    const selected = ws.workspaceId === view.selected;
    setAttr(el, 'aria-current', selected ? 'true' : null);
    // Newly selected (from a tab, the home, a link): brought into view in a long list.
    if (selected && !el.classList.contains('selected'))
      requestAnimationFrame(() => el.scrollIntoView({ block: 'nearest' }));
    el.classList.toggle('selected', selected);
  }

  /**
   * archived: {open, count, countTitle, batches: [{head, members}] | null (loading), loaded, total,
   * loadingMore, hosts: name → its own list}; hosts: [{name, state}] (a section each).
   */
  renderArchived(archived, hosts = []) {
    setAttr(this.archivedToggle, 'aria-expanded', archived.open ? 'true' : 'false');
    setText(this.archivedToggle.firstChild, archived.open ? '▾' : '▸');
    setText(this.archivedToggle.lastChild, `${archived.count}`);
    setAttr(this.archivedToggle, 'title', archived.countTitle ?? null);
    this.archivedList.hidden = !archived.open;
    // "Nothing archived." is this machine's; with hosts, it sits under "On this computer".
    this.archivedEmpty.hidden =
      !archived.open || (archived.batches?.length ?? 0) > 0 || (hosts.length === 0 && archived.count > 0);
    this.archivedLocal.hidden = hosts.length === 0;
    this.archivedHosts.render(archived.open ? hosts : [], archived.hosts, archived.busy);
    const left = archived.total - archived.loaded.length;
    this.archivedMore.hidden = !archived.open || !(left > 0);
    if (!archived.open) return;
    setText(
      this.archivedMore,
      archived.loadingMore
        ? 'Loading…'
        : `Show more${hosts.length ? ' on this computer' : ''} (${archived.loaded.length.toLocaleString('en-US')} of ${archived.total.toLocaleString('en-US')} shown)`,
    );
    this.archivedMore.disabled = archived.loadingMore ?? false;
    this.batches = archived.batches ?? [];
    this.restoring = archived.busy;
    this.archivedRows.style.height = `${this.batches.length * ARCH_ROW_PX}px`;
    // The virtualised rows are placed from the list's top: below the "On this computer" head.
    this.rowsTop = this.archivedRows.offsetTop;
    this.archivedList.dataset.rows = String(this.batches.length);
    this.renderArchivedRows();
  }

  /** Puts the archived rows in view (plus a margin) in the DOM, at their places; drops the others. */
  renderArchivedRows() {
    this.archivedWindow.render(
      this.batches.length,
      (i) => this.batches[i].head.id,
      this.archivedList.scrollTop - (this.rowsTop ?? 0),
      this.archivedList.clientHeight,
      12,
    );
  }

  /** batchesOf(): the batches of the list the row is in (this machine's, or a host's). */
  createArchived(id, batchesOf = () => this.batches) {
    // The name opens the agent read-only (its timeline from disk, and Restore).
    const name = h('button', {
      class: 'arch-name link',
      type: 'button',
      dataset: { testid: 'archived-open', agentId: id },
      onclick: () => this.actions.openArchived(id),
    });
    // "+ N more": lists who else this gesture archived.
    const more = h('button', {
      class: 'arch-more',
      type: 'button',
      dataset: { testid: 'archived-members-toggle' },
      onclick: (e) => {
        const b = batchesOf().find((x) => x.head.id === id);
        if (b) openMembers(e.currentTarget, b, this.actions, this.restoring);
      },
    });
    const when = h('span', { class: 'arch-when muted' });
    const restore = h(
      'button',
      {
        class: 'small ghost',
        type: 'button',
        dataset: { testid: 'restore', agentId: id },
        onclick: () => this.actions.restore(id),
      },
      'Restore',
    );
    const el = h(
      'li',
      { class: 'archived-row', dataset: { testid: 'archived-row', agentId: id } },
      h('div', { class: 'arch-main' }, name, more),
      h('div', { class: 'arch-meta' }, when, restore),
    );
    el._parts = { name, more, when, restore };
    return el;
  }

  updateArchived(el, batch, busy) {
    const { name, more, when, restore } = el._parts;
    const head = batch.head;
    const n = batch.members.length - 1;
    setText(name, agentName(head));
    setText(more, n > 0 ? (batch.tree ? `+ ${n} subagent${n === 1 ? '' : 's'}` : `+ ${n} more`) : '');
    more.hidden = n === 0;
    setAttr(more, 'title', n > 0 ? `Show the ${n + 1} agents archived together` : null);
    setText(when, `${providerLabel(head.provider)} · ${ago(head.archivedAt)}`);
    setAttr(el, 'title', `${agentName(head)} — ${head.cwd}\narchived ${dateTimeText(head.archivedAt)}`);
    setAttr(name, 'aria-label', `Open ${agentName(head)} read-only`);
    setAttr(restore, 'aria-label', `Restore ${agentName(head)}${n > 0 ? ` and ${n} more` : ''}`);
    restore.disabled = busy?.has(head.id) ?? false;
  }
}

/** The most urgent bucket among `workspaces` (the core's urgency order), 'done' when nothing is going on. */
function mostUrgent(workspaces) {
  const order = urgency();
  let best = order.length;
  for (const ws of workspaces) {
    const i = order.indexOf(ws.bucket);
    if (i >= 0 && i < best) best = i;
  }
  return order[best] ?? 'done';
}

/** Workspaces grouped by project, projects by name, workspaces by name then folder. */
function projectsOf(workspaces) {
  const groups = new Map();
  for (const ws of workspaces) {
    let list = groups.get(ws.projectId);
    if (!list) groups.set(ws.projectId, (list = []));
    list.push(ws);
  }
  return [...groups.keys()]
    .map((id) => ({
      id,
      name: projectName(id, groups.get(id)),
      workspaces: groups
        .get(id)
        .sort((a, b) => workspaceName(a).localeCompare(workspaceName(b)) || a.cwd.localeCompare(b.cwd)),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function projectName(id, workspaces) {
  const p = fleet.projects.get(id);
  if (p?.displayName) return p.displayName;
  if (p?.repoRoot) return basename(p.repoRoot);
  if (p?.key) return basename(p.key.replace(/\.git$/, ''));
  return workspaces[0] ? basename(workspaces[0].cwd) : 'project';
}
