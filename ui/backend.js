// The one seam between the UI and the backend: every command, event and native dialog goes
// through here, and no other module touches window.__TAURI__. Served to a plain browser, it
// fails with a clear error instead of undefined-property crashes.

function tauri() {
  const api = window.__TAURI__;
  if (!api || !api.core) {
    throw new Error('Paseo backend unavailable: this page is not running inside the Paseo app');
  }
  return api;
}

// Rejections from commands arrive as strings or objects; give callers an Error with a message.
async function call(command, args) {
  try {
    return await tauri().core.invoke(command, args);
  } catch (error) {
    if (error instanceof Error) throw error;
    throw new Error(typeof error === 'string' ? error : JSON.stringify(error));
  }
}

/** Facts about the running app: version, data root, log folder, pid, backend state, counts. */
export function appInfo() {
  return call('app_info');
}

/** Subscribes to a backend event; resolves to a function that unsubscribes. */
export function listen(event, handler) {
  return tauri().event.listen(event, (message) => handler(message.payload));
}

/**
 * Asks with a native dialog (GTK on Linux) and resolves to true for OK, false for Cancel.
 * Every destructive or cascading gesture goes through this, naming what will happen.
 */
export function confirm(title, message, { okLabel, cancelLabel, kind = 'warning' } = {}) {
  return tauri().dialog.confirm(message, { title, kind, okLabel, cancelLabel });
}
