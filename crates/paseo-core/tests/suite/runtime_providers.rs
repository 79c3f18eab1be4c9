//! The runtime with the real providers: an agent of each provider runs a turn end to end,
//! archive kills its whole process tree, and a restart followed by a prompt resumes the same
//! provider session (claude, codex).

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::model::{ItemKind, Status, WorkspaceId};
use paseo_core::providers::command::CommandProvider;
use paseo_core::runtime::Caller;
use paseo_core::runtime::{RuntimeOptions, WaitResult};
use paseo_core::server::{Runtime, Server};
use support::cli::{create, Clis};
use support::*;

const T: Duration = Duration::from_secs(60);

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

    async fn start(&self) -> Runtime {
        let mut registry = self.clis.registry();
        let echo = ProviderConfig {
            command: Some(vec![
                "/bin/sh".into(),
                "-c".into(),
                "echo \"cmd: $1\"".into(),
                "sh".into(),
                "{prompt}".into(),
            ]),
            ..ProviderConfig::new(ProviderKind::Command)
        };
        registry.insert("echo-cmd", Arc::new(CommandProvider::new("echo-cmd", echo)));
        let rt = Runtime::start(RuntimeOptions::new(self.home.path(), registry), None)
            .await
            .unwrap();
        rt.handle.deliver_pending().await.unwrap();
        rt
    }
}

impl Fixture {
    /// A running runtime with the fixture's work dir as a workspace.
    async fn with_workspace(&self) -> (Runtime, Server, WorkspaceId) {
        let rt = self.start().await;
        let h = rt.handle();
        let w = h
            .add_workspace(self.work.path().display().to_string())
            .await
            .unwrap()
            .record
            .workspace_id;
        (rt, h, w)
    }
}

/// The record file of agent `id` under the data root `home`.
fn record_file(home: &std::path::Path, id: paseo_core::model::AgentId) -> std::path::PathBuf {
    let name = format!("{id}.json");
    std::fs::read_dir(home.join("agents"))
        .unwrap()
        .map(|d| d.unwrap().path().join(&name))
        .find(|p| p.exists())
        .unwrap()
}

/// The agent is idle after its turn; says which provider and why not otherwise.
fn assert_idle(provider: &str, r: &WaitResult) {
    assert!(!r.timed_out, "{provider} timed out");
    assert_eq!(
        r.agent.status,
        Status::Idle,
        "{provider}: {:?}",
        r.agent.record.last_error
    );
}

/// The provider session id the agent's record keeps for resume.
fn session_id(r: WaitResult) -> String {
    r.agent
        .record
        .persistence
        .and_then(|x| x.session_id)
        .expect("session id")
}

#[tokio::test]
async fn every_provider_runs_a_turn_end_to_end_through_the_runtime() {
    let f = Fixture::new().await;
    let (rt, h, w) = f.with_workspace().await;
    for (provider, prompt, want) in [
        ("shell", "echo shell-ok", "shell-ok"),
        ("echo-cmd", "hello", "cmd: hello"),
        ("claude", "hello claude", "claude says: hello claude"),
        ("codex", "hello codex", "codex says: hello codex"),
    ] {
        let a = h.create(create(provider, &w, prompt)).await.unwrap();
        let r = h.wait(a.id(), T).await.unwrap();
        assert_idle(provider, &r);
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
    let (rt, h, w) = f.with_workspace().await;
    let pidfile = f.work.path().join("grandchild.pid");
    let script = format!(
        "sh -c 'sleep 300 & echo $! > {}; wait' & sleep 300",
        pidfile.display()
    );
    let a = h.create(create("shell", &w, &script)).await.unwrap();
    let grandchild = host_pid(a.id(), read_pid(&pidfile).await);
    let pids = agent_pids(a.id());
    assert!(!pids.is_empty());
    assert!(alive(grandchild));
    let archived = h.archive(Caller::User, a.id()).await.unwrap();
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
    let mut fresh = Vec::new();
    {
        let (rt, h, w) = f.with_workspace().await;
        for p in ["claude", "codex"] {
            let a = h
                .create(create(p, &w, &format!("remember the word banana-{p}")))
                .await
                .unwrap();
            let r = h.wait(a.id(), T).await.unwrap();
            assert_idle(p, &r);
            ids.push((p, a.id(), session_id(r)));
        }
        for p in ["claude", "codex"] {
            let a = h.create(create(p, &w, "say hi")).await.unwrap();
            assert_idle(p, &h.wait(a.id(), T).await.unwrap());
            fresh.push((p, a.id()));
        }
        rt.shutdown().await;
    }
    // Records as upstream can leave them: with a system prompt, and (the `fresh` ones) no
    // session to resume. The restarted app loads each at rest (the prompt left in its file)
    // and reads the prompt back when a session starts. (A resumed CLI session keeps the
    // instructions it began with: only a new one shows the prompt to the model.)
    let pirate = |p: &str| format!("Answer like a pirate, {p} agent.");
    for (p, id, fresh) in ids
        .iter()
        .map(|(p, id, _)| (p, id, false))
        .chain(fresh.iter().map(|(p, id)| (p, id, true)))
    {
        let file = record_file(f.home.path(), *id);
        let mut rec: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        rec["config"]["systemPrompt"] = pirate(p).into();
        if fresh {
            rec.as_object_mut().unwrap().remove("persistence");
        }
        std::fs::write(&file, serde_json::to_vec_pretty(&rec).unwrap()).unwrap();
    }
    let rt = f.start().await;
    let h = rt.handle();
    for (p, id, sid) in &ids {
        assert_eq!(h.get(*id).await.unwrap().status, Status::Closed);
        h.prompt(Caller::User, *id, "what was the word?".into(), None, None)
            .await
            .unwrap();
        let r = h.wait(*id, T).await.unwrap();
        assert_idle(p, &r);
        assert_eq!(&session_id(r), sid, "{p} resumed another session");
    }
    // The model received the earlier conversation with the new prompt: the session resumed.
    let last = f.clis.claude.requests().last().unwrap().body.to_string();
    assert!(last.contains("banana-claude"), "claude history lost");
    let last = f.clis.codex.requests().last().unwrap().body.to_string();
    assert!(last.contains("banana-codex"), "codex history lost");
    for (p, id) in &fresh {
        h.prompt(Caller::User, *id, "who are you?".into(), None, None)
            .await
            .unwrap();
        assert_idle(p, &h.wait(*id, T).await.unwrap());
        let last = match *p {
            "claude" => f.clis.claude.requests().last().unwrap().body.to_string(),
            _ => f.clis.codex.requests().last().unwrap().body.to_string(),
        };
        assert!(
            last.contains("who are you?"),
            "{p}: not the new session's request"
        );
        assert!(
            last.contains(&pirate(p)),
            "{p} was not given its system prompt"
        );
    }
    h.flush().await;
    for (p, id) in ids
        .iter()
        .map(|(p, id, _)| (p, id))
        .chain(fresh.iter().map(|(p, id)| (p, id)))
    {
        let rec: serde_json::Value =
            serde_json::from_slice(&std::fs::read(record_file(f.home.path(), *id)).unwrap())
                .unwrap();
        assert_eq!(
            rec["config"]["systemPrompt"],
            pirate(p),
            "{p}'s record lost it"
        );
    }
    rt.shutdown().await;
}
