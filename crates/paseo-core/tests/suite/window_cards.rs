//! The window's snapshot and pages of cards (`runtime/window.rs`) end to end: the real Rust
//! encoder's text, for a fleet with more than 65,535 distinct shared strings (every agent its own
//! cwd and so its own workspace), kept by the page's real code (`ui/cards.js`) under node, and
//! every card and track compared with the runtime's own listing (`snapshot`, serialized on
//! another path); the pages, asked one after the other as a window does, hold the same cards in
//! the same order, each once. The workspaces are in the registry already, as the app leaves
//! them, so the start does not register 33,000 of them one by one.

use crate::support;

use std::path::Path;
use std::process::Command;

use paseo_core::api::{Caller, Request};
use paseo_core::model::{AgentId, AgentRecord, Timestamp};
use paseo_core::runtime::AgentSummary;
use paseo_core::store::{self, Layout};
use support::scripted::Env;
use support::Door;

/// Twice this many distinct strings (a cwd and a workspace id each).
const AGENTS: usize = 33_000;
/// Cards per page, as a window asks.
const PAGE: usize = 5_000;

/// Keeps `snapshot` and then `pages` as the page does and checks them against `want`; prints a
/// JSON report.
const DECODE: &str = r#"
import fs from 'node:fs';
import { keepCards } from './cards.js';
const [snapPath, wantPath, pagesPath] = process.argv.slice(2);
const read = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));
const snap = read(snapPath);
const want = read(wantPath);
const fleetOf = () => ({ agents: new Map(), tracks: new Map(), trackCounts: new Map(), quietCounts: new Map() });
const whole = fleetOf();
keepCards(whole, snap);
const fail = [];
if (whole.agents.size !== want.length) fail.push(`size ${whole.agents.size}, want ${want.length}`);
const children = new Map();
for (const w of want) {
  const c = whole.agents.get(w.id);
  if (!c) { fail.push(`no card for ${w.id}`); continue; }
  for (const k of ['title', 'provider', 'status', 'cwd', 'workspaceId', 'parentAgentId']) {
    if (c[k] !== w[k]) fail.push(`${w.id} ${k}: ${JSON.stringify(c[k])}, want ${JSON.stringify(w[k])}`);
  }
  if (c.createdAt !== Date.parse(w.createdAt)) fail.push(`${w.id} createdAt: ${c.createdAt}`);
  if (w.parentAgentId) {
    if (!children.has(w.parentAgentId)) children.set(w.parentAgentId, []);
    children.get(w.parentAgentId).push(w.id);
  }
  if (fail.length > 5) break;
}
for (const [parent, kids] of children) {
  const got = (whole.tracks.get(parent) ?? []).slice().sort().join();
  if (got !== kids.sort().join()) { fail.push(`track of ${parent}: ${got}`); break; }
}
// The pages, kept one after the other: the same cards, in the same order, each once.
const pages = read(pagesPath);
const paged = fleetOf();
let cards = 0;
for (const page of pages) { cards += page.agents.length; keepCards(paged, page); }
if (cards !== whole.agents.size) fail.push(`${cards} cards in the pages, ${whole.agents.size} in the snapshot`);
if ([...paged.agents.keys()].join() !== [...whole.agents.keys()].join()) fail.push('the pages\' order');
const norm = (c) => JSON.stringify(Object.fromEntries(Object.entries(c).sort()));
for (const [id, c] of whole.agents) if (norm(paged.agents.get(id)) !== norm(c)) { fail.push(`paged card ${id}`); break; }
if ([...paged.tracks.keys()].sort().join() !== [...whole.tracks.keys()].sort().join()) fail.push('the pages\' tracks');
const strings = new Set(want.flatMap((w) => [w.cwd, w.workspaceId])).size;
console.log(JSON.stringify({ fail, strings, pages: pages.length, tracks: children.size }));
"#;

fn seed(layout: &Layout) {
    let now = Timestamp::from_millis(1_700_000_000_000).to_string();
    let ids: Vec<AgentId> = (0..AGENTS).map(|_| AgentId::new()).collect();
    // Their workspaces registered, one per cwd, as the app would have registered them.
    let registry: Vec<serde_json::Value> = (0..ids.len())
        .map(|i| {
            serde_json::json!({"workspaceId": format!("ws-{i}"), "projectId": format!("pr-{i}"),
                "cwd": format!("/nowhere/p{i}"), "kind": "directory", "displayName": format!("p{i}"),
                "createdAt": now, "updatedAt": now})
        })
        .collect();
    let wpath = layout.workspaces_path();
    std::fs::create_dir_all(wpath.parent().unwrap()).unwrap();
    let text = serde_json::json!({ "workspaces": registry });
    std::fs::write(&wpath, serde_json::to_vec(&text).unwrap()).unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let ids = &ids;
            let now = &now;
            s.spawn(move || {
                for i in (t..ids.len()).step_by(4) {
                    let mut v = serde_json::json!({
                        "id": ids[i].to_string(), "provider": "shell",
                        "cwd": format!("/nowhere/p{i}"), "workspaceId": format!("ws-{i}"),
                        // Titles past the BMP read back whole.
                        "title": if i % 2 == 0 { format!("agent {i} \u{1F680}") } else { format!("agent {i}") },
                        "lastStatus": "closed", "createdAt": now, "updatedAt": now,
                    });
                    // Tracks: every third agent a child of the one before.
                    if i % 3 == 2 {
                        v["labels"] =
                            serde_json::json!({"paseo.parent-agent-id": ids[i - 1].to_string()});
                    }
                    let rec: AgentRecord = serde_json::from_value(v).unwrap();
                    let p = layout.record_path(&rec.cwd, rec.id);
                    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                    std::fs::write(&p, store::encode_record(&rec).unwrap()).unwrap();
                }
            });
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_keeps_every_card_of_the_snapshot_and_of_its_pages_as_the_runtime_lists_them() {
    // 33,000 records and their registry written and read back: in memory where there is some,
    // since the disk's speed is not what this test is about.
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let env = Env {
        work: work.canonicalize().unwrap(),
        dir,
        log: Default::default(),
    };
    seed(&Layout::new(env.home()));
    let rt = env.start().await;
    let h = rt.handle();
    // As the window asks, through the one API: the frames' JSON text, each frame's value kept.
    let ask = |request: Request| {
        let h = h.clone();
        async move {
            let text = h
                .call(Caller::User, request)
                .await
                .unwrap()
                .to_json()
                .unwrap();
            let mut frame: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(frame["kind"], "window", "{text:.200}");
            frame["value"].take()
        }
    };
    let text = serde_json::to_string(
        &ask(Request::FleetSnapshot(
            paseo_core::api::verbs::FleetSnapshot {},
        ))
        .await,
    )
    .unwrap();
    let mut pages = Vec::new();
    let mut after = None;
    loop {
        let limit = Some(PAGE);
        let page = ask(Request::FleetCards(paseo_core::api::verbs::FleetCards {
            after,
            limit,
        }))
        .await;
        after = serde_json::from_value(page["next"].clone()).unwrap();
        pages.push(page);
        if after.is_none() {
            break;
        }
        assert!(pages.len() <= AGENTS / PAGE + 1, "the pages do not end");
    }
    let snap = h.snapshot().await.unwrap();
    assert!(
        snap.quarantined.is_empty() && snap.notices.is_empty(),
        "{:?}",
        snap.notices
    );
    let want: Vec<AgentSummary> = snap.agents.into_iter().map(AgentSummary::from).collect();
    assert_eq!(want.len(), AGENTS);
    rt.shutdown().await;

    // The page's modules, as the webview loads them (ES modules), beside the data.
    let dir = tempfile::tempdir().unwrap();
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui");
    std::fs::copy(ui.join("cards.js"), dir.path().join("cards.js")).unwrap();
    std::fs::write(dir.path().join("package.json"), r#"{"type": "module"}"#).unwrap();
    std::fs::write(dir.path().join("decode.js"), DECODE).unwrap();
    std::fs::write(dir.path().join("snapshot.json"), &text).unwrap();
    std::fs::write(
        dir.path().join("pages.json"),
        serde_json::to_vec(&pages).unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("want.json"),
        serde_json::to_vec(&want).unwrap(),
    )
    .unwrap();
    let out = Command::new("node")
        .current_dir(dir.path())
        .args(["decode.js", "snapshot.json", "want.json", "pages.json"])
        .output()
        .expect("node runs (scripts/setup.sh installs nodejs)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(report["fail"], serde_json::json!([]), "{report}");
    // The path under test was taken: strings past 65,535, several pages, tracks.
    assert!(report["strings"].as_u64().unwrap() > 65_535, "{report}");
    assert_eq!(report["pages"], AGENTS.div_ceil(PAGE), "{report}");
    assert!(report["tracks"].as_u64().unwrap() > 0, "{report}");
}
