//! The window's agent cards held in columns (`ui/cards.js`, docs/scale.md), checked in the real
//! webview against a `Map` given the same cards: every card reads back as it was set, in the
//! order a Map gives, through growth, rehashing, deletes, renames, parents that left or have not
//! come yet, repeated ids and strings past the shared table; and tracks of slots read back as
//! the ids they were given, also after their parent left; and the same from the columns a
//! snapshot sends.

use crate::helpers::*;
use serde_json::json;

const CHECK: &str = r#"
const [steps, done] = arguments;
import('/cards.js').then(({ Cards, Tracks }) => {
  const fail = [];
  const uuid = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  let seed = 7;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
  const ws = ['w1', 'w2', 'w3'];
  function card(i, parent) {
    const c = { id: uuid(i), title: `agent ${i}`, provider: 'shell', status: ['idle', 'running', 'closed'][rnd(3)],
      workspaceId: ws[rnd(3)], cwd: `/src/${i}`, createdAt: 1000 + i, updatedAt: 2000 + i };
    if (parent !== undefined) c.parentAgentId = uuid(parent);
    if (rnd(5) === 0) c.usage = { inputTokens: i };
    if (rnd(7) === 0) c.requiresAttention = true;
    if (rnd(9) === 0) c.lastActivityAt = 3000 + i;
    return c;
  }
  const norm = (c) => JSON.stringify(Object.fromEntries(Object.entries(c).sort()));
  const init = [];
  for (let i = 0; i < 70000; i++) init.push(card(i, i % 3 ? rnd(i) : undefined));
  // A child whose parent is not in the window, and a repeated id (the last card wins).
  init.push(card(70000, 999999));
  init.push({ ...card(5), title: 'agent 5 again' });
  const ref = new Map(init.map((c) => [c.id, c]));
  const cards = new Cards(init);
  function check(tag) {
    if (cards.size !== ref.size) fail.push(`${tag}: size ${cards.size}, a Map has ${ref.size}`);
    for (const [id, c] of ref) {
      const got = cards.get(id);
      if (!got || norm(got) !== norm(c)) { fail.push(`${tag}: ${norm(got ?? {})} for ${norm(c)}`); break; }
    }
    if ([...cards.keys()].join() !== [...ref.keys()].join()) fail.push(`${tag}: keys out of order`);
    if ([...cards.values()].map(norm).join() !== [...ref.values()].map(norm).join()) fail.push(`${tag}: values`);
    for (const w of ws) {
      const got = cards.rootsIn(w).map((c) => c.id).join();
      const want = [...ref.values()].filter((c) => !c.parentAgentId && c.workspaceId === w)
        .sort((x, y) => y.createdAt - x.createdAt).map((c) => c.id).join();
      if (got !== want) fail.push(`${tag}: roots of ${w}`);
    }
  }
  check('loaded');
  let next = 70001;
  for (let step = 0; step < steps; step++) {
    const op = rnd(10);
    if (op < 4) {
      const i = next++;
      const c = card(i, rnd(3) ? rnd(i + 5) : undefined);
      cards.set(c.id, c); ref.set(c.id, c);
    } else if (op < 7) {
      const id = uuid(rnd(next));
      if (ref.has(id)) {
        const c = { ...ref.get(id), title: `renamed ${step}`, status: 'running' };
        if (rnd(2)) delete c.parentAgentId;
        cards.set(id, c); ref.set(id, c);
      }
    } else {
      const id = uuid(rnd(next));
      if (cards.delete(id) !== ref.delete(id)) fail.push(`delete ${id}`);
    }
    if (step % 9999 === 0) check(`step ${step}`);
  }
  check('after');
  let latest = null;
  let latestAt = 0;
  for (const c of ref.values()) {
    const t = c.lastActivityAt || c.updatedAt || 0;
    if (c.workspaceId && c.workspaceId !== 'w3' && t > latestAt) { latest = c.workspaceId; latestAt = t; }
  }
  if (cards.latestWorkspace((w) => w !== 'w3') !== latest) fail.push('the latest workspace');
  if (cards.has('nope') || cards.get(undefined) !== undefined) fail.push('an unknown id was found');
  const live = [...ref.keys()];
  const tracks = new Tracks(cards);
  tracks.set(live[0], [live[1], live[2]]);
  tracks.set(live[3], [live[4], uuid(9999999)]);
  if (tracks.get(live[0]).join() !== [live[1], live[2]].join() || tracks.size !== 2) fail.push('a track of slots');
  if (tracks.get(live[3])[1] !== uuid(9999999)) fail.push('a track naming an unknown agent');
  tracks.unslot(live[0]);
  cards.delete(live[0]);
  if (tracks.get(live[0])?.join() !== [live[1], live[2]].join() || tracks.size !== 2) fail.push('a track whose parent left');
  tracks.delete(live[0]);
  if (tracks.size !== 1 || tracks.has(live[0]) || [...tracks.keys()].join() !== live[3]) fail.push('a deleted track');
  // The same cards as the backend sends them, in columns, read back the same (parents that are
  // not among them, rare fields, shared strings past what a column holds).
  const list = [...ref.values()];
  const strings = [];
  const at = new Map();
  const place = (v) => { if (v === undefined) return 0; if (!at.has(v)) at.set(v, strings.push(v) - 1); return at.get(v) + 1; };
  const slot = new Map(list.map((c, i) => [c.id, i]));
  const shared = ['provider', 'status', 'workspaceId', 'cwd', 'bucket', 'power', 'attentionReason', 'statusWord', 'look'];
  const rareKeys = ['requiresAttention', 'needsYou', 'pendingPermission', 'waitingForSlot', 'changes', 'usage', 'treeUsage', 'lastRun', 'turnCount'];
  const columns = { count: list.length, ids: list.map((c) => c.id).join(''), titles: list.map((c) => c.title).join(''),
    titleEnds: [], parent: [], parentIds: {}, createdAt: [], updatedAt: [], lastActivityAt: [], rare: [] };
  let end = 0;
  for (const key of shared) columns[key] = [];
  list.forEach((c, i) => {
    columns.titleEnds.push(end += c.title.length);
    for (const key of shared) columns[key].push(place(c[key]));
    if (!c.parentAgentId) columns.parent.push(-1);
    else if (slot.has(c.parentAgentId)) columns.parent.push(slot.get(c.parentAgentId));
    else { columns.parent.push(-2); columns.parentIds[i] = c.parentAgentId; }
    columns.createdAt.push(c.createdAt); columns.updatedAt.push(c.updatedAt); columns.lastActivityAt.push(c.lastActivityAt ?? null);
    const rare = Object.fromEntries(rareKeys.filter((k) => k in c).map((k) => [k, c[k]]));
    if (Object.keys(rare).length) columns.rare.push([i, rare]);
  });
  const sent = Cards.fromColumns(JSON.parse(JSON.stringify(columns)), strings);
  if ([...sent.values()].map(norm).join() !== list.map(norm).join()) fail.push('cards from columns');
  if (sent.size !== list.length || !list.every((c) => sent.has(c.id))) fail.push('ids from columns');
  const tracked = Tracks.fromColumns(sent, { parents: [0, uuid(9999999), 3], members: [1, 2, 4, uuid(9999998), 5], ends: [2, 4, 5], counts: [[2, { running: 1 }]] },
    (id, counts) => { if (id !== list[3].id || counts.running !== 1) fail.push('track counts from columns'); });
  if (tracked.get(list[0].id).join() !== [list[1].id, list[2].id].join()) fail.push('a track of places');
  if (tracked.get(uuid(9999999)).join() !== [list[4].id, uuid(9999998)].join()) fail.push('a track of ids');
  done({ fail, size: cards.size, strings: cards.strings.length, sentStrings: strings.length });
});
"#;

#[tokio::test]
async fn cards_in_columns_read_back_as_a_map_of_the_same_cards_would() {
    let (_h, app, _dir) = start("cards_columns").await;
    // ≈ 19 s of work on an idle 2-core machine (70,000 cards checked several times): longer
    // than one WebDriver round trip's bound, and slower still beside other UI tests.
    let out = app
        .execute_async_within(
            std::time::Duration::from_secs(58),
            CHECK,
            vec![json!(40_000)],
        )
        .await;
    assert_eq!(out["fail"], json!([]), "{out}");
    // The cwds went past the shared table's 65,535 strings: the rest were kept per card.
    assert!(out["strings"].as_u64().unwrap() >= 0xfffe, "{out}");
    assert!(out["sentStrings"].as_u64().unwrap() > 0xffff, "{out}");
}
