//! Sessions dying, closing and resuming, and app shutdown (SPEC 2).

use super::*;

#[test]
fn process_death_between_turns_is_reported_as_error() {
    let mut f = Fx::new();
    let id = f.idle(None, "w1");
    f.e.session_exited(id, "exit code 137").unwrap();
    let r = f.record(id);
    assert_eq!(r.last_status, Status::Error);
    assert!(r.last_error.as_deref().unwrap().contains("137"));
    // The next prompt resumes a new session.
    f.e.prompt(id, "again".into(), TurnOrigin::User, None)
        .unwrap();
    assert_eq!(f.status(id), Status::Initializing);
    let o = f.e.take_outcome();
    assert!(o
        .effects
        .iter()
        .any(|e| matches!(e, Effect::StartSession { agent, .. } if *agent == id)));
}

#[test]
fn closed_agent_resumes_with_its_session_id() {
    let mut f = Fx::new();
    let id = f.idle(None, "w1");
    f.e.session_id(id, "sess-1".into()).unwrap();
    f.e.close(id).unwrap();
    assert_eq!(f.status(id), Status::Closed);
    let _ = f.e.take_outcome();
    f.e.prompt(id, "hi".into(), TurnOrigin::User, None).unwrap();
    let o = f.e.take_outcome();
    assert!(o.effects.contains(&Effect::StartSession {
        agent: id,
        resume: Some("sess-1".into())
    }));
    f.e.session_ready(id).unwrap();
    assert_eq!(f.status(id), Status::Running);
}

#[test]
fn shutdown_closes_everything_without_waking_parents() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = f.armed(Some(parent), parent);
    let _ = f.e.take_outcome();
    f.e.shutdown();
    assert_eq!(f.status(parent), Status::Closed);
    assert_eq!(f.status(kid), Status::Closed);
    assert_eq!(f.e.inbox(parent).unwrap().len(), 1, "queued, not delivered");
    let o = f.e.take_outcome();
    assert!(!o
        .effects
        .iter()
        .any(|e| matches!(e, Effect::StartSession { .. })));
}
