//! The server's life as a script sees it: mcp.json and mcp-token across a stop and start, and
//! the configured port or a free one.

use super::*;

#[tokio::test]
async fn headless_start_stop_keeps_state_and_the_user_token() {
    let env = Env::new();
    let home = env.home();
    let h = Harness::start_on(env, None).await;
    // What a script sees: mcp.json with the URL, mcp-token (0600) with the user token.
    let mcp_json: Value =
        serde_json::from_slice(&std::fs::read(home.join("mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp_json, json!({"url": h.url}));
    let token = std::fs::read_to_string(home.join("mcp-token"))
        .unwrap()
        .trim()
        .to_string();
    assert!(token.len() >= 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join("mcp-token"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }
    let c = client(mcp_json["url"].as_str().unwrap(), Some(&token))
        .await
        .unwrap();
    let dir = json!({"kind": "create", "source": {"kind": "directory", "path": h.env.work.display().to_string()}});
    let out = ok(
        &c,
        "create_agent",
        json!({"provider": "script", "initialPrompt": "ok survive",
        "title": "survivor", "relationship": {"kind": "detached"}, "workspace": dir}),
    )
    .await;
    let id = id_of(&out);
    let w = ok(&c, "wait_for_agent", json!({"agentId": id.to_string()})).await;
    assert_eq!(w["lastMessage"], "survive");
    drop(c);
    let old_url = h.url.clone();
    let env = h.stop().await;
    assert!(
        !home.join("mcp.json").exists(),
        "a clean stop removes mcp.json"
    );
    assert!(
        client(&old_url, Some(&token)).await.is_err(),
        "nothing serves any more"
    );

    // Again, on the same home: same token, same agents.
    let h = Harness::start_on(env, None).await;
    let token2 = std::fs::read_to_string(home.join("mcp-token"))
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(token2, token);
    let mcp_json: Value =
        serde_json::from_slice(&std::fs::read(home.join("mcp.json")).unwrap()).unwrap();
    let c = client(mcp_json["url"].as_str().unwrap(), Some(&token))
        .await
        .unwrap();
    let g = ok(&c, "get_agent", json!({"agentId": id.to_string()})).await;
    assert_eq!(g["title"], "survivor");
    assert_eq!(g["status"], "closed");
    assert_eq!(g["lastMessage"], "survive");
    let l = ok(&c, "list_agents", json!({})).await;
    assert_eq!(l["total"], 1);
    // It resumes on use.
    let p = ok(
        &c,
        "send_agent_prompt",
        json!({"agentId": id.to_string(), "prompt": "ok back again"}),
    )
    .await;
    assert_eq!(p["lastMessage"], "back again");
    drop(c);
    h.stop().await;
}

#[tokio::test]
async fn the_configured_port_is_used_or_a_free_one_when_taken() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path().join("home"));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let s = McpServer::bind(&layout, Some(port)).unwrap();
    assert_ne!(s.port(), port);
    drop(s);
    drop(taken);
    // A port that was just free is used as configured.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let s = McpServer::bind(&layout, Some(port)).unwrap();
    assert_eq!(s.port(), port);
    assert_eq!(s.url(), format!("http://127.0.0.1:{port}/mcp"));
    // A stale mcp.json from an earlier run is gone until serve writes the new one.
    drop(s);
    std::fs::write(
        layout.mcp_json_path(),
        r#"{"url":"http://127.0.0.1:1/mcp"}"#,
    )
    .unwrap();
    let _s = McpServer::bind(&layout, None).unwrap();
    assert!(!layout.mcp_json_path().exists());
}
