//! Prompts, turns, cancel and attention (SPEC 2).

use super::*;

#[test]
fn turn_completed_goes_idle_with_finished_attention_and_prompt_clears_it() {
    let mut f = Fx::new();
    let id = f.running(None, "w1");
    f.e.turn_ended(id, TurnOutcome::Completed).unwrap();
    let r = f.record(id);
    assert_eq!(r.last_status, Status::Idle);
    assert!(r.requires_attention);
    assert_eq!(r.attention_reason, Some(AttentionReason::Finished));
    assert_eq!(f.bucket("w1"), Some(Bucket::Attention));
    f.e.prompt(id, "again".into(), TurnOrigin::User, None)
        .unwrap();
    let r = f.record(id);
    assert!(!r.requires_attention);
    assert_eq!(r.last_status, Status::Running);
}

#[test]
fn opening_an_agent_clears_finished_attention() {
    let mut f = Fx::new();
    let id = f.running(None, "w1");
    f.e.turn_ended(id, TurnOutcome::Completed).unwrap();
    f.e.mark_seen(id).unwrap();
    assert!(!f.e.agent(id).unwrap().record.requires_attention);
    assert_eq!(f.bucket("w1"), Some(Bucket::Done));
}

#[test]
fn failed_turn_is_error_and_error_is_not_terminal() {
    let mut f = Fx::new();
    let id = f.running(None, "w1");
    f.e.turn_ended(
        id,
        TurnOutcome::Failed {
            message: "boom".into(),
            detail: None,
        },
    )
    .unwrap();
    let r = f.record(id);
    assert_eq!(r.last_status, Status::Error);
    assert_eq!(r.last_error.as_deref(), Some("boom"));
    assert_eq!(r.attention_reason, Some(AttentionReason::Error));
    assert_eq!(f.bucket("w1"), Some(Bucket::Failed));
    f.e.prompt(id, "retry".into(), TurnOrigin::User, None)
        .unwrap();
    let r = f.record(id);
    assert_eq!(r.last_status, Status::Running);
    assert_eq!(r.last_error, None);
}

#[test]
fn invalid_transitions_are_rejected_and_change_nothing() {
    let mut f = Fx::new();
    let id = f.idle(None, "w1");
    let before = f.e.agent(id).unwrap().record.clone();
    let err = f.e.turn_ended(id, TurnOutcome::Completed).unwrap_err();
    assert!(
        matches!(err, EngineError::InvalidTransition { .. }),
        "{err}"
    );
    assert_eq!(f.e.agent(id).unwrap().record, before);
    assert!(f.e.permission_requested(id, permission("r")).is_err());
    assert_eq!(f.e.agent(id).unwrap().record, before);
}

#[test]
fn prompting_a_running_agent_is_refused() {
    let mut f = Fx::new();
    let id = f.running(None, "w1");
    let err =
        f.e.prompt(id, "more".into(), TurnOrigin::User, None)
            .unwrap_err();
    assert!(matches!(err, EngineError::Busy { .. }));
}

#[test]
fn cancel_waits_for_the_provider_or_the_timeout() {
    let mut f = Fx::new();
    let id = f.running(None, "w1");
    assert!(f.e.cancel(id).unwrap());
    assert_eq!(f.status(id), Status::Running, "no change before the ack");
    let o = f.e.take_outcome();
    assert!(o
        .effects
        .contains(&Effect::Interrupt { agent: id, turn: 1 }));
    f.e.turn_ended(id, TurnOutcome::Canceled).unwrap();
    assert_eq!(f.status(id), Status::Idle);

    let id2 = f.running(None, "w1");
    f.e.cancel(id2).unwrap();
    f.e.cancel_timed_out(id2, 1).unwrap();
    assert_eq!(f.status(id2), Status::Idle);
    let o = f.e.take_outcome();
    assert!(o.effects.contains(&Effect::CloseSession { agent: id2 }));
    // A timeout for a turn that already ended changes nothing.
    f.e.cancel_timed_out(id2, 1).unwrap();
}

/// SPEC 2: a closed agent used again goes `closed → initializing` (resumed, once),
/// and a prompt sent while it initializes waits for the session instead of being refused.
#[test]
fn waking_a_closed_agent_resumes_it_and_a_prompt_meanwhile_waits() {
    let mut f = Fx::new();
    let id = f.idle(None, "w1");
    f.e.close(id).unwrap();
    let _ = f.e.take_outcome();
    assert_eq!(f.status(id), Status::Closed);
    assert!(f.e.wake(id).unwrap());
    assert_eq!(f.status(id), Status::Initializing);
    let o = f.e.take_outcome();
    assert_eq!(
        effects(&o)
            .iter()
            .filter(|e| matches!(e, Effect::StartSession { agent, .. } if *agent == id))
            .count(),
        1
    );
    // Waking again starts nothing more; nor does waking a live agent.
    assert!(!f.e.wake(id).unwrap());
    assert!(effects(&f.e.take_outcome()).is_empty());
    f.e.prompt(id, "hello".into(), TurnOrigin::User, None)
        .unwrap();
    assert_eq!(f.status(id), Status::Initializing);
    // A second prompt while the first waits is refused: one turn at a time.
    assert!(matches!(
        f.e.prompt(id, "again".into(), TurnOrigin::User, None),
        Err(EngineError::Busy { .. })
    ));
    f.e.session_ready(id).unwrap();
    assert_eq!(f.status(id), Status::Running);
    let o = f.e.take_outcome();
    assert!(effects(&o).contains(&&Effect::SendTurn {
        agent: id,
        input: TurnInput::Prompt("hello".into())
    }));
    // A live idle agent is not woken again.
    let other = f.idle(None, "w1");
    assert!(!f.e.wake(other).unwrap());
}
