//! The runtime with the real providers: an agent of each provider runs a turn end to end,
//! archive kills its whole process tree, and a restart followed by a prompt resumes the same
//! provider session (claude, codex).

mod support;

use std::sync::Arc;
use std::time::Duration;

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::model::{ItemKind, Status, TurnOrigin, WorkspaceId};
use paseo_core::providers::claude::ClaudeProvider;
use paseo_core::providers::codex::CodexProvider;
use paseo_core::providers::command::CommandProvider;
use paseo_core::providers::shell::ShellProvider;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{CreateAgent, Runtime, RuntimeHandle, RuntimeOptions, WorkspaceTarget};
use support::anthropic::{AnthropicStandIn, Input, Reply};
use support::openai::{self, OpenAiStandIn};
use support::*;

const T: Duration = Duration::from_secs(60);

struct Fixture {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    cli_home: tempfile::TempDir,
    claude_api: AnthropicStandIn,
    codex_api: OpenAiStandIn,
}

impl Fixture {
    async fn new() -> Fixture {
        Fixture {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            cli_home: tempfile::tempdir().unwrap(),
            claude_api: AnthropicStandIn::start(|req| match req.input() {
                Input::Text(t) => Reply::text(format!("claude says: {t}")),
                Input::ToolResult { content, .. } => Reply::text(format!("tool said {content}")),
            })
            .await,
            codex_api: OpenAiStandIn::start(|req| match req.input() {
                openai::Input::Text(t) => openai::Reply::text(format!("codex says: {t}")),
                other => openai::Reply::text(format!("got {other:?}")),
            })
            .await,
        }
    }

    fn registry(&self) -> ProviderRegistry {
        let mut r = ProviderRegistry::new();
        r.insert(
            "shell",
            Arc::new(ShellProvider::new(
                "shell",
                ProviderConfig::new(ProviderKind::Shell),
            )),
        );
        r.insert(
            "echo-cmd",
            Arc::new(CommandProvider::new(
                "echo-cmd",
                ProviderConfig {
                    command: Some(vec![
                        "/bin/sh".into(),
                        "-c".into(),
                        "echo \"cmd: $1\"".into(),
                        "sh".into(),
                        "{prompt}".into(),
                    ]),
                    ..ProviderConfig::new(ProviderKind::Command)
                },
            )),
        );
        r.insert(
            "claude",
            Arc::new(ClaudeProvider::new(
                "claude",
                ProviderConfig {
                    command: Some(vec![agent_cli("claude").display().to_string()]),
                    env: self.claude_api.claude_env(self.cli_home.path()),
                    ..ProviderConfig::new(ProviderKind::Claude)
                },
            )),
        );
        let mut codex = vec![agent_cli("codex").display().to_string()];
        codex.extend(self.codex_api.codex_args());
        r.insert(
            "codex",
            Arc::new(CodexProvider::new(
                "codex",
                ProviderConfig {
                    command: Some(codex),
                    env: self.codex_api.codex_env(self.cli_home.path()),
                    ..ProviderConfig::new(ProviderKind::Codex)
                },
            )),
        );
        r
    }

    async fn start(&self) -> Runtime {
        let rt = Runtime::start(RuntimeOptions::new(self.home.path(), self.registry()), None)
            .await
            .unwrap();
        rt.handle.deliver_pending().await.unwrap();
        rt
    }
}

async fn ws(h: &RuntimeHandle, f: &Fixture) -> WorkspaceId {
    h.add_workspace(f.work.path().display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id
}

fn create(provider: &str, ws: &WorkspaceId, prompt: &str) -> CreateAgent {
    let mut c = CreateAgent::new(
        provider,
        WorkspaceTarget::Existing {
            id: ws.clone(),
            cwd: None,
        },
    );
    c.initial_prompt = Some(prompt.into());
    if provider == "claude" || provider == "codex" {
        c.model = Some(if provider == "claude" {
            "standin-model".into()
        } else {
            openai::MODEL.into()
        });
    }
    c
}

#[tokio::test]
async fn every_provider_runs_a_turn_end_to_end_through_the_runtime() {
    let f = Fixture::new().await;
    let rt = f.start().await;
    let h = rt.handle();
    let w = ws(&h, &f).await;
    for (provider, prompt, want) in [
        ("shell", "echo shell-ok", "shell-ok"),
        ("echo-cmd", "hello", "cmd: hello"),
        ("claude", "hello claude", "claude says: hello claude"),
        ("codex", "hello codex", "codex says: hello codex"),
    ] {
        let a = h.create(create(provider, &w, prompt)).await.unwrap();
        let r = h.wait(a.id(), T).await.unwrap();
        assert!(!r.timed_out, "{provider} timed out");
        assert_eq!(
            r.agent.status,
            Status::Idle,
            "{provider}: {:?}",
            r.agent.record.last_error
        );
        assert!(
            r.agent
                .record
                .last_message
                .as_deref()
                .unwrap_or("")
                .contains(want),
            "{provider}: {:?}",
            r.agent.record.last_message
        );
        let items = h.timeline(a.id(), 0, 100).await.unwrap();
        assert_eq!(items[0].kind, ItemKind::User, "{provider}");
        assert!(
            items.iter().any(|i| i.text.contains(want)),
            "{provider}: {items:?}"
        );
    }
    rt.shutdown().await;
}

#[tokio::test]
async fn archive_kills_the_whole_process_tree() {
    let f = Fixture::new().await;
    let rt = f.start().await;
    let h = rt.handle();
    let w = ws(&h, &f).await;
    let pidfile = f.work.path().join("grandchild.pid");
    let script = format!(
        "sh -c 'sleep 300 & echo $! > {}; wait' & sleep 300",
        pidfile.display()
    );
    let a = h.create(create("shell", &w, &script)).await.unwrap();
    let grandchild = read_pid(&pidfile).await;
    let pids = agent_pids(a.id());
    assert!(!pids.is_empty());
    assert!(alive(grandchild));
    let archived = h.archive(a.id()).await.unwrap();
    assert_eq!(archived, vec![a.id()]);
    // `archive` returns once the tree is gone.
    assert!(!alive(grandchild), "grandchild {grandchild} survived");
    for p in pids {
        assert!(!alive(p), "process {p} survived");
    }
    assert!(agent_pids(a.id()).is_empty());
    rt.shutdown().await;
}

#[tokio::test]
async fn restart_then_prompt_resumes_the_same_claude_and_codex_sessions() {
    let f = Fixture::new().await;
    let mut ids = Vec::new();
    {
        let rt = f.start().await;
        let h = rt.handle();
        let w = ws(&h, &f).await;
        for p in ["claude", "codex"] {
            let a = h
                .create(create(p, &w, &format!("remember the word banana-{p}")))
                .await
                .unwrap();
            let r = h.wait(a.id(), T).await.unwrap();
            assert_eq!(
                r.agent.status,
                Status::Idle,
                "{p}: {:?}",
                r.agent.record.last_error
            );
            let sid = r
                .agent
                .record
                .persistence
                .and_then(|x| x.session_id)
                .expect("session id");
            ids.push((p, a.id(), sid));
        }
        rt.shutdown().await;
    }
    let rt = f.start().await;
    let h = rt.handle();
    for (p, id, sid) in &ids {
        assert_eq!(h.get(*id).await.unwrap().status, Status::Closed);
        h.prompt(*id, "what was the word?".into(), TurnOrigin::User, None)
            .await
            .unwrap();
        let r = h.wait(*id, T).await.unwrap();
        assert_eq!(
            r.agent.status,
            Status::Idle,
            "{p}: {:?}",
            r.agent.record.last_error
        );
        let sid2 = r
            .agent
            .record
            .persistence
            .and_then(|x| x.session_id)
            .unwrap();
        assert_eq!(&sid2, sid, "{p} resumed another session");
    }
    // The model received the earlier conversation with the new prompt: the session resumed.
    let last = f.claude_api.requests().last().unwrap().body.to_string();
    assert!(last.contains("banana-claude"), "claude history lost");
    let last = f.codex_api.requests().last().unwrap().body.to_string();
    assert!(last.contains("banana-codex"), "codex history lost");
    rt.shutdown().await;
}
