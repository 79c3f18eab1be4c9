// "Add a host…" (SPEC 17, UI.md): asks only for a name and an ssh destination (an alias of
// ~/.ssh/config is the normal case), then the backend adds it to config.json and tries it; the
// host's row then says how that went, with ssh's own message when it fails. A popup like About,
// not a modal: Escape, a click elsewhere or Cancel dismisses it. A refused field is named under
// it, the field marked and focused.
import { h, setText } from '../dom.js';
import { closePopup, showPopup } from '../popup.js';

/** save({name, ssh}) → Promise (rejects with a BackendError whose `field` is `host.name`/`host.ssh`). */
export function openHostDialog(anchor, save) {
  const name = h('input', {
    type: 'text',
    placeholder: 'e.g. build',
    spellcheck: 'false',
    autocomplete: 'off',
    dataset: { testid: 'host-name' },
  });
  const ssh = h('input', {
    type: 'text',
    placeholder: 'an ssh alias or user@machine',
    spellcheck: 'false',
    autocomplete: 'off',
    dataset: { testid: 'host-ssh' },
  });
  const error = h('div', {
    class: 'form-error',
    role: 'alert',
    id: 'host-error',
    dataset: { testid: 'host-error' },
  });
  const submit = h(
    'button',
    { class: 'primary small', type: 'submit', dataset: { testid: 'host-save' } },
    'Add host',
  );
  const cancel = h(
    'button',
    { class: 'small', type: 'button', dataset: { testid: 'host-cancel' }, onclick: () => closePopup(true) },
    'Cancel',
  );
  const field = (label, control, hint) =>
    h(
      'label',
      { class: 'field' },
      h('span', { class: 'field-label' }, label),
      control,
      h('span', { class: 'hint muted' }, hint),
    );
  const clear = () => {
    setText(error, '');
    for (const input of [name, ssh]) {
      input.removeAttribute('aria-invalid');
      input.removeAttribute('aria-describedby');
    }
  };
  const actions = h('div', { class: 'about-actions host-dialog-actions' }, cancel, submit);
  const fail = (message, input) => {
    setText(error, message);
    if (!input) {
      actions.before(error);
      return;
    }
    input.after(error);
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', 'host-error');
    input.focus();
  };
  const form = h(
    'form',
    {
      class: 'menu host-dialog',
      role: 'dialog',
      'aria-label': 'Add a host',
      dataset: { testid: 'host-dialog' },
      oninput: clear,
      onsubmit: async (e) => {
        e.preventDefault();
        if (submit.disabled) return;
        clear();
        submit.disabled = true;
        setText(submit, 'Adding…');
        try {
          await save({ name: name.value.trim(), ssh: ssh.value.trim() });
          closePopup(true);
        } catch (err) {
          // The backend names the field at fault (`host.name: …`): said at that field.
          const input = err.field === 'host.name' ? name : err.field === 'host.ssh' ? ssh : null;
          const message = String(err.message ?? err)
            .replace(/^host\.name: /, 'Name: ')
            .replace(/^host\.ssh: /, 'SSH destination: ');
          fail(message, input);
        } finally {
          submit.disabled = false;
          setText(submit, 'Add host');
        }
      },
    },
    h('div', { class: 'about-title' }, 'Add a host'),
    field('Name', name, 'how the app calls it'),
    field('SSH destination', ssh, '`ssh <this> true` must work in a terminal, with no prompt'),
    error,
    actions,
  );
  showPopup(anchor, form, { focus: name, place: 'auto' });
}
