// Catching up, one way for every fleet the window shows: this machine's and each host's (SPEC
// 17). Each source's events come numbered on `paseo://event` ({host?, seq, event}: no host for
// this machine's), and each snapshot says the number of the last event it reflects (`seq`). A
// source's events apply in order above its snapshot's number: one that arrives while a snapshot
// loads waits for it, one the snapshot already reflects is skipped. A number skipped (the
// backend could not keep up with this window and says so, `{seq, missed}`, or an event never
// came) loads the source's snapshot again, so nothing is missed or shown twice.

/** This machine's source; a host's is its name. */
export const HERE = '';

/**
 * key → {load, apply, settled, failed, seq (of what the store holds; null: nothing yet),
 * pending (messages held while a snapshot loads, or null), again (load once more after)}.
 */
const sources = new Map();

let unknown = () => {};

/**
 * Follows a source. `load()` puts its snapshot in the store and resolves to the snapshot's
 * number; `apply(event)` applies one of its events; `settled()` runs after a snapshot and the
 * events held meanwhile are in; `failed(error)` when a snapshot could not be had. Its events
 * are held from now until its first snapshot is in (`sync`).
 */
export function follow(key, { load, apply, settled = () => {}, failed = () => {} }) {
  sources.set(key, { load, apply, settled, failed, seq: null, pending: [], again: false, loads: 0 });
}

/** Stops following a source (a host removed): its events are then `unknown`'s. */
export function unfollow(key) {
  sources.delete(key);
}

/** What to do with an event of a source not followed (a host this window has not listed yet). */
export function onUnknown(handler) {
  unknown = handler;
}

/** How many snapshots of the source the store has loaded (1 after a start without catch-up). */
export function loadsOf(key) {
  return sources.get(key)?.loads ?? 0;
}

/** The number of the source's last event the store reflects (null: none yet). */
export function seqOf(key) {
  return sources.get(key)?.seq ?? null;
}

/**
 * Loads the source's snapshot (with `load`, else the source's own loader), then the events
 * held meanwhile that are newer. A call while one loads loads once more after it.
 */
export async function sync(key, load) {
  const s = sources.get(key);
  if (!s) return;
  if (s.loading) {
    s.again = true;
    return;
  }
  s.loading = true;
  s.pending ??= [];
  let seq;
  try {
    seq = await (load ?? s.load)();
  } catch (error) {
    s.loading = false;
    if (sources.get(key) !== s) return;
    s.pending = null;
    s.failed(error);
    return;
  }
  s.loading = false;
  if (sources.get(key) !== s) return;
  s.loads += 1;
  s.seq = seq;
  const held = s.pending;
  s.pending = null;
  for (const m of held) take(key, s, m);
  s.settled();
  if (s.again) {
    s.again = false;
    sync(key);
  }
}

const soon = new Map();

/** Syncs the source after `delay` ms (several asks in a row sync once). */
export function syncSoon(key, delay = 300) {
  clearTimeout(soon.get(key));
  soon.set(
    key,
    setTimeout(() => {
      soon.delete(key);
      sync(key);
    }, delay),
  );
}

/** Holds `m` and loads the source's snapshot again. */
function resync(key, s, m) {
  s.pending ??= [];
  if (m) s.pending.push(m);
  sync(key);
}

/** One message of `paseo://event`: {host?, seq, event} or {host?, seq, missed}. */
export function onEvent(m) {
  const key = m?.host ?? HERE;
  const s = sources.get(key);
  if (!s) {
    unknown(m);
    return;
  }
  if (s.pending) {
    s.pending.push(m);
    return;
  }
  take(key, s, m);
}

function take(key, s, m) {
  if (s.seq === null) return resync(key, s, m);
  if (m.seq <= s.seq) return;
  // Events up to `m.seq` were lost on the way (the backend says so, or one never came).
  if (m.missed || m.seq !== s.seq + 1) return resync(key, s, m.missed ? null : m);
  s.seq = m.seq;
  s.apply(m.event);
}
