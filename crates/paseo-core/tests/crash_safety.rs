//! Crash safety: a child process rewrites agent records at full speed through the real writer
//! and is SIGKILLed at random moments, 60 times (`PASEO_CRASH_KILLS` sets how many:
//! scripts/soak.sh runs 1,000). After every kill every record parses, is a version the child
//! wrote completely (never torn), and never goes back to an older version or disappears (lost).

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use paseo_core::model::{AgentId, AgentRecord};
use paseo_core::store::{self, Layout, Writer};

const AGENTS: usize = 20;
const CHILD_ENV: &str = "PASEO_CRASH_CHILD_HOME";

/// The record's version, or `None` when its padding disagrees with its title (a torn or mixed
/// write).
fn version_of(r: &AgentRecord) -> Option<u64> {
    let v: u64 = r.title.trim_start_matches('v').parse().ok()?;
    // The padding repeats the version: a torn or mixed write cannot pass this.
    let pad = r.extra.get("pad")?.as_str()?;
    (pad == format!("{v:08}").repeat(400)).then_some(v)
}

/// The child: loads what is there and rewrites every record with increasing versions until it
/// is killed. Does nothing in a normal test run.
#[test]
fn crash_child_writer() {
    let Ok(home) = std::env::var(CHILD_ENV) else {
        return;
    };
    let layout = Layout::new(home);
    let loaded = store::load_agents(&layout).unwrap();
    let mut recs: Vec<AgentRecord> = loaded.records.into_iter().map(|r| *r.record).collect();
    while recs.len() < AGENTS {
        let now = paseo_core::model::Timestamp::now();
        recs.push(
            serde_json::from_value(serde_json::json!({
                "id": AgentId::new().to_string(), "provider": "shell",
                "cwd": format!("/src/p{}", recs.len() % 3), "title": "v0",
                "lastStatus": "idle", "createdAt": now.to_string(), "updatedAt": now.to_string(),
                "pad": format!("{:08}", 0).repeat(400),
            }))
            .unwrap(),
        );
    }
    let w = Writer::new(4);
    loop {
        for r in recs.iter_mut() {
            let v = version_of(r).expect("a whole record") + 1;
            r.title = format!("v{v}");
            r.extra
                .insert("pad".into(), format!("{v:08}").repeat(400).into());
            w.submit(
                layout.record_path(&r.cwd, r.id),
                store::encode_record(r).unwrap(),
            );
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn records_survive_sigkill_at_random_moments() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::new(dir.path());
    let exe = std::env::current_exe().unwrap();
    let mut seen: HashMap<AgentId, u64> = HashMap::new();
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let kills: usize = std::env::var("PASEO_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let (mut torn, mut lost) = (0usize, 0usize);
    for round in 0..kills {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash_child_writer",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Let it get going (records exist after the first round), then kill at a random moment.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let wait = Duration::from_millis(30 + seed % 90);
        let start = Instant::now();
        while start.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(2));
        }
        unsafe {
            libc::kill(child.id() as i32, libc::SIGKILL);
        }
        let status = child.wait().unwrap();
        assert!(!status.success(), "round {round}: the child was not killed");

        let loaded = store::load_agents(&layout).unwrap();
        for q in &loaded.quarantined {
            eprintln!("round {round}: unreadable record {q:?}");
            torn += 1;
        }
        let mut present = std::collections::HashSet::new();
        for r in loaded.records.iter().map(|r| &r.record) {
            present.insert(r.id);
            let Some(v) = version_of(r) else {
                eprintln!("round {round}: {} is inconsistent (torn)", r.id);
                torn += 1;
                continue;
            };
            let prev = seen.insert(r.id, v).unwrap_or(0);
            if v < prev {
                eprintln!("round {round}: {} went back from v{prev} to v{v}", r.id);
                lost += 1;
            }
        }
        for id in seen.keys() {
            if !present.contains(id) {
                eprintln!("round {round}: {id} disappeared");
                lost += 1;
            }
        }
    }
    println!("kills: {kills}, torn records: {torn}, lost records: {lost}");
    assert_eq!((torn, lost), (0, 0), "after {kills} kills");
    assert_eq!(seen.len(), AGENTS);
    assert!(
        seen.values().all(|v| *v > 1),
        "the child made progress: {seen:?}"
    );
}
