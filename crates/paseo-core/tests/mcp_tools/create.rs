//! `create_agent` from agents: a subagent in its parent's workspace whose finish comes back as
//! the parent's next turn, and fifty agents creating at once with nothing lost or duplicated.

use super::*;
use crate::support::Door;

#[tokio::test]
async fn an_agent_creates_a_subagent_in_its_workspace_and_hears_when_it_finishes() {
    let h = Harness::start().await;
    let mut r = CreateAgent::new("script", WorkspaceTarget::existing(h.ws.clone()));
    r.initial_prompt = Some("ok planning".into());
    r.model = Some("m-parent".into());
    r.mode = Some("plan".into());
    let parent = h.h().create(r).await.unwrap();
    h.idle(parent.id()).await;
    let sub = h.env.work.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let c = h.as_agent(parent.id()).await;
    let out = ok(
        &c,
        "create_agent",
        json!({
            "provider": "script",
            "title": "kid-1",
            "initialPrompt": "ok tests pass",
            "relationship": {"kind": "subagent"},
            "workspace": {"kind": "current"}
        }),
    )
    .await;
    // At once: initializing, in the parent's workspace and cwd.
    assert_eq!(out["status"], "initializing");
    assert_eq!(out["workspaceId"], h.ws.to_string());
    assert_eq!(out["cwd"], parent.record.cwd.as_str());
    assert_eq!(out["parentAgentId"], parent.id().to_string());
    let kid = id_of(&out);
    let snap = h.h().get(kid).await.unwrap();
    assert_eq!(snap.record.labels[PARENT_LABEL], parent.id().to_string());
    assert_eq!(snap.record.created_by, Some(parent.id()));
    assert_eq!(snap.record.title, "kid-1");
    // Same provider: the caller's model and mode are inherited.
    assert_eq!(snap.record.config.model.as_deref(), Some("m-parent"));
    assert_eq!(snap.record.config.mode.as_deref(), Some("plan"));
    // The parent gets the finish notice as its next turn.
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let got = h.env.log.lock().unwrap().inputs.iter().any(|(a, i)| {
            *a == parent.id()
                && matches!(i, paseo_core::providers::TurnInput::Notice(t) if t.contains(&kid.to_string()) && t.contains("tests pass"))
        });
        if got {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no notice");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Another cwd inside the workspace, and notifyOnFinish off.
    let out = ok(
        &c,
        "create_agent",
        json!({
            "provider": "script",
            "initialPrompt": "ok second",
            "relationship": {"kind": "subagent"},
            "workspace": {"kind": "current", "cwd": sub.display().to_string()},
            "notifyOnFinish": false,
            "labels": {"team": "qa"},
            "model": "m-own"
        }),
    )
    .await;
    assert_eq!(
        out["cwd"],
        sub.canonicalize().unwrap().display().to_string()
    );
    let second = h.h().get(id_of(&out)).await.unwrap();
    assert!(!second.record.notify_on_finish);
    assert_eq!(&second.record.labels["team"], "qa");
    assert_eq!(second.record.config.model.as_deref(), Some("m-own"));
    assert_eq!(second.record.config.mode.as_deref(), Some("plan"));
    // Another provider: its own defaults.
    let out = ok(
        &c,
        "create_agent",
        json!({"provider": "mute", "initialPrompt": "ok third", "relationship": {"kind": "detached"},
               "workspace": {"kind": "current"}, "notifyOnFinish": false}),
    )
    .await;
    let third = h.h().get(id_of(&out)).await.unwrap();
    assert_eq!(third.record.config.model, None);
    assert_eq!(third.record.config.mode, None);
    assert_eq!(third.parent_agent_id, None);
    assert_eq!(
        third.record.workspace_id.as_ref(),
        Some(&h.ws),
        "detached, in the caller's workspace"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_agents_create_subagents_concurrently() {
    // The roots stand in for agents calling while idle, which only works while they keep their
    // sessions: room for all 100 (the live-agent limit has its own tests in limits.rs).
    let roomy = paseo_core::config::Limits {
        max_live_agents: 200,
        ..Default::default()
    };
    let h = Harness::start_limited(Env::new(), None, roomy).await;
    let mut roots = Vec::new();
    for i in 0..50 {
        roots.push(h.root(&format!("ok root-{i}")).await.id());
    }
    let mut tokens = Vec::new();
    for r in &roots {
        tokens.push(h.token(*r).await);
    }
    let url = h.url.clone();
    let mut tasks = Vec::new();
    for (i, t) in tokens.into_iter().enumerate() {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let c = client(&url, Some(&t)).await.unwrap();
            let v = ok(
                &c,
                "create_agent",
                json!({"provider": "script", "initialPrompt": format!("ok child-{i}"),
                       "title": format!("child-{i}"),
                       "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}}),
            )
            .await;
            (
                i,
                id_of(&v),
                v["parentAgentId"].as_str().unwrap().to_string(),
            )
        }));
    }
    let mut kids = Vec::new();
    for t in tasks {
        kids.push(t.await.unwrap());
    }
    let unique: BTreeSet<AgentId> = kids.iter().map(|k| k.1).collect();
    assert_eq!(unique.len(), 50, "no duplicates");
    for (i, kid, parent) in &kids {
        assert_eq!(parent, &roots[*i].to_string());
        let (under, total) = h
            .h()
            .list(
                paseo_core::engine::ListFilter {
                    parent: Some(roots[*i]),
                    ..Default::default()
                },
                10,
            )
            .await
            .unwrap();
        assert_eq!(total, 1, "root {i} has exactly one child");
        assert_eq!(under[0].id(), *kid);
        assert_eq!(under[0].record.title, format!("child-{i}"));
    }
    assert_eq!(h.count(true).await, 100, "none lost, none extra");
    // And every parent hears from its own child.
    for (i, kid, _) in &kids {
        let w = h.h().wait(*kid, T).await.unwrap();
        assert_eq!(
            w.agent.record.last_message.as_deref(),
            Some(format!("child-{i}").as_str())
        );
    }
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let inputs = h.env.log.lock().unwrap().inputs.clone();
        let heard = kids
            .iter()
            .filter(|(i, kid, _)| {
                inputs.iter().any(|(a, inp)| {
                    *a == roots[*i]
                        && matches!(inp, paseo_core::providers::TurnInput::Notice(t) if t.contains(&kid.to_string()))
                })
            })
            .count();
        if heard == 50 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {heard} parents heard"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.stop().await;
}
