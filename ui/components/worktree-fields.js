// The new-agent form's "New worktree…" part (SPEC 3): the agent works in a new git worktree of
// the repository the form's "Where" names, on a new branch (from a base) or on an existing
// branch. The backend checks the target exactly as `create_worktree` does; this part only says
// where its errors belong.
import { h, setText } from '../dom.js';

// The backend's field paths (MCP `create_agent` `workspace.source.*`) → [control key, label].
// The runtime's checks name the fields as SPEC 8's tools do (`workspace.source.…`); a frame the
// core cannot read names them by the request's own path (`workspace.target.…`).
const FIELDS = {
  'workspace.source.target.newBranch': ['newBranch', 'New branch'],
  'workspace.source.target.base': ['base', 'Base'],
  'workspace.source.target.branch': ['branch', 'Branch'],
  'workspace.target.newBranch': ['newBranch', 'New branch'],
  'workspace.target.base': ['base', 'Base'],
  'workspace.target.branch': ['branch', 'Branch'],
};

export class WorktreeFields {
  /** onToggle(): the checkbox changed (the form relabels what autoArchive does). */
  constructor(onToggle) {
    this.toggle = h('input', {
      type: 'checkbox',
      dataset: { testid: 'new-agent-worktree' },
      'aria-controls': 'new-agent-worktree-fields',
      onchange: () => {
        this.sync();
        onToggle();
      },
    });
    const radio = (value, label, testid, checked) =>
      h(
        'label',
        { class: 'check' },
        h('input', {
          type: 'radio',
          name: 'worktree-kind',
          value,
          checked,
          dataset: { testid },
          onchange: () => this.sync(),
        }),
        h('span', {}, label),
      );
    this.kinds = h(
      'div',
      { class: 'worktree-kinds', role: 'radiogroup', 'aria-label': 'Branch' },
      radio('branch-off', 'New branch', 'new-agent-worktree-branch-off', true),
      radio('checkout-branch', 'Existing branch', 'new-agent-worktree-checkout', false),
    );
    const text = (testid, placeholder, label) =>
      h('input', {
        type: 'text',
        placeholder,
        'aria-label': label,
        dataset: { testid },
        spellcheck: 'false',
        autocomplete: 'off',
        maxlength: '200',
      });
    this.controls = {
      newBranch: text('new-agent-worktree-new-branch', 'e.g. feat/login', 'New branch'),
      base: text('new-agent-worktree-base', 'the current branch', 'Base'),
      branch: text(
        'new-agent-worktree-branch',
        'e.g. fix/typo (not checked out elsewhere)',
        'Existing branch',
      ),
    };
    const sub = (label, control) =>
      h('label', { class: 'sub-field' }, h('span', { class: 'muted' }, label), control);
    this.branchOff = h(
      'div',
      { class: 'worktree-row' },
      sub('New branch', this.controls.newBranch),
      sub('from', this.controls.base),
    );
    this.checkout = h('div', { class: 'worktree-row' }, sub('Branch', this.controls.branch));
    this.repo = h('span', { class: 'worktree-repo', dataset: { testid: 'new-agent-worktree-repo' } });
    this.fields = h(
      'div',
      {
        class: 'worktree-fields',
        id: 'new-agent-worktree-fields',
        dataset: { testid: 'new-agent-worktree-fields' },
      },
      this.kinds,
      this.branchOff,
      this.checkout,
      h(
        'span',
        { class: 'hint muted' },
        'A worktree of ',
        this.repo,
        ', made in the data root’s worktrees folder. Removing it keeps the branch and commits any work left in it.',
      ),
    );
    this.why = h('span', { class: 'hint muted', dataset: { testid: 'new-agent-worktree-why' } });
    this.el = h(
      'div',
      { class: 'worktree' },
      h('label', { class: 'check' }, this.toggle, h('span', {}, 'New worktree…'), this.why),
      this.fields,
    );
    this.sync();
  }

  /** Offers the worktree only where there is a repository; `why` (or null) says why not. */
  setUnavailable(why) {
    this.toggle.disabled = Boolean(why);
    if (why && this.toggle.checked) this.toggle.checked = false;
    setText(this.why, why ? `(${why})` : '');
    this.toggle.title = why ?? '';
    this.sync();
  }

  get enabled() {
    return this.toggle.checked;
  }

  kind() {
    return this.kinds.querySelector('input:checked')?.value ?? 'branch-off';
  }

  sync() {
    this.fields.hidden = !this.enabled;
    const off = this.kind() === 'branch-off';
    this.branchOff.hidden = !off;
    this.checkout.hidden = off;
  }

  /** The repository it will be made from, as the form's "Where" names it now. */
  setRepo(path) {
    setText(this.repo, path || 'the directory you choose');
  }

  /** The worktree target, or an error [control, message] the user must fix first. */
  target() {
    const value = (key) => this.controls[key].value.trim();
    if (this.kind() === 'branch-off') {
      if (!value('newBranch'))
        return { error: [this.controls.newBranch, 'New branch: give the new branch a name.'] };
      return {
        target: {
          kind: 'branch-off',
          newBranch: value('newBranch'),
          ...(value('base') ? { base: value('base') } : {}),
        },
      };
    }
    if (!value('branch'))
      return { error: [this.controls.branch, 'Branch: name the existing branch to check out.'] };
    return { target: { kind: 'checkout-branch', branch: value('branch') } };
  }

  /** The control and a message for a backend error about this part, if it is about this part. */
  explain(error) {
    const known = FIELDS[error?.field];
    if (!known) return null;
    const [key, label] = known;
    const prefix = `${error.field}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    return [this.controls[key], `${label}: ${message}`];
  }
}
