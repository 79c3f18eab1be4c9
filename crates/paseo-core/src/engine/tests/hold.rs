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
    let (parent, kid, _) = held(&mut f);
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
    assert!(req.is_held_start());
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

// SPEC 4: a held turn owes its notice like any armed turn, reported when it runs and ends, is
// denied or is archived, and never made up by what happens around it while it waits.

/// A busy (running) parent, so that every notice it is owed stays in its inbox to be counted,
/// and a child it created whose turn is held, armed to notify it.
fn held_for_busy(f: &mut Fx) -> (AgentId, AgentId, String) {
    let parent = f.running(None, "w1");
    let kid = f.idle(Some(parent), "w1");
    f.e.hold_turn(kid, "touch /tmp/x".into(), wider(parent), Some(parent))
        .unwrap();
    let request = f.e.agent(kid).unwrap().pending_permission.clone().unwrap();
    let _ = f.e.take_outcome();
    (parent, kid, request.request_id)
}

/// The notices `parent`'s inbox holds about `kid`, as (outcome, error).
fn owed(e: &Engine, parent: AgentId, kid: AgentId) -> Vec<(String, Option<String>)> {
    e.inbox(parent)
        .into_iter()
        .flatten()
        .filter(|n| n.child_id == kid)
        .map(|n| (n.outcome.as_str().to_string(), n.error.clone()))
        .collect()
}

/// `kid` still waits for the user: Allow/Deny offered, the record's held turn and arm kept,
/// prompts refused.
fn still_held(e: &mut Engine, kid: AgentId, request: &str) {
    let a = e.agent(kid).unwrap();
    assert_eq!(
        a.pending_permission.as_ref().map(|p| p.request_id.as_str()),
        Some(request),
        "Allow/Deny is still offered"
    );
    assert!(
        a.record.held_turn.is_some(),
        "the record keeps the held turn"
    );
    assert!(a.record.notify_arm.is_some(), "its notice is still owed");
    assert!(a.needs_you());
    assert_eq!(a.bucket(), Bucket::NeedsInput);
    assert!(matches!(
        e.prompt(kid, "x".into(), TurnOrigin::User, None),
        Err(EngineError::Busy { .. })
    ));
}

#[test]
fn a_held_turn_survives_a_restart_still_held_and_still_owing_its_notice() {
    let mut f = Fx::new();
    let (parent, kid, request) = held_for_busy(&mut f);
    let (mut e2, _) = f.reload(f.records());
    assert_eq!(
        owed(&e2, parent, kid),
        vec![],
        "no made-up interrupted notice"
    );
    let a = e2.agent(kid).unwrap();
    assert_ne!(a.record.last_error.as_deref(), Some(INTERRUPTED));
    assert_eq!(a.record.attention_reason, Some(AttentionReason::Permission));
    still_held(&mut e2, kid, &request);
    // Its real outcome is reported, once, when the user answers.
    e2.answer_permission(kid, &request, false).unwrap();
    assert_eq!(
        owed(&e2, parent, kid),
        vec![("failed".to_string(), Some(DENIED.to_string()))]
    );
}

#[test]
fn archiving_a_held_child_tells_its_caller_it_was_archived() {
    let mut f = Fx::new();
    let (parent, kid, request) = held_for_busy(&mut f);
    f.e.archive(kid).unwrap();
    assert_eq!(
        owed(&f.e, parent, kid),
        vec![("archived".to_string(), None)]
    );
    // The archive ended the held turn: a restore brings the agent back with nothing held
    // and nothing owed twice.
    let a = f.e.agent(kid).unwrap();
    assert!(a.record.held_turn.is_none() && a.pending_permission.is_none());
    f.e.restore(kid, false).unwrap();
    let a = f.e.agent(kid).unwrap();
    assert!(a.record.held_turn.is_none() && a.pending_permission.is_none());
    assert!(f.e.answer_permission(kid, &request, true).is_err());
    f.e.prompt(kid, "y".into(), TurnOrigin::User, None).unwrap();
    f.e.session_ready(kid).unwrap();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert_eq!(owed(&f.e, parent, kid).len(), 1);
    f.check_activity();
}

#[test]
fn a_failed_session_start_keeps_the_held_turn_and_its_notice() {
    let mut f = Fx::new();
    let parent = f.running(None, "w1");
    // As `create_agent` does: the agent is created and its first turn held while its session
    // starts.
    let kid = f.e.create(f.new_agent(Some(parent), "w1")).unwrap();
    f.e.hold_turn(kid, "touch /tmp/x".into(), wider(parent), Some(parent))
        .unwrap();
    let request = f.e.agent(kid).unwrap().pending_permission.clone().unwrap();
    f.e.session_failed(kid, "no such binary").unwrap();
    assert_eq!(
        owed(&f.e, parent, kid),
        vec![],
        "nothing ran, nothing ended"
    );
    still_held(&mut f.e, kid, &request.request_id);
    // Allowed, it starts the session again and runs; its end is the one notice.
    f.e.answer_permission(kid, &request.request_id, true)
        .unwrap();
    f.e.session_ready(kid).unwrap();
    assert_eq!(f.status(kid), Status::Running);
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert_eq!(
        owed(&f.e, parent, kid),
        vec![("completed".to_string(), None)]
    );
    f.check_activity();
}

#[test]
fn a_process_exit_is_no_failed_turn_for_a_held_turn() {
    let mut f = Fx::new();
    let (parent, kid, request) = held_for_busy(&mut f);
    f.e.session_exited(kid, "killed").unwrap();
    assert_eq!(owed(&f.e, parent, kid), vec![], "the held turn never ran");
    still_held(&mut f.e, kid, &request);
    // Stopped (quit) and restarted alike: still held, still owed.
    f.e.close(kid).unwrap();
    assert_eq!(owed(&f.e, parent, kid), vec![]);
    still_held(&mut f.e, kid, &request);
    f.e.answer_permission(kid, &request, false).unwrap();
    assert_eq!(
        owed(&f.e, parent, kid),
        vec![("failed".to_string(), Some(DENIED.to_string()))]
    );
}

#[test]
fn a_notice_to_an_agent_with_a_held_turn_runs_and_keeps_the_held_request() {
    let mut f = Fx::new();
    // `lead` asked `mid` for a held turn; `mid`'s own child `kid` finishes meanwhile.
    let lead = f.running(None, "w1");
    let mid = f.idle(Some(lead), "w1");
    let kid = f.armed(Some(mid), mid);
    f.e.hold_turn(mid, "touch /tmp/x".into(), wider(lead), Some(lead))
        .unwrap();
    let request = f.e.agent(mid).unwrap().pending_permission.clone().unwrap();
    let request = request.request_id;
    let _ = f.e.take_outcome();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    // SPEC 4: delivered at `mid`'s idle boundary, as its next turn (the held turn waits for
    // the user, the notice does not).
    let o = f.e.take_outcome();
    assert!(o.effects.iter().any(|e| matches!(e,
        Effect::SendTurn { agent, input: TurnInput::Notice(_) } if *agent == mid)));
    assert_eq!(f.status(mid), Status::Running);
    assert!(f.e.agent(mid).unwrap().pending_permission.is_some());
    f.e.turn_ended(mid, TurnOutcome::Completed).unwrap();
    assert_eq!(f.status(mid), Status::Idle);
    still_held(&mut f.e, mid, &request);
    assert_eq!(
        f.record(mid).attention_reason,
        Some(AttentionReason::Permission)
    );
    assert_eq!(
        owed(&f.e, lead, mid),
        vec![],
        "a notice turn is not the held turn"
    );
    // A notice turn that fails, or that a crash interrupts, leaves it held too.
    let kid2 = {
        f.tick();
        let mut n = f.new_agent(Some(mid), "w1");
        n.created_by = Some(mid);
        n.notify = Some(mid);
        f.e.create(n).unwrap()
    };
    f.e.session_ready(kid2).unwrap();
    f.e.prompt(kid2, "go".into(), TurnOrigin::Agent(mid), Some(mid))
        .unwrap();
    f.e.turn_ended(kid2, TurnOutcome::Completed).unwrap();
    assert_eq!(f.status(mid), Status::Running);
    let (mut e2, _) = f.reload(f.records());
    assert_eq!(e2.agent(mid).unwrap().status(), Status::Error);
    still_held(&mut e2, mid, &request);
    assert_eq!(owed(&e2, lead, mid), vec![]);
    f.e.turn_ended(
        mid,
        TurnOutcome::Failed {
            message: "x".into(),
            detail: None,
        },
    )
    .unwrap();
    still_held(&mut f.e, mid, &request);
    assert_eq!(owed(&f.e, lead, mid), vec![]);
    // Allowed, the held turn runs and its end is the caller's one notice.
    f.e.answer_permission(mid, &request, true).unwrap();
    assert_eq!(f.status(mid), Status::Running);
    f.e.turn_ended(mid, TurnOutcome::Completed).unwrap();
    assert_eq!(owed(&f.e, lead, mid), vec![("completed".to_string(), None)]);
    assert!(f.e.agent(mid).unwrap().pending_permission.is_none());
    f.check_activity();
}

#[test]
fn a_provider_request_during_a_notice_turn_does_not_take_the_held_one() {
    let mut f = Fx::new();
    let lead = f.running(None, "w1");
    let mid = f.idle(Some(lead), "w1");
    let kid = f.armed(Some(mid), mid);
    f.e.hold_turn(mid, "touch /tmp/x".into(), wider(lead), Some(lead))
        .unwrap();
    let request = f.e.agent(mid).unwrap().pending_permission.clone().unwrap();
    let request = request.request_id;
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert_eq!(f.status(mid), Status::Running);
    // The notice turn asks the provider's way: that request is answered first ...
    f.e.permission_requested(mid, permission("r")).unwrap();
    assert_eq!(
        owed(&f.e, lead, mid),
        vec![],
        "the held turn's arm is not the notice turn's"
    );
    f.e.answer_permission(mid, "r", true).unwrap();
    // ... and the held one is offered again.
    let a = f.e.agent(mid).unwrap();
    assert_eq!(
        a.pending_permission.as_ref().map(|p| p.request_id.as_str()),
        Some(request.as_str())
    );
    f.e.permission_requested(mid, permission("r2")).unwrap();
    f.e.permission_resolved(mid, "r2").unwrap();
    f.e.turn_ended(mid, TurnOutcome::Completed).unwrap();
    still_held(&mut f.e, mid, &request);
}

/// An autoArchive child created by `parent` (busy) whose first turn is held.
fn held_auto_archive(f: &mut Fx) -> (AgentId, AgentId, String) {
    let parent = f.running(None, "w1");
    let mut n = f.new_agent(Some(parent), "w1");
    n.auto_archive = true;
    n.created_workspace_id = Some("w2".parse().unwrap());
    let kid = f.e.create(n).unwrap();
    f.e.hold_turn(kid, "touch /tmp/x".into(), wider(parent), Some(parent))
        .unwrap();
    f.e.session_ready(kid).unwrap();
    let request = f.e.agent(kid).unwrap().pending_permission.clone().unwrap();
    let _ = f.e.take_outcome();
    (parent, kid, request.request_id)
}

#[test]
fn denying_a_held_first_turn_auto_archives_like_any_finished_turn() {
    let mut f = Fx::new();
    let (parent, kid, request) = held_auto_archive(&mut f);
    f.e.answer_permission(kid, &request, false).unwrap();
    let r = f.record(kid);
    assert!(
        r.is_archived(),
        "SPEC 5: archived after its first terminal turn"
    );
    assert!(r.auto_archive_done);
    let o = f.e.take_outcome();
    assert!(o.effects.contains(&Effect::ArchiveWorktree {
        workspace: "w2".parse().unwrap(),
        requested_by: kid
    }));
    assert_eq!(
        owed(&f.e, parent, kid),
        vec![("failed".to_string(), Some(DENIED.to_string()))],
        "one notice, the denial"
    );
    f.check_activity();
}

#[test]
fn cancel_ends_a_held_turn_like_deny() {
    let mut f = Fx::new();
    let (parent, kid, request) = held_for_busy(&mut f);
    assert!(!f.e.cancel(kid).unwrap(), "no turn was running");
    let o = f.e.take_outcome();
    assert!(
        !effects(&o)
            .iter()
            .any(|e| matches!(e, Effect::SendTurn { agent, .. } if *agent == kid)),
        "nothing of the held turn runs"
    );
    let a = f.e.agent(kid).unwrap();
    assert!(a.record.held_turn.is_none() && a.pending_permission.is_none());
    assert!(a.record.notify_arm.is_none());
    assert_eq!(a.status(), Status::Idle);
    assert_eq!(a.record.attention_reason, Some(AttentionReason::Canceled));
    assert!(!a.needs_you());
    assert_eq!(
        owed(&f.e, parent, kid),
        vec![("canceled".to_string(), None)]
    );
    assert!(f.e.answer_permission(kid, &request, true).is_err());
    // The agent takes prompts again.
    f.e.prompt(kid, "y".into(), TurnOrigin::User, None).unwrap();
    assert_eq!(f.status(kid), Status::Running);

    // An autoArchive agent whose held first turn is canceled is archived, as after Deny.
    let (parent, kid, _) = held_auto_archive(&mut f);
    f.e.cancel(kid).unwrap();
    assert!(f.record(kid).is_archived());
    assert_eq!(
        owed(&f.e, parent, kid),
        vec![("canceled".to_string(), None)]
    );
    f.check_activity();
}

#[test]
fn a_held_turn_allowed_during_a_notice_turn_runs_after_it_with_its_own_notice() {
    let mut f = Fx::new();
    let lead = f.running(None, "w1");
    let mid = f.idle(Some(lead), "w1");
    let kid = f.armed(Some(mid), mid);
    f.e.hold_turn(mid, "touch /tmp/x".into(), wider(lead), Some(lead))
        .unwrap();
    let request = f.e.agent(mid).unwrap().pending_permission.clone().unwrap();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert_eq!(f.status(mid), Status::Running, "the notice turn runs");
    f.e.answer_permission(mid, &request.request_id, true)
        .unwrap();
    let _ = f.e.take_outcome();
    // The notice turn's end is not the allowed turn's: nothing reported, the allowed turn
    // starts next.
    f.e.turn_ended(mid, TurnOutcome::Completed).unwrap();
    assert_eq!(owed(&f.e, lead, mid), vec![]);
    let o = f.e.take_outcome();
    assert!(effects(&o).contains(&&Effect::SendTurn {
        agent: mid,
        input: TurnInput::Prompt("touch /tmp/x".into())
    }));
    f.e.turn_ended(mid, TurnOutcome::Completed).unwrap();
    assert_eq!(owed(&f.e, lead, mid), vec![("completed".to_string(), None)]);
}

#[test]
fn a_held_turn_an_earlier_version_archived_along_is_not_restored() {
    // Earlier versions archived a held agent with its held turn still in the record (and its
    // arm gone): a restore must not offer a turn whose caller was told nothing of it.
    let mut f = Fx::new();
    let (_parent, kid, request) = held_for_busy(&mut f);
    let mut records = f.records();
    for r in records.iter_mut().filter(|r| r.id == kid) {
        r.archived_at = Some(Timestamp::from_millis(5_000));
        r.notify_arm = None;
        assert!(r.held_turn.is_some());
    }
    let (mut e2, _) = f.reload(records);
    e2.restore(kid, false).unwrap();
    let a = e2.agent(kid).unwrap();
    assert!(a.record.held_turn.is_none() && a.pending_permission.is_none());
    assert!(!a.needs_you());
    assert!(e2.answer_permission(kid, &request, true).is_err());
    e2.prompt(kid, "y".into(), TurnOrigin::User, None).unwrap();
}
