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

#[test]
fn a_failed_write_makes_a_running_agent_error_and_stops_its_process_once() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let kid = f.armed(Some(parent), parent);
    assert_eq!(f.status(kid), Status::Running);
    let _ = f.e.take_outcome();
    let why = "cannot write the timeline: No space left on device";
    f.e.storage_failed(kid, why).unwrap();
    let r = f.record(kid);
    assert_eq!(r.last_status, Status::Error);
    assert_eq!(r.last_error.as_deref(), Some(why));
    assert_eq!(r.attention_reason, Some(AttentionReason::Error));
    let o = f.e.take_outcome();
    assert!(o.effects.contains(&Effect::CloseSession { agent: kid }));
    assert!(o.agents.contains(&kid));
    assert!(
        o.effects.iter().any(
            |e| matches!(e, Effect::SendTurn { agent, input: TurnInput::Notice(n) }
                if *agent == parent && n.contains("failed"))
        ),
        "the armed parent hears of the failed turn: {:?}",
        o.effects
    );
    // Its own error record failing to write reports the same: nothing more happens.
    f.e.storage_failed(kid, why).unwrap();
    assert!(f.e.take_outcome().is_empty());
    // Prompting again starts a new session.
    f.e.prompt(kid, "again".into(), TurnOrigin::User, None)
        .unwrap();
    assert_eq!(f.status(kid), Status::Initializing);
}

#[test]
fn closing_to_make_room_says_why_in_the_closed_agents_timeline() {
    let mut f = Fx::new();
    let untitled = NewAgent {
        title: String::new(),
        ..f.new_agent(None, "w1")
    };
    let idle = f.e.create(untitled).unwrap();
    f.e.session_ready(idle).unwrap();
    let waiting = NewAgent {
        title: "worker 7".into(),
        ..f.new_agent(None, "w2")
    };
    let waiting = f.e.create(waiting).unwrap();
    let _ = f.e.take_outcome();
    let news = f.e.close_to_make_room(idle, waiting, 3).unwrap();
    assert_eq!(f.status(idle), Status::Closed);
    let o = f.e.take_outcome();
    assert!(o.effects.contains(&Effect::CloseSession { agent: idle }));
    let said: Vec<_> = o
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Timeline { agent, item } if *agent == idle => {
                Some((item.kind, item.text.to_string()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        said,
        vec![(
            ItemKind::System,
            "Closed to make room for 'worker 7' (live-agent limit 3, config.json \
             limits.maxLiveAgents); it resumes when you use it."
                .to_string()
        )]
    );
    // Untitled, it is named as the windows name it: provider and the start of its id.
    let id8 = &idle.to_string()[..8];
    assert_eq!(
        news,
        format!("Closed 'claude {id8}' to make room for 'worker 7' (live-agent limit 3)")
    );
}

/// What the runtime notes about a session or a start's wait lives in one box per agent that
/// has any (docs/scale.md): set, shown, and gone again once all of it is cleared.
#[test]
fn runtime_notes_are_kept_while_set_and_their_box_goes_with_the_last() {
    let mut f = Fx::new();
    let id = f.idle(None, "w1");
    let notes = |f: &Fx| f.e.agent(id).unwrap().notes.clone();
    assert_eq!(notes(&f), None);
    f.e.set_waiting_for_slot(id, Some(3));
    f.e.set_queue_place(id, Some(2));
    f.e.mcp_status(id, "connected".into()).unwrap();
    let a = f.e.agent(id).unwrap();
    assert_eq!(
        (a.waiting_for_slot(), a.queue_place(), a.mcp_status()),
        (Some(3), Some(2), Some("connected"))
    );
    // The slot's wait ends: its place in line goes with it, the MCP status stays.
    f.e.set_waiting_for_slot(id, None);
    let a = f.e.agent(id).unwrap();
    assert_eq!(
        (a.waiting_for_slot(), a.queue_place(), a.mcp_status()),
        (None, None, Some("connected"))
    );
    let mut g = Fx::new();
    let other = g.idle(None, "w1");
    g.e.set_waiting_for_slot(other, Some(1));
    g.e.set_queue_place(other, Some(1));
    g.e.set_waiting_for_slot(other, None);
    assert_eq!(
        g.e.agent(other).unwrap().notes,
        None,
        "nothing left: no box"
    );
}

/// Every agent's state stays in memory beside its record (docs/scale.md): a field only a few
/// agents use goes in [`crate::engine::session::RuntimeNotes`] or a box of its own, and one
/// that does not shows here.
#[test]
fn an_agent_state_in_memory_stays_small() {
    let size = std::mem::size_of::<crate::engine::AgentState>();
    assert!(size <= 104, "{size}");
}
