// The new-agent form (SPEC 3): the host it runs on (SPEC 17: this machine or a connected host;
// the workspaces and providers listed are that host's), provider (unavailable ones disabled, with the reason), model,
// workspace or directory (or a new worktree of its repository), title, first prompt,
// autoArchive. It is a pane, not a modal dialog.
import { h, setText } from '../dom.js';
import { fleet, workspaceName } from '../store.js';
import { WorktreeFields } from './worktree-fields.js';
import { hostList, hosts } from '../hosts.js';

const OTHER = '__directory__';
// The backend's field paths that name the typed directory (adding it as a workspace, or a
// `create_agent` directory source).
const DIRECTORY_FIELDS = new Set(['path', 'workspace.path', 'workspace.source.path']);

export class NewAgentForm {
  /** actions: {create(form) → Promise<agent>, cancel(), pickFolder() → Promise<path | null>} */
  constructor(actions) {
    this.actions = actions;
    this.el = h('div', { class: 'form-pane' });
  }

  /** Builds the form afresh (providers and workspaces as they are now); `workspaceId` preselected. */
  open(workspaceId) {
    // Where it runs (SPEC 17): this machine or a connected host; the selected workspace's host
    // first (UI.md). Shown once a host is configured.
    const configured = hostList();
    const wsHost = fleet.workspaces.get(workspaceId)?.host ?? '';
    const start = configured.some((e) => e.name === wsHost && e.state === 'connected') ? wsHost : '';
    this.host = h(
      'select',
      { dataset: { testid: 'new-agent-host' }, onchange: () => this.onHost() },
      h('option', { value: '', selected: start === '' }, 'This machine'),
      configured.map((e) =>
        h(
          'option',
          { value: e.name, selected: e.name === start, disabled: e.state !== 'connected' },
          e.state === 'connected' ? e.name : `${e.name} (not connected)`,
        ),
      ),
    );
    this.hostField = h(
      'label',
      { class: 'field', hidden: configured.length === 0 },
      h('span', { class: 'field-label' }, 'Host'),
      this.host,
    );
    this.providerList = h('div', { class: 'providers', role: 'radiogroup', 'aria-label': 'Provider' });
    this.initialWorkspace = workspaceId;
    this.fillProviders();

    this.models = h('datalist', { id: 'new-agent-models' });
    this.model = h('input', {
      type: 'text',
      list: 'new-agent-models',
      placeholder: 'default',
      dataset: { testid: 'new-agent-model' },
      autocomplete: 'off',
      spellcheck: 'false',
    });

    this.workspace = h('select', {
      dataset: { testid: 'new-agent-workspace' },
      onchange: () => this.onWorkspace(),
    });
    this.fillWorkspaces(workspaceId);
    this.directory = h('input', {
      type: 'text',
      placeholder: '/path/to/a/directory',
      dataset: { testid: 'new-agent-directory' },
      spellcheck: 'false',
      autocomplete: 'off',
      oninput: () => this.onWorkspace(),
    });
    this.directoryRow = h(
      'div',
      { class: 'inline' },
      this.directory,
      (this.browseButton = h(
        'button',
        { type: 'button', dataset: { testid: 'new-agent-browse' }, onclick: () => this.browse() },
        'Browse…',
      )),
    );
    this.title = h('input', {
      type: 'text',
      placeholder: 'e.g. lead, review, docs',
      maxlength: '200',
      dataset: { testid: 'new-agent-title' },
    });
    this.prompt = h('textarea', {
      rows: '4',
      placeholder: 'What should it do first? (optional)',
      dataset: { testid: 'new-agent-prompt' },
    });
    this.worktree = new WorktreeFields(() => this.onWorktree());
    this.autoArchive = h('input', { type: 'checkbox', dataset: { testid: 'new-agent-auto-archive' } });
    this.autoArchiveLabel = h('span', {});
    // Containment off for this one agent (SPEC 16): the user's choice, with what it means.
    this.unconfined = h('input', {
      type: 'checkbox',
      dataset: { testid: 'new-agent-unconfined' },
      onchange: () => {
        this.unconfinedWarning.hidden = !this.unconfined.checked;
      },
    });
    this.unconfinedWarning = h(
      'div',
      { class: 'hint warning', dataset: { testid: 'new-agent-unconfined-warning' }, hidden: true },
      "It will run with your whole reach: it can read your SSH keys and other secrets, write anywhere you can, and read Paseo's own data, including the token that drives the app.",
    );
    this.error = h('div', {
      class: 'form-error',
      role: 'alert',
      id: 'new-agent-error',
      dataset: { testid: 'new-agent-error' },
    });
    this.submit = h(
      'button',
      { class: 'primary', type: 'submit', dataset: { testid: 'new-agent-submit' } },
      'Create agent',
    );

    const field = (label, control, hint) =>
      h(
        'label',
        { class: 'field' },
        h('span', { class: 'field-label' }, label),
        control,
        hint ? h('span', { class: 'hint muted' }, hint) : null,
      );

    this.form = h(
      'form',
      {
        class: 'new-agent-form',
        dataset: { testid: 'new-agent-form' },
        'aria-label': 'New agent',
        onsubmit: (e) => {
          e.preventDefault();
          this.create();
        },
        // The user is fixing what was refused: the message goes with the first change.
        oninput: () => this.clearError(),
        onchange: () => this.clearError(),
        onkeydown: (e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            this.actions.cancel();
          }
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            this.create();
          }
        },
      },
      h('h1', {}, 'New agent'),
      this.hostField,
      h('fieldset', { class: 'field' }, h('legend', { class: 'field-label' }, 'Provider'), this.providerList),
      field('Model', h('span', {}, this.model, this.models)),
      h(
        'div',
        { class: 'field' },
        h('span', { class: 'field-label' }, 'Where'),
        this.workspace,
        this.directoryRow,
        this.worktree.el,
      ),
      field('Title', this.title),
      field('First prompt', this.prompt, 'Ctrl+Enter creates the agent'),
      h('label', { class: 'check' }, this.autoArchive, this.autoArchiveLabel),
      h(
        'label',
        { class: 'check' },
        this.unconfined,
        h('span', {}, 'Unconfined: run it outside its sandbox'),
      ),
      this.unconfinedWarning,
      this.error,
      (this.actionsRow = h(
        'div',
        { class: 'form-actions' },
        this.submit,
        h(
          'button',
          { type: 'button', dataset: { testid: 'new-agent-cancel' }, onclick: () => this.actions.cancel() },
          'Cancel',
        ),
      )),
    );
    this.el.replaceChildren(this.form);
    this.onHost();
    this.onWorktree();
  }

  /**
   * Focus in the first field that takes typing (the model, or the title when the provider has
   * no models), so Ctrl+N then typing fills the form; the provider is one Shift+Tab away.
   */
  focus() {
    const first = [...this.form.querySelectorAll('input[type="text"], textarea')].find(
      (el) => !el.disabled && el.offsetParent !== null,
    );
    (first ?? this.title)?.focus();
  }

  /** The chosen host's name, or null for this machine. */
  selectedHost() {
    return this.host.value || null;
  }

  /** The providers of where the agent runs: the host's (from its snapshot) or this machine's. */
  providersHere() {
    const host = this.selectedHost();
    const theirs = host ? hosts.get(host)?.providers : null;
    return theirs?.length ? theirs : fleet.providers;
  }

  /** The provider choices of where the agent runs, available ones first (in the backend's order). */
  fillProviders() {
    const providers = [...this.providersHere()].sort((a, b) => Number(b.available) - Number(a.available));
    const preferred = providers.find((p) => p.available) ?? null;
    this.providerInputs = [];
    this.providerList.replaceChildren(
      ...providers.map((p) => {
        const input = h('input', {
          type: 'radio',
          name: 'provider',
          value: p.id,
          disabled: !p.available,
          checked: preferred?.id === p.id,
          dataset: { testid: 'new-agent-provider-input' },
          onchange: () => this.onProvider(),
        });
        this.providerInputs.push(input);
        return h(
          'label',
          {
            class: `provider-option${p.available ? '' : ' unavailable'}`,
            dataset: { testid: 'provider-option', provider: p.id, available: String(p.available) },
            title: p.available ? '' : (p.reason ?? 'unavailable'),
          },
          input,
          h('span', { class: 'provider-label' }, p.label),
          h('span', { class: 'provider-kind muted' }, p.kind === 'shell' ? 'built in' : p.kind),
          p.available
            ? null
            : h(
                'span',
                { class: 'provider-reason', dataset: { testid: 'provider-reason' } },
                p.reason ?? 'unavailable',
              ),
        );
      }),
    );
  }

  /** The workspaces of where the agent runs, then "Another directory…"; `workspaceId` chosen. */
  fillWorkspaces(workspaceId) {
    const host = this.selectedHost();
    const workspaces = [...fleet.workspaces.values()]
      .filter((w) => (w.host ?? null) === host)
      .sort((a, b) => workspaceName(a).localeCompare(workspaceName(b)));
    const chosen = workspaces.some((w) => w.workspaceId === workspaceId) ? workspaceId : null;
    this.workspace.replaceChildren(
      ...workspaces.map((w) =>
        h(
          'option',
          { value: w.workspaceId, selected: w.workspaceId === chosen },
          `${workspaceName(w)} — ${w.cwd}`,
        ),
      ),
      h('option', { value: OTHER, selected: workspaces.length === 0 }, 'Another directory…'),
    );
  }

  onHost() {
    this.fillProviders();
    this.onProvider();
    this.fillWorkspaces(this.initialWorkspace);
    // The folder picker shows this machine's folders: on a host the path is typed.
    this.browseButton.hidden = Boolean(this.selectedHost());
    this.directory.placeholder = this.selectedHost()
      ? `/path/on/${this.selectedHost()}`
      : '/path/to/a/directory';
    this.onWorkspace();
  }

  selectedProvider() {
    return this.providerInputs.find((i) => i.checked)?.value ?? null;
  }

  onProvider() {
    const p = this.providersHere().find((x) => x.id === this.selectedProvider());
    this.models.replaceChildren(...(p?.models ?? []).map((m) => h('option', { value: m })));
    this.model.disabled = !p || p.kind === 'shell';
    this.model.placeholder = p?.kind === 'shell' ? 'not used by the shell' : 'default';
  }

  onWorkspace() {
    const other = this.workspace.value === OTHER;
    this.directoryRow.hidden = !other;
    const cwd = other ? this.directory.value.trim() : fleet.workspaces.get(this.workspace.value)?.cwd;
    this.worktree.setRepo(cwd);
    // A folder the app knows is not in a git repository cannot have a worktree; a typed path
    // the app does not know yet is checked by the backend when the form is sent.
    const known = other
      ? [...fleet.workspaces.values()].find((w) => w.cwd === cwd && (w.host ?? null) === this.selectedHost())
      : fleet.workspaces.get(this.workspace.value);
    this.worktree.setUnavailable(
      known?.kind === 'directory' ? 'needs a git repository: this folder is not in one' : null,
    );
    this.onWorktree?.();
  }

  onWorktree() {
    setText(
      this.autoArchiveLabel,
      this.worktree.enabled
        ? 'Archive it when its first turn ends, and remove its new worktree (the branch is kept)'
        : 'Archive it when its first turn ends',
    );
  }

  clearError() {
    setText(this.error, '');
    // Back to its place above the buttons, for errors that belong to no one field.
    if (this.error.parentNode !== this.form || this.error.nextSibling !== this.actionsRow)
      this.form.insertBefore(this.error, this.actionsRow);
    for (const el of this.form.querySelectorAll('[aria-invalid]')) {
      el.removeAttribute('aria-invalid');
      el.removeAttribute('aria-describedby');
    }
  }

  /**
   * Shows `message` at `control` (right under it, the control marked invalid and focused) until
   * the next try; with no control, above the buttons.
   */
  fail(message, control) {
    setText(this.error, message);
    if (control) {
      // Under the control's own row (the directory's row holds Browse… too).
      const anchor =
        control === this.directory
          ? this.directoryRow
          : (control.closest('.sub-field, .worktree-row') ?? control);
      anchor.after(this.error);
      control.setAttribute('aria-invalid', 'true');
      control.setAttribute('aria-describedby', 'new-agent-error');
      control.focus();
      this.error.scrollIntoView({ block: 'nearest' });
    }
  }

  async browse() {
    const path = await this.actions.pickFolder();
    if (path) {
      this.directory.value = path;
      this.workspace.value = OTHER;
      this.onWorkspace();
    }
  }

  async create() {
    if (this.submit.disabled) return;
    this.clearError();
    const provider = this.selectedProvider();
    if (!provider) {
      setText(this.error, 'Choose a provider.');
      return;
    }
    const other = this.workspace.value === OTHER;
    const directory = this.directory.value.trim();
    if (other && !directory) {
      this.fail('Choose a workspace, or give a directory.', this.directory);
      return;
    }
    const form = {
      provider,
      host: this.selectedHost(),
      model: this.model.disabled ? null : this.model.value.trim() || null,
      title: this.title.value.trim() || null,
      prompt: this.prompt.value.trim() ? this.prompt.value : null,
      autoArchive: this.autoArchive.checked,
      unconfined: this.unconfined.checked,
    };
    const where = other ? this.directory : this.workspace;
    if (this.worktree.enabled) {
      const { target, error } = this.worktree.target();
      if (error) {
        this.fail(error[1], error[0]);
        return;
      }
      // The repository is where the chosen workspace or directory is; nothing is registered
      // for it: the worktree becomes the agent's workspace.
      const repo = other ? directory : (fleet.workspaces.get(this.workspace.value)?.cwd ?? '');
      form.worktree = { repo, target };
    } else if (other) form.directory = directory;
    else form.workspaceId = this.workspace.value;
    this.submit.disabled = true;
    setText(this.submit, 'Creating…');
    try {
      await this.actions.create(form);
    } catch (error) {
      const [control, message] =
        this.worktree.explain(error) ??
        (error.field === 'workspace.source.repo'
          ? [where, error.message.replace(/^workspace\.source\.repo: /, 'Repository: ')]
          : DIRECTORY_FIELDS.has(error.field) && other
            ? [this.directory, error.message.replace(/^(workspace\.(source\.)?)?path: /, 'Directory: ')]
            : [null, error.message]);
      this.fail(message, control);
    } finally {
      this.submit.disabled = false;
      setText(this.submit, 'Create agent');
    }
  }
}
