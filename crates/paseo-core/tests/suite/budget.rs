//! Budgets (SPEC 18) with the real pinned Claude Code CLI against the scripted Anthropic
//! stand-in, which reports the same usage on every reply (so what a turn costs is known): under
//! its budget a tree runs; at its cap an agent's next turn is held and no request reaches the
//! model; Allow runs exactly one turn; raising releases; the user's own prompts always run; a
//! child given more than its tree has left is refused; a detached agent's usage counts against
//! its creator's tree; a restart keeps all of it. Everything goes through the one API.

use crate::support;

use std::time::Duration;

use paseo_core::api::{Request, Response};
use paseo_core::model::{AgentId, Budget, PermissionRequest, Status, WorkspaceId};
use paseo_core::runtime::{AgentSnapshot, Caller, RuntimeOptions, WorkspaceTarget};
use paseo_core::server::{Runtime, Server};
use support::anthropic::{CACHE_WRITE_TOKENS, INPUT_TOKENS, OUTPUT_TOKENS};
use support::cli::{create, Clis};
use support::Door;

const T: Duration = Duration::from_secs(60);
/// What one reply of the stand-in counts against a budget (cache reads are not counted).
const TURN: u64 = INPUT_TOKENS + OUTPUT_TOKENS + CACHE_WRITE_TOKENS;

struct Fixture {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    clis: Clis,
}

impl Fixture {
    async fn new() -> Fixture {
        Fixture {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            clis: Clis::echoing().await,
        }
    }

    async fn start(&self, default: Option<Budget>) -> Runtime {
        let mut opts = RuntimeOptions::new(self.home.path(), self.clis.registry());
        opts.budget = default;
        let rt = Runtime::start(opts, None).await.unwrap();
        rt.handle.deliver_pending().await.unwrap();
        rt
    }

    /// Requests that reached the model stand-in so far.
    fn requests(&self) -> usize {
        self.clis.claude.requests().len()
    }
}

fn tokens(n: u64) -> Budget {
    Budget {
        tree_tokens: Some(n),
        tree_cost_usd: None,
    }
}

async fn call(h: &Server, caller: Caller, r: Request) -> Result<Response, String> {
    h.call(caller, r).await.map_err(|e| {
        let e = paseo_core::api::ApiError::from(e);
        format!("{}|{}|{}", e.code, e.field.unwrap_or_default(), e.message)
    })
}

async fn set_budget(h: &Server, id: AgentId, budget: Option<Budget>) -> AgentSnapshot {
    let r = Request::SetBudget(paseo_core::api::verbs::SetBudget {
        agent_id: id,
        budget,
    });
    match call(h, Caller::User, r).await.unwrap() {
        Response::Agent(a) => *a,
        other => panic!("{other:?}"),
    }
}

async fn workspace(h: &Server, f: &Fixture) -> WorkspaceId {
    h.add_workspace(f.work.path().display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id
}

/// Waits until the agent is idle (its turn ran) and returns it.
async fn idle(h: &Server, id: AgentId) -> AgentSnapshot {
    let r = h.wait(id, T).await.unwrap();
    assert!(!r.timed_out, "{id} timed out");
    assert_eq!(
        r.agent.status,
        Status::Idle,
        "{:?}",
        r.agent.record.last_error
    );
    assert!(r.agent.pending_permission.is_none(), "{id} is not held");
    r.agent
}

/// Waits until the agent's turn is held on the budget, and returns its request.
async fn held(h: &Server, id: AgentId) -> PermissionRequest {
    let r = h.wait(id, T).await.unwrap();
    let p = r.agent.pending_permission.clone();
    let p = p.unwrap_or_else(|| panic!("{id} is not held: {:?}", r.agent.status));
    assert!(p.is_budget(), "{p:?}");
    assert_eq!(r.agent.status_word, "needs you: budget");
    assert!(r.agent.needs_you);
    p
}

/// A subagent (or detached agent) of `caller` with a first prompt, created through the API.
fn child(ws: &WorkspaceId, prompt: &str, subagent: bool, budget: Option<Budget>) -> Request {
    let c = create("claude", ws, prompt);
    Request::CreateAgent(paseo_core::api::verbs::CreateAgent {
        provider: c.provider,
        workspace: WorkspaceTarget::existing(ws.clone()),
        model: c.model,
        mode: None,
        title: None,
        prompt: c.initial_prompt,
        subagent,
        notify_on_finish: Some(false),
        auto_archive: false,
        unconfined: false,
        labels: Default::default(),
        request_id: None,
        budget,
        host: None,
    })
}

async fn agent_prompt(h: &Server, caller: AgentId, id: AgentId, text: &str) {
    let r = Request::Prompt(paseo_core::api::verbs::Prompt {
        agent_id: id,
        prompt: text.into(),
        background: Some(true),
        notify_on_finish: Some(false),
    });
    call(h, Caller::Agent(caller), r).await.unwrap();
}

/// Under its budget a tree runs; at its cap every next agent turn waits and nothing reaches the
/// model; Allow runs exactly one turn; the user's own prompt runs; raising releases; a restart
/// keeps the budget, what it used and the held turn.
#[tokio::test]
async fn a_tree_at_its_budget_holds_agent_turns_until_allowed_or_raised() {
    let f = Fixture::new().await;
    let (root, kid);
    {
        let rt = f.start(None).await;
        let h = rt.handle();
        let ws = workspace(&h, &f).await;
        root = h.create(create("claude", &ws, "first")).await.unwrap().id();
        idle(&h, root).await;
        // Room for one more turn: the child's first turn runs.
        let a = set_budget(&h, root, Some(tokens(TURN + 1))).await;
        let b = a.tree_budget.expect("a budget applies");
        assert_eq!((b.used.tokens, b.left.tree_tokens), (TURN, Some(1)));
        let Response::Agent(k) = call(&h, Caller::Agent(root), child(&ws, "kid", true, None))
            .await
            .unwrap()
        else {
            panic!()
        };
        kid = k.id();
        idle(&h, kid).await;
        let got = h.get(root).await.unwrap().tree_budget.unwrap();
        assert_eq!(got.used.tokens, 2 * TURN);
        assert!(got.reached && got.left.tree_tokens == Some(0));

        // At the cap: the agent's prompt is held, and nothing reaches the model.
        let before = f.requests();
        agent_prompt(&h, root, kid, "over").await;
        let p = held(&h, kid).await;
        assert_eq!(
            p.tool_name,
            format!("budget: this tree used {} of {} tokens", 2 * TURN, TURN + 1)
        );
        assert_eq!(p.input["prompt"], "over");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(f.requests(), before, "a held turn sends nothing");

        // Allow runs exactly that one turn.
        h.answer_permission(kid, p.request_id.clone(), true)
            .await
            .unwrap();
        let k = idle(&h, kid).await;
        assert_eq!(k.record.last_message.as_deref(), Some("claude says: over"));
        let one = f.requests() - before;
        assert!(one >= 1, "the allowed turn reached the model");
        agent_prompt(&h, root, kid, "again").await;
        held(&h, kid).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(f.requests(), before + one, "one turn, no more");

        // The user's own prompt is never held.
        h.prompt(Caller::User, root, "mine".into(), None, None)
            .await
            .unwrap();
        let r = idle(&h, root).await;
        assert_eq!(r.record.last_message.as_deref(), Some("claude says: mine"));
        rt.shutdown().await;
    }
    // A restart keeps the budget, what the tree used, and the held turn.
    let rt = f.start(None).await;
    let h = rt.handle();
    let r = h.get(root).await.unwrap();
    assert_eq!(r.record.budget.as_deref(), Some(&tokens(TURN + 1)));
    assert_eq!(r.tree_budget.unwrap().used.tokens, 4 * TURN);
    let p = held(&h, kid).await;
    assert_eq!(p.input["prompt"], "again");
    let before = f.requests();
    // Raising the budget releases what waits.
    let a = set_budget(&h, root, Some(tokens(100 * TURN))).await;
    assert_eq!(a.tree_budget.unwrap().left.tree_tokens, Some(96 * TURN));
    let k = idle(&h, kid).await;
    assert_eq!(k.record.last_message.as_deref(), Some("claude says: again"));
    assert!(f.requests() > before);
    rt.shutdown().await;
}

/// config.json's budget is every new root's; a child given more than the tree has left is
/// refused naming the field, with nothing created; a smaller one is its own; a detached agent
/// the root creates spends from the root's tree; only the user may set a budget.
#[tokio::test]
async fn children_detached_agents_and_the_default_stay_inside_the_trees_budget() {
    let f = Fixture::new().await;
    let rt = f.start(Some(tokens(3 * TURN))).await;
    let h = rt.handle();
    let ws = workspace(&h, &f).await;
    let root = h.create(create("claude", &ws, "first")).await.unwrap();
    assert_eq!(root.record.budget.as_deref(), Some(&tokens(3 * TURN)));
    let root = root.id();
    idle(&h, root).await;

    // More than the 2 turns left: refused, naming the field, nothing created.
    let count = h.snapshot().await.unwrap().agents.len();
    let e = call(
        &h,
        Caller::Agent(root),
        child(&ws, "big", true, Some(tokens(2 * TURN + 1))),
    )
    .await
    .unwrap_err();
    assert!(e.starts_with("invalid|budget.treeTokens|"), "{e}");
    assert_eq!(h.snapshot().await.unwrap().agents.len(), count);

    // A detached agent the root creates is no escape: its turn counts against the root's tree.
    let Response::Agent(d) = call(
        &h,
        Caller::Agent(root),
        child(&ws, "free", false, Some(tokens(2 * TURN))),
    )
    .await
    .unwrap() else {
        panic!()
    };
    assert!(d.parent_agent_id.is_none(), "detached");
    assert_eq!(d.record.budget.as_deref(), Some(&tokens(2 * TURN)));
    idle(&h, d.id()).await;
    let b = h.get(root).await.unwrap().tree_budget.unwrap();
    assert_eq!((b.used.tokens, b.left.tree_tokens), (2 * TURN, Some(TURN)));
    let b = h.get(d.id()).await.unwrap().tree_budget.unwrap();
    assert_eq!(b.agent_id, d.id(), "its own, smaller budget is the nearest");
    assert_eq!(b.left.tree_tokens, Some(TURN), "the tightest of both");
    agent_prompt(&h, root, d.id(), "more").await;
    idle(&h, d.id()).await;
    // Three turns used: every agent turn of the tree waits, the detached one's too.
    let before = f.requests();
    agent_prompt(&h, root, d.id(), "over").await;
    held(&h, d.id()).await;
    assert_eq!(f.requests(), before);

    // Only the user sets a budget: an agent may not raise or clear its own tree's.
    for budget in [Some(tokens(u64::MAX)), None] {
        let r = Request::SetBudget(paseo_core::api::verbs::SetBudget {
            agent_id: root,
            budget,
        });
        let e = call(&h, Caller::Agent(root), r).await.unwrap_err();
        assert!(e.starts_with("forbidden|"), "{e}");
    }
    assert_eq!(
        h.get(root).await.unwrap().record.budget.as_deref(),
        Some(&tokens(3 * TURN))
    );
    rt.shutdown().await;
}
