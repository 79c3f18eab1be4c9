//! The window's column snapshot (`runtime/window.rs`) end to end: the real Rust encoder's text,
//! for a fleet with more than 65,535 distinct shared strings (every agent its own cwd and so its
//! own workspace), decoded by the page's real code (`ui/backend.js` `fleetSnapshot` into
//! `ui/cards.js`) under node, and every card and track compared with the runtime's own listing
//! (`snapshot`, serialized on another path). The workspaces are in the registry already, as
//! the app leaves them, so the start does not register 33,000 of them one by one.

mod support;

use std::path::Path;
use std::process::Command;

use paseo_core::api::{Caller, Request};
use paseo_core::model::{AgentId, AgentRecord, Timestamp};
use paseo_core::runtime::AgentSummary;
use paseo_core::store::{self, Layout};
use support::scripted::Env;

/// Twice this many distinct strings (a cwd and a workspace id each), past a `Uint16Array`'s reach.
const AGENTS: usize = 33_000;

/// Runs the page's decoder on `snapshot` and checks it against `want`; prints a JSON report.
const DECODE: &str = r#"
import fs from 'node:fs';
const [snapPath, wantPath] = process.argv.slice(2);
const text = fs.readFileSync(snapPath, 'utf8');
// The Tauri IPC, as the webview has it: the `call` command answers a `fleetSnapshot` request
// with the response frame's JSON text (`Response::to_json`).
globalThis.window = { __TAURI__: { core: { invoke: async (cmd, args) => {
  if (cmd !== 'call' || args.request.kind !== 'fleetSnapshot') throw new Error(`unexpected ${cmd} ${JSON.stringify(args)}`);
  return JSON.parse(text);
} } } };
const backend = await import('./backend.js');
const snap = await backend.fleetSnapshot();
const want = JSON.parse(fs.readFileSync(wantPath, 'utf8'));
const raw = JSON.parse(text).value;
const fail = [];
if (snap.agents.size !== want.length) fail.push(`size ${snap.agents.size}, want ${want.length}`);
const children = new Map();
for (const w of want) {
  const c = snap.agents.get(w.id);
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
  const got = (snap.tracks.get(parent) ?? []).slice().sort().join();
  if (got !== kids.sort().join()) { fail.push(`track of ${parent}: ${got}`); break; }
}
const beyond = raw.agents.cwd.filter((ref) => ref > 0xffff).length;
console.log(JSON.stringify({ fail, strings: raw.strings.length, beyond, tracks: children.size }));
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
                        // Titles past the BMP: `titleEnds` counts UTF-16 units.
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
async fn the_pages_decoder_reads_every_card_of_the_rust_encoder_past_65535_strings() {
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
    let text = h
        .call(Caller::User, Request::FleetSnapshot)
        .await
        .unwrap()
        .to_json()
        .unwrap();
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
    for f in ["backend.js", "cards.js", "keyed.js"] {
        std::fs::copy(ui.join(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(dir.path().join("package.json"), r#"{"type": "module"}"#).unwrap();
    std::fs::write(dir.path().join("decode.js"), DECODE).unwrap();
    std::fs::write(dir.path().join("snapshot.json"), &text).unwrap();
    std::fs::write(
        dir.path().join("want.json"),
        serde_json::to_vec(&want).unwrap(),
    )
    .unwrap();
    let out = Command::new("node")
        .current_dir(dir.path())
        .args(["decode.js", "snapshot.json", "want.json"])
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
    // The path under test was taken: strings past 65,535, cards naming them, tracks.
    assert!(report["strings"].as_u64().unwrap() > 65_535, "{report}");
    assert!(report["beyond"].as_u64().unwrap() > 0, "{report}");
    assert!(report["tracks"].as_u64().unwrap() > 0, "{report}");
}
