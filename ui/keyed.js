// A table keyed by strings with the part of Map's interface the store uses, held in one
// prototype-less object. At 100,000 agents this is most of what the window's page keeps: in
// JavaScriptCore each Map entry is a cell of its own (≈ 70 bytes and a share of the GC's
// overhead), while a dictionary-mode object keeps a slot in one table (figures: docs/scale.md).

export class Keyed {
  /** entries: [key, value] pairs, or nothing. */
  constructor(entries) {
    this.table = Object.create(null);
    this.size = 0;
    if (entries) for (const [key, value] of entries) this.set(key, value);
  }

  get(key) {
    return this.table[key];
  }

  has(key) {
    return key in this.table;
  }

  set(key, value) {
    if (!(key in this.table)) this.size++;
    this.table[key] = value;
    return this;
  }

  delete(key) {
    if (!(key in this.table)) return false;
    delete this.table[key];
    this.size--;
    return true;
  }

  /** The values, in insertion order (keys are never integer-like: ids are UUIDs or names). */
  *values() {
    for (const key in this.table) yield this.table[key];
  }

  *keys() {
    for (const key in this.table) yield key;
  }
}
