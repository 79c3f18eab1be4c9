//! SPEC 18 from an agent's side of the MCP server: `create_agent` `budget` is at most what the
//! caller's tree has left (more is a tool error naming the field, nothing created), a detached
//! child included; `get_agent` shows the tree's budget, used and left; and no tool lets an
//! agent raise or clear a budget (the API refuses its token that request).

use super::*;
use paseo_core::api::Request;
use paseo_core::model::Budget;
use paseo_core::runtime::Caller;

fn create(prompt: &str, kind: &str, budget: serde_json::Value) -> serde_json::Value {
    json!({"provider": "script", "initialPrompt": prompt, "relationship": {"kind": kind},
           "workspace": {"kind": "current"}, "budget": budget})
}

#[tokio::test]
async fn an_agent_gives_a_child_at_most_what_its_tree_has_left_and_cannot_raise_its_own() {
    let h = Harness::start().await;
    let root = h.root("ok root").await.id();
    let cap = Budget {
        tree_tokens: Some(1_000),
        tree_cost_usd: None,
    };
    let set = Request::SetBudget(paseo_core::api::verbs::SetBudget {
        agent_id: root,
        budget: Some(cap),
    });
    h.h().call(Caller::User, set).await.unwrap();
    let c = h.as_agent(root).await;

    for kind in ["subagent", "detached"] {
        let before = h.count(true).await;
        let r = call(
            &c,
            "create_agent",
            create("ok big", kind, json!({"treeTokens": 1001})),
        )
        .await;
        assert_eq!(r.is_error, Some(true), "{kind}");
        let t = text(&r);
        assert!(t.contains("budget.treeTokens"), "{kind}: {t}");
        assert!(t.contains("1000"), "{kind}: {t}");
        assert_eq!(h.count(true).await, before, "{kind}: nothing created");
    }
    let r = call(
        &c,
        "create_agent",
        create("ok bad", "subagent", json!({"tokens": 5})),
    )
    .await;
    assert!(text(&r).contains("budget.tokens"), "{}", text(&r));

    let kid = id_of(
        &ok(
            &c,
            "create_agent",
            create("ok kid", "subagent", json!({"treeTokens": 400})),
        )
        .await,
    );
    h.idle(kid).await;
    let r = call(&c, "get_agent", json!({"agentId": kid.to_string()})).await;
    let got = r.structured_content.clone().unwrap();
    let b = &got["treeBudget"];
    assert_eq!(b["agentId"], kid.to_string(), "{b}");
    assert_eq!(b["budget"]["treeTokens"], 400);
    assert_eq!(b["used"]["tokens"], 0);
    assert_eq!(b["left"]["treeTokens"], 400);
    assert_eq!(b["reached"], false);
    assert!(
        text(&r).contains("budget: 0 of 400 tokens used, 400 left"),
        "{}",
        text(&r)
    );
    let got = ok(&c, "get_agent", json!({"agentId": root.to_string()})).await;
    let b = &got["treeBudget"];
    assert_eq!(b["budget"]["treeTokens"], 1000, "{b}");

    // No tool sets a budget; the API refuses an agent's token the user's request.
    let tools = c.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| !t.name.contains("budget")));
    for budget in [
        None,
        Some(Budget {
            tree_tokens: Some(u64::MAX),
            tree_cost_usd: None,
        }),
    ] {
        let r = Request::SetBudget(paseo_core::api::verbs::SetBudget {
            agent_id: root,
            budget,
        });
        let e = h.h().call(Caller::Agent(root), r).await.unwrap_err();
        assert_eq!(e.code(), "forbidden", "{e}");
    }
    h.stop().await;
}
