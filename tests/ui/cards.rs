//! The window's agent cards (`ui/cards.js`: a Map of the cards as the backend sends them) and how
//! a window gets them (paseo-core's runtime/window.rs): checked in the real webview.
//! - Kept through many sets, renames and deletes, the cards read back as a plain Map given the
//!   same cards would, in its order; parents that left or have not come yet, repeated ids,
//!   shared strings past 65,535 distinct ones; the whole-fleet questions (a workspace's roots
//!   newest first, its agents, the latest workspace) answer as computed from scratch; tracks
//!   read back as given; a page's cards skip what the window already has newer.
//! - A real backend: the first snapshot has only the first screen's cards (the selected
//!   workspace's agents, the open tabs with their parents and children) with the true counts;
//!   the pages after it, oldest first, add up to the whole fleet once each; the page boots that
//!   way and ends with every card; events carry the same card shape.

use crate::common::{poll, Harness, TIMEOUT};
use crate::helpers::*;
use paseo_core::model::AgentId;
use serde_json::{json, Value};

const CHECK: &str = r#"
const [steps, done] = arguments;
import('/cards.js').then(({ keepCard, keepCards, keepTrackOf, rootsOf, agentsOf, latestIn }) => {
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
  // What the window was sent, as a copy it cannot have touched.
  const sent = (c) => JSON.parse(JSON.stringify(c));
  const norm = (c) => JSON.stringify(Object.fromEntries(Object.entries(c).sort()));
  const fleet = { agents: new Map(), tracks: new Map(), trackCounts: new Map(), quietCounts: new Map() };
  const ref = new Map();
  const put = (c) => { keepCard(fleet, sent(c)); ref.set(c.id, c); };
  for (let i = 0; i < 70000; i++) put(card(i, i % 3 ? rnd(i) : undefined));
  // A child whose parent is not in the window, and a repeated id (the last card wins).
  put(card(70000, 999999));
  put({ ...card(5), title: 'agent 5 again' });
  function check(tag) {
    if (fleet.agents.size !== ref.size) fail.push(`${tag}: size ${fleet.agents.size}, a Map has ${ref.size}`);
    for (const [id, c] of ref) {
      const got = fleet.agents.get(id);
      if (!got || norm(got) !== norm(c)) { fail.push(`${tag}: ${norm(got ?? {})} for ${norm(c)}`); break; }
    }
    if ([...fleet.agents.keys()].join() !== [...ref.keys()].join()) fail.push(`${tag}: keys out of order`);
    for (const w of ws) {
      const got = rootsOf(fleet.agents, w).map((c) => c.id).join();
      const want = [...ref.values()].filter((c) => !c.parentAgentId && c.workspaceId === w)
        .sort((x, y) => y.createdAt - x.createdAt).map((c) => c.id).join();
      if (got !== want) fail.push(`${tag}: roots of ${w}`);
      const all = agentsOf(fleet.agents, w).map((c) => c.id).join();
      if (all !== [...ref.values()].filter((c) => c.workspaceId === w).map((c) => c.id).join()) fail.push(`${tag}: agents of ${w}`);
    }
  }
  check('loaded');
  let next = 70001;
  for (let step = 0; step < steps; step++) {
    const op = rnd(10);
    if (op < 4) {
      const i = next++;
      put(card(i, rnd(3) ? rnd(i + 5) : undefined));
    } else if (op < 7) {
      const id = uuid(rnd(next));
      if (ref.has(id)) {
        const c = { ...ref.get(id), title: `renamed ${step}`, status: 'running' };
        if (rnd(2)) delete c.parentAgentId;
        put(c);
      }
    } else {
      const id = uuid(rnd(next));
      if (fleet.agents.delete(id) !== ref.delete(id)) fail.push(`delete ${id}`);
    }
    if (step % 14999 === 0) check(`step ${step}`);
  }
  check('after');
  let latest = null;
  let latestAt = 0;
  for (const c of ref.values()) {
    const t = c.lastActivityAt || c.updatedAt || 0;
    if (c.workspaceId && c.workspaceId !== 'w3' && t > latestAt) { latest = c.workspaceId; latestAt = t; }
  }
  if (latestIn(fleet.agents, (w) => w !== 'w3') !== latest) fail.push('the latest workspace');
  // More distinct shared strings than a 16-bit table held: each still reads back.
  for (let i = 0; i < 70000; i++) keepCard(fleet, { id: uuid(900000 + i), cwd: `/far/${i}`, status: 'idle', createdAt: 1, updatedAt: 1 });
  if (fleet.agents.get(uuid(969999))?.cwd !== '/far/69999') fail.push('a shared string past 65,535');
  // Tracks read back as given, their members as the cards' ids; a quiet track keeps no counts.
  const live = [...ref.keys()];
  keepTrackOf(fleet, { parentAgentId: live[0], members: [live[1], live[2]], counts: { running: 1, total: 2 } });
  keepTrackOf(fleet, { parentAgentId: live[3], members: [live[4], uuid(9999999)], counts: { running: 0, total: 2, finished: 2 } });
  if (fleet.tracks.get(live[0]).join() !== [live[1], live[2]].join() || fleet.trackCounts.get(live[0])?.running !== 1) fail.push('a busy track');
  if (fleet.tracks.get(live[3])[1] !== uuid(9999999) || fleet.trackCounts.has(live[3])) fail.push('a quiet track naming an unknown agent');
  keepTrackOf(fleet, { parentAgentId: live[0], members: [] });
  if (fleet.tracks.has(live[0]) || fleet.trackCounts.has(live[0])) fail.push('an emptied track');
  // A page: a card the window has newer stays, a new one comes in, a skipped one stays out.
  const held = fleet.agents.get(live[5]);
  keepCards(fleet, { agents: [{ ...sent(held), title: 'older', updatedAt: held.updatedAt - 1 }, sent(card(800000)), sent(card(800001))],
    tracks: [{ parentAgentId: uuid(800000), members: [uuid(800001)] }] },
    { skip: (c) => c.id === uuid(800001) || fleet.agents.get(c.id)?.updatedAt > c.updatedAt });
  if (fleet.agents.get(live[5]).title === 'older') fail.push('a page replaced a newer card');
  if (!fleet.agents.has(uuid(800000)) || fleet.agents.has(uuid(800001))) fail.push('a page\'s cards');
  if (fleet.tracks.get(uuid(800000))?.join() !== uuid(800001)) fail.push('a page\'s track');
  done({ fail, size: fleet.agents.size });
});
"#;

#[tokio::test]
async fn cards_kept_in_a_map_read_back_as_sent_and_answer_the_fleet_questions() {
    let (_h, app, _dir) = start("cards_map").await;
    let out = app
        .execute_async_within(
            std::time::Duration::from_secs(58),
            CHECK,
            vec![json!(30_000)],
        )
        .await;
    assert_eq!(out["fail"], json!([]), "{out}");
    assert!(out["size"].as_u64().unwrap() > 100_000, "{out}");
}

/// Three folders of `PER` root agents each; in "b" one root with two children.
const PER: usize = 40;

/// Everything the page's backend seam answers for a first screen and its pages.
const FETCH: &str = r#"
const [first, limit, done] = arguments;
import('/backend.js').then(async (b) => {
  try {
    const snap = await b.fleetSnapshot(first);
    const pages = [];
    let after = null;
    do {
      const page = await b.fleetCards(after, limit);
      pages.push(page.agents.map((a) => a.id));
      after = page.next;
    } while (after !== null && pages.length < 1000);
    const whole = await b.fleetSnapshot();
    done({ snap, pages, whole });
  } catch (error) { done({ error: String(error.message || error) }); }
});
"#;

#[tokio::test]
async fn a_window_starts_with_its_first_screen_and_pages_in_the_other_cards() {
    let h = Harness::new("cards_first");
    let mut ids: Vec<Vec<String>> = Vec::new();
    for (w, name) in ["a", "b", "c"].iter().enumerate() {
        let dir = h.work_dir(name);
        let mut these = Vec::new();
        for n in 0..PER {
            let id = AgentId::new().to_string();
            // Created in turn across the folders, so every page mixes them; "c" active last.
            let at = format!("2026-12-01T10:{:02}:{:02}.{:03}Z", n / 60, n % 60, w);
            put_record(
                &h,
                &json!({"id": id, "provider": "shell", "cwd": dir.display().to_string(),
                    "title": format!("{name}-{n:02}"), "lastStatus": "idle",
                    "createdAt": at, "updatedAt": at, "lastActivityAt": at}),
            );
            these.push(id);
        }
        ids.push(these);
    }
    // Two children of b's first agent, in c's folder: a tab of the parent shows them.
    let parent = ids[1][0].clone();
    let mut kids = Vec::new();
    for n in 0..2 {
        let id = AgentId::new().to_string();
        let at = format!("2026-12-01T09:00:0{n}.000Z");
        put_record(
            &h,
            &json!({"id": id, "provider": "shell", "cwd": h.work_dir("c").display().to_string(),
                "title": format!("kid-{n}"), "lastStatus": "idle", "createdBy": parent,
                "labels": {"paseo.parent-agent-id": parent},
                "createdAt": at, "updatedAt": at}),
        );
        kids.push(id);
    }
    let app = h.launch_ready(&[]).await;
    let total = 3 * PER + 2;

    // The page booted on its first screen, then paged in the rest: it holds every card, and
    // marked its first screen before it had them all.
    let held = app
        .execute_async(
            "const done = arguments[0]; import('/store.js').then(({ fleet }) => done({
               n: fleet.agents.size, whole: fleet.whole,
               first: performance.getEntriesByName('paseo-ready')[0]?.startTime ?? null,
               all: performance.getEntriesByName('paseo-whole')[0]?.startTime ?? null }));",
            vec![],
        )
        .await;
    assert_eq!(held["n"], total, "{held}");
    assert_eq!(held["whole"], true, "{held}");
    assert!(
        held["first"].as_f64().unwrap() <= held["all"].as_f64().unwrap(),
        "{held}"
    );

    let ws_of = |snap: &Value, id: &str| {
        snap["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .map(|a| a["workspaceId"].clone())
            .unwrap()
    };
    let whole = app.fleet_snapshot().await;
    let ws_a = ws_of(&whole, &ids[0][0]);
    // Workspace "a" selected, a tab of b's parent open.
    let out = app
        .execute_async(
            FETCH,
            vec![
                json!({"workspaceId": ws_a, "agentIds": [parent, "not-an-id"]}),
                json!(7),
            ],
        )
        .await;
    assert!(out.get("error").is_none(), "{out}");
    let snap = &out["snap"];
    assert_eq!(snap["whole"], false);
    let mut got: Vec<String> = snap["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    let mut want: Vec<String> = ids[0].clone();
    want.push(parent.clone());
    want.extend(kids.iter().cloned());
    want.sort();
    assert_eq!(got, want, "the first screen's cards");
    // The true counts, and the parent's track, though most cards are not there yet.
    assert_eq!(snap["counts"]["tally"]["total"], total);
    assert_eq!(snap["counts"], out["whole"]["counts"]);
    assert_eq!(
        snap["tracks"],
        json!([{"parentAgentId": parent, "members": kids}])
    );

    // No workspace selected: the one active last (c).
    let none = app
        .execute_async(FETCH, vec![json!({"agentIds": []}), json!(50)])
        .await;
    let ws_c = ws_of(&whole, &ids[2][0]);
    let firsts = none["snap"]["agents"].as_array().unwrap();
    assert_eq!(firsts.len(), PER + 2, "{firsts:?}");
    assert!(firsts.iter().all(|a| a["workspaceId"] == ws_c));

    // Pages of 7, oldest first, each card once: the whole fleet in its order.
    let pages = out["pages"].as_array().unwrap();
    assert_eq!(pages.len(), total.div_ceil(7));
    let paged: Vec<Value> = pages
        .iter()
        .flat_map(|p| p.as_array().unwrap().clone())
        .collect();
    let all: Vec<Value> = out["whole"]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].clone())
        .collect();
    assert_eq!(paged, all);

    // An event carries the card the snapshot has: the same fields, no whole snapshot.
    app.execute_async(
        "const done = arguments[0]; import('/backend.js').then((b) => b.listen('paseo://event',
           (m) => { if (!m.host && m.event?.agent) (window.__cards ??= []).push(m.event.agent); }).then(() => done(null)));",
        vec![],
    )
    .await;
    app.call_backend("detachAgent", vec![json!(kids[0])]).await;
    let card = poll("an update event", TIMEOUT, || async {
        let v = app.execute("return window.__cards ?? []", vec![]).await;
        v.as_array()?
            .iter()
            .find(|c| c["id"] == kids[0].as_str())
            .cloned()
    })
    .await;
    let sent = app.fleet_snapshot().await["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == kids[0].as_str())
        .cloned()
        .unwrap();
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&card), keys(&sent), "{card} / {sent}");
    assert!(card.get("config").is_none() && card["createdAt"].is_number());
    assert!(card.get("parentAgentId").is_none(), "{card}");
}
