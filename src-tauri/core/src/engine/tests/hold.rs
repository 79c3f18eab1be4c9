//! Held turns (SPEC 14).

use super::*;
use crate::engine::DENIED;
use crate::model::{Hold, HoldReason, Power};

/// `caller` asked for a turn that would act without asking.
fn wider(caller: AgentId) -> Hold {
    Hold {
        caller,
        caller_power: Power::Asks,
        power: Power::Full,
        reasons: vec![HoldReason::WiderMode],
    }
}

/// A parent, and a child it created that is held with `prompt`, armed to notify the parent.
fn held(f: &mut Fx) -> (AgentId, AgentId, String) {
    let parent = f.idle(None, "w1");
    let kid = f.idle(Some(parent), "w1");
    f.e.hold_turn(kid, "touch /tmp/x".into(), wider(parent), Some(parent))
        .unwrap();
    let request = f.e.agent(kid).unwrap().pending_permission.clone().unwrap();
    (parent, kid, request.request_id)
}

#[test]
fn a_held_turn_runs_nothing_and_needs_the_user() {
    let mut f = Fx::new();
    let (parent, kid, request) = held(&mut f);
    let o = f.e.take_outcome();
    assert!(effects(&o).is_empty(), "nothing runs: {:?}", effects(&o));
    let a = f.e.agent(kid).unwrap();
    assert_eq!(a.status(), Status::Idle);
    assert!(a.needs_you());
    assert_eq!(a.record.attention_reason, Some(AttentionReason::Permission));
    let req = a.pending_permission.as_ref().unwrap();
    assert_eq!(req.input["prompt"], "touch /tmp/x");
    assert_eq!(req.input["provider"], "claude");
    assert_eq!(req.input["cwd"], "/src/w1");
    assert!(request.starts_with("paseo-held-"));
    // The parent's track shows a member that needs the user.
    assert_eq!(f.e.track_counts(parent).needs_you, 1);
    // Another prompt waits for the answer; so does another held turn.
    assert!(matches!(
        f.e.prompt(kid, "x".into(), TurnOrigin::User, None),
        Err(EngineError::Busy { .. })
    ));
    assert!(f.e.hold_turn(kid, "y".into(), wider(parent), None).is_err());
    f.check_activity();
}

#[test]
fn allow_runs_the_held_prompt_as_the_callers_turn() {
    let mut f = Fx::new();
    let (parent, kid, request) = held(&mut f);
    let _ = f.e.take_outcome();
    assert!(f.e.answer_permission(kid, "other", true).is_err());
    f.e.answer_permission(kid, &request, true).unwrap();
    let o = f.e.take_outcome();
    assert!(effects(&o).contains(&&Effect::SendTurn {
        agent: kid,
        input: TurnInput::Prompt("touch /tmp/x".into())
    }));
    let a = f.e.agent(kid).unwrap();
    assert_eq!(a.status(), Status::Running);
    assert!(a.pending_permission.is_none() && a.record.held_turn.is_none());
    assert!(!a.needs_you());
    // The armed notice fires when the turn ends.
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    let q = f.e.inbox(parent).map(|q| q.len()).unwrap_or(0)
        + usize::from(f.e.agent(parent).unwrap().status() == Status::Running);
    assert_eq!(q, 1, "one notice for the parent");
}

#[test]
fn deny_errors_the_agent_and_tells_the_caller_once() {
    let mut f = Fx::new();
    let (parent, kid, request) = held(&mut f);
    let _ = f.e.take_outcome();
    f.e.answer_permission(kid, &request, false).unwrap();
    let o = f.e.take_outcome();
    assert!(
        !effects(&o)
            .iter()
            .any(|e| matches!(e, Effect::SendTurn { agent, .. } if *agent == kid)),
        "nothing of the held turn runs"
    );
    let a = f.e.agent(kid).unwrap();
    assert_eq!(a.status(), Status::Error);
    assert_eq!(a.record.last_error.as_deref(), Some(DENIED));
    assert!(a.record.held_turn.is_none() && a.pending_permission.is_none());
    // The parent was idle: the notice runs as its next turn.
    let p = f.e.agent(parent).unwrap();
    assert_eq!(p.status(), Status::Running);
    let sent: Vec<_> = o
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendTurn {
                agent,
                input: TurnInput::Notice(text),
            } if *agent == parent => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains(DENIED), "{}", sent[0]);
    assert!(f.e.answer_permission(kid, &request, false).is_err());
}

#[test]
fn a_held_turn_survives_a_restart_still_answerable() {
    let mut f = Fx::new();
    let (_parent, kid, request) = held(&mut f);
    let records = f.records();
    let json = serde_json::to_string(&records).unwrap();
    let records: Vec<AgentRecord> = serde_json::from_str(&json).unwrap();
    let (mut e2, _) = f.reload(records);
    let a = e2.agent(kid).unwrap();
    assert_eq!(
        a.pending_permission.as_ref().map(|p| p.request_id.as_str()),
        Some(request.as_str())
    );
    assert!(a.needs_you());
    let _ = e2.take_outcome();
    e2.answer_permission(kid, &request, true).unwrap();
    let o = e2.take_outcome();
    assert!(effects(&o)
        .iter()
        .any(|e| matches!(e, Effect::StartSession { agent, .. } if *agent == kid)));
    e2.session_ready(kid).unwrap();
    assert_eq!(e2.agent(kid).unwrap().status(), Status::Running);
}

#[test]
fn a_session_ending_keeps_the_held_request() {
    let mut f = Fx::new();
    let (_parent, kid, request) = held(&mut f);
    f.e.close(kid).unwrap();
    let a = f.e.agent(kid).unwrap();
    assert_eq!(
        a.pending_permission.as_ref().map(|p| p.request_id.clone()),
        Some(request)
    );
}
