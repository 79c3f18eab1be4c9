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
use support::git::{shell_runtime, shell_runtime_with};
use support::Door;

const CHILD_ENV: &str = "PASEO_NOTICE_CHILD_HOME";
const SEED_ENV: &str = "PASEO_NOTICE_CHILD_SEED";
const CHILDREN: usize = 4;
const WAITING_ENV: &str = "PASEO_WAITING_CHILD_HOME";

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

/// This test binary again as the app, running only the test `child` with `env`, once it wrote
/// `<home>.ready`: the process, and the agent id it wrote there.
async fn app_until_ready(
    child: &str,
    home: &std::path::Path,
    env: &[(&str, &std::ffi::OsStr)],
) -> (Reaped, AgentId) {
    let ready = home.with_extension("ready");
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", child, "--nocapture"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut app = Reaped(command.spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready.exists() {
        assert!(Instant::now() < deadline, "the app never got ready");
        assert!(app.0.try_wait().unwrap().is_none(), "the app exited");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let id = std::fs::read_to_string(&ready).unwrap().parse().unwrap();
    (app, id)
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
        let seed_text = next(&mut seed).to_string();
        let (mut child, parent) = app_until_ready(
            "notice_crash_child_runtime",
            &home,
            &[
                (CHILD_ENV, home.as_os_str()),
                (SEED_ENV, seed_text.as_ref()),
            ],
        )
        .await;
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

/// One live agent at most: a first prompt waits for the slot (SPEC 14).
async fn one_slot_runtime(home: &std::path::Path) -> paseo_core::server::Runtime {
    shell_runtime_with(home, |o| o.limits.max_live_agents = 1).await
}

/// The app for the waiting-prompt test: one agent holds the only live slot, a second one's
/// first prompt (appending a line to `ran.log`) waits for it; then it waits to be killed. Does
/// nothing in a normal test run.
#[tokio::test]
async fn waiting_prompt_child_runtime() {
    let Ok(home) = std::env::var(WAITING_ENV) else {
        return;
    };
    let home = std::path::PathBuf::from(home);
    let rt = one_slot_runtime(&home).await;
    let waiting = start_one_waiting(&rt, &home).await;
    let aside = home.with_extension("ready-tmp");
    std::fs::write(&aside, waiting.to_string()).unwrap();
    std::fs::rename(&aside, home.with_extension("ready")).unwrap();
    tokio::time::sleep(Duration::from_secs(600)).await;
}

/// A sleeping agent in the one slot, then an agent whose first prompt waits for it; returns the
/// waiting one once it is durable.
async fn start_one_waiting(rt: &paseo_core::server::Runtime, home: &std::path::Path) -> AgentId {
    let h = rt.handle();
    h.deliver_pending().await.unwrap();
    let work = home.with_extension("work");
    std::fs::create_dir_all(&work).unwrap();
    let target = || WorkspaceTarget::directory(work.display().to_string());
    let mut busy = CreateAgent::new("shell", target());
    busy.initial_prompt = Some("sleep 600".into());
    let busy = h.create(busy).await.unwrap().id();
    let deadline = Instant::now() + Duration::from_secs(20);
    while h.get(busy).await.unwrap().status != Status::Running {
        assert!(Instant::now() < deadline, "the first agent never ran");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut k = CreateAgent::new("shell", target());
    k.title = Some("waits".into());
    k.initial_prompt = Some(format!("echo ran >> '{}'", work.join("ran.log").display()));
    let waiting = h.create(k).await.unwrap().id();
    assert_eq!(h.get(waiting).await.unwrap().status, Status::Initializing);
    h.flush().await;
    waiting
}

/// How many times the waiting prompt ran (lines in `ran.log`).
fn runs(home: &std::path::Path) -> usize {
    let log = home.with_extension("work").join("ran.log");
    std::fs::read_to_string(log).map_or(0, |t| t.lines().count())
}

/// After a start: the waiting agent runs its prompt once, and a further restart runs nothing.
async fn runs_once_after_restart(home: &std::path::Path, waiting: AgentId) {
    let rt = one_slot_runtime(home).await;
    let h = rt.handle();
    h.deliver_pending().await.unwrap();
    let w = h.wait(waiting, Duration::from_secs(20)).await.unwrap();
    assert!(
        !w.timed_out,
        "the waiting prompt never ran: {:?}",
        w.agent.status
    );
    assert_eq!(
        w.agent.status,
        Status::Idle,
        "{:?}",
        w.agent.record.last_error
    );
    assert_eq!(w.agent.record.turn_count, 1);
    assert_eq!(runs(home), 1);
    let items = h.timeline(waiting, 0, 100).await.unwrap();
    assert_eq!(
        items.iter().filter(|i| i.text.contains("echo ran")).count(),
        1,
        "the prompt shows once in its timeline"
    );
    rt.shutdown().await;

    let rt = one_slot_runtime(home).await;
    let h = rt.handle();
    h.deliver_pending().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    h.flush().await;
    assert_eq!(h.get(waiting).await.unwrap().record.turn_count, 1);
    assert_eq!(runs(home), 1, "a second restart ran it again");
    rt.shutdown().await;
}

/// SPEC 15: a first prompt waiting for a live slot is not lost to a SIGKILL of the app, nor to a
/// quit: it runs once after the next start (and its caller is told nothing made up meanwhile).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_first_prompt_survives_sigkill_and_quit_and_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("killed");
    let (mut child, waiting) = app_until_ready(
        "waiting_prompt_child_runtime",
        &home,
        &[(WAITING_ENV, home.as_os_str())],
    )
    .await;
    assert_eq!(runs(&home), 0);
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    runs_once_after_restart(&home, waiting).await;

    // The same through a quit.
    let home = dir.path().join("quit");
    let rt = one_slot_runtime(&home).await;
    let waiting = start_one_waiting(&rt, &home).await;
    rt.shutdown().await;
    assert_eq!(runs(&home), 0);
    runs_once_after_restart(&home, waiting).await;
}
