//! Who may call what (SPEC 8): bearer tokens at the HTTP layer, loopback Host and Origin, the
//! authorization rule between agents, and what a user-token session may do.

use super::*;
use crate::support::Door;

/// Sends one raw JSON-RPC POST; returns the status and body.
async fn raw_post(
    url: &str,
    token: Option<&str>,
    extra: &[(&str, &str)],
    body: &Value,
) -> (u16, String) {
    let mut rq = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(t) = token {
        rq = rq.header("authorization", format!("Bearer {t}"));
    }
    for (k, v) in extra {
        rq = rq.header(*k, *v);
    }
    let r = rq.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap())
}

fn create_call(h: &Harness) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_agent",
        "arguments": {"provider": "script", "initialPrompt": "ok raw",
            "relationship": {"kind": "detached"},
            "workspace": {"kind": "create", "source": {"kind": "directory", "path": h.env.work.display().to_string()}}}}})
}

#[tokio::test]
async fn requests_without_a_valid_token_get_401_and_change_nothing() {
    let h = Harness::start().await;
    let lead = h.root("ok lead").await;
    let lead_token = h.token(lead.id()).await;
    let body = create_call(&h);
    let before = h.count(true).await;

    // The rmcp client cannot even initialize.
    for t in [None, Some("wrong"), Some(&"0".repeat(64)[..])] {
        let Err(e) = client(&h.url, t).await else {
            panic!("a client with token {t:?} was accepted")
        };
        assert!(
            e.contains("401")
                || e.to_lowercase().contains("unauthorized")
                || e.to_lowercase().contains("auth"),
            "{e}"
        );
    }
    // Raw HTTP: missing, wrong scheme, wrong token.
    for (t, extra) in [
        (None, vec![]),
        (Some("not-the-token"), vec![]),
        (None, vec![("authorization", "Basic dXNlcjpwYXNz")]),
    ] {
        let (status, text) = raw_post(&h.url, t, &extra, &body).await;
        assert_eq!(status, 401, "{text}");
    }
    // A revoked token: the agent is archived, its token stops working.
    let c = h.as_agent(lead.id()).await;
    let (status, _) = raw_post(
        &h.url,
        Some(&lead_token),
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(status, 200);
    h.h().archive(Caller::User, lead.id()).await.unwrap();
    let (status, _) = raw_post(&h.url, Some(&lead_token), &[], &body).await;
    assert_eq!(status, 401);
    let p = c.call_tool(CallToolRequestParams::new("list_agents")).await;
    assert!(
        p.is_err(),
        "an open client with a revoked token is refused too"
    );
    // A reissued token replaces the old one: resume an agent and the previous token fails.
    let other = h.root("ok other").await;
    let t1 = h.token(other.id()).await;
    h.h().stop(other.id()).await.unwrap();
    // SPEC 14: a token works only while its agent has a runtime, not until archive.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, _) = raw_post(&h.url, Some(&t1), &[], &list).await;
    assert_eq!(status, 401, "a stopped agent's token still worked");
    h.seen.lock().unwrap().remove(&other.id());
    h.h()
        .prompt(Caller::User, other.id(), "ok back".into(), None, None)
        .await
        .unwrap();
    let t2 = h.token(other.id()).await;
    assert_ne!(t1, t2);
    // The agent has a runtime again, so the one request, sent with each token, tells the two
    // apart by the token alone: the new one is served, the replaced one refused (SPEC 14).
    let (status, text) = raw_post(&h.url, Some(&t2), &[], &list).await;
    assert_eq!(
        status, 200,
        "the resumed agent's new token is refused: {text}"
    );
    assert!(text.contains("create_agent"), "{text}");
    let (status, text) = raw_post(&h.url, Some(&t1), &[], &list).await;
    assert_eq!(status, 401, "the replaced token still works: {text}");
    let (status, _) = raw_post(&h.url, Some(&t1), &[], &body).await;
    assert_eq!(status, 401);
    // Refusing the old token did not disturb the new one.
    let (status, _) = raw_post(&h.url, Some(&t2), &[], &list).await;
    assert_eq!(status, 200);
    let before_other = h.count(true).await;
    assert_eq!(before_other, before + 1);

    // Raw TCP, no client library at all.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let port = h
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp");
    let mut s = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let b = body.to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
        "f".repeat(64),
        b.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).await.unwrap();
    assert!(resp.starts_with("HTTP/1.1 401"), "{resp}");
    assert!(
        resp.to_lowercase().contains("www-authenticate: bearer"),
        "{resp}"
    );

    // Nothing was created by any refused request.
    assert_eq!(h.count(true).await, before_other);
    // The same raw request with the user token works: the token was the only problem.
    let (status, text) = raw_post(&h.url, Some(&h.user), &[], &body).await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("agentId"), "{text}");
    assert_eq!(h.count(true).await, before_other + 1);
    h.stop().await;
}

#[tokio::test]
async fn host_and_origin_must_be_loopback() {
    let h = Harness::start().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (s, _) = raw_post(&h.url, Some(&h.user), &[("host", "evil.example")], &body).await;
    assert_eq!(s, 403);
    let (s, _) = raw_post(
        &h.url,
        Some(&h.user),
        &[("origin", "http://evil.example")],
        &body,
    )
    .await;
    assert_eq!(s, 403);
    let port = h
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .to_string();
    let origin = format!("http://127.0.0.1:{port}");
    let (s, _) = raw_post(&h.url, Some(&h.user), &[("origin", &origin)], &body).await;
    assert_eq!(s, 200);
    let (s, t) = raw_post(&h.url, Some(&h.user), &[], &body).await;
    assert_eq!(s, 200);
    assert!(t.contains("create_agent"));
    h.stop().await;
}

#[tokio::test]
async fn an_agent_may_mutate_only_itself_its_descendants_and_agents_it_created() {
    let h = Harness::start().await;
    let a = h.root("ok a").await;
    let b = h.root("ok b").await;
    let ca = h.as_agent(a.id()).await;
    let cb = h.as_agent(b.id()).await;
    let mk = |rel: &str, prompt: &str| {
        json!({"provider": "script", "initialPrompt": prompt, "relationship": {"kind": rel},
               "workspace": {"kind": "current"}, "notifyOnFinish": false})
    };
    let child = id_of(&ok(&ca, "create_agent", mk("subagent", "ok child")).await);
    let detached = id_of(&ok(&ca, "create_agent", mk("detached", "ok det")).await);
    h.idle(child).await;
    let cc = h.as_agent(child).await;
    let grandchild = id_of(&ok(&cc, "create_agent", mk("subagent", "ok grand")).await);
    h.idle(grandchild).await;
    h.idle(detached).await;

    // B reads anything but mutates nothing of A's.
    for t in [a.id(), child, detached, grandchild] {
        ok(&cb, "get_agent", json!({"agentId": t.to_string()})).await;
        ok(
            &cb,
            "wait_for_agent",
            json!({"agentId": t.to_string(), "timeoutSeconds": 1}),
        )
        .await;
        for (tool, verb, extra) in [
            ("send_agent_prompt", "prompt", json!({"prompt": "ok nope"})),
            ("cancel_agent", "cancel", json!({})),
            ("archive_agent", "archive", json!({})),
        ] {
            let mut args = extra.clone();
            args["agentId"] = json!(t.to_string());
            let e = err(&cb, tool, args).await;
            assert!(
                e.starts_with(&format!(
                    "agentId: agent {} may not {verb} agent {t}",
                    b.id()
                )),
                "{e}"
            );
        }
    }
    // The child may not act on its parent, nor on the detached sibling.
    let e = err(
        &cc,
        "send_agent_prompt",
        json!({"agentId": a.id().to_string(), "prompt": "ok up"}),
    )
    .await;
    assert!(e.contains("may not prompt"), "{e}");
    let e = err(
        &cc,
        "archive_agent",
        json!({"agentId": detached.to_string()}),
    )
    .await;
    assert!(e.contains("may not archive"), "{e}");
    // Nothing changed.
    for t in [a.id(), child, detached, grandchild] {
        let s = h.h().get(t).await.unwrap();
        assert!(s.record.archived_at.is_none());
        assert_eq!(s.record.turn_count, 1, "{t} got no extra turn");
    }
    // A may prompt its child, its grandchild (descendant) and its detached agent (created).
    for t in [child, grandchild, detached] {
        let s = ok(
            &ca,
            "send_agent_prompt",
            json!({"agentId": t.to_string(), "prompt": "ok yes", "background": false}),
        )
        .await;
        assert_eq!(s["lastMessage"], "yes");
    }
    // The child may act on itself and its own child.
    ok(&cc, "send_agent_prompt", json!({"agentId": grandchild.to_string(), "prompt": "ok from parent", "notifyOnFinish": false})).await;
    // A archives itself: the cascade takes child and grandchild, not the detached agent.
    let out = ok(&ca, "archive_agent", json!({"agentId": a.id().to_string()})).await;
    let got: BTreeSet<String> = out["archived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        got,
        BTreeSet::from([
            a.id().to_string(),
            child.to_string(),
            grandchild.to_string()
        ])
    );
    assert!(h
        .h()
        .get(detached)
        .await
        .unwrap()
        .record
        .archived_at
        .is_none());
    // The user token may act on any agent.
    let u = h.user().await;
    ok(
        &u,
        "archive_agent",
        json!({"agentId": detached.to_string()}),
    )
    .await;
    ok(
        &u,
        "send_agent_prompt",
        json!({"agentId": b.id().to_string(), "prompt": "ok user"}),
    )
    .await;
    h.stop().await;
}

#[tokio::test]
async fn a_user_token_session_cannot_use_subagent_or_current() {
    let h = Harness::start().await;
    let u = h.user().await;
    let r = repo(&h);
    let before = h.count(true).await;
    let dir = json!({"kind": "create", "source": {"kind": "directory", "path": h.env.work.display().to_string()}});
    let e = err(
        &u,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok",
        "relationship": {"kind": "subagent"}, "workspace": dir}),
    )
    .await;
    assert!(
        e.starts_with("relationship.kind: \"subagent\" needs an agent-scoped session"),
        "{e}"
    );
    let e = err(
        &u,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok",
        "relationship": {"kind": "detached"}, "workspace": {"kind": "current"}}),
    )
    .await;
    assert!(
        e.starts_with("workspace.kind: \"current\" needs an agent-scoped session"),
        "{e}"
    );
    let e = err(&u, "create_agent", json!({"provider": "script", "initialPrompt": "ok",
        "relationship": {"kind": "detached"}, "workspace": {"kind": "create", "source": {"kind": "worktree",
        "target": {"kind": "branch-off", "newBranch": "x"}}}})).await;
    assert!(
        e.starts_with("workspace.source.repo: is required for a user-token session"),
        "{e}"
    );
    let e = err(
        &u,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok",
        "relationship": {"kind": "detached"}, "workspace": dir, "notifyOnFinish": true}),
    )
    .await;
    assert!(e.starts_with("notifyOnFinish:"), "{e}");
    let e = err(
        &u,
        "create_worktree",
        json!({"target": {"kind": "branch-off", "newBranch": "x"}}),
    )
    .await;
    assert!(
        e.starts_with("repo: is required for a user-token session"),
        "{e}"
    );
    assert_eq!(h.count(true).await, before);

    // What it can do: detached agents in new workspaces, worktrees with a repo; foreground
    // prompts by default; no notices.
    let out = ok(
        &u,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok by user",
        "relationship": {"kind": "detached"}, "workspace": dir}),
    )
    .await;
    let id = id_of(&out);
    let s = h.h().get(id).await.unwrap();
    assert_eq!(s.record.created_by, None);
    assert!(!s.record.notify_on_finish);
    h.idle(id).await;
    let p = ok(
        &u,
        "send_agent_prompt",
        json!({"agentId": id.to_string(), "prompt": "ok fg"}),
    )
    .await;
    assert_eq!(p["background"], false);
    assert_eq!(p["lastMessage"], "fg");
    let w = ok(&u, "create_worktree", json!({"repo": r.display().to_string(), "target": {"kind": "branch-off", "newBranch": "u/1"}})).await;
    assert_eq!(w["branch"], "u/1");
    h.stop().await;
}
