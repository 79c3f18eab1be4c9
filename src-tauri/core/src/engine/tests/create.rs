//! Creating agents, detaching, and who may act on whom (SPEC 3, 8).

use super::*;

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
            total: 2,
            ..TrackCounts::default()
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
