//! SPEC 16 / SPEC 14 secrets: a token an agent prints reaches no timeline (file, memory or
//! event) and no record. A real shell agent, with its real MCP token from the real server,
//! runs `env` and echoes its token and the user's.

use super::*;
use crate::support::Door;
use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::providers::shell::ShellProvider;
use paseo_core::runtime::events::Event;

/// Every file under `dir`, with its bytes.
fn files_under(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.push((p, bytes));
        }
    }
}

#[tokio::test]
async fn a_token_a_shell_agent_prints_is_redacted_everywhere() {
    let env = Env::new();
    let home = env.home();
    let mut reg = ProviderRegistry::new();
    reg.insert(
        "shell",
        Arc::new(ShellProvider::new(
            "shell",
            ProviderConfig::new(ProviderKind::Shell),
        )),
    );
    let server = McpServer::bind(&Layout::new(&home), None).unwrap();
    let rt = Runtime::start(RuntimeOptions::new(&home, reg), Some(server.access()))
        .await
        .unwrap();
    let mcp = server.serve(rt.handle()).await.unwrap();
    let user = mcp.tokens().user_token().to_string();
    let h = rt.handle();
    let mut events = h.subscribe();
    // Where the agent leaves its token for the test to know it (outside the data root).
    let out = env.work.join("token.out");
    let prompt = format!(
        "printf %s \"$PASEO_MCP_TOKEN\" > '{}'; env; echo \"mine=$PASEO_MCP_TOKEN.\"; \
         echo \"user=$(cat '{}')\"; echo \"$PASEO_MCP_TOKEN\" >&2; exit 3",
        out.display(),
        home.join("mcp-token").display()
    );
    let mut req = CreateAgent::new(
        "shell",
        WorkspaceTarget::directory(env.work.display().to_string()),
    );
    req.initial_prompt = Some(prompt);
    // Unconfined, so it can read the user token at all: a contained agent cannot (SPEC 16,
    // tests/suite/containment.rs), and redaction must hold for the agents the user lets out too.
    req.unconfined = true;
    let id = h.create(req).await.unwrap().id();
    let done = h.wait(id, T).await.unwrap();
    assert!(!done.timed_out);
    let token = std::fs::read_to_string(&out).unwrap();
    assert_eq!(token.len(), 64, "the agent had its token: {token:?}");

    // In memory: the timeline the window pages, the record (last message, error).
    let items = h.timeline(id, 0, 5_000).await.unwrap();
    let shown = serde_json::to_string(&items).unwrap();
    assert!(shown.contains("PASEO_MCP_TOKEN=[redacted]"), "{shown}");
    assert!(shown.contains("mine=[redacted]."), "{shown}");
    assert!(shown.contains("user=[redacted]"), "{shown}");
    let snap = serde_json::to_string(&h.get(id).await.unwrap()).unwrap();
    assert!(
        snap.contains("[redacted]"),
        "the error's stderr tail: {snap}"
    );
    for text in [&shown, &snap] {
        assert!(!text.contains(&token), "agent token in {text}");
        assert!(!text.contains(&user), "user token in {text}");
    }
    // Every event the windows were sent.
    let mut sent = String::new();
    while let Ok(ev) = events.try_recv() {
        if matches!(ev, Event::TimelineItems { .. } | Event::AgentUpdated { .. }) {
            sent.push_str(&serde_json::to_string(&ev).unwrap());
        }
    }
    assert!(sent.contains("[redacted]"), "{sent}");
    assert!(!sent.contains(&token) && !sent.contains(&user), "{sent}");

    // On disk: the timeline, the record, anything else the app wrote (the user token's own
    // file aside).
    mcp.shutdown().await;
    rt.shutdown().await;
    let mut files = Vec::new();
    files_under(&home, &mut files);
    let timeline = files
        .iter()
        .find(|(p, _)| p.starts_with(home.join("timelines")))
        .expect("a timeline file");
    assert!(String::from_utf8_lossy(&timeline.1).contains("mine=[redacted]."));
    for (path, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(&token), "agent token in {}", path.display());
        if !path.ends_with("mcp-token") {
            assert!(!text.contains(&user), "user token in {}", path.display());
        }
    }
}
