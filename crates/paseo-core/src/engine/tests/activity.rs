//! Workspace activity and track counts (SPEC 6, 7).

use super::*;

#[test]
fn a_subagent_lights_its_roots_workspace_with_what_needs_the_user_or_runs() {
    let mut f = Fx::new();
    let root = f.idle(None, "w1");
    f.e.mark_seen(root).unwrap();
    assert_eq!(f.bucket("w1"), Some(Bucket::Done));
    // The child lives in w2 but counts in its root's workspace w1.
    let kid = f.running(Some(root), "w2");
    assert_eq!(f.bucket("w1"), Some(Bucket::Running));
    assert_eq!(f.bucket("w2"), None);
    // A grandchild running lifts the top of the chain too.
    let gk = f.running(Some(kid), "w2");
    assert_eq!(
        f.e.activity_counts(&"w1".parse().unwrap())[Bucket::Running.index()],
        2
    );
    // Asking for a permission: its root's workspace needs you.
    f.e.permission_requested(gk, permission("r")).unwrap();
    assert_eq!(f.bucket("w1"), Some(Bucket::NeedsInput));
    f.e.answer_permission(gk, "r", true).unwrap();
    f.e.turn_ended(
        kid,
        TurnOutcome::Failed {
            message: "x".into(),
            detail: None,
        },
    )
    .unwrap();
    f.e.turn_ended(gk, TurnOutcome::Completed).unwrap();
    assert_eq!(
        f.bucket("w1"),
        Some(Bucket::Failed),
        "a failed subagent shows where the status bar's failed count says"
    );
    // A finished subagent is its parent's to read: it counts, and lights nothing.
    let c = f.e.activity_counts(&"w1".parse().unwrap());
    assert_eq!(
        c.iter().sum::<u32>(),
        3,
        "every agent of the tree counts: {c:?}"
    );
    assert_eq!(c[Bucket::Attention.index()], 0, "{c:?}");
    f.check_activity();
}

#[test]
fn detaching_moves_activity_to_the_detached_agents_own_workspace() {
    let mut f = Fx::new();
    let root = f.idle(None, "w1");
    f.e.mark_seen(root).unwrap();
    let kid = f.running(Some(root), "w2");
    let gk = f.running(Some(kid), "w1");
    f.e.detach(kid).unwrap();
    assert_eq!(f.bucket("w2"), Some(Bucket::Running));
    assert_eq!(f.e.agent(gk).unwrap().root(), kid);
    assert_eq!(
        f.e.activity_counts(&"w1".parse().unwrap())[Bucket::Running.index()],
        0
    );
    f.check_activity();
}

#[test]
fn workspaces_sharing_a_directory_keep_separate_buckets() {
    let mut f = Fx::new();
    let mut other = ws("w3");
    other.cwd = "/src/w1".into(); // same directory as w1
    f.e.upsert_workspace(other, None);
    let a = f.running(None, "w1");
    let _b = f.idle(None, "w3");
    assert_eq!(f.bucket("w1"), Some(Bucket::Running));
    assert_eq!(f.bucket("w3"), Some(Bucket::Done));
    f.e.archive(a).unwrap();
    assert_eq!(f.bucket("w1"), None);
    f.check_activity();
}

/// The track header counts rows by their word (model/tally.rs): one asking says "needs you", not
/// "running"; an error says "failed", seen or not, so opening it does not change the count.
#[test]
fn a_tracks_counts_are_the_words_of_its_rows_and_stay_when_seen() {
    let mut f = Fx::new();
    let p = f.idle(None, "w1");
    let asking = f.running(Some(p), "w1");
    f.e.permission_requested(asking, permission("r")).unwrap();
    let failed = f.running(Some(p), "w1");
    f.e.turn_ended(
        failed,
        TurnOutcome::Failed {
            message: "x".into(),
            detail: None,
        },
    )
    .unwrap();
    let finished = f.running(Some(p), "w1");
    f.e.turn_ended(finished, TurnOutcome::Completed).unwrap();
    assert_eq!(
        f.e.track_counts(p),
        crate::model::Tally {
            running: 0,
            queued: 0,
            needs_you: 1,
            failed: 1,
            total: 3,
            finished: Some(1),
        },
        "a finished turn needs nobody"
    );
    assert_eq!(
        f.e.track_counts(p).line(),
        "0 running · 1 needs you · 1 failed · 3 total"
    );
    // Seen, the error stays failed, and so does its count.
    f.e.mark_seen(failed).unwrap();
    let seen = f.e.agent(failed).unwrap();
    assert_eq!(seen.bucket(), Bucket::Failed);
    assert_eq!(f.e.track_counts(p).failed, 1);
    // Answered, the one asking runs again.
    f.e.answer_permission(asking, "r", true).unwrap();
    let c = f.e.track_counts(p);
    assert_eq!((c.running, c.needs_you), (1, 0));
}
