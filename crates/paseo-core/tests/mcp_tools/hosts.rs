//! Hosts (SPEC 17) from the MCP side, without a host to reach: only the user's token names a
//! host; an agent's is refused, so an agent never escapes its containment to another machine
//! (SPEC 14/16). The hosts' requests (list, add, remove) edit config.json. The whole way to a
//! real host over ssh is in the workspace's `tests/hosts_app.rs`.

use super::*;
use paseo_core::api::{Request, Response};
use paseo_core::hosts::{Host, HostState};

fn create_on(h: &Harness, host: &str) -> Value {
    json!({"provider": "script", "initialPrompt": "ok there",
        "relationship": {"kind": "detached"},
        "workspace": {"kind": "create", "source": {"kind": "directory", "path": h.env.work.display().to_string()}},
        "host": host})
}

#[tokio::test]
async fn an_agent_token_naming_a_host_is_refused_and_nothing_is_created() {
    let h = Harness::start().await;
    let lead = h.root("ok lead").await;
    let agent = h.as_agent(lead.id()).await;
    let before = h.count(true).await;
    // The host exists: the refusal is about who asks, not about the name.
    h.h()
        .call(
            Caller::User,
            Request::AddHost(paseo_core::api::verbs::AddHost {
                host: Host {
                    name: "box".into(),
                    ssh: "box.invalid".into(),
                    command: None,
                },
            }),
        )
        .await
        .unwrap();
    let e = err(&agent, "create_agent", create_on(&h, "box")).await;
    assert!(
        e.starts_with(&format!(
            "host: agent {} may not reach another machine",
            lead.id()
        )),
        "{e}"
    );
    let e = err(&agent, "list_agents", json!({"host": "box"})).await;
    assert!(e.starts_with("host: agent"), "{e}");
    assert!(e.contains("may not reach another machine"), "{e}");
    // The hosts' own requests are the user's.
    let refused = h
        .h()
        .call(
            Caller::Agent(lead.id()),
            Request::ListHosts(paseo_core::api::verbs::ListHosts {}),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "forbidden");
    assert_eq!(h.count(true).await, before, "nothing was created");
    // An agent's list is its own machine's, without `host` on the entries.
    let listed = ok(&agent, "list_agents", json!({})).await;
    assert!(listed["agents"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a.get("host").is_none()));
    h.stop().await;
}

#[tokio::test]
async fn the_user_naming_a_host_that_is_not_configured_gets_invalid_naming_host() {
    let h = Harness::start().await;
    let user = h.user().await;
    let before = h.count(true).await;
    let e = err(&user, "create_agent", create_on(&h, "nowhere")).await;
    assert!(
        e.starts_with("host: no host is named \"nowhere\" in config.json"),
        "{e}"
    );
    let e = err(&user, "list_agents", json!({"host": "nowhere"})).await;
    assert!(e.starts_with("host: no host is named"), "{e}");
    assert_eq!(h.count(true).await, before);
    h.stop().await;
}

#[tokio::test]
async fn hosts_are_added_listed_and_removed_in_config_json_with_their_state() {
    let h = Harness::start().await;
    let config = h.env.home().join("config.json");
    std::fs::write(&config, r#"{"mcp": {"port": 0}}"#).unwrap();
    let hosts = |r: Response| match r {
        Response::Hosts(hosts) => hosts,
        other => panic!("{other:?}"),
    };
    assert!(hosts(
        h.h()
            .call(
                Caller::User,
                Request::ListHosts(paseo_core::api::verbs::ListHosts {})
            )
            .await
            .unwrap()
    )
    .is_empty());
    // Bad input names the field and writes nothing.
    for (bad, field) in [
        (
            Host {
                name: "b".into(),
                ssh: "-oProxyCommand=x".into(),
                command: None,
            },
            "host.ssh",
        ),
        (
            Host {
                name: " ".into(),
                ssh: "b".into(),
                command: None,
            },
            "host.name",
        ),
    ] {
        let e = h
            .h()
            .call(
                Caller::User,
                Request::AddHost(paseo_core::api::verbs::AddHost { host: bad }),
            )
            .await
            .unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid", Some(field)), "{e}");
    }
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        r#"{"mcp": {"port": 0}}"#
    );
    // A host no ssh can reach: added, written, and failing with ssh's own reason.
    let added = hosts(
        h.h()
            .call(
                Caller::User,
                Request::AddHost(paseo_core::api::verbs::AddHost {
                    host: Host {
                        name: "gone".into(),
                        ssh: "gone.invalid".into(),
                        command: None,
                    },
                }),
            )
            .await
            .unwrap(),
    );
    assert_eq!(added.len(), 1);
    let written = paseo_core::config::Config::load(&h.env.home()).unwrap();
    assert_eq!(written.hosts[0].ssh, "gone.invalid");
    assert_eq!(written.mcp.port, Some(0), "the rest of the file is kept");
    let e = h
        .h()
        .call(
            Caller::User,
            Request::AddHost(paseo_core::api::verbs::AddHost {
                host: Host {
                    name: "gone".into(),
                    ssh: "other".into(),
                    command: None,
                },
            }),
        )
        .await
        .unwrap_err();
    assert_eq!(
        (e.code(), e.field()),
        ("conflict", Some("host.name")),
        "{e}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let state = loop {
        let listed = hosts(
            h.h()
                .call(
                    Caller::User,
                    Request::ListHosts(paseo_core::api::verbs::ListHosts {}),
                )
                .await
                .unwrap(),
        );
        if let HostState::Failed { .. } = listed[0].state {
            break listed[0].state.clone();
        }
        assert!(std::time::Instant::now() < deadline, "{listed:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let HostState::Failed {
        error,
        install_helps,
        ..
    } = state
    else {
        unreachable!()
    };
    assert!(error.contains("gone.invalid"), "{error}");
    assert!(
        !install_helps,
        "installing does not fix a name ssh cannot resolve"
    );
    // Its agent ids are nobody's: a request for an unknown id stays this machine's.
    let e = err(
        &h.user().await,
        "get_agent",
        json!({"agentId": AgentId::new().to_string()}),
    )
    .await;
    assert!(e.contains("not found") || e.contains("unknown"), "{e}");
    let left = hosts(
        h.h()
            .call(
                Caller::User,
                Request::RemoveHost(paseo_core::api::verbs::RemoveHost {
                    name: "gone".into(),
                }),
            )
            .await
            .unwrap(),
    );
    assert!(left.is_empty());
    assert!(paseo_core::config::Config::load(&h.env.home())
        .unwrap()
        .hosts
        .is_empty());
    let e = h
        .h()
        .call(
            Caller::User,
            Request::RemoveHost(paseo_core::api::verbs::RemoveHost {
                name: "gone".into(),
            }),
        )
        .await
        .unwrap_err();
    assert_eq!(e.field(), Some("host"), "{e}");
    h.stop().await;
}
