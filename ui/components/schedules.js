// The Schedules section of a workspace home (SPEC 20): the schedules whose runs work in this
// workspace, each with its when in words, its next run, what its last run gave, a pause switch,
// Run now, Edit and Delete; "New schedule…" opens the form, which says the next three due times
// as the user types. The list is config.json's `schedules`, read and changed through the
// backend's schedule requests (the core checks every entry and names the field at fault).
import { dayText, h, minuteText, mount, setText } from '../dom.js';
import * as backend from '../backend.js';
import { fleet } from '../store.js';
import { hosts } from '../hosts.js';

const PREVIEW_DELAY_MS = 250;
// Other windows, the scheduler and config.json edits change the list: asked again this often while
// the section is in view (one small request).
const REFRESH_MS = 5_000;
const RUN_SHOWS_MS = 800;

/** A time as the user reads it: today's as "07:00", others with their date. */
function when(at) {
  const time = minuteText(at);
  if (new Date(at).toDateString() === new Date().toDateString()) return time;
  return `${dayText(at)} ${time}`;
}

/** What the last due time gave, with its glyph: "✓ 07:00", "✗ failed 07:00 …", "– skipped 07:15". */
function lastWords(last) {
  if (!last) return 'no run yet';
  const late = last.late ? ' (late)' : '';
  if (last.what === 'started') return `✓ ran ${when(last.due)}${late}`;
  if (last.what === 'failed') return `✗ failed ${when(last.due)}: ${last.why ?? ''}`;
  return `– ${last.why ?? 'passed'} ${when(last.due)}`;
}

/** Whether a schedule's runs work in the workspace `ws`. */
function inWorkspace(entry, ws) {
  const w = entry?.workspace ?? {};
  if (w.kind === 'existing') return w.workspaceId === ws.workspaceId;
  const path = w.kind === 'worktree' ? w.repo : w.path;
  return Boolean(path) && (path === ws.cwd || path.replace(/\/+$/, '') === ws.cwd);
}

export class SchedulesSection {
  /** actions: {open(agentId)} */
  constructor(actions) {
    this.actions = actions;
    this.wsId = null;
    this.all = [];
    this.list = h('div', { class: 'schedule-list', role: 'list', 'aria-label': 'Schedules' });
    this.empty = h('p', { class: 'muted' }, 'No schedule runs here yet.');
    this.error = h('p', {
      class: 'schedule-error error',
      role: 'alert',
      hidden: true,
      dataset: { testid: 'schedule-error' },
    });
    this.form = new ScheduleForm(
      () => this.refresh(),
      (m) => this.fail(m),
    );
    this.el = h(
      'section',
      { class: 'schedules', dataset: { testid: 'schedules' } },
      h(
        'header',
        { class: 'schedules-head' },
        h('h2', {}, 'Schedules'),
        h(
          'button',
          {
            class: 'ghost',
            type: 'button',
            dataset: { testid: 'schedule-new' },
            onclick: () => this.form.open(fleet.workspaces.get(this.wsId), null),
          },
          'New schedule…',
        ),
      ),
      this.error,
      this.form.el,
      this.list,
      this.empty,
    );
    this.timer = null;
  }

  /** Shows the schedules of workspace `wsId` (asking the backend again). */
  render(wsId) {
    if (wsId !== this.wsId) this.form.close();
    this.wsId = wsId;
    this.refresh();
    clearInterval(this.timer);
    // The next runs move on and last outcomes arrive while the home is open.
    this.timer = setInterval(() => {
      if (this.el.isConnected && !document.hidden) this.refresh();
    }, REFRESH_MS);
  }

  async refresh() {
    try {
      this.all = (await backend.listSchedules(this.host())) ?? [];
      this.error.hidden = true;
    } catch (e) {
      // A host not connected (or an older one) cannot say: what went wrong is shown.
      this.fail(e.message);
      this.all = [];
    }
    this.draw();
  }

  /** The host whose workspace this is (its schedules run there), or null for this machine. */
  host() {
    return fleet.workspaces.get(this.wsId)?.host ?? null;
  }

  fail(message) {
    setText(this.error, message);
    this.error.hidden = false;
  }

  draw() {
    const ws = fleet.workspaces.get(this.wsId);
    const mine = ws ? this.all.filter((s) => inWorkspace(s.entry, ws)) : [];
    mount(this.list, ...mine.map((s) => this.row(s, ws)));
    this.empty.hidden = mine.length > 0;
  }

  row(s, ws) {
    const act = (label, testid, title, fn, cls = 'ghost') =>
      h('button', { class: cls, type: 'button', title, dataset: { testid }, onclick: fn }, label);
    const guard = (fn) => async () => {
      try {
        await fn();
        await this.refresh();
      } catch (e) {
        this.fail(e.message);
      }
    };
    const pause = h('input', {
      type: 'checkbox',
      checked: !s.paused,
      title: s.paused ? 'Paused: its due times pass without a run' : 'On',
      'aria-label': `Run ${s.name} on its schedule`,
      dataset: { testid: 'schedule-pause' },
      onchange: guard(() => backend.pauseSchedule(s.name, !pause.checked, this.host())),
    });
    const last = s.last;
    const lastEl = h(
      last?.agentId ? 'a' : 'span',
      {
        class: `schedule-last ${last?.what ?? 'none'}`,
        href: last?.agentId ? '#' : null,
        dataset: { testid: 'schedule-last' },
        onclick: last?.agentId
          ? (e) => {
              e.preventDefault();
              this.actions.open(last.agentId);
            }
          : null,
      },
      lastWords(last),
    );
    const next = s.paused ? 'paused' : s.next.length ? `next ${when(s.next[0])}` : 'no more runs';
    return h(
      'div',
      {
        class: `schedule-row${s.paused ? ' paused' : ''}`,
        role: 'listitem',
        dataset: { testid: 'schedule-row', name: s.name },
      },
      // ◷ rather than ⏲: the fonts every desktop has draw it (⏲ needs an emoji font).
      h('span', { class: 'schedule-glyph', 'aria-hidden': 'true' }, '◷'),
      h('span', { class: 'schedule-name' }, s.name),
      h('span', { class: 'schedule-words muted', title: s.words }, s.words),
      h('span', { class: 'schedule-next muted', dataset: { testid: 'schedule-next' } }, next),
      lastEl,
      h('label', { class: 'schedule-switch' }, pause, ' On'),
      act(
        'Run now',
        'schedule-run',
        'Start a run of this schedule now',
        guard(async () => {
          await backend.runSchedule(s.name, this.host());
          // The scheduler starts the run a moment later: its outcome shows then.
          setTimeout(() => this.refresh(), RUN_SHOWS_MS);
        }),
      ),
      act('Edit', 'schedule-edit', 'Change this schedule', () => this.form.open(ws, s)),
      act(
        'Delete…',
        'schedule-delete',
        'Delete this schedule (its runs stay)',
        guard(async () => {
          const yes = await backend.confirm(
            'Delete schedule?',
            `"${s.name}" will run no more. Its runs so far stay.`,
            'Delete',
          );
          if (yes) await backend.deleteSchedule(s.name, this.host());
        }),
      ),
    );
  }
}

/** The form that makes or changes a schedule; it reads like the new-agent form plus "When". */
class ScheduleForm {
  constructor(saved, fail) {
    this.saved = saved;
    this.fail = fail;
    this.editing = null;
    this.ws = null;
    const field = (label, input) => h('label', { class: 'field' }, h('span', {}, label), input);
    this.name = h('input', { type: 'text', maxlength: '64', dataset: { testid: 'schedule-name' } });
    this.kind = h(
      'select',
      { 'aria-label': 'Kind of when', dataset: { testid: 'schedule-kind' }, onchange: () => this.preview() },
      h('option', { value: 'every' }, 'Every'),
      h('option', { value: 'cron' }, 'Cron (5 fields)'),
      h('option', { value: 'at' }, 'Once at (RFC 3339)'),
    );
    this.when = h('input', {
      type: 'text',
      placeholder: '15m',
      spellcheck: 'false',
      class: 'mono',
      dataset: { testid: 'schedule-when' },
      oninput: () => this.preview(),
    });
    this.next = h('p', { class: 'schedule-preview muted', dataset: { testid: 'schedule-preview' } });
    this.provider = h('select', { dataset: { testid: 'schedule-provider' } });
    this.prompt = h('textarea', { rows: '3', dataset: { testid: 'schedule-prompt' } });
    this.overlap = h(
      'select',
      { dataset: { testid: 'schedule-overlap' } },
      h('option', { value: 'skip' }, 'Skip a due time while the last run still works'),
      h('option', { value: 'queue' }, 'Queue it until the last run stops'),
    );
    this.error = h('p', {
      class: 'error',
      role: 'alert',
      hidden: true,
      dataset: { testid: 'schedule-form-error' },
    });
    this.el = h(
      'form',
      {
        class: 'schedule-form',
        hidden: true,
        dataset: { testid: 'schedule-form' },
        onsubmit: (e) => {
          e.preventDefault();
          this.save();
        },
        onkeydown: (e) => {
          if (e.key === 'Escape') {
            e.stopPropagation();
            this.close();
          }
        },
        // What the last Save refused is stale once the user changes anything.
        oninput: () => {
          this.error.hidden = true;
        },
      },
      field('Name', this.name),
      h('div', { class: 'when-line' }, field('When', this.kind), this.when),
      this.next,
      field('Provider', this.provider),
      field('Prompt', this.prompt),
      field('Overlap', this.overlap),
      this.error,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'ghost', onclick: () => this.close() }, 'Cancel'),
        h('button', { type: 'submit', class: 'primary', dataset: { testid: 'schedule-save' } }, 'Save'),
      ),
    );
    this.timer = null;
    this.asked = 0;
  }

  /** Opens the form for a new schedule in `ws`, or to change `s`. */
  open(ws, s) {
    this.ws = ws;
    this.editing = s;
    const e = s?.entry ?? {};
    this.name.value = e.name ?? '';
    const kind = ['cron', 'every', 'at'].find((k) => typeof e[k] === 'string') ?? 'every';
    this.kind.value = kind;
    this.when.value = e[kind] ?? '';
    // The providers of where the runs work: a host's own, or this machine's.
    const theirs = ws?.host ? hosts.get(ws.host)?.providers : null;
    const providers = theirs?.length ? theirs : fleet.providers;
    mount(
      this.provider,
      ...providers.map((p) => h('option', { value: p.id, disabled: !p.available }, p.label ?? p.id)),
    );
    this.provider.value = e.provider ?? providers.find((p) => p.available)?.id ?? 'shell';
    this.prompt.value = e.prompt ?? '';
    this.overlap.value = e.overlap ?? 'skip';
    this.error.hidden = true;
    this.el.hidden = false;
    this.preview();
    this.name.focus();
  }

  close() {
    this.el.hidden = true;
    this.editing = null;
  }

  /** Says the next three due times of what is typed (after a short pause in the typing). */
  preview() {
    clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      const text = this.when.value.trim();
      const n = ++this.asked;
      if (!text) {
        setText(this.next, '');
        return;
      }
      try {
        const p = await backend.previewSchedule({ [this.kind.value]: text }, this.ws?.host ?? null);
        if (n !== this.asked) return;
        const times = p.next.map(when).join(', ');
        setText(this.next, times ? `${p.words} · next ${times}` : `${p.words} · already past`);
        this.next.classList.remove('bad');
      } catch (e) {
        if (n !== this.asked) return;
        setText(this.next, e.message);
        this.next.classList.add('bad');
      }
    }, PREVIEW_DELAY_MS);
  }

  entry() {
    const old = this.editing?.entry ?? {};
    const entry = { ...old, name: this.name.value.trim() };
    for (const k of ['cron', 'every', 'at']) delete entry[k];
    entry[this.kind.value] = this.when.value.trim();
    entry.provider = this.provider.value;
    entry.prompt = this.prompt.value;
    if (this.overlap.value === 'skip') delete entry.overlap;
    else entry.overlap = this.overlap.value;
    // A new schedule works in this workspace's folder; an edited one keeps its own.
    entry.workspace = old.workspace ?? { kind: 'directory', path: this.ws?.cwd };
    return entry;
  }

  async save() {
    try {
      await backend.saveSchedule(this.entry(), this.editing?.name ?? null, this.ws?.host ?? null);
      this.close();
      this.saved();
    } catch (e) {
      setText(this.error, e.message);
      this.error.hidden = false;
    }
  }
}
