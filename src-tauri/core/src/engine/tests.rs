//! Unit tests of the engine's rules, one behaviour each.

use super::*;
use crate::model::{ProjectId, WorkspaceKind};

pub(crate) fn ws(id: &str) -> WorkspaceRecord {
    WorkspaceRecord {
        workspace_id: id.parse().unwrap(),
        project_id: "p1".parse().unwrap(),
        cwd: format!("/src/{id}"),
        kind: WorkspaceKind::Directory,
        display_name: id.to_string(),
        created_at: Timestamp::from_millis(0),
        updated_at: Timestamp::from_millis(0),
        archived_at: None,
        repo: None,
        branch: None,
        created_by_agent_id: None,
        created_by_request: None,
        extra: Default::default(),
    }
}

struct Fx {
    e: Engine,
    t: i64,
}

impl Fx {
    fn new() -> Fx {
        let mut e = Engine::new();
        e.set_clock(Some(Timestamp::from_millis(1_000)));
        e.upsert_workspace(ws("w1"), None);
        e.upsert_workspace(ws("w2"), None);
        let _ = e.take_outcome();
        Fx { e, t: 1_000 }
    }

    fn tick(&mut self) {
        self.t += 1;
        self.e.set_clock(Some(Timestamp::from_millis(self.t)));
    }

    fn new_agent(&self, parent: Option<AgentId>, w: &str) -> NewAgent {
        NewAgent {
            id: AgentId::new(),
            provider: "claude".into(),
            reads_prompts: true,
            cwd: format!("/src/{w}"),
            workspace_id: w.parse().unwrap(),
            title: "t".into(),
            config: Default::default(),
            labels: Default::default(),
            parent,
            created_by: parent,
            initial_prompt: None,
            notify: None,
            auto_archive: false,
            created_workspace_id: None,
        }
    }

    /// Creates an agent and brings its session up (idle).
    fn idle(&mut self, parent: Option<AgentId>, w: &str) -> AgentId {
        self.tick();
        let id = self.e.create(self.new_agent(parent, w)).unwrap();
        self.e.session_ready(id).unwrap();
        let _ = self.e.take_outcome();
        id
    }

    fn running(&mut self, parent: Option<AgentId>, w: &str) -> AgentId {
        let id = self.idle(parent, w);
        self.e
            .prompt(id, "go".into(), TurnOrigin::User, None)
            .unwrap();
        let _ = self.e.take_outcome();
        id
    }

    fn status(&self, id: AgentId) -> Status {
        self.e.agent(id).unwrap().status()
    }

    fn bucket(&self, w: &str) -> Option<Bucket> {
        self.e.workspace_bucket(&w.parse().unwrap())
    }

    fn check_activity(&self) {
        assert_eq!(self.e.activity_snapshot(), self.e.recompute_activity());
    }
}

fn effects(o: &Outcome) -> Vec<&Effect> {
    o.effects
        .iter()
        .filter(|e| !matches!(e, Effect::Timeline { .. }))
        .collect()
}

#[test]
fn create_starts_a_session_then_runs_the_first_prompt_when_ready() {
    let mut f = Fx::new();
    let mut n = f.new_agent(None, "w1");
    n.initial_prompt = Some("hello".into());
    let id = f.e.create(n).unwrap();
    assert_eq!(f.status(id), Status::Initializing);
    let o = f.e.take_outcome();
    assert_eq!(
        effects(&o),
        vec![&Effect::StartSession {
            agent: id,
            resume: None
        }]
    );
    f.e.session_ready(id).unwrap();
    assert_eq!(f.status(id), Status::Running);
    let o = f.e.take_outcome();
    assert!(o.effects.contains(&Effect::SendTurn {
        agent: id,
        input: TurnInput::Prompt("hello".into())
    }));
    assert_eq!(f.e.agent(id).unwrap().record.turn_count, 1);
}

#[test]
fn turn_completed_goes_idle_with_finished_attention_and_prompt_clears_it() {
    let mut f = Fx::new();
    let id = f.running(None, "w1");
    f.e.turn_ended(id, TurnOutcome::Completed).unwrap();
    let r = &f.e.agent(id).unwrap().record;
    assert_eq!(r.last_status, Status::Idle);
    assert!(r.requires_attention);
    assert_eq!(r.attention_reason, Some(AttentionReason::Finished));
    assert_eq!(f.bucket("w1"), Some(Bucket::Attention));
    f.e.prompt(id, "again".into(), TurnOrigin::User, None)
        .unwrap();
    let r = &f.e.agent(id).unwrap().record;
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
        },
    )
    .unwrap();
    let r = &f.e.agent(id).unwrap().record;
    assert_eq!(r.last_status, Status::Error);
    assert_eq!(r.last_error.as_deref(), Some("boom"));
    assert_eq!(r.attention_reason, Some(AttentionReason::Error));
    assert_eq!(f.bucket("w1"), Some(Bucket::Failed));
    f.e.prompt(id, "retry".into(), TurnOrigin::User, None)
        .unwrap();
    let r = &f.e.agent(id).unwrap().record;
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
    let r = PermissionRequest {
        request_id: "r".into(),
        tool_name: "Bash".into(),
        input: serde_json::json!({}),
        description: None,
        call_id: None,
    };
    assert!(f.e.permission_requested(id, r).is_err());
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
fn process_death_between_turns_is_reported_as_error() {
    let mut f = Fx::new();
    let id = f.idle(None, "w1");
    f.e.session_exited(id, "exit code 137").unwrap();
    let r = &f.e.agent(id).unwrap().record;
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

#[test]
fn permission_sets_needs_input_and_answer_clears_it() {
    let mut f = Fx::new();
    let id = f.running(None, "w1");
    let req = PermissionRequest {
        request_id: "r1".into(),
        tool_name: "Bash".into(),
        input: serde_json::json!({"command": "ls"}),
        description: None,
        call_id: None,
    };
    f.e.permission_requested(id, req).unwrap();
    assert_eq!(f.status(id), Status::Running);
    assert_eq!(
        f.e.agent(id).unwrap().record.attention_reason,
        Some(AttentionReason::Permission)
    );
    assert_eq!(f.bucket("w1"), Some(Bucket::NeedsInput));
    // Opening does not clear a pending permission.
    f.e.mark_seen(id).unwrap();
    assert_eq!(f.bucket("w1"), Some(Bucket::NeedsInput));
    assert!(f.e.answer_permission(id, "nope", true).is_err());
    f.e.answer_permission(id, "r1", false).unwrap();
    assert_eq!(f.bucket("w1"), Some(Bucket::Running));
    let o = f.e.take_outcome();
    assert!(o.effects.contains(&Effect::AnswerPermission {
        agent: id,
        request_id: "r1".into(),
        allow: false
    }));
}

#[test]
fn subagent_joins_its_parents_track_oldest_first_and_detach_removes_only_the_label() {
    let mut f = Fx::new();
    let p = f.idle(None, "w1");
    let a = f.idle(Some(p), "w2");
    let b = f.running(Some(p), "w1");
    assert_eq!(f.e.track(p), vec![a, b]);
    assert_eq!(
        f.e.track_counts(p),
        TrackCounts {
            running: 1,
            needs_you: 0,
            total: 2
        }
    );
    let _ = f.e.take_outcome();
    assert_eq!(f.e.detach(b).unwrap(), p);
    let o = f.e.take_outcome();
    assert!(o.tracks.contains(&p));
    assert_eq!(f.e.track(p), vec![a]);
    let r = &f.e.agent(b).unwrap().record;
    assert_eq!(r.parent_agent_id(), None);
    assert_eq!(r.created_by, Some(p), "the creator stays recorded");
    assert_eq!(r.last_status, Status::Running, "detach does not stop it");
    assert_eq!(r.workspace_id.as_ref().unwrap().as_str(), "w1");
    assert!(!o
        .effects
        .iter()
        .any(|e| matches!(e, Effect::CloseSession { .. })));
    assert!(matches!(f.e.detach(b), Err(EngineError::NotASubagent(_))));
    f.check_activity();
}

#[test]
fn archive_cascades_through_subagents_but_not_detached_agents() {
    let mut f = Fx::new();
    let root = f.running(None, "w1");
    let kid = f.running(Some(root), "w1");
    let grandkid = f.idle(Some(kid), "w2");
    let mut d = f.new_agent(None, "w1");
    d.created_by = Some(root); // detached: created by root, no parent label
    let detached = f.e.create(d).unwrap();
    f.e.session_ready(detached).unwrap();
    let _ = f.e.take_outcome();

    let archived = f.e.archive(root).unwrap();
    assert_eq!(archived.len(), 3);
    assert_eq!(archived[0], root);
    for id in [root, kid, grandkid] {
        let r = &f.e.agent(id).unwrap().record;
        assert!(r.archived_at.is_some());
        assert_eq!(r.last_status, Status::Closed);
        assert!(!r.requires_attention);
    }
    assert!(f.e.agent(detached).unwrap().record.archived_at.is_none());
    assert!(f.e.track(root).is_empty());
    let o = f.e.take_outcome();
    for id in [root, kid, grandkid] {
        assert!(o.effects.contains(&Effect::CloseSession { agent: id }));
    }
    // Idempotent.
    assert!(f.e.archive(root).unwrap().is_empty());
    assert!(f.e.archive(kid).unwrap().is_empty());
    f.check_activity();
}

#[test]
fn deep_chain_archives_iteratively() {
    let mut f = Fx::new();
    let root = f.idle(None, "w1");
    let mut prev = root;
    let mut all = vec![root];
    for _ in 0..20_000 {
        let mut n = f.new_agent(Some(prev), "w1");
        n.initial_prompt = None;
        let id = f.e.create(n).unwrap();
        all.push(id);
        prev = id;
    }
    let _ = f.e.take_outcome();
    let archived = f.e.archive(root).unwrap();
    assert_eq!(archived.len(), all.len());
    assert!(all
        .iter()
        .all(|id| f.e.agent(*id).unwrap().record.is_archived()));
}

#[test]
fn restore_brings_back_the_batch_closed_with_links_intact() {
    let mut f = Fx::new();
    let root = f.running(None, "w1");
    let kid = f.running(Some(root), "w1");
    let gk = f.idle(Some(kid), "w1");
    let archived = f.e.archive(root).unwrap();
    assert_eq!(archived.len(), 3);
    let restored = f.e.restore(gk, false).unwrap();
    assert_eq!(restored.len(), 3);
    for id in [root, kid, gk] {
        let r = &f.e.agent(id).unwrap().record;
        assert!(r.archived_at.is_none());
        assert_eq!(r.last_status, Status::Closed);
        assert!(r.archive_batch_id.is_none());
    }
    assert_eq!(f.e.track(root), vec![kid]);
    assert_eq!(f.e.track(kid), vec![gk]);
    assert!(matches!(
        f.e.restore(root, false),
        Err(EngineError::NotArchived(_))
    ));
    f.check_activity();
}

#[test]
fn restore_under_an_archived_parent_is_a_conflict_unless_restored_as_root() {
    let mut f = Fx::new();
    let root = f.idle(None, "w1");
    let kid = f.idle(Some(root), "w1");
    f.e.archive(kid).unwrap();
    f.e.archive(root).unwrap();
    let err = f.e.restore(kid, false).unwrap_err();
    assert!(
        matches!(err, EngineError::RestoreParentArchived { .. }),
        "{err}"
    );
    assert!(
        f.e.agent(kid).unwrap().record.is_archived(),
        "nothing changed"
    );
    f.e.restore(kid, true).unwrap();
    let r = &f.e.agent(kid).unwrap().record;
    assert!(!r.is_archived());
    assert_eq!(r.parent_agent_id(), None);
    f.check_activity();
}

#[test]
fn archive_many_is_one_batch() {
    let mut f = Fx::new();
    let p = f.idle(None, "w1");
    let a = f.idle(Some(p), "w1");
    let b = f.idle(Some(p), "w1");
    let c = f.running(Some(p), "w1");
    let finished = f.e.finished_children(p);
    assert_eq!(finished, vec![a, b]);
    let archived = f.e.archive_many(&finished).unwrap();
    assert_eq!(archived, vec![a, b]);
    assert_eq!(f.e.track(p), vec![c]);
    let restored = f.e.restore(a, false).unwrap();
    assert_eq!(restored.len(), 2);
    assert_eq!(f.e.track(p), vec![a, b, c]);
}

#[test]
fn running_subagent_lifts_its_roots_workspace_but_idle_or_failed_ones_do_not() {
    let mut f = Fx::new();
    let root = f.idle(None, "w1");
    f.e.mark_seen(root).unwrap();
    assert_eq!(f.bucket("w1"), Some(Bucket::Done));
    // The child lives in w2 but contributes to its root's workspace w1.
    let kid = f.running(Some(root), "w2");
    assert_eq!(f.bucket("w1"), Some(Bucket::Running));
    assert_eq!(f.bucket("w2"), None);
    // A grandchild running lifts the top of the chain too.
    let gk = f.running(Some(kid), "w2");
    assert_eq!(
        f.e.activity_counts(&"w1".parse().unwrap())[Bucket::Running.index()],
        2
    );
    f.e.turn_ended(
        kid,
        TurnOutcome::Failed {
            message: "x".into(),
        },
    )
    .unwrap();
    f.e.turn_ended(gk, TurnOutcome::Completed).unwrap();
    assert_eq!(
        f.bucket("w1"),
        Some(Bucket::Done),
        "a failed subagent does not escalate"
    );
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

#[test]
fn finish_notice_waits_for_the_parents_idle_boundary_and_never_interrupts() {
    let mut f = Fx::new();
    let parent = f.running(None, "w1");
    let mut n = f.new_agent(Some(parent), "w1");
    n.initial_prompt = Some("work".into());
    n.notify = Some(parent);
    let kid = f.e.create(n).unwrap();
    f.e.session_ready(kid).unwrap();
    let arm = f.e.agent(kid).unwrap().record.notify_arm.clone().unwrap();
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
    assert_eq!(f.e.agent(kid).unwrap().record.notify_arm, None);
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
    let req = PermissionRequest {
        request_id: "r".into(),
        tool_name: "Bash".into(),
        input: serde_json::json!({}),
        description: None,
        call_id: None,
    };
    f.e.permission_requested(kid, req).unwrap();
    assert_eq!(f.e.inbox(parent).unwrap().len(), 1);
    assert_eq!(f.e.inbox(parent).unwrap()[0].outcome, "needs_permission");
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
    let mut n = f.new_agent(Some(parent), "w1");
    n.initial_prompt = Some("x".into());
    n.notify = Some(parent);
    let kid = f.e.create(n).unwrap();
    f.e.session_ready(kid).unwrap();
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
    let mut n = f.new_agent(Some(parent), "w1");
    n.initial_prompt = Some("x".into());
    n.notify = Some(parent);
    let kid = f.e.create(n).unwrap();
    f.e.session_ready(kid).unwrap();
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
    let mut n = f.new_agent(None, "w1"); // detached, armed for the parent
    n.created_by = Some(parent);
    n.initial_prompt = Some("x".into());
    n.notify = Some(parent);
    let kid = f.e.create(n).unwrap();
    f.e.session_ready(kid).unwrap();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert_eq!(f.e.inbox(parent).unwrap().len(), 1);
    let _ = f.e.take_outcome();
    f.e.archive(parent).unwrap();
    assert!(f.e.inbox(parent).is_none());
    assert!(f.e.take_outcome().inboxes.contains(&parent));
    assert!(!f.e.agent(kid).unwrap().record.is_archived());
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
    assert_eq!(f.e.inbox(parent).unwrap()[0].outcome, "archived");
}

#[test]
fn auto_archive_fires_once_on_the_first_terminal_turn_event_with_its_worktree() {
    let mut f = Fx::new();
    let mut n = f.new_agent(None, "w1");
    n.auto_archive = true;
    n.initial_prompt = Some("x".into());
    n.created_workspace_id = Some("w2".parse().unwrap());
    let id = f.e.create(n).unwrap();
    f.e.session_ready(id).unwrap();
    let _ = f.e.take_outcome();
    f.e.turn_ended(id, TurnOutcome::Canceled).unwrap();
    let r = &f.e.agent(id).unwrap().record;
    assert!(r.is_archived());
    assert!(r.auto_archive_done);
    let o = f.e.take_outcome();
    assert!(o.effects.contains(&Effect::ArchiveWorktree {
        workspace: "w2".parse().unwrap(),
        requested_by: id
    }));
    // Restored, it does not archive itself again.
    f.e.restore(id, false).unwrap();
    f.e.prompt(id, "y".into(), TurnOrigin::User, None).unwrap();
    f.e.session_ready(id).unwrap();
    f.e.turn_ended(id, TurnOutcome::Completed).unwrap();
    assert!(!f.e.agent(id).unwrap().record.is_archived());
}

#[test]
fn archive_workspace_refuses_live_agents_unless_confirmed() {
    let mut f = Fx::new();
    let a = f.running(None, "w2");
    let b = f.idle(None, "w2");
    let w2: WorkspaceId = "w2".parse().unwrap();
    let err = f.e.archive_workspace(&w2, false).unwrap_err();
    assert!(matches!(err, EngineError::WorkspaceBusy { live: 1, .. }));
    assert!(!f.e.agent(a).unwrap().record.is_archived());
    let archived = f.e.archive_workspace(&w2, true).unwrap();
    assert_eq!(archived.len(), 2);
    assert!(f.e.workspace(&w2).unwrap().is_archived());
    assert!(f.e.agent(b).unwrap().record.is_archived());
    // Creating in an archived workspace is refused.
    assert!(matches!(
        f.e.create(f.new_agent(None, "w2")),
        Err(EngineError::WorkspaceArchived(_))
    ));
}

#[test]
fn may_mutate_covers_self_descendants_and_created_agents() {
    let mut f = Fx::new();
    let a = f.idle(None, "w1");
    let kid = f.idle(Some(a), "w1");
    let gk = f.idle(Some(kid), "w1");
    let mut d = f.new_agent(None, "w1");
    d.created_by = Some(a);
    let detached = f.e.create(d).unwrap();
    let stranger = f.idle(None, "w1");
    assert!(f.e.may_mutate(a, a));
    assert!(f.e.may_mutate(a, kid));
    assert!(f.e.may_mutate(a, gk));
    assert!(f.e.may_mutate(a, detached));
    assert!(!f.e.may_mutate(a, stranger));
    assert!(!f.e.may_mutate(kid, a));
}

#[test]
fn load_normalizes_repairs_and_reports() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let mut n = f.new_agent(Some(parent), "w1");
    n.initial_prompt = Some("x".into());
    n.notify = Some(parent);
    let kid = f.e.create(n).unwrap();
    f.e.session_ready(kid).unwrap(); // running, armed
    let cyc_a = f.idle(None, "w1");
    let cyc_b = f.idle(Some(cyc_a), "w1");
    let orphan_parent = f.idle(None, "w1");
    let orphan = f.idle(Some(orphan_parent), "w1");

    let mut records: Vec<AgentRecord> = f.e.agents().map(|a| a.record.clone()).collect();
    for r in records.iter_mut() {
        if r.id == cyc_a {
            r.set_parent(Some(cyc_b));
        }
        if r.id == orphan_parent {
            // A crash between archiving the parent and its child.
            r.archived_at = Some(Timestamp::from_millis(5));
            r.archive_batch_id = Some("b1".parse().unwrap());
        }
    }
    let mut e2 = Engine::new();
    let report = e2.load(
        records,
        f.e.workspaces().cloned().collect(),
        vec![],
        vec![],
        &|_| true,
    );
    assert!(report.problems.iter().any(|p| p.contains("cycle")));
    assert!(e2.agent(orphan).unwrap().record.is_archived());
    assert_eq!(
        e2.agent(orphan).unwrap().record.archive_batch_id,
        Some("b1".parse().unwrap())
    );
    let k = &e2.agent(kid).unwrap().record;
    assert_eq!(k.last_status, Status::Error);
    assert_eq!(k.last_error.as_deref(), Some(INTERRUPTED));
    assert_eq!(e2.agent(parent).unwrap().status(), Status::Closed);
    // The armed turn's notice survives the crash and is queued for the parent.
    let q = e2.inbox(parent).unwrap();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].outcome, "failed");
    e2.deliver_pending();
    assert_eq!(e2.agent(parent).unwrap().status(), Status::Initializing);
    assert_eq!(e2.activity_snapshot(), e2.recompute_activity());
}

#[test]
fn shutdown_closes_everything_without_waking_parents() {
    let mut f = Fx::new();
    let parent = f.idle(None, "w1");
    let mut n = f.new_agent(Some(parent), "w1");
    n.initial_prompt = Some("x".into());
    n.notify = Some(parent);
    let kid = f.e.create(n).unwrap();
    f.e.session_ready(kid).unwrap();
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
fn create_validates_references() {
    let mut f = Fx::new();
    let mut n = f.new_agent(Some(AgentId::new()), "w1");
    assert!(matches!(
        f.e.create(n.clone()),
        Err(EngineError::UnknownAgent(_))
    ));
    n.parent = None;
    n.created_by = None;
    n.workspace_id = "nope".parse().unwrap();
    assert!(matches!(
        f.e.create(n),
        Err(EngineError::UnknownWorkspace(_))
    ));
    assert_eq!(f.e.agent_count(), 0);
}

#[test]
fn project_ids_are_kept() {
    let mut e = Engine::new();
    let p = ProjectRecord {
        project_id: ProjectId::new(),
        display_name: "app".into(),
        key: "/src/app".into(),
        repo_root: None,
        remote_url: None,
        created_at: Timestamp::from_millis(0),
        updated_at: Timestamp::from_millis(0),
        extra: Default::default(),
    };
    let mut w = ws("w9");
    w.project_id = p.project_id.clone();
    e.upsert_workspace(w, Some(p.clone()));
    assert_eq!(e.project(&p.project_id), Some(&p));
    let o = e.take_outcome();
    assert!(o.projects_registry && o.workspaces_registry);
}
