//! Budgets (SPEC 18): at its cap a tree's next agent-asked turn waits for the user; Allow runs
//! one; raising releases; the user's own prompts and running turns are never stopped.

use super::*;
use crate::model::{Budget, TurnUsage};

fn tokens(n: u64) -> Budget {
    Budget {
        tree_tokens: Some(n),
        tree_cost_usd: None,
    }
}

/// A turn's report of `input` input tokens (and nothing else counted).
fn used(input: u64) -> TurnUsage {
    TurnUsage {
        input_tokens: input,
        ..TurnUsage::default()
    }
}

fn sent(o: &Outcome, id: AgentId) -> usize {
    effects(o)
        .iter()
        .filter(|e| matches!(e, Effect::SendTurn { agent, .. } if *agent == id))
        .count()
}

/// A root with a budget of 100 tokens and a subagent, both idle; the root's tree used `spent`.
fn tree(f: &mut Fx, spent: u64) -> (AgentId, AgentId) {
    let root = f.idle(None, "w1");
    let kid = f.idle(Some(root), "w1");
    f.e.set_budget(root, Some(tokens(100))).unwrap();
    if spent > 0 {
        f.e.prompt(kid, "work".into(), TurnOrigin::User, None)
            .unwrap();
        f.e.turn_usage(kid, &used(spent)).unwrap();
        f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    }
    let _ = f.e.take_outcome();
    (root, kid)
}

#[test]
fn under_budget_an_agents_prompt_runs() {
    let mut f = Fx::new();
    let (root, kid) = tree(&mut f, 99);
    f.e.prompt(kid, "more".into(), TurnOrigin::Agent(root), None)
        .unwrap();
    assert_eq!(sent(&f.e.take_outcome(), kid), 1);
    let b = f.e.tree_budget(kid).unwrap();
    assert_eq!((b.agent_id, b.used.tokens), (root, 99));
    assert_eq!(b.left.tree_tokens, Some(1));
    assert!(!b.reached);
}

#[test]
fn at_the_cap_an_agents_prompt_is_held_and_the_users_is_not() {
    let mut f = Fx::new();
    let (root, kid) = tree(&mut f, 100);
    f.e.prompt(kid, "more".into(), TurnOrigin::Agent(root), Some(root))
        .unwrap();
    let o = f.e.take_outcome();
    assert_eq!(sent(&o, kid), 0, "nothing runs: {:?}", effects(&o));
    let a = f.e.agent(kid).unwrap();
    assert_eq!(a.status(), Status::Idle);
    assert!(a.needs_you());
    let req = a.pending_permission.as_ref().unwrap();
    assert!(req.is_budget());
    assert_eq!(req.tool_name, "budget: this tree used 100 of 100 tokens");
    assert_eq!(req.input["prompt"], "more");
    assert_eq!(a.record.attention_reason, Some(AttentionReason::Permission));
    assert_eq!(f.e.track_counts(root).needs_you, 1);
    assert!(f.e.tree_budget(root).unwrap().reached);
    // The user's own prompt to the root runs all the same.
    f.e.prompt(root, "mine".into(), TurnOrigin::User, None)
        .unwrap();
    assert_eq!(sent(&f.e.take_outcome(), root), 1);
    f.check_activity();
}

#[test]
fn a_running_turn_finishes_past_the_cap() {
    let mut f = Fx::new();
    let (root, kid) = tree(&mut f, 0);
    f.e.prompt(kid, "big".into(), TurnOrigin::Agent(root), None)
        .unwrap();
    let _ = f.e.take_outcome();
    f.e.turn_usage(kid, &used(500)).unwrap();
    let o = f.e.take_outcome();
    assert!(
        !effects(&o)
            .iter()
            .any(|e| matches!(e, Effect::Interrupt { .. } | Effect::CloseSession { .. })),
        "{:?}",
        effects(&o)
    );
    assert_eq!(f.status(kid), Status::Running);
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    assert_eq!(f.status(kid), Status::Idle);
}

#[test]
fn allow_runs_exactly_one_turn() {
    let mut f = Fx::new();
    let (root, kid) = tree(&mut f, 150);
    f.e.prompt(kid, "one".into(), TurnOrigin::Agent(root), Some(root))
        .unwrap();
    let request = f.e.agent(kid).unwrap().pending_permission.clone().unwrap();
    let _ = f.e.take_outcome();
    f.e.answer_permission(kid, &request.request_id, true)
        .unwrap();
    let o = f.e.take_outcome();
    assert!(effects(&o).contains(&&Effect::SendTurn {
        agent: kid,
        input: TurnInput::Prompt("one".into())
    }));
    assert!(f.e.agent(kid).unwrap().record.held_turn.is_none());
    f.e.turn_usage(kid, &used(10)).unwrap();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    let _ = f.e.take_outcome();
    // The armed notice of the allowed turn reaches the root: held too (the tree is over).
    let root_state = f.e.agent(root).unwrap();
    assert!(root_state
        .pending_permission
        .as_ref()
        .is_some_and(|p| p.is_budget() && p.input["notice"] == true));
    assert_eq!(f.e.inbox(root).map(|q| q.len()), Some(1), "still queued");
    // The next agent prompt waits again.
    f.e.prompt(kid, "two".into(), TurnOrigin::Agent(root), None)
        .unwrap();
    assert_eq!(sent(&f.e.take_outcome(), kid), 0);
    assert!(f.e.agent(kid).unwrap().record.held_turn.is_some());
}

#[test]
fn raising_the_budget_releases_what_waits_and_clearing_it_too() {
    let mut f = Fx::new();
    let (root, kid) = tree(&mut f, 120);
    let other = f.idle(Some(root), "w1");
    f.e.prompt(kid, "a".into(), TurnOrigin::Agent(root), None)
        .unwrap();
    f.e.prompt(other, "b".into(), TurnOrigin::Agent(root), None)
        .unwrap();
    let _ = f.e.take_outcome();
    // Raised, but not past what was used: still waiting.
    f.e.set_budget(root, Some(tokens(110))).unwrap();
    let o = f.e.take_outcome();
    assert_eq!(sent(&o, kid) + sent(&o, other), 0);
    f.e.set_budget(root, Some(tokens(1_000))).unwrap();
    let o = f.e.take_outcome();
    assert_eq!((sent(&o, kid), sent(&o, other)), (1, 1));
    assert_eq!(f.e.tree_budget(kid).unwrap().left.tree_tokens, Some(880));
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    // Cleared: nothing applies any more.
    f.e.set_budget(root, Some(tokens(1))).unwrap();
    f.e.prompt(kid, "c".into(), TurnOrigin::Agent(root), None)
        .unwrap();
    assert_eq!(sent(&f.e.take_outcome(), kid), 0);
    f.e.set_budget(root, None).unwrap();
    assert_eq!(sent(&f.e.take_outcome(), kid), 1);
    assert!(f.e.tree_budget(kid).is_none());
}

#[test]
fn a_notice_waits_in_the_inbox_and_allow_delivers_it() {
    let mut f = Fx::new();
    let (root, _) = tree(&mut f, 0);
    let kid = f.armed(Some(root), root);
    let _ = f.e.take_outcome();
    f.e.turn_usage(kid, &used(100)).unwrap();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    let o = f.e.take_outcome();
    assert_eq!(sent(&o, root), 0, "the notice turn is held");
    let req = f.e.agent(root).unwrap().pending_permission.clone().unwrap();
    assert!(req.is_budget());
    assert_eq!(f.e.inbox(root).map(|q| q.len()), Some(1));
    f.e.answer_permission(root, &req.request_id, true).unwrap();
    let o = f.e.take_outcome();
    assert_eq!(sent(&o, root), 1);
    assert!(f.e.inbox(root).is_none_or(|q| q.is_empty()));
    assert_eq!(f.status(root), Status::Running);
}

#[test]
fn a_denied_notice_is_recorded_and_not_run() {
    let mut f = Fx::new();
    let (root, _) = tree(&mut f, 0);
    let kid = f.armed(Some(root), root);
    f.e.turn_usage(kid, &used(100)).unwrap();
    f.e.turn_ended(kid, TurnOutcome::Completed).unwrap();
    let req = f.e.agent(root).unwrap().pending_permission.clone().unwrap();
    let _ = f.e.take_outcome();
    f.e.answer_permission(root, &req.request_id, false).unwrap();
    let o = f.e.take_outcome();
    assert_eq!(sent(&o, root), 0);
    assert!(f.e.inbox(root).is_none_or(|q| q.is_empty()));
    let a = f.e.agent(root).unwrap();
    assert!(a.record.held_turn.is_none() && a.pending_permission.is_none());
    assert_eq!(a.status(), Status::Idle);
}

#[test]
fn a_detached_agent_counts_against_its_creators_tree() {
    let mut f = Fx::new();
    let (root, _) = tree(&mut f, 0);
    let mut d = f.new_agent(None, "w2");
    d.created_by = Some(root); // detached: no parent, its creator's budget tree all the same
    let detached = f.e.create(d).unwrap();
    f.e.session_ready(detached).unwrap();
    f.e.prompt(detached, "spend".into(), TurnOrigin::User, None)
        .unwrap();
    f.e.turn_usage(detached, &used(100)).unwrap();
    f.e.turn_ended(detached, TurnOutcome::Completed).unwrap();
    let _ = f.e.take_outcome();
    // The creator's budget words changed: it is re-rendered, as a parent is for its usage.
    assert!(f.e.take_rerender().contains(&root));
    assert_eq!(f.e.budget_spent(root).tokens, 100);
    assert!(
        f.e.tree_usage(root).is_empty(),
        "the usage tree is not the budget tree"
    );
    for id in [root, detached] {
        f.e.prompt(id, "more".into(), TurnOrigin::Agent(root), None)
            .unwrap();
        assert_eq!(sent(&f.e.take_outcome(), id), 0, "{id} is held");
    }
}

#[test]
fn a_child_budget_never_grows_down_the_tree() {
    let mut f = Fx::new();
    let (root, kid) = tree(&mut f, 30);
    let e = f.e.check_child_budget(kid, &tokens(71)).unwrap_err();
    assert!(
        matches!(
            e,
            EngineError::BudgetTooLarge {
                field: "budget.treeTokens",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("70"), "{e}");
    f.e.check_child_budget(kid, &tokens(70)).unwrap();
    // A smaller budget given to the child caps its own subtree first.
    f.e.set_budget(kid, Some(tokens(30))).unwrap();
    f.e.prompt(kid, "x".into(), TurnOrigin::Agent(root), None)
        .unwrap();
    let o = f.e.take_outcome();
    assert_eq!(sent(&o, kid), 0);
    let b = f.e.tree_budget(kid).unwrap();
    assert_eq!((b.agent_id, b.left.tree_tokens), (kid, Some(0)));
    // An agent without any budget above it may give any.
    let free = f.idle(None, "w2");
    f.e.check_child_budget(free, &tokens(u64::MAX)).unwrap();
}

#[test]
fn a_restart_keeps_budgets_and_held_turns() {
    let mut f = Fx::new();
    let (root, kid) = tree(&mut f, 100);
    f.e.prompt(kid, "later".into(), TurnOrigin::Agent(root), None)
        .unwrap();
    let (mut e2, _) = f.reload(f.records());
    let a = e2.agent(kid).unwrap();
    let req = a.pending_permission.clone().unwrap();
    assert!(req.is_budget());
    assert_eq!(e2.tree_budget(kid).unwrap().used.tokens, 100);
    assert_eq!(
        e2.agent(root).unwrap().record.budget.as_deref(),
        Some(&tokens(100))
    );
    e2.set_budget(root, Some(tokens(200))).unwrap();
    let a = e2.agent(kid).unwrap();
    assert!(a.record.held_turn.is_none(), "released after the restart");
    assert!(a.queued.is_some(), "its prompt waits for its session");
}
