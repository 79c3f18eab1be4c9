// The undo toast: after a soft gesture (closing a root agent's tab, Detach, a track archive,
// "Archive finished") one line says what happened, with an Undo button, for about ten seconds.
// A newer gesture replaces it. It is a polite live region (role=status), so screen readers
// announce it without taking focus; Undo is an ordinary button in the tab order, and the
// countdown pauses while the pointer or the keyboard focus is on the toast, so nobody loses it
// while reaching for it.
import { h, setText } from '../dom.js';

/** How long a toast stays, unhovered and unfocused. */
export const TOAST_MS = 10_000;

export class Toast {
  constructor(host) {
    this.text = h('span', { class: 'toast-text', dataset: { testid: 'toast-text' } });
    this.undo = h(
      'button',
      {
        class: 'small toast-undo',
        type: 'button',
        title: 'Undo (Ctrl+Z)',
        dataset: { testid: 'toast-undo' },
        onclick: () => this.runUndo(),
      },
      'Undo',
    );
    this.close = h(
      'button',
      {
        class: 'icon ghost toast-close',
        type: 'button',
        'aria-label': 'Dismiss',
        title: 'Dismiss',
        dataset: { testid: 'toast-dismiss' },
        onclick: () => this.hide(),
      },
      '×',
    );
    this.el = h(
      'div',
      { class: 'toast', role: 'status', 'aria-live': 'polite', dataset: { testid: 'toast' }, hidden: true },
      this.text,
      this.undo,
      this.close,
    );
    this.el.addEventListener('mouseenter', () => this.pause());
    this.el.addEventListener('mouseleave', () => this.resume());
    this.el.addEventListener('focusin', () => this.pause());
    this.el.addEventListener('focusout', (e) => {
      if (!this.el.contains(e.relatedTarget)) this.resume();
    });
    this.el.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        this.hide();
      }
    });
    host.append(this.el);
    this.timer = 0;
    this.current = null;
  }

  /**
   * Shows `text`; `undo` (async, optional) is what the Undo button runs. Without it the toast
   * only informs (e.g. why a detach cannot be undone).
   */
  show(text, undo = null) {
    this.current = { undo, running: false };
    setText(this.text, text);
    this.undo.hidden = !undo;
    this.undo.disabled = false;
    this.el.hidden = false;
    this.el.dataset.state = 'shown';
    this.paused = false;
    this.arm(TOAST_MS);
  }

  hide() {
    clearTimeout(this.timer);
    this.timer = 0;
    const hadFocus = this.el.contains(document.activeElement);
    this.el.hidden = true;
    this.el.dataset.state = 'hidden';
    this.current = null;
    // The focus must not be left on a hidden button.
    if (hadFocus) document.activeElement.blur();
  }

  arm(ms) {
    clearTimeout(this.timer);
    this.deadline = Date.now() + ms;
    this.timer = setTimeout(() => this.hide(), ms);
  }

  pause() {
    if (this.el.hidden || this.paused) return;
    this.paused = true;
    clearTimeout(this.timer);
    this.left = Math.max(this.deadline - Date.now(), 0);
  }

  resume() {
    if (this.el.hidden || !this.paused) return;
    this.paused = false;
    // At least a moment more: leaving the toast should not make it vanish at once.
    this.arm(Math.max(this.left, 2_000));
  }

  async runUndo() {
    const cur = this.current;
    if (!cur?.undo || cur.running) return;
    cur.running = true;
    this.undo.disabled = true;
    try {
      await cur.undo();
      if (this.current === cur) this.hide();
    } catch (error) {
      // Said in the toast itself, where the user is looking; it then goes as any toast does.
      if (this.current === cur) this.show(`Could not undo: ${error?.message ?? error}`);
    }
  }
}
