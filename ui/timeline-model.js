// The timelines this window shows: for a few recently viewed agents, the newest items (loaded
// from the backend, then kept current by events) and older pages fetched from disk on demand.
// Items are dense by `seq` per agent, so a model is one contiguous run of seqs.
import * as backend from './backend.js';

const PAGE = 200;
/** At most this many items are kept per agent (older ones are paged back in when needed). */
const MAX_ITEMS = 3000;
/** Models kept for agents that are not on screen (reopening them is then instant). */
const KEEP = 8;

const models = new Map();

export class TimelineModel {
  constructor(agentId) {
    this.agentId = agentId;
    /** Loaded items, oldest first, contiguous by seq. */
    this.items = [];
    this.loaded = false;
    /** Whether items[0] is the agent's first item. */
    this.atStart = false;
    this.loadingOlder = null;
    this.error = null;
    /** Bumped when items change, so views know to look. */
    this.version = 0;
    this.listeners = new Set();
    this.pending = [];
    /** The first seq the current view holds on to (trimming keeps it). */
    this.pinnedFrom = Infinity;
    this.ready = this.loadLatest();
  }

  get firstSeq() {
    return this.items.length ? this.items[0].seq : 0;
  }

  get lastSeq() {
    return this.items.length ? this.items[this.items.length - 1].seq : 0;
  }

  /** The item with `seq`, if loaded. */
  at(seq) {
    const i = seq - this.firstSeq;
    return i >= 0 && i < this.items.length ? this.items[i] : undefined;
  }

  notify() {
    this.version++;
    for (const fn of this.listeners) fn(this);
  }

  async loadLatest() {
    try {
      const page = await backend.timeline(this.agentId, null, PAGE);
      this.items = page;
      this.atStart = page.length < PAGE || (page[0]?.seq ?? 1) <= 1;
      this.loaded = true;
      const pending = this.pending;
      this.pending = [];
      this.append(pending, true);
      this.notify();
    } catch (error) {
      this.error = error;
      this.loaded = true;
      this.notify();
    }
  }

  /** New items from an event. */
  ingest(items) {
    if (!this.loaded) {
      this.pending.push(...items);
      return;
    }
    this.append(items, false);
  }

  append(items, quiet) {
    let added = 0;
    for (const item of items) {
      const last = this.lastSeq;
      if (this.items.length && item.seq <= last) continue;
      if (this.items.length && item.seq !== last + 1) {
        // A gap (events missed while falling behind): the older part is paged in on demand.
        this.items = [];
        this.atStart = false;
      }
      this.items.push(item);
      added++;
    }
    if (this.items.length > MAX_ITEMS) {
      // Drop the oldest, but never what a view is showing.
      const keepFrom = Math.min(this.pinnedFrom, this.lastSeq - MAX_ITEMS + 1);
      const drop = keepFrom - this.firstSeq;
      if (drop > 0) {
        this.items.splice(0, drop);
        this.atStart = false;
      }
    }
    if (added && !quiet) this.notify();
  }

  /** Pages older items in from the backend (disk), `limit` at most; resolves to how many were added. */
  loadOlder(limit = PAGE) {
    if (this.atStart || !this.loaded) return Promise.resolve(0);
    if (this.loadingOlder) return this.loadingOlder;
    const before = this.firstSeq || null;
    this.loadingOlder = backend
      .timeline(this.agentId, before, limit)
      .then((page) => {
        const older = before ? page.filter((item) => item.seq < before) : page;
        if (older.length && before && older[older.length - 1].seq !== before - 1) {
          // Not contiguous (should not happen): start over from the newest.
          return this.loadLatest().then(() => 0);
        }
        this.items = older.concat(this.items);
        if (page.length < limit || (older[0]?.seq ?? 1) <= 1) this.atStart = true;
        this.notify();
        return older.length;
      })
      .catch((error) => {
        this.error = error;
        return 0;
      })
      .finally(() => {
        this.loadingOlder = null;
      });
    return this.loadingOlder;
  }
}

/** The model of `agentId`, created (and loading) if needed; most recently used first. */
export function modelFor(agentId) {
  let model = models.get(agentId);
  if (model) {
    models.delete(agentId);
  } else {
    model = new TimelineModel(agentId);
  }
  models.set(agentId, model);
  while (models.size > KEEP) {
    const oldest = models.keys().next().value;
    models.delete(oldest);
  }
  return model;
}

/** Routes event items to a model if this window keeps one for the agent. */
export function ingest(agentId, items) {
  models.get(agentId)?.ingest(items);
}

export function forget(agentId) {
  models.delete(agentId);
}

/** After a resync: every kept model reloads its newest page. */
export function reloadAll() {
  // Replaced, not dropped: a model kept for a tab in the background must go on following its
  // agent (events route only to kept models), not wait for the tab to be shown again.
  for (const id of [...models.keys()]) models.set(id, new TimelineModel(id));
}
