//! Finish notices exactly once at any crash instant (SPEC 4), by fault injection: the data
//! root's disk stops after N completed writes (`store::fault`), counted from the moment before a
//! child's armed turn ends, for every N from 0 to the number of writes the notice's whole life
//! takes (child record, parent inbox, parent timeline, parent record, in whatever order the app
//! writes them). The app is then stopped and started again on what landed, delivery runs, and
//! the parent must hold exactly one notice for the turn: in its timeline or its inbox. The
//! scripted provider stands in for the agents; what is under test is the store's write order.

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::model::{AgentId, Status};
use crate::store::{fault, Layout};

use super::tests::scripted::{req, workspace, Env};

const T: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug)]
enum Parent {
    /// Reads prompts, idle with a live session: the notice is delivered at once.
    Idle,
    /// Reads prompts, closed: the notice waits in the inbox while the parent resumes.
    Closed,
    /// Cannot read prompts (a shell agent): the notice is only recorded in its timeline.
    Mute,
}

/// Notices for `kid` that `parent` holds: timeline items carrying one, and inbox entries.
async fn notices_held(h: &RuntimeHandle, parent: AgentId, kid: AgentId) -> usize {
    let items = h.timeline(parent, 0, 10_000).await.unwrap();
    let received = items
        .iter()
        .filter(|i| i.notice.as_ref().is_some_and(|n| n.child_id == kid))
        .count();
    let (inboxes, _) = crate::store::load_inboxes(h.layout());
    let queued = inboxes
        .iter()
        .filter(|(p, _)| *p == parent)
        .flat_map(|(_, q)| q.iter())
        .filter(|n| n.child_id == kid)
        .count();
    received + queued
}

/// Runs one life of a notice with the disk stopping after `stop_after` writes (`None`: never);
/// returns the files written meanwhile and how many notices the parent holds after a restart.
async fn one_life(kind: Parent, stop_after: Option<u64>) -> (Vec<PathBuf>, usize) {
    let env = Env::new();
    let home = env.home();
    let (parent, kid) = {
        let rt = env.start().await;
        let h = rt.handle().runtime;
        let ws = workspace(&rt.handle(), &env).await;
        let mut p = req(&ws, "ok planning");
        if matches!(kind, Parent::Mute) {
            p.provider = "mute".into();
        }
        let parent = h.create(p).await.unwrap();
        h.wait(parent.id(), T).await.unwrap();
        let mut k = req(&ws, "hang");
        k.caller = Caller::Agent(parent.id());
        k.subagent = true;
        k.title = Some("kid".into());
        let kid = h.create(k).await.unwrap();
        while h.get(kid.id()).await.unwrap().status != Status::Running {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if matches!(kind, Parent::Closed) {
            h.stop(parent.id()).await.unwrap();
        }
        h.flush().await;
        // Reading a page writes what the timeline has waiting.
        h.timeline(kid.id(), 0, 1).await.unwrap();
        h.timeline(parent.id(), 0, 1).await.unwrap();
        fault::stop_after(&home, stop_after);
        // The armed turn ends: its notice starts its life.
        let _ = h.cancel(Caller::User, kid.id()).await;
        // Until the app stops writing (or the disk has stopped).
        let mut last = usize::MAX;
        loop {
            tokio::time::sleep(Duration::from_millis(150)).await;
            let n = fault::written(&home);
            if n == last {
                break;
            }
            last = n;
        }
        // Stopped: nothing after this lands, as after a SIGKILL at this instant.
        fault::freeze(&home);
        rt.shutdown().await;
        (parent.id(), kid.id())
    };
    let written = fault::clear(&home);
    let rt = env.start().await;
    let h = rt.handle().runtime;
    // Delivery runs to its end: nothing queued, the parent not busy.
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let busy = matches!(
            h.get(parent).await.unwrap().status,
            Status::Running | Status::Initializing
        );
        let queued = Layout::new(&home).inbox_path(parent).exists();
        if !busy && !queued {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "delivery never ended"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    h.flush().await;
    let n = notices_held(&h, parent, kid).await;
    let owed = h.get(kid).await.unwrap().record.notify_arm.is_some();
    assert!(
        !owed,
        "the child's record still owes its notice after delivery"
    );
    rt.shutdown().await;
    (written, n)
}

async fn every_crash_instant(kind: Parent) {
    let (written, n) = one_life(kind, None).await;
    assert_eq!(n, 1, "{kind:?}: without a crash, one notice");
    let home_of = |p: &PathBuf| p.to_string_lossy().to_string();
    let names: Vec<String> = written.iter().map(home_of).collect();
    // The life covers the child's record, the parent's timeline and record, and (for a parent
    // that reads prompts) its inbox.
    assert!(names.iter().any(|p| p.contains("/agents/")), "{names:#?}");
    assert!(
        names.iter().any(|p| p.contains("/timelines/")),
        "{names:#?}"
    );
    if !matches!(kind, Parent::Mute) {
        assert!(names.iter().any(|p| p.contains("/inbox/")), "{names:#?}");
    }
    let total = written.len() as u64;
    println!("{kind:?}: {total} writes: {names:#?}");
    let mut bad = Vec::new();
    // A life may take a write more or less from run to run (timeline batches): past its end too.
    for stop in 0..=total + 2 {
        let (_, n) = one_life(kind, Some(stop)).await;
        if n != 1 {
            bad.push(format!(
                "disk stopped after {stop} of {total} writes: {n} notices"
            ));
        }
    }
    assert!(bad.is_empty(), "{kind:?}: {bad:#?}\nwrites: {names:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notice_to_an_idle_parent_arrives_once_whenever_the_app_stops() {
    every_crash_instant(Parent::Idle).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notice_queued_for_a_closed_parent_arrives_once_whenever_the_app_stops() {
    every_crash_instant(Parent::Closed).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notice_recorded_for_a_shell_parent_arrives_once_whenever_the_app_stops() {
    every_crash_instant(Parent::Mute).await;
}
