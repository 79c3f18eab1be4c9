//! A prompt that waits for its session (SPEC 15, nothing lost): kept in the record, it runs
//! once after a quit or a crash, and its caller hears of that turn, never "interrupted".

use super::*;
use crate::model::{NoticeOutcome, WaitingPrompt};

/// An agent created by `parent` with a first prompt armed to notify it, its session still
/// starting: the prompt waits.
fn waiting_child(f: &mut Fx, parent: AgentId) -> AgentId {
    f.tick();
    let mut n = f.new_agent(Some(parent), "w1");
    n.initial_prompt = Some("work".into());
    n.notify = Some(parent);
    let id = f.e.create(n).unwrap();
    let _ = f.e.take_outcome();
    id
}

/// Brings a reloaded engine's deliveries back and the agent's session up: what runs.
fn resume_and_ready(e: &mut Engine, id: AgentId) -> Vec<Effect> {
    assert!(starts_after_load(e).contains(&id));
    assert_eq!(e.agent(id).unwrap().status(), Status::Initializing);
    e.session_ready(id).unwrap();
    e.take_outcome().effects
}

/// The agents whose sessions start once deliveries resume after a load.
fn starts_after_load(e: &mut Engine) -> Vec<AgentId> {
    e.deliver_pending();
    let o = e.take_outcome();
    effects(&o)
        .iter()
        .filter_map(|x| match x {
            Effect::StartSession { agent, .. } => Some(*agent),
            _ => None,
        })
        .collect()
}

fn sent_turn(effects: &[Effect], id: AgentId) -> Option<&TurnInput> {
    effects.iter().find_map(|x| match x {
        Effect::SendTurn { agent, input } if *agent == id => Some(input),
        _ => None,
    })
}

#[test]
fn a_first_prompt_waiting_for_its_session_survives_a_crash_and_runs_once() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = waiting_child(&mut f, parent);
    assert_eq!(
        f.record(kid).waiting_prompt.as_deref(),
        Some(&WaitingPrompt {
            prompt: "work".into(),
            caller: Some(parent),
        })
    );

    // The crash: the records as written, read back.
    let (mut e2, _) = f.reload(f.records());
    let k = &e2.agent(kid).unwrap().record;
    assert_eq!(k.last_status, Status::Closed);
    assert_eq!(k.last_error, None, "no made-up interruption");
    assert!(k.notify_arm.is_some(), "its notice is still owed");
    assert!(e2.inbox(parent).is_none_or(|q| q.is_empty()));
    assert!(e2
        .prompt(kid, "again".into(), TurnOrigin::User, None)
        .is_err());

    let ran = resume_and_ready(&mut e2, kid);
    assert_eq!(
        sent_turn(&ran, kid),
        Some(&TurnInput::Prompt("work".into()))
    );
    let k = &e2.agent(kid).unwrap().record;
    assert_eq!(k.last_status, Status::Running);
    assert_eq!(k.waiting_prompt, None, "it runs: nothing waits any more");
    assert_eq!(k.turn_count, 1);

    e2.turn_ended(kid, TurnOutcome::Completed).unwrap();
    let q = e2.inbox(parent).unwrap();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].outcome, NoticeOutcome::Completed);

    // A second restart after it ran starts nothing again.
    let records: Vec<AgentRecord> = e2.agents().map(|a| AgentRecord::clone(&a.record)).collect();
    let (mut e3, _) = f.reload(records);
    assert!(!starts_after_load(&mut e3).contains(&kid));
}

#[test]
fn a_quit_keeps_a_waiting_prompt_and_tells_its_caller_nothing_yet() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = waiting_child(&mut f, parent);
    f.e.shutdown();
    let _ = f.e.take_outcome();
    let k = f.record(kid);
    assert_eq!(k.last_status, Status::Closed);
    assert!(k.waiting_prompt.is_some());
    assert!(k.notify_arm.is_some());
    assert!(f.e.inbox(parent).is_none_or(|q| q.is_empty()));

    let (mut e2, _) = f.reload(f.records());
    let ran = resume_and_ready(&mut e2, kid);
    assert_eq!(
        sent_turn(&ran, kid),
        Some(&TurnInput::Prompt("work".into()))
    );
}

#[test]
fn stopping_an_agent_still_ends_its_waiting_prompt_unrun() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = waiting_child(&mut f, parent);
    f.e.close(kid).unwrap();
    assert_eq!(f.record(kid).waiting_prompt, None);
    // The idle parent takes the notice as its next turn.
    let o = f.e.take_outcome();
    assert!(
        effects(&o).iter().any(|x| matches!(x,
            Effect::SendTurn { agent, input: TurnInput::Notice(n) }
                if *agent == parent && n.contains("canceled"))),
        "{:?}",
        o.effects
    );

    let (mut e2, _) = f.reload(f.records());
    assert!(!starts_after_load(&mut e2).contains(&kid));
}

#[test]
fn a_canceled_or_archived_waiting_prompt_is_not_run_after_a_restart() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let canceled = waiting_child(&mut f, parent);
    let archived = waiting_child(&mut f, parent);
    f.e.cancel(canceled).unwrap();
    f.e.archive(archived).unwrap();
    assert_eq!(f.record(canceled).waiting_prompt, None);
    assert_eq!(f.record(archived).waiting_prompt, None);

    let (mut e2, _) = f.reload(f.records());
    assert!(starts_after_load(&mut e2).is_empty());
}

/// An archived record an earlier crash left with a waiting prompt is not run, and loses it.
#[test]
fn an_archived_record_with_a_waiting_prompt_loads_without_it() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = waiting_child(&mut f, parent);
    let mut records = f.records();
    for r in records.iter_mut().filter(|r| r.id == kid) {
        r.archived_at = Some(Timestamp::from_millis(5));
        r.archive_batch_id = Some("b1".parse().unwrap());
    }
    let (mut e2, _) = f.reload(records);
    assert_eq!(e2.agent(kid).unwrap().record.waiting_prompt, None);
    assert!(!starts_after_load(&mut e2).contains(&kid));
}

/// The user's prompt to a closed agent waits while it resumes: the same, as the user's turn.
#[test]
fn a_users_prompt_to_a_resuming_agent_survives_a_crash() {
    let mut f = Fx::new();
    let id = f.idle(None, "w1");
    f.e.close(id).unwrap();
    f.e.prompt(id, "resume and go".into(), TurnOrigin::User, None)
        .unwrap();
    let _ = f.e.take_outcome();
    assert_eq!(
        f.record(id).waiting_prompt.as_deref(),
        Some(&WaitingPrompt {
            prompt: "resume and go".into(),
            caller: None,
        })
    );
    let (mut e2, _) = f.reload(f.records());
    let ran = resume_and_ready(&mut e2, id);
    assert_eq!(
        sent_turn(&ran, id),
        Some(&TurnInput::Prompt("resume and go".into()))
    );
}

#[test]
fn a_waiting_prompt_reads_back_from_its_json_and_an_old_record_has_none() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = waiting_child(&mut f, parent);
    let json = serde_json::to_value(f.record(kid)).unwrap();
    assert_eq!(
        json["waitingPrompt"],
        serde_json::json!({"prompt": "work", "caller": parent})
    );
    let bytes = serde_json::to_vec(&json).unwrap();
    let whole = AgentRecord::from_json_boxed(&bytes).unwrap();
    let at_rest = AgentRecord::from_json_at_rest(&bytes).unwrap();
    assert_eq!(whole.waiting_prompt, f.record(kid).waiting_prompt);
    assert_eq!(at_rest.waiting_prompt, f.record(kid).waiting_prompt);
    let old = serde_json::to_vec(f.record(parent)).unwrap();
    assert!(!String::from_utf8_lossy(&old).contains("waitingPrompt"));
    assert_eq!(
        AgentRecord::from_json_boxed(&old).unwrap().waiting_prompt,
        None
    );
}
