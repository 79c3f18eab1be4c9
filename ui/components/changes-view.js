// The Changes view: in place of the timeline, what the agent changed on disk. A
// summary with the actions (Commit all, Merge into the base, Discard), the changed files with
// their +/− counts, and the selected file's diff: hunks with added and removed lines coloured,
// context collapsed to git's three lines, binary files and renames named, long diffs in pages.
import { h, setText } from '../dom.js';

const STATUS = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed' };

/**
 * What the list covers, in words: an agent in its own worktree sees its branch's work; any other
 * agent sees everything uncommitted in the checkout it works in, whoever made it (the diff is of
 * the working tree against HEAD, the same for every agent there). {kind, text, title}.
 */
export function scopeLine(d) {
  const branch = d.branch ? `branch ${d.branch}` : 'a detached HEAD';
  if (d.workspaceKind === 'worktree') {
    const since = d.baseBranch ? `since it branched from ${d.baseBranch}` : 'since HEAD';
    return { kind: 'own', text: `Changes in this agent's own worktree (${branch}) ${since}`, title: d.root };
  }
  const others = (d.checkoutAgents ?? []).length - 1;
  const who =
    others > 0
      ? `, shared with ${others === 1 ? '1 other agent' : `${others} other agents`} working here`
      : ', whoever made them';
  return {
    kind: 'shared',
    text: `Changes in this folder since HEAD (${branch})${who}`,
    title: `Everything uncommitted in ${d.root}, whoever made it`,
  };
}

export class ChangesView {
  /** actions: ui/gestures/changes.js (load, diff, commitAll, merge, discard, commitMessage, openInEditor, prStatus, createPr) */
  constructor(actions) {
    this.actions = actions;
    this.agentId = null;
    this.data = null;
    this.selected = null;
    this.loading = null;
    this.timer = null;
    this.summary = h('span', { class: 'changes-summary', dataset: { testid: 'changes-summary' } });
    // What the list is (SPEC 15): a shared folder's changes are everyone's, not this agent's.
    this.scope = h('div', { class: 'changes-scope', dataset: { testid: 'changes-scope' } });
    this.commit = h(
      'button',
      {
        class: 'small',
        type: 'button',
        dataset: { testid: 'changes-commit' },
        onclick: () => this.run('commit'),
      },
      'Commit all',
    );
    this.merge = h(
      'button',
      {
        class: 'small',
        type: 'button',
        dataset: { testid: 'changes-merge' },
        onclick: () => this.run('merge'),
      },
      'Merge',
    );
    this.discard = h(
      'button',
      {
        class: 'small danger',
        type: 'button',
        dataset: { testid: 'changes-discard' },
        onclick: () => this.run('discard'),
      },
      'Discard',
    );
    this.open = h(
      'button',
      {
        class: 'small',
        type: 'button',
        dataset: { testid: 'changes-open' },
        title: 'Open the selected file (or the folder) in your editor ($VISUAL)',
        onclick: () => this.run('open'),
      },
      'Open in editor',
    );
    this.pr = h(
      'button',
      { class: 'small', type: 'button', dataset: { testid: 'changes-pr' }, onclick: () => this.run('pr') },
      'Create pull request',
    );
    this.refresh = h(
      'button',
      {
        class: 'small ghost',
        type: 'button',
        title: 'Refresh',
        'aria-label': 'Refresh the changes',
        dataset: { testid: 'changes-refresh' },
        onclick: () => this.reload(),
      },
      '↻',
    );
    this.message = h('textarea', {
      class: 'changes-message mono',
      rows: '2',
      spellcheck: 'false',
      'aria-label': 'Commit message',
      placeholder: 'Commit message',
      dataset: { testid: 'changes-message' },
    });
    this.result = h('div', {
      class: 'changes-result',
      role: 'status',
      dataset: { testid: 'changes-result' },
    });
    this.error = h('div', {
      class: 'changes-error error',
      role: 'alert',
      dataset: { testid: 'changes-error' },
    });
    // Why an action (Commit, Merge, Discard, Open in editor, pull request) did not happen: it
    // stays until the user dismisses it or acts again, whatever reloads meanwhile.
    this.actionErrorText = h('span', { class: 'changes-action-error-text' });
    this.actionError = h(
      'div',
      {
        class: 'changes-action-error error',
        role: 'alert',
        hidden: true,
        dataset: { testid: 'changes-action-error' },
      },
      this.actionErrorText,
      h(
        'button',
        {
          class: 'small ghost icon',
          type: 'button',
          title: 'Dismiss',
          'aria-label': 'Dismiss this message',
          dataset: { testid: 'changes-action-error-dismiss' },
          onclick: () => this.showActionError(''),
        },
        '×',
      ),
    );
    this.files = h('ul', {
      class: 'changes-files',
      role: 'listbox',
      'aria-label': 'Changed files',
      dataset: { testid: 'changes-files' },
    });
    this.diff = h('div', { class: 'changes-diff mono', tabindex: '0', dataset: { testid: 'changes-diff' } });
    this.el = h(
      'div',
      { class: 'changes-view', dataset: { testid: 'changes-view' } },
      h(
        'div',
        { class: 'changes-bar' },
        this.summary,
        h('span', { class: 'spacer' }),
        this.refresh,
        this.open,
        this.commit,
        this.merge,
        this.pr,
        this.discard,
      ),
      this.scope,
      this.message,
      this.result,
      this.actionError,
      this.error,
      h('div', { class: 'changes-body' }, this.files, this.diff),
    );
  }

  /** Shows `agentId`'s changes, loaded afresh (the files may have changed while hidden). */
  show(agentId) {
    if (this.agentId !== agentId) {
      this.agentId = agentId;
      this.data = null;
      this.selected = null;
      setText(this.result, '');
      this.showActionError('');
      this.message.value = this.actions.commitMessage(agentId);
      this.files.replaceChildren();
      this.diff.replaceChildren();
    }
    this.reload();
  }

  /** Shows why an action did not happen ('' hides it). */
  showActionError(message) {
    setText(this.actionErrorText, message);
    this.actionError.hidden = !message;
  }

  /** The agent did something (a turn ended, a status changed): reload soon, once. */
  refreshSoon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), 400);
  }

  async reload() {
    const id = this.agentId;
    if (!id) return;
    const mine = (this.loading = Symbol('load'));
    try {
      const data = await this.actions.load(id);
      if (this.loading !== mine || this.agentId !== id) return;
      this.data = data;
      setText(this.error, '');
      this.renderList();
      const still = data.files.find((f) => f.path === this.selected);
      this.select(still ? still.path : (data.files[0]?.path ?? null));
    } catch (error) {
      if (this.loading !== mine) return;
      this.data = null;
      setText(this.summary, 'No changes to show');
      setText(this.scope, '');
      setText(this.error, error.message);
      this.files.replaceChildren();
      this.diff.replaceChildren();
      this.setButtons(false, false);
    }
  }

  setButtons(any, mergeable) {
    this.commit.disabled = !any;
    this.message.hidden = !any;
    this.discard.disabled = !any;
    this.merge.hidden = !mergeable;
    this.merge.disabled = !mergeable;
    this.pr.hidden = !mergeable;
    if (mergeable) this.checkPr();
  }

  /** Pull requests need gh installed and signed in: otherwise the button says why not. */
  async checkPr() {
    const id = this.agentId;
    this.pr.disabled = true;
    try {
      const s = await this.actions.prStatus(id);
      if (this.agentId !== id) return;
      this.pr.disabled = s.state !== 'ready';
      this.pr.title =
        s.state === 'ready' ? 'Push the branch and open a pull request with gh' : `Unavailable: ${s.reason}`;
      this.pr.dataset.unavailable = s.state === 'ready' ? '' : s.reason;
    } catch (error) {
      this.pr.title = `Unavailable: ${error.message}`;
    }
  }

  renderList() {
    const d = this.data;
    const t = d.totals;
    const against = d.baseBranch ? `against ${d.baseBranch}` : 'against HEAD';
    setText(
      this.summary,
      t.files === 0
        ? `No changes ${against}`
        : `${t.files} file${t.files === 1 ? '' : 's'} · +${t.additions} −${t.deletions}${t.binary ? ` · ${t.binary} binary` : ''} ${against}`,
    );
    const scope = scopeLine(d);
    setText(this.scope, scope.text);
    this.scope.title = scope.title;
    this.scope.dataset.kind = scope.kind;
    this.merge.textContent = d.baseBranch ? `Merge into ${d.baseBranch}` : 'Merge';
    this.setButtons(t.files > 0, Boolean(d.baseBranch) && d.workspaceKind === 'worktree');
    this.files.replaceChildren(
      ...d.files.map((f) =>
        h(
          'li',
          {
            class: 'changes-file',
            role: 'option',
            tabindex: '0',
            dataset: { testid: 'changes-file', path: f.path, status: f.status },
            onclick: () => this.select(f.path),
            onkeydown: (e) => {
              if (e.key === 'Enter' || e.key === ' ') {
                e.preventDefault();
                this.select(f.path);
              }
            },
          },
          h('span', { class: `file-status st-${f.status}`, title: STATUS[f.status] }, f.status),
          h(
            'span',
            { class: 'file-path', title: f.oldPath ? `${f.oldPath} → ${f.path}` : f.path },
            f.oldPath ? `${f.oldPath} → ${f.path}` : f.path,
          ),
          f.binary
            ? h('span', { class: 'file-counts muted' }, 'binary')
            : h(
                'span',
                { class: 'file-counts' },
                h('span', { class: 'add' }, `+${f.additions}`),
                ' ',
                h('span', { class: 'del' }, `−${f.deletions}`),
              ),
        ),
      ),
    );
  }

  async select(path) {
    this.selected = path;
    for (const li of this.files.children) li.setAttribute('aria-selected', String(li.dataset.path === path));
    this.diff.replaceChildren();
    if (!path) return;
    await this.page(path, 0);
  }

  /** Loads the page of `path`'s diff at `offset` and appends it. */
  async page(path, offset) {
    const id = this.agentId;
    try {
      const d = await this.actions.diff(id, path, offset);
      if (this.agentId !== id || this.selected !== path) return;
      this.diff.querySelector('.diff-more')?.remove();
      if (offset === 0)
        this.diff.append(
          h(
            'div',
            { class: 'diff-file' },
            d.file.oldPath ? `${d.file.oldPath} → ${d.file.path}` : d.file.path,
          ),
        );
      if (d.binary) {
        this.diff.append(h('div', { class: 'muted' }, 'Binary file: no line diff.'));
        return;
      }
      if (d.totalLines === 0)
        this.diff.append(
          h(
            'div',
            { class: 'muted' },
            d.file.status === 'R' ? 'Renamed without changes.' : 'No line changes.',
          ),
        );
      const frag = document.createDocumentFragment();
      for (const hunk of d.hunks) {
        frag.append(
          h(
            'div',
            { class: 'diff-hunk' },
            `@@ −${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@ ${hunk.section}`,
          ),
        );
        for (const l of hunk.lines) {
          const mark = l.kind === 'add' ? '+' : l.kind === 'remove' ? '−' : ' ';
          frag.append(
            h(
              'div',
              { class: `diff-line ${l.kind}` },
              h('span', { class: 'ln' }, l.oldLine ?? ''),
              h('span', { class: 'ln' }, l.newLine ?? ''),
              h('span', { class: 'mark' }, mark),
              h('span', { class: 'text' }, l.text),
            ),
          );
        }
      }
      this.diff.append(frag);
      if (d.nextOffset != null) {
        this.diff.append(
          h(
            'button',
            {
              class: 'small diff-more',
              type: 'button',
              dataset: { testid: 'changes-more' },
              onclick: () => this.page(path, d.nextOffset),
            },
            `Show more (${d.totalLines - d.nextOffset} more lines)`,
          ),
        );
      }
    } catch (error) {
      setText(this.error, error.message);
    }
  }

  async run(what) {
    const id = this.agentId;
    const d = this.data;
    if (!id || !d) return;
    const buttons = [this.commit, this.merge, this.discard, this.pr];
    for (const b of buttons) b.disabled = true;
    setText(this.result, '');
    this.showActionError('');
    try {
      let line = null;
      if (what === 'commit') {
        line = await this.actions.commitAll(
          id,
          this.message.value.trim() || this.actions.commitMessage(id),
          d,
        );
        if (line) this.message.value = this.actions.commitMessage(id);
      } else if (what === 'merge') line = await this.actions.merge(id, d.branch, d.baseBranch, d);
      else if (what === 'open') line = await this.actions.openInEditor(id, this.selected);
      else if (what === 'pr') line = await this.actions.createPr(id, d.branch, d.baseBranch);
      else line = await this.actions.discard(id, d.totals.files, d);
      if (line) setText(this.result, line);
    } catch (error) {
      if (this.agentId === id) this.showActionError(error.message);
    } finally {
      await this.reload();
    }
  }
}
