//! Creating agents, detaching, and who may act on whom (SPEC 3, 8).

use super::*;
use crate::model::{ProviderTrust, Reach};

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
        crate::model::Tally {
            running: 1,
            total: 2,
            finished: Some(1),
            ..crate::model::Tally::default()
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

#[test]
fn reattach_undoes_a_detach_only_when_it_narrows_power() {
    let mut f = Fx::new();
    f.e.set_providers(
        [(
            "claude".to_string(),
            ProviderTrust::of_kind(crate::model::ProviderKind::Claude),
        )]
        .into(),
        false,
    );
    let p = f.idle(None, "w1");
    let a = f.idle(Some(p), "w1");
    let stranger = f.idle(None, "w1");
    f.e.detach(a).unwrap();
    let _ = f.e.take_outcome();

    // A check changes nothing.
    f.e.reattach(a, p, Reach::Inside, true).unwrap();
    assert_eq!(f.e.track(p), Vec::<AgentId>::new());
    assert_eq!(f.record(a).parent_agent_id(), None);

    // Only its creator takes it back, and only while it has no parent.
    let err = f.e.reattach(a, stranger, Reach::Inside, false).unwrap_err();
    assert!(
        err.to_string().contains("only the agent that created it"),
        "{err}"
    );

    // Wider reach or mode than the parent: refused, saying why, nothing changed.
    let err = f.e.reattach(a, p, Reach::Outside, false).unwrap_err();
    assert!(matches!(err, EngineError::NotReattachable { .. }));
    assert!(
        err.to_string()
            .contains("outside what its parent may write"),
        "{err}"
    );
    std::sync::Arc::make_mut(&mut f.e.agents.get_mut(&a).unwrap().record.config).mode =
        Some("bypassPermissions".into());
    let err = f.e.reattach(a, p, Reach::Inside, false).unwrap_err();
    assert!(err.to_string().contains("acts without asking"), "{err}");
    assert_eq!(f.e.track(p), Vec::<AgentId>::new());
    let o = f.e.take_outcome();
    assert!(
        o.tracks.is_empty() && o.agents.is_empty(),
        "a refusal changes nothing"
    );

    // Equal power: back in its parent's track, its root and activity with it.
    std::sync::Arc::make_mut(&mut f.e.agents.get_mut(&a).unwrap().record.config).mode = None;
    f.e.reattach(a, p, Reach::Inside, false).unwrap();
    assert_eq!(f.e.track(p), vec![a]);
    assert_eq!(f.record(a).parent_agent_id(), Some(p));
    assert_eq!(f.e.agent(a).unwrap().root(), p);
    let o = f.e.take_outcome();
    assert!(o.tracks.contains(&p));
    let err = f.e.reattach(a, p, Reach::Inside, false).unwrap_err();
    assert!(err.to_string().contains("already has a parent"), "{err}");
    f.check_activity();
}

#[test]
fn a_workspace_is_renamed_and_its_name_cleared() {
    let mut f = Fx::new();
    let w1: WorkspaceId = "w1".parse().unwrap();
    f.e.rename_workspace(&w1, Some("docs review".into()))
        .unwrap();
    assert_eq!(
        f.e.workspace(&w1).unwrap().name.as_deref(),
        Some("docs review")
    );
    let o = f.e.take_outcome();
    assert!(o.workspaces_registry && o.workspaces.contains(&w1));
    f.e.rename_workspace(&w1, None).unwrap();
    assert_eq!(f.e.workspace(&w1).unwrap().name, None);
    let nope: WorkspaceId = "nope".parse().unwrap();
    assert!(matches!(
        f.e.rename_workspace(&nope, Some("x".into())),
        Err(EngineError::UnknownWorkspace(_))
    ));
    assert_eq!(
        crate::model::clean_workspace_name("  a b  "),
        Ok(Some("a b".into()))
    );
    assert_eq!(crate::model::clean_workspace_name("   "), Ok(None));
    assert!(crate::model::clean_workspace_name("a\nb").is_err());
    assert!(crate::model::clean_workspace_name(&"x".repeat(101)).is_err());
}
