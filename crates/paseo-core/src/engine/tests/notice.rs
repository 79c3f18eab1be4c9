//! Finish notices (SPEC 4).

use super::*;
use crate::model::NoticeOutcome;

#[test]
fn finish_notice_waits_for_the_parents_idle_boundary_and_never_interrupts() {
    let mut f = Fx::new();
    let parent = f.running(None, "w1");
    let kid = f.armed(Some(parent), parent);
    let arm = f.record(kid).notify_arm.clone().unwrap();
    assert_eq!((arm.target_agent_id, arm.turn), (parent, 1));
    f.e.last_message(kid, "all tests pass".into()).unwrap();
    let _ = f.e.take_outcome();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    // The parent is busy: the notice waits, the parent's turn is untouched.
    assert_eq!(f.e.inbox(parent).unwrap().len(), 1);
    let o = f.e.take_outcome();
    assert!(o.inboxes.contains(&parent));
    assert!(!o.effects.iter().any(
        |e| matches!(e, Effect::SendTurn { agent, .. } | Effect::Interrupt { agent, .. } if *agent == parent)
    ));
    assert_eq!(f.record(kid).notify_arm, None);
    // Parent's turn ends → the notice runs as its next turn.
    f.e.turn_ended(parent, TurnOutcome::Completed).unwrap();
    assert_eq!(f.status(parent), Status::Running);
    assert!(f.e.inbox(parent).is_none());
    let o = f.e.take_outcome();
    let sent = o
        .effects
        .iter()
        .find_map(|e| match e {
            Effect::SendTurn {
                agent,
                input: TurnInput::Notice(t),
            } if *agent == parent => Some(t.clone()),
            _ => None,
        })
        .expect("notice delivered as a turn");
    assert!(sent.contains(&kid.to_string()));
    assert!(sent.contains("completed"));
    assert!(sent.contains("all tests pass"));
    // The parent's timeline shows it as a system notice, not a user message.
    assert!(o.effects.iter().any(|e| matches!(e, Effect::Timeline { agent, item } if *agent == parent && item.kind == ItemKind::System)));
}

#[test]
fn only_the_armed_turn_notifies_and_only_once() {
    let mut f = Fx::new();
    let parent = f.running(None, "w1");
    let kid = f.running(Some(parent), "w1"); // a user turn: not armed
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert!(f.e.inbox(parent).is_none(), "user turns notify nobody");
    f.e.prompt(kid, "do".into(), TurnOrigin::Agent(parent), Some(parent))
        .unwrap();
    f.e.permission_requested(kid, permission("r")).unwrap();
    assert_eq!(f.e.inbox(parent).unwrap().len(), 1);
    assert_eq!(
        f.e.inbox(parent).unwrap()[0].outcome,
        NoticeOutcome::NeedsPermission
    );
    f.e.answer_permission(kid, "r", true).unwrap();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert_eq!(
        f.e.inbox(parent).unwrap().len(),
        1,
        "one notice per armed turn"
    );
}

#[test]
fn notices_to_a_shell_parent_are_only_recorded() {
    let mut f = Fx::new();
    let mut pn = f.new_agent(None, "w1");
    pn.provider = "shell".into();
    pn.reads_prompts = false;
    let parent = f.e.create(pn).unwrap();
    f.e.session_ready(parent).unwrap();
    let kid = f.armed(Some(parent), parent);
    let _ = f.e.take_outcome();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert!(f.e.inbox(parent).is_none());
    assert_eq!(f.status(parent), Status::Idle);
    let o = f.e.take_outcome();
    assert!(o.effects.iter().any(|e| matches!(e, Effect::Timeline { agent, item } if *agent == parent && item.kind == ItemKind::System && item.text.contains(&kid.to_string()))));
    assert!(!o
        .effects
        .iter()
        .any(|e| matches!(e, Effect::SendTurn { agent, .. } if *agent == parent)));
}

#[test]
fn notice_to_a_closed_parent_resumes_it() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = f.armed(Some(parent), parent);
    f.e.close(parent).unwrap();
    let _ = f.e.take_outcome();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert_eq!(f.status(parent), Status::Initializing);
    f.e.session_ready(parent).unwrap();
    assert_eq!(f.status(parent), Status::Running);
}

#[test]
fn notices_are_dropped_when_the_parent_is_archived() {
    let mut f = Fx::new();
    let parent = f.running(None, "w1");
    let kid = f.armed(None, parent); // detached, armed for the parent
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert_eq!(f.e.inbox(parent).unwrap().len(), 1);
    let _ = f.e.take_outcome();
    f.e.archive(parent).unwrap();
    assert!(f.e.inbox(parent).is_none());
    assert!(f.e.take_outcome().inboxes.contains(&parent));
    assert!(!f.record(kid).is_archived());
}

#[test]
fn archiving_a_running_armed_child_tells_its_parent() {
    let mut f = Fx::new();
    let parent = f.running(None, "w1");
    let kid = f.running(Some(parent), "w1");
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    f.e.prompt(kid, "more".into(), TurnOrigin::Agent(parent), Some(parent))
        .unwrap();
    f.e.archive(kid).unwrap();
    assert_eq!(
        f.e.inbox(parent).unwrap()[0].outcome,
        NoticeOutcome::Archived
    );
}

/// A failed command's stderr is already in its timeline as output: the error item says only
/// how it ended, while the record and the parent's notice carry the stderr too.
#[test]
fn a_failure_detail_shown_as_output_is_not_repeated_in_the_timeline() {
    let mut f = Fx::new();
    let parent = f.running(None, "w1");
    let kid = f.armed(Some(parent), parent);
    let _ = f.e.take_outcome();
    f.e.turn_ended(
        kid,
        TurnOutcome::Failed {
            message: "the command exited with code 1".into(),
            detail: Some("cat: nope: No such file or directory".into()),
        },
    )
    .unwrap();
    let full = "the command exited with code 1: cat: nope: No such file or directory";
    assert_eq!(f.record(kid).last_error.as_deref(), Some(full));
    let o = f.e.take_outcome();
    let errors: Vec<_> = o
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Timeline { agent, item } if *agent == kid && item.kind == ItemKind::Error => {
                Some(item.text.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(errors, ["the command exited with code 1"]);
    let notice = &f.e.inbox(parent).unwrap()[0];
    assert_eq!(notice.error.as_deref(), Some(full));
}

/// SPEC 4, exactly once: every hand-over of a notice is in the ledger, so the runtime can write
/// its new place before its old place forgets it.
#[test]
fn every_hand_over_of_a_notice_is_in_the_ledger() {
    use super::super::NoticeOrder;
    let mut f = Fx::new();
    // Busy parent: queued in its inbox (the child's record waits for it), delivered later (its
    // inbox without it waits for its timeline item).
    let parent = f.running(None, "w1");
    let kid = f.armed(Some(parent), parent);
    let _ = f.e.take_outcome();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    let o = f.e.take_outcome();
    assert_eq!(
        o.notice_order,
        vec![NoticeOrder::Queued {
            child: kid,
            target: parent
        }]
    );
    f.e.turn_ended(parent, TurnOutcome::Completed).unwrap();
    let o = f.e.take_outcome();
    assert_eq!(
        o.notice_order,
        vec![NoticeOrder::Delivered { target: parent }]
    );
    let item = o
        .effects
        .iter()
        .find_map(|e| match e {
            Effect::Timeline { agent, item } if *agent == parent => item.notice.clone(),
            _ => None,
        })
        .expect("the parent's timeline item carries the notice");
    assert_eq!(item.child_id, kid);
    // A parent that cannot read prompts: only recorded in its timeline.
    let mut f = Fx::new();
    let mut n = f.new_agent(None, "w1");
    n.provider = "shell".into();
    n.reads_prompts = false;
    let shell = f.e.create(n).unwrap();
    f.e.session_ready(shell).unwrap();
    let kid = f.armed(Some(shell), shell);
    let _ = f.e.take_outcome();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    let o = f.e.take_outcome();
    assert_eq!(
        o.notice_order,
        vec![NoticeOrder::Recorded {
            child: kid,
            target: shell
        }]
    );
    assert!(o.effects.iter().any(|e| matches!(e,
        Effect::Timeline { agent, item } if *agent == shell && item.notice.as_ref().is_some_and(|n| n.child_id == kid))));
}

/// SPEC 4: after a crash, a notice the parent's timeline shows received is neither derived again
/// from the record still owing it nor kept in the inbox that still lists it.
#[test]
fn a_notice_the_parent_received_before_a_crash_is_not_delivered_again() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = f.armed(Some(parent), parent);
    let armed = f.records();
    let arm = f.record(kid).notify_arm.clone().unwrap();
    let other = f.running(Some(parent), "w1");
    let queued = crate::model::Notice::new(
        "arm-2",
        other,
        "other",
        NoticeOutcome::Completed,
        None,
        None,
        Timestamp::from_millis(5),
    );
    for received in [false, true] {
        let mut e = Engine::new();
        if received {
            e.set_delivered_at_load([arm.id.clone(), "arm-2".to_string()]);
        }
        e.load(
            armed.clone(),
            f.e.workspaces().cloned().collect(),
            vec![],
            vec![(parent, vec![queued.clone()])],
            &|_| true,
        );
        let o = e.take_outcome();
        let ids: Vec<String> = e
            .inbox(parent)
            .map(|q| q.iter().map(|n| n.id.clone()).collect())
            .unwrap_or_default();
        if received {
            assert!(ids.is_empty(), "{ids:?}");
            assert!(
                o.inboxes.contains(&parent),
                "the inbox is rewritten without them"
            );
        } else {
            assert_eq!(ids, vec!["arm-2".to_string(), arm.id.clone()]);
        }
        assert_eq!(e.agent(kid).unwrap().record.notify_arm, None);
    }
}
