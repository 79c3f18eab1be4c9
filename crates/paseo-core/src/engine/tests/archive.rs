//! Archive, cascades, batches, restore, autoArchive and workspace archive (SPEC 5).

use super::*;
use crate::engine::RestoreScope;
use crate::model::Unfinished;

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
        let r = f.record(id);
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
        let r = f.record(id);
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
    assert!(f.record(kid).is_archived(), "nothing changed");
    f.e.restore(kid, true).unwrap();
    let r = &f.record(kid);
    assert!(!r.is_archived());
    assert_eq!(r.parent_agent_id(), None);
    f.check_activity();
}

#[test]
fn restoring_one_member_brings_its_subtree_and_leaves_the_rest_of_the_batch() {
    let mut f = Fx::new();
    let root = f.idle(None, "w1");
    let kid = f.idle(Some(root), "w1");
    let gk = f.idle(Some(kid), "w1");
    let ggk = f.idle(Some(gk), "w1");
    let other = f.idle(Some(root), "w1");
    assert_eq!(f.e.archive(root).unwrap().len(), 5);
    let batch = f.record(root).archive_batch_id.clone();
    assert_eq!(f.e.restore_subtree(gk).unwrap(), vec![gk, ggk]);
    // Its parent (kid) stays archived: refused, nothing changed, unless as a root.
    assert!(matches!(
        f.e.restore_scoped(gk, false, RestoreScope::Member),
        Err(EngineError::RestoreParentArchived { .. })
    ));
    assert!(f.record(gk).is_archived());
    assert_eq!(
        f.e.restore_scoped(gk, true, RestoreScope::Member).unwrap(),
        vec![gk, ggk]
    );
    assert_eq!(f.record(gk).parent_agent_id(), None);
    assert_eq!(f.e.track(gk), vec![ggk]);
    for id in [root, kid, other] {
        assert!(f.record(id).is_archived());
        assert_eq!(f.record(id).archive_batch_id, batch);
    }
    // The rest of the batch is restored as what is left of it.
    assert_eq!(f.e.restore(other, false).unwrap(), vec![root, kid, other]);
    assert_eq!(f.e.track(root), vec![kid, other]);
    assert!(f.e.track(kid).is_empty());
    f.check_activity();
}

#[test]
fn archive_many_is_one_batch() {
    let mut f = Fx::new();
    let p = f.idle(None, "w1");
    let a = f.idle(Some(p), "w1");
    let b = f.idle(Some(p), "w1");
    let c = f.running(Some(p), "w1");
    // Not finished as a user reads it: one needs the user (an unseen failure), one has a
    // subagent still running.
    let failed = f.running(Some(p), "w1");
    f.e.turn_ended(
        failed,
        TurnOutcome::Failed {
            message: "exit 3".into(),
            detail: None,
        },
    )
    .unwrap();
    let mid = f.idle(Some(p), "w1");
    let deep = f.running(Some(mid), "w1");
    let plan = f.e.finished_plan(p).unwrap();
    let finished = plan.head_ids();
    assert_eq!(finished, vec![a, b]);
    let kept: Vec<_> = plan.kept.iter().map(|k| (k.id, k.why)).collect();
    assert_eq!(
        kept,
        vec![
            (c, Unfinished::Running),
            (failed, Unfinished::NeedsYou),
            (mid, Unfinished::SubagentRunning)
        ]
    );
    let mid_plan = f.e.archive_plan(mid).unwrap();
    assert_eq!(mid_plan.heads.len(), 1);
    assert_eq!(
        (
            mid_plan.heads[0].subagents,
            mid_plan.heads[0].running_subagents,
            mid_plan.heads[0].running
        ),
        (1, 1, false)
    );
    assert!(f.e.finished_plan(AgentId::new()).is_err());
    let archived = f.e.archive_many(&finished).unwrap();
    assert_eq!(archived, vec![a, b]);
    assert_eq!(f.e.track(p), vec![c, failed, mid]);
    assert_eq!(f.e.track(mid), vec![deep]);
    let restored = f.e.restore(a, false).unwrap();
    assert_eq!(restored.len(), 2);
    assert_eq!(f.e.track(p), vec![a, b, c, failed, mid]);
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
    let r = f.record(id);
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
fn a_grandchild_starting_and_ending_tells_every_track_above_it_its_finished_count() {
    let mut f = Fx::new();
    let root = f.idle(None, "w1");
    let mid = f.idle(Some(root), "w1");
    let other = f.idle(Some(root), "w1");
    let leaf = f.idle(Some(mid), "w1");
    assert_eq!(f.e.track_counts(root).finished, Some(2));
    assert_eq!(
        f.e.finished_plan(root).unwrap().head_ids(),
        vec![mid, other]
    );

    // The leaf runs: `mid` (on the root's track) has a subagent running, so the root's track
    // changes though none of its own members did.
    f.e.prompt(leaf, "go".into(), TurnOrigin::User, None)
        .unwrap();
    let out = f.e.take_outcome();
    assert!(out.tracks.contains(&mid), "the parent's track");
    assert!(out.tracks.contains(&root), "the grandparent's track");
    assert_eq!(f.e.track_counts(root).finished, Some(1));
    assert_eq!(f.e.track_counts(mid).finished, Some(0));

    f.e.turn_ended(leaf, TurnOutcome::Completed).unwrap();
    let out = f.e.take_outcome();
    assert!(out.tracks.contains(&root));
    assert_eq!(f.e.track_counts(root).finished, Some(2));

    // A new turn's record changes that are not a start or an end leave the tracks above alone.
    f.e.prompt(leaf, "again".into(), TurnOrigin::User, None)
        .unwrap();
    let _ = f.e.take_outcome();
    f.e.set_changes(leaf, Some(crate::model::ChangeCounts::default()));
    f.e.mark_seen(leaf).unwrap();
    let out = f.e.take_outcome();
    assert!(!out.tracks.contains(&root), "{:?}", out.tracks);
}
