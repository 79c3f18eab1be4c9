// The window's agent cards, held in columns: one typed array per field and the ids and titles
// of the snapshot's agents as slices of one string each: with 100,000 agents a card object and
// its id and title strings per agent were tens of MiB of the page; in columns they are a few
// bytes a field (figures: docs/scale.md).
// The interface is the part of Map's the store uses; `get` and `values` build a card object
// each time (callers read it and let it go), so the page keeps no object per agent.

/** Fields that hold one of few strings (a provider, a status, a workspace…): a number each. */
const SHARED = [
  'provider',
  'status',
  'workspaceId',
  'cwd',
  'bucket',
  'power',
  'attentionReason',
  'statusWord',
  'look',
];

/** Instants, in epoch milliseconds. */
const INSTANTS = ['createdAt', 'updatedAt', 'lastActivityAt'];

/** Fields most agents lack, kept in an object of their own for those that have any. */
const RARE = [
  'requiresAttention',
  'needsYou',
  'pendingPermission',
  'waitingForSlot',
  'queuePlace',
  'changes',
  'usage',
  'treeUsage',
  'lastRun',
  'turnCount',
  'unconfined',
];

/** A slot's parent, when it has none (NONE) or one whose id is not a slot (kept as its string). */
const NONE = -1;
const BY_ID = -2;

/** Hash table marks: an empty place, a place freed by a delete. */
const EMPTY = -1;
const FREED = -2;

/** Strings of a column: slices of one joined string for the first slots, then strings of their own. */
class Texts {
  /** text: the strings one after the other; ends: where each ends in it (an Int32Array). */
  constructor(text, ends) {
    this.text = text;
    this.ends = ends;
    /** slot → string, for slots past the joined ones and joined ones set since. */
    this.own = new Map();
  }

  static of(values) {
    const ends = new Int32Array(values.length);
    let end = 0;
    for (let i = 0; i < values.length; i++) ends[i] = end += values[i].length;
    return new Texts(values.join(''), ends);
  }

  get(slot) {
    const own = this.own.get(slot);
    if (own !== undefined) return own;
    if (slot >= this.ends.length) return '';
    return this.text.slice(slot ? this.ends[slot - 1] : 0, this.ends[slot]);
  }

  /** Whether the slot's string is `s`, without building it. */
  is(slot, s) {
    const own = this.own.get(slot);
    if (own !== undefined) return own === s;
    if (slot >= this.ends.length) return s === '';
    const from = slot ? this.ends[slot - 1] : 0;
    if (this.ends[slot] - from !== s.length) return false;
    for (let i = 0; i < s.length; i++) if (this.text.charCodeAt(from + i) !== s.charCodeAt(i)) return false;
    return true;
  }

  /** The slot's string hashed, without building it. */
  hash(slot) {
    const own = this.own.get(slot);
    if (own !== undefined) return hashOf(own, 0, own.length);
    return hashOf(this.text, slot ? this.ends[slot - 1] : 0, this.ends[slot]);
  }

  set(slot, s) {
    if (slot < this.ends.length && this.is(slot, s) && !this.own.has(slot)) return;
    this.own.set(slot, s);
  }

  forget(slot) {
    this.own.delete(slot);
  }
}

function hashOf(s, from, to) {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function grown(array, length) {
  const next = new array.constructor(length);
  next.set(array);
  return next;
}

export class Cards {
  /** cards: card objects, in the order `values` gives them back. */
  constructor(cards = []) {
    const n = cards.length;
    this.init(n, Texts.of(cards.map((c) => c.id)), Texts.of(cards.map((c) => c.title ?? '')));
    /** slot → the card a repeated id left it (a Map keeps the first place and the last value). */
    const last = new Map();
    for (let slot = 0; slot < n; slot++) {
      const had = this.slotOf(cards[slot].id);
      if (had >= 0) {
        this.write(had, cards[slot]);
        last.set(had, cards[slot]);
        continue;
      }
      this.place(slot);
      this.write(slot, cards[slot]);
    }
    for (let slot = 0; slot < n; slot++) {
      if (this.live[slot]) this.link(slot, (last.get(slot) ?? cards[slot]).parentAgentId);
    }
  }

  /**
   * The cards of a window's snapshot, sent as columns (paseo-core's runtime/window.rs `Cards`):
   * no object is made per agent. `strings`: the snapshot's shared strings.
   */
  static fromColumns(columns, strings) {
    const n = columns.count;
    const ids = new Int32Array(n);
    for (let i = 0; i < n; i++) ids[i] = (i + 1) * 36;
    const cards = Object.create(Cards.prototype);
    cards.init(n, new Texts(columns.ids, ids), new Texts(columns.titles, Int32Array.from(columns.titleEnds)));
    strings.forEach((s) => cards.stringRef(s));
    for (let slot = 0; slot < n; slot++) cards.place(slot);
    SHARED.forEach((key, k) => {
      const column = columns[key];
      const into = cards.shared[k];
      for (let slot = 0; slot < n; slot++) {
        const ref = column[slot];
        if (ref <= 0xfffe) into[slot] = ref;
        else cards.rareOf(slot)[key] = strings[ref - 1];
      }
    });
    INSTANTS.forEach((key, k) => {
      const column = columns[key];
      const into = cards.times[k];
      for (let slot = 0; slot < n; slot++) into[slot] = column[slot] ?? NaN;
    });
    for (let slot = 0; slot < n; slot++) cards.parent[slot] = columns.parent[slot];
    for (const [slot, id] of Object.entries(columns.parentIds)) cards.parentIds.set(Number(slot), id);
    for (const [slot, rare] of columns.rare) Object.assign(cards.rareOf(slot), rare);
    return cards;
  }

  /** Empty columns for `n` slots, their ids and titles in `ids` and `titles`. */
  init(n, ids, titles) {
    this.capacity = Math.max(64, n + (n >> 2));
    this.used = n;
    this.size = 0;
    this.ids = ids;
    this.titles = titles;
    this.live = new Uint8Array(this.capacity);
    this.parent = new Int32Array(this.capacity).fill(NONE);
    /** slot → its parent's id, for parents that are not a slot (BY_ID). */
    this.parentIds = new Map();
    this.times = INSTANTS.map(() => new Float64Array(this.capacity));
    this.shared = SHARED.map(() => new Uint16Array(this.capacity));
    /** The SHARED fields' strings; a column holds a place + 1 (0: absent). */
    this.strings = [];
    this.stringAt = new Map();
    /** slot → {field: value} of its RARE fields and SHARED ones past 65,535 strings. */
    this.rare = new Map();
    this.index = new Int32Array(1 << Math.max(7, Math.ceil(Math.log2(this.capacity * 2)))).fill(EMPTY);
    this.indexed = 0;
  }

  rareOf(slot) {
    let rare = this.rare.get(slot);
    if (!rare) this.rare.set(slot, (rare = {}));
    return rare;
  }

  /** The slot holding `id`, or -1. */
  slotOf(id) {
    if (typeof id !== 'string') return -1;
    const mask = this.index.length - 1;
    for (let i = hashOf(id, 0, id.length) & mask; ; i = (i + 1) & mask) {
      const slot = this.index[i];
      if (slot === EMPTY) return -1;
      if (slot >= 0 && this.ids.is(slot, id)) return slot;
    }
  }

  /** Puts a new live slot in the hash index. */
  place(slot) {
    if ((this.indexed + 1) * 2 > this.index.length) this.rehash();
    const mask = this.index.length - 1;
    let i = this.ids.hash(slot) & mask;
    while (this.index[i] >= 0) i = (i + 1) & mask;
    if (this.index[i] === EMPTY) this.indexed++;
    this.index[i] = slot;
    this.live[slot] = 1;
    this.size++;
  }

  rehash() {
    let length = this.index.length;
    while (this.size * 4 > length) length *= 2;
    this.index = new Int32Array(length).fill(EMPTY);
    this.indexed = 0;
    const mask = length - 1;
    for (let slot = 0; slot < this.used; slot++) {
      if (!this.live[slot]) continue;
      let i = this.ids.hash(slot) & mask;
      while (this.index[i] !== EMPTY) i = (i + 1) & mask;
      this.index[i] = slot;
      this.indexed++;
    }
  }

  stringRef(value) {
    let at = this.stringAt.get(value);
    if (at === undefined) {
      if (this.strings.length >= 0xfffe) return -1;
      at = this.strings.push(value) - 1;
      this.stringAt.set(value, at);
    }
    return at + 1;
  }

  /** Writes a card's fields into the slot (its parent apart: `link`). */
  write(slot, card) {
    this.titles.set(slot, card.title ?? '');
    const rare = {};
    let anyRare = false;
    SHARED.forEach((key, k) => {
      const value = card[key];
      let ref = 0;
      if (value !== undefined && value !== null) {
        ref = this.stringRef(value);
        if (ref < 0) {
          rare[key] = value;
          anyRare = true;
          ref = 0;
        }
      }
      this.shared[k][slot] = ref;
    });
    INSTANTS.forEach((key, k) => {
      const value = card[key];
      this.times[k][slot] = typeof value === 'number' ? value : NaN;
    });
    for (const key of RARE) {
      if (card[key] !== undefined) {
        rare[key] = card[key];
        anyRare = true;
      }
    }
    if (anyRare) this.rare.set(slot, rare);
    else this.rare.delete(slot);
  }

  link(slot, parentId) {
    this.parentIds.delete(slot);
    if (!parentId) {
      this.parent[slot] = NONE;
      return;
    }
    const p = this.slotOf(parentId);
    if (p >= 0) {
      this.parent[slot] = p;
    } else {
      this.parent[slot] = BY_ID;
      this.parentIds.set(slot, parentId);
    }
  }

  has(id) {
    return this.slotOf(id) >= 0;
  }

  get(id) {
    const slot = this.slotOf(id);
    return slot < 0 ? undefined : this.cardAt(slot);
  }

  /** The card of a live slot, built. */
  cardAt(slot) {
    const card = { id: this.ids.get(slot) };
    const title = this.titles.get(slot);
    if (title) card.title = title;
    SHARED.forEach((key, k) => {
      const ref = this.shared[k][slot];
      if (ref) card[key] = this.strings[ref - 1];
    });
    const parent = this.parentIdAt(slot);
    if (parent) card.parentAgentId = parent;
    INSTANTS.forEach((key, k) => {
      const value = this.times[k][slot];
      if (!Number.isNaN(value)) card[key] = value;
    });
    const rare = this.rare.get(slot);
    if (rare) Object.assign(card, rare);
    return card;
  }

  parentIdAt(slot) {
    const p = this.parent[slot];
    if (p === NONE) return null;
    if (p === BY_ID) return this.parentIds.get(slot) ?? null;
    return this.ids.get(p);
  }

  set(id, card) {
    let slot = this.slotOf(id);
    if (slot < 0) {
      if (this.used === this.capacity) this.grow();
      slot = this.used++;
      this.ids.set(slot, id);
      this.place(slot);
      // Children that arrived before their parent now point at it.
      for (const [child, parentId] of this.parentIds) {
        if (parentId === id) {
          this.parent[child] = slot;
          this.parentIds.delete(child);
        }
      }
    }
    this.write(slot, card);
    this.link(slot, card.parentAgentId);
    return this;
  }

  grow() {
    this.capacity *= 2;
    this.live = grown(this.live, this.capacity);
    this.parent = grown(this.parent, this.capacity);
    this.times = this.times.map((t) => grown(t, this.capacity));
    this.shared = this.shared.map((t) => grown(t, this.capacity));
  }

  /** Forgets an agent. Its slot is not used again (its children may still name it). */
  delete(id) {
    const slot = this.slotOf(id);
    if (slot < 0) return false;
    const mask = this.index.length - 1;
    let i = this.ids.hash(slot) & mask;
    while (this.index[i] !== slot) i = (i + 1) & mask;
    this.index[i] = FREED;
    this.live[slot] = 0;
    this.size--;
    this.rare.delete(slot);
    this.titles.forget(slot);
    return true;
  }

  /** The live slots, in the order they were added. */
  *slots() {
    for (let slot = 0; slot < this.used; slot++) if (this.live[slot]) yield slot;
  }

  /**
   * Every card, built: over a big fleet that is one object per agent, garbage the page's heap
   * keeps long after. Whole-fleet questions read the columns instead (`rootsIn`, `latestWorkspace`).
   */
  *values() {
    for (const slot of this.slots()) yield this.cardAt(slot);
  }

  *keys() {
    for (const slot of this.slots()) yield this.ids.get(slot);
  }

  /** The workspace of the agent active last among those `known(workspaceId)` accepts, or null. */
  latestWorkspace(known) {
    const column = this.shared[SHARED.indexOf('workspaceId')];
    const [, updated, active] = this.times;
    let best = null;
    let bestAt = 0;
    for (const slot of this.slots()) {
      const at = active[slot] || updated[slot] || 0;
      if (!(at > bestAt) || !column[slot]) continue;
      const ws = this.strings[column[slot] - 1];
      if (known(ws)) {
        best = ws;
        bestAt = at;
      }
    }
    return best;
  }

  /** Every agent of a workspace (subagents included), as cards. */
  inWorkspace(workspaceId) {
    const ws = this.stringAt.get(workspaceId);
    if (ws === undefined) return [];
    const column = this.shared[SHARED.indexOf('workspaceId')];
    const out = [];
    for (const slot of this.slots()) if (column[slot] === ws + 1) out.push(this.cardAt(slot));
    return out;
  }

  /** Root agents (no parent) of a workspace, newest first: read off the columns, cards built only for them. */
  rootsIn(workspaceId) {
    const ws = this.stringAt.get(workspaceId);
    const out = [];
    if (ws === undefined) return out;
    const column = this.shared[SHARED.indexOf('workspaceId')];
    const created = this.times[0];
    for (const slot of this.slots()) {
      if (this.parent[slot] === NONE && column[slot] === ws + 1) out.push(slot);
    }
    // Newest first; an agent without an instant last.
    out.sort((x, y) => (created[y] || 0) - (created[x] || 0));
    return out.map((slot) => this.cardAt(slot));
  }
}

/**
 * parent id → its track's members (ids, oldest first), held as slots of `cards` where parent
 * and members have one: tens of thousands of tracks would otherwise keep a string per member.
 * A track naming an agent the window does not have (yet) is kept as its ids.
 */
export class Tracks {
  constructor(cards) {
    this.cards = cards;
    /** parent slot → member slots. */
    this.bySlot = [];
    /** parent id → member ids, for tracks not all of slots. */
    this.byId = new Map();
    this.size = 0;
  }

  /**
   * A snapshot's tracks, sent as columns (paseo-core's runtime/window.rs `Tracks`): a parent and
   * members are places in `cards`, or ids. Calls `counted(parentId, counts)` for each track the
   * snapshot counts (those with a member running or needing you).
   */
  static fromColumns(cards, columns, counted) {
    const tracks = new Tracks(cards);
    const idOf = (ref) => (typeof ref === 'number' ? cards.ids.get(ref) : ref);
    const { parents, members, ends } = columns;
    for (let i = 0; i < parents.length; i++) {
      const from = i ? ends[i - 1] : 0;
      if (ends[i] === from) continue;
      const p = parents[i];
      let slots = true;
      for (let j = from; j < ends[i]; j++) slots &&= typeof members[j] === 'number';
      if (typeof p === 'number' && slots) tracks.bySlot[p] = Int32Array.from(members.slice(from, ends[i]));
      else tracks.byId.set(idOf(p), members.slice(from, ends[i]).map(idOf));
      tracks.size++;
    }
    for (const [i, counts] of columns.counts) counted(idOf(parents[i]), counts);
    return tracks;
  }

  get(parentId) {
    const p = this.cards.slotOf(parentId);
    const slots = p >= 0 ? this.bySlot[p] : undefined;
    if (slots) return Array.from(slots, (slot) => this.cards.ids.get(slot));
    return this.byId.get(parentId);
  }

  has(parentId) {
    return this.get(parentId) !== undefined;
  }

  set(parentId, members) {
    this.delete(parentId);
    const p = this.cards.slotOf(parentId);
    const slots = members.map((id) => this.cards.slotOf(id));
    if (p >= 0 && slots.every((slot) => slot >= 0)) this.bySlot[p] = Int32Array.from(slots);
    else this.byId.set(parentId, members.slice());
    this.size++;
    return this;
  }

  delete(parentId) {
    const p = this.cards.slotOf(parentId);
    let had = false;
    if (p >= 0 && this.bySlot[p]) {
      delete this.bySlot[p];
      had = true;
    }
    had = this.byId.delete(parentId) || had;
    if (had) this.size--;
    return had;
  }

  /** Keeps the parent's track by its id: call before the parent leaves `cards` (its slot goes with it). */
  unslot(parentId) {
    const p = this.cards.slotOf(parentId);
    const slots = p >= 0 ? this.bySlot[p] : undefined;
    if (!slots) return;
    this.byId.set(
      parentId,
      Array.from(slots, (slot) => this.cards.ids.get(slot)),
    );
    delete this.bySlot[p];
  }

  *keys() {
    for (const p in this.bySlot) yield this.cards.ids.get(Number(p));
    yield* this.byId.keys();
  }
}
