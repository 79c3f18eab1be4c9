//! Usage roll-ups (what SPEC 18's budgets count): per agent, per tree (archived descendants
//! included, detached agents not) and per workspace; re-rendering the ancestors whose totals
//! changed.

use super::*;
use crate::model::{LastRun, TurnUsage, Usage};

fn used(input: u64, cost: Option<f64>) -> TurnUsage {
    TurnUsage {
        input_tokens: input,
        output_tokens: 1,
        cache_read_tokens: 2,
        cache_write_tokens: 3,
        cost_usd: cost,
        session_cost_usd: cost,
        restored: false,
    }
}

fn sums(u: &Usage) -> (u64, u64, u64, u64, Option<f64>, u64) {
    (
        u.input_tokens,
        u.output_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.cost_usd,
        u.turns,
    )
}

#[test]
fn trees_sum_descendants_archived_or_not_and_workspaces_sum_their_agents() {
    let mut f = Fx::new();
    let root = f.running(None, "w1");
    let kid = f.running(Some(root), "w1");
    let grandkid = f.running(Some(kid), "w2");
    let mut d = f.new_agent(None, "w1");
    d.created_by = Some(root); // detached: not in root's tree
    let detached = f.e.create(d).unwrap();
    let _ = f.e.take_outcome();

    f.e.turn_usage(root, &used(100, Some(0.5))).unwrap();
    f.e.turn_usage(kid, &used(10, None)).unwrap();
    f.e.turn_usage(grandkid, &used(1, Some(0.25))).unwrap();
    let o = f.e.take_outcome();
    // The grandkid's ancestors' totals changed: re-rendered, not rewritten.
    let rerender = f.e.take_rerender();
    assert!(rerender.contains(&kid) && rerender.contains(&root));
    assert!(f.e.take_rerender().is_empty());
    assert!(!o.agents.contains(&root));
    assert!(o.workspaces.contains("w2"));
    f.e.turn_usage(detached, &used(1000, None)).unwrap();
    f.e.turn_usage(root, &used(100, Some(0.5))).unwrap();

    assert_eq!(sums(&f.record(root).usage), (200, 2, 4, 6, Some(1.0), 2));
    assert_eq!(sums(&f.e.tree_usage(root)), (211, 4, 8, 12, Some(1.25), 4));
    assert_eq!(sums(&f.e.tree_usage(kid)), (11, 2, 4, 6, Some(0.25), 2));
    assert_eq!(sums(&f.e.tree_usage(detached)), (1000, 1, 2, 3, None, 1));
    let w1 = f.e.workspace_usage(&"w1".parse().unwrap());
    assert_eq!(sums(&w1), (1210, 4, 8, 12, Some(1.0), 4));

    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    f.e.archive(kid).unwrap();
    assert_eq!(sums(&f.e.tree_usage(root)), (211, 4, 8, 12, Some(1.25), 4));

    // The batch computation agrees with the single ones.
    let r = f.e.usage_rollups();
    for id in [root, kid, grandkid, detached] {
        assert_eq!(r.tree(id), f.e.tree_usage(id), "{id}");
    }
    for w in ["w1", "w2"] {
        let w: WorkspaceId = w.parse().unwrap();
        assert_eq!(r.workspace(&w), f.e.workspace_usage(&w));
    }
    // An agent that reported nothing has an empty tree.
    let quiet = f.idle(None, "w2");
    assert!(f.e.tree_usage(quiet).is_empty());
    assert!(r.tree(quiet).is_empty());
}

#[test]
fn roll_ups_survive_a_reload_and_follow_a_detach() {
    let mut f = Fx::new();
    let root = f.running(None, "w1");
    let kid = f.running(Some(root), "w1");
    f.e.turn_usage(root, &used(5, None)).unwrap();
    f.e.turn_usage(kid, &used(7, Some(0.1))).unwrap();
    f.e.last_run(
        kid,
        LastRun {
            wall_ms: 12,
            exit_code: Some(0),
            ..LastRun::default()
        },
    )
    .unwrap();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();

    let records = f.records();
    let (e2, _) = f.reload(records);
    assert_eq!(e2.tree_usage(root), f.e.tree_usage(root));
    assert_eq!(e2.tree_usage(root).input_tokens, 12);
    assert_eq!(
        e2.agent(kid)
            .unwrap()
            .record
            .last_run
            .as_ref()
            .map(|r| r.wall_ms),
        Some(12)
    );

    f.e.detach(kid).unwrap();
    assert_eq!(f.e.tree_usage(root).input_tokens, 5);
    assert_eq!(f.e.tree_usage(kid).input_tokens, 7);
}

#[test]
fn a_parent_cycle_does_not_hang_the_roll_up() {
    let mut f = Fx::new();
    let a = f.running(None, "w1");
    let b = f.running(Some(a), "w1");
    f.e.turn_usage(b, &used(1, None)).unwrap();
    // A record edited by hand into a cycle: load cuts it; the walk is bounded regardless.
    let mut records = f.records();
    for r in &mut records {
        if r.id == a {
            r.set_parent(Some(b));
        }
    }
    let (e2, _) = f.reload(records);
    assert_eq!(e2.tree_usage(b).input_tokens, 1);
    let _ = e2.usage_rollups();
}

/// A detach takes the subtree's usage out of every former ancestor's tree total: they are
/// re-rendered at once (events to the windows), not at their own next update.
#[test]
fn a_detach_re_renders_the_former_ancestors_at_once() {
    let mut f = Fx::new();
    let root = f.running(None, "w1");
    let mid = f.running(Some(root), "w1");
    let kid = f.running(Some(mid), "w1");
    let quiet = f.running(Some(mid), "w1");
    f.e.turn_usage(kid, &used(7, None)).unwrap();
    f.e.take_rerender();

    f.e.detach(kid).unwrap();
    let again = f.e.take_rerender();
    assert!(again.contains(&root) && again.contains(&mid), "{again:?}");
    assert_eq!(f.e.tree_usage(root).input_tokens, 0);
    assert_eq!(f.e.tree_usage(mid).input_tokens, 0);
    // When the subtree used nothing, only the root: its roll-up of subagents lost one (the
    // tree usage of none changed).
    f.e.detach(quiet).unwrap();
    assert_eq!(
        f.e.take_rerender().into_iter().collect::<Vec<_>>(),
        vec![root]
    );
}
