// The composer: a prompt box with Send and Stop. Send is for an agent that is not busy (idle,
// closed — it resumes — or failed — it runs again); Stop only while a turn runs. Enter sends,
// Shift+Enter starts a new line, Escape stops a running turn. Drafts are kept per agent.
import { firstThatFits, h, setAttr, setText } from '../dom.js';
import { agentName } from '../status.js';
import { providerInfo } from '../store.js';

// What a shell agent really does with a prompt (providers/shell.rs): a script run by a new
// shell in the agent's folder, so nothing carries over between prompts.
const SHELL_HINT =
  "Each prompt runs in a fresh shell in the agent's folder: cd and export do not carry over, and stdin is empty.";

const drafts = new Map();

export class Composer {
  /** actions: {send(agentId, text) → Promise, interrupt(agentId) → Promise} */
  constructor(actions) {
    this.actions = actions;
    this.agent = null;
    this.sending = false;
    this.stopping = false;
    this.input = h('textarea', {
      class: 'composer-input',
      rows: '1',
      spellcheck: 'false',
      dataset: { testid: 'composer-input' },
      oninput: () => this.onInput(),
      onkeydown: (e) => this.onKey(e),
    });
    this.send = h(
      'button',
      {
        class: 'primary',
        type: 'button',
        dataset: { testid: 'composer-send' },
        title: 'Send (Enter)',
        onclick: () => this.submit(),
      },
      'Send',
    );
    this.stop = h(
      'button',
      {
        type: 'button',
        dataset: { testid: 'composer-interrupt' },
        title: 'Stop the running turn (Esc)',
        onclick: () => this.interrupt(),
      },
      'Stop',
    );
    this.error = h('div', { class: 'composer-error', role: 'alert', dataset: { testid: 'composer-error' } });
    // A held turn (a start to approve, a turn over budget) takes no prompt until the user answers
    // it above: said from the moment the pane shows it, so nothing appears (and nothing moves)
    // when the user presses Enter.
    this.heldNote = h('div', {
      class: 'composer-held',
      role: 'status',
      hidden: true,
      dataset: { testid: 'composer-held' },
    });
    this.hint = h('div', { class: 'composer-hint', dataset: { testid: 'composer-hint' } });
    // Enter while a turn runs sends nothing: this says why, and offers Stop.
    this.busyText = h('span', {});
    this.busyNote = h(
      'div',
      { class: 'composer-busy', role: 'status', hidden: true, dataset: { testid: 'composer-busy' } },
      this.busyText,
      ' ',
      h(
        'button',
        {
          class: 'link',
          type: 'button',
          dataset: { testid: 'composer-busy-stop' },
          onclick: () => this.interrupt(),
        },
        'Stop the turn',
      ),
    );
    this.el = h(
      'div',
      { class: 'composer' },
      h(
        'div',
        { class: 'composer-row' },
        this.input,
        h('div', { class: 'composer-actions' }, this.send, this.stop),
      ),
      this.heldNote,
      this.busyNote,
      this.error,
      this.hint,
    );
    // Panes change width with the window, the sidebar and split layouts.
    new ResizeObserver(() => this.fitPlaceholder()).observe(this.input);
  }

  get busy() {
    const s = this.agent?.status;
    return s === 'running' || s === 'initializing';
  }

  /** What the agent's held turn waits for (a start to approve, a budget), or null. */
  get held() {
    const kind = this.agent?.pendingPermission?.kind;
    return kind === 'heldStart' || kind === 'budget' ? kind : null;
  }

  render(agent) {
    if (this.agent?.id !== agent.id) {
      if (this.agent) drafts.set(this.agent.id, this.input.value);
      this.input.value = drafts.get(agent.id) ?? '';
      this.sending = false;
      this.stopping = false;
      setText(this.error, '');
      this.busyNote.hidden = true;
      this.autosize();
    }
    this.agent = agent;
    setText(this.hint, providerInfo(agent.provider)?.kind === 'shell' ? SHELL_HINT : '');
    if (!this.busy) this.busyNote.hidden = true;
    const name = agentName(agent);
    const held = this.held;
    this.heldNote.hidden = !held;
    setText(
      this.heldNote,
      held === 'heldStart'
        ? `${name} waits for you to allow its start: Allow or Deny it above. It takes a prompt once it has run or you denied it; your draft is kept.`
        : held === 'budget'
          ? `${name}'s next turn waits because its tree used its budget: Allow that turn, raise the budget or Deny it above. Your draft is kept.`
          : '',
    );
    setAttr(this.input, 'aria-label', `Prompt for ${name}`);
    // Measured again only when the wording changes; the ResizeObserver covers the width.
    if (this.placeholderFor !== `${this.busy}|${name}`) this.fitPlaceholder();
    this.updateButtons();
  }

  /** The longest wording that stays on one line in the box as it is now. */
  fitPlaceholder() {
    if (!this.agent) return;
    const name = agentName(this.agent);
    this.placeholderFor = `${this.busy}|${name}`;
    const texts = this.busy
      ? [`${name} is working… (Esc to stop)`, `${name} is working…`, 'Working… (Esc to stop)', 'Working…']
      : [
          `Send to ${name}…  (Enter to send, Shift+Enter for a new line)`,
          `Send to ${name}…  (Enter to send)`,
          `Send to ${name}…`,
          'Send a prompt…  (Enter to send)',
          'Send a prompt…',
        ];
    setAttr(this.input, 'placeholder', firstThatFits(this.input, texts));
  }

  updateButtons() {
    const empty = this.input.value.trim() === '';
    this.send.disabled = empty || this.busy || this.sending || Boolean(this.held);
    setAttr(this.send, 'aria-label', this.busy ? 'Send (disabled while the agent is working)' : 'Send');
    this.stop.disabled = !(this.agent?.status === 'running') || this.stopping;
    setAttr(this.stop, 'aria-label', 'Stop the running turn');
    setText(this.stop, this.stopping ? 'Stopping…' : 'Stop');
  }

  onInput() {
    this.autosize();
    this.updateButtons();
    if (this.error.textContent) setText(this.error, '');
  }

  autosize() {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, 200)}px`;
  }

  onKey(e) {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.submit();
    } else if (e.key === 'Escape' && this.busy) {
      e.preventDefault();
      this.interrupt();
    }
  }

  focus() {
    this.input.focus();
  }

  async submit() {
    const agent = this.agent;
    const text = this.input.value;
    // The note under the box already says why nothing is sent (and keeps the draft).
    if (this.held) return;
    if (agent && this.busy && text.trim() !== '') {
      // Kept, not queued: the user decides whether to stop the turn or wait for it.
      setText(
        this.busyText,
        agent.status === 'initializing'
          ? `Not sent: ${agentName(agent)} is still starting. Your draft is kept; send it once it is ready.`
          : `Not sent: ${agentName(agent)} is still working. Your draft is kept; send it when the turn ends.`,
      );
      this.busyNote.lastChild.hidden = agent.status !== 'running';
      this.busyNote.hidden = false;
      return;
    }
    if (!agent || this.send.disabled || text.trim() === '') return;
    this.sending = true;
    this.updateButtons();
    try {
      await this.actions.send(agent.id, text);
      if (this.agent?.id === agent.id) {
        this.input.value = '';
        this.autosize();
      }
      drafts.delete(agent.id);
    } catch (error) {
      if (this.agent?.id === agent.id) setText(this.error, error.message);
    } finally {
      this.sending = false;
      if (this.agent?.id === agent.id) this.updateButtons();
    }
  }

  async interrupt() {
    const agent = this.agent;
    if (!agent || this.stop.disabled) return;
    this.stopping = true;
    this.updateButtons();
    try {
      await this.actions.interrupt(agent.id);
    } catch (error) {
      if (this.agent?.id === agent.id) setText(this.error, error.message);
    } finally {
      this.stopping = false;
      if (this.agent?.id === agent.id) this.updateButtons();
    }
  }
}
