//! Finish notices survive SIGKILLs of the whole app exactly once (SPEC 4), black-box: a runtime
//! process creates a shell parent and shell subagents (each armed to notify it) that finish
//! within a few milliseconds of each other, and is SIGKILLed at a random moment around their
//! ends, 5 times (`PASEO_NOTICE_ROUNDS` sets how many: scripts/soak.sh runs 200). After each
//! kill the app starts again on the same data root and every child that exists must have left
//! exactly one notice in its parent's timeline or inbox: none is lost, none doubled.

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use paseo_core::model::{AgentId, Status};
use paseo_core::runtime::{Caller, CreateAgent, WorkspaceTarget};
use support::git::shell_runtime;
use support::Door;

const CHILD_ENV: &str = "PASEO_NOTICE_CHILD_HOME";
const SEED_ENV: &str = "PASEO_NOTICE_CHILD_SEED";
const CHILDREN: usize = 4;

fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// The app: a shell parent, then its children finishing a few milliseconds apart; waits to be
/// killed. Does nothing in a normal test run.
#[tokio::test]
async fn notice_crash_child_runtime() {
    let Ok(home) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut seed: u64 = std::env::var(SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7)
        | 1;
    let home = std::path::PathBuf::from(home);
    let work = home.with_extension("work");
    std::fs::create_dir_all(&work).unwrap();
    let rt = shell_runtime(&home).await;
    let h = rt.handle();
    h.deliver_pending().await.unwrap();
    let target = || WorkspaceTarget::directory(work.display().to_string());
    let mut p = CreateAgent::new("shell", target());
    p.initial_prompt = Some("true".into());
    let parent = h.create(p).await.unwrap().id();
    let mut creates = Vec::new();
    for i in 0..CHILDREN {
        let mut k = CreateAgent::new("shell", target());
        k.caller = Caller::Agent(parent);
        k.subagent = true;
        k.title = Some(format!("kid-{i}"));
        let ms = next(&mut seed) % 40;
        k.initial_prompt = Some(format!("sleep 0.{ms:03}"));
        let h = h.clone();
        creates.push(tokio::spawn(async move { h.create(k).await }));
    }
    for c in creates {
        c.await.unwrap().unwrap();
    }
    // Every child is durable and armed; their ends are a few milliseconds away.
    let aside = home.with_extension("ready-tmp");
    std::fs::write(&aside, parent.to_string()).unwrap();
    std::fs::rename(&aside, home.with_extension("ready")).unwrap();
    tokio::time::sleep(Duration::from_secs(600)).await;
}

/// A child process killed and reaped when dropped.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notices_survive_sigkill_of_the_app_exactly_once() {
    let rounds: u64 = std::env::var("PASEO_NOTICE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let mut seed: u64 = 0x2545f4914f6cdd1d;
    let (mut armed, mut lost, mut doubled) = (0usize, 0usize, 0usize);
    // How the turns ended: finished before the kill, or interrupted by it.
    let mut outcomes = std::collections::BTreeMap::new();
    let started = Instant::now();
    for round in 0..rounds {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ready = home.with_extension("ready");
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "notice_crash_child_runtime", "--nocapture"])
            .env(CHILD_ENV, &home)
            .env(SEED_ENV, next(&mut seed).to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut child = Reaped(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !ready.exists() {
            assert!(Instant::now() < deadline, "the app never got ready");
            assert!(child.0.try_wait().unwrap().is_none(), "the app exited");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let parent: AgentId = std::fs::read_to_string(&ready).unwrap().parse().unwrap();
        // Around the children's ends (each sleeps 0 to 40 ms once started).
        tokio::time::sleep(Duration::from_micros(next(&mut seed) % 80_000)).await;
        child.0.kill().unwrap();
        child.0.wait().unwrap();

        let rt = shell_runtime(&home).await;
        let h = rt.handle();
        h.deliver_pending().await.unwrap();
        h.flush().await;
        let (all, _) = h.list(Default::default(), 1000).await.unwrap();
        let kids: Vec<AgentId> = all
            .iter()
            .filter(|a| a.parent_agent_id == Some(parent))
            .map(|a| a.id())
            .collect();
        let items = h.timeline(parent, 0, 10_000).await.unwrap();
        let snapshot = h.get(parent).await.unwrap();
        assert!(
            !matches!(snapshot.status, Status::Running),
            "a shell parent never runs a notice"
        );
        assert_eq!(
            kids.len(),
            CHILDREN,
            "every child was durable before the kill"
        );
        let (inboxes, _) = paseo_core::store::load_inboxes(h.layout());
        let mut line = Vec::new();
        for kid in &kids {
            let n = items
                .iter()
                .filter(|i| i.notice.as_ref().is_some_and(|n| n.child_id == *kid))
                .count()
                + inboxes
                    .iter()
                    .flat_map(|(_, q)| q.iter())
                    .filter(|n| n.child_id == *kid)
                    .count();
            armed += 1;
            let outcome = items
                .iter()
                .filter_map(|i| i.notice.as_ref())
                .find(|n| n.child_id == *kid)
                .map(|n| n.outcome.as_str().to_string())
                .unwrap_or_default();
            *outcomes.entry(outcome).or_insert(0usize) += 1;
            match n {
                1 => {}
                0 => lost += 1,
                _ => doubled += 1,
            }
            line.push(n.to_string());
        }
        println!("round {round}: notices per child [{}]", line.join(" "));
        rt.shutdown().await;
    }
    println!(
        "notice rounds: {rounds}, armed turns: {armed}, lost: {lost}, doubled: {doubled}, \
         outcomes {outcomes:?} ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    assert_eq!((lost, doubled), (0, 0), "notices lost or doubled");
}
