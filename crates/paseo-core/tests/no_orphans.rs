//! No orphans after a crash (SPEC 11): a runtime process with running shell agents and live
//! Claude Code and Codex sessions (the real CLIs against their stand-ins) is SIGKILLed; the
//! shell agents' process groups live on unsupervised; the next start on the same data root
//! stops every one of them (and only them), says how many, and no process of any of those
//! agents is left.

mod support;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use paseo_core::model::AgentId;
use paseo_core::runtime::RuntimeOptions;
use paseo_core::runtime::{CreateAgent, WorkspaceTarget};
use paseo_core::server::Runtime;
use support::cli::Clis;
use support::git::shell_runtime;
use support::Door;
use support::{agent_pids, alive, poll};

const CHILD_ENV: &str = "PASEO_ORPHAN_CHILD_HOME";
const AGENTS: usize = 2;

/// The child: a runtime with shell agents each running a little process tree; once they run it
/// writes their ids to `ready` and waits to be killed. Does nothing in a normal test run.
#[tokio::test]
async fn orphan_child_runtime() {
    let Ok(home) = std::env::var(CHILD_ENV) else {
        return;
    };
    let home = std::path::PathBuf::from(home);
    let work = home.with_extension("work");
    std::fs::create_dir_all(&work).unwrap();
    let clis = Clis::echoing().await;
    let rt = Runtime::start(RuntimeOptions::new(&home, clis.registry()), None)
        .await
        .unwrap();
    let h = rt.handle();
    let ws = h
        .add_workspace(work.display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id;
    let mut ids = Vec::new();
    for _ in 0..AGENTS {
        let mut r = CreateAgent::new(
            "shell",
            WorkspaceTarget::directory(work.display().to_string()),
        );
        r.initial_prompt = Some("sleep 600 & sleep 600; wait".into());
        ids.push(h.create(r).await.unwrap().id());
    }
    for id in &ids {
        poll("the agent's processes", || {
            (agent_pids(*id).len() >= 3).then_some(())
        })
        .await;
    }
    // Live sessions of the real CLIs, idle after a turn.
    for provider in ["claude", "codex"] {
        let a = h
            .create(support::cli::create(provider, &ws, "hello"))
            .await
            .unwrap();
        let w = h.wait(a.id(), Duration::from_secs(60)).await.unwrap();
        assert!(!w.timed_out, "{provider}");
        assert!(!agent_pids(a.id()).is_empty(), "{provider} runs");
        ids.push(a.id());
    }
    let list: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    // Written aside and renamed: the parent reads the file as soon as it exists, and a plain
    // write would let it read a part (it once found fewer ids than agents).
    let aside = home.with_extension("ready-tmp");
    std::fs::write(&aside, list.join("\n")).unwrap();
    std::fs::rename(&aside, home.with_extension("ready")).unwrap();
    tokio::time::sleep(Duration::from_secs(600)).await;
}

#[tokio::test]
async fn a_killed_runtimes_agent_processes_are_stopped_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ready = home.with_extension("ready");
    // A process that is not an agent's, in a group of its own: it must survive the cleanup.
    let bystander = Command::new("sleep")
        .arg("600")
        .process_group(0)
        .spawn()
        .unwrap();
    let bystander = Reaped(bystander);
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "orphan_child_runtime", "--nocapture"])
        .env(CHILD_ENV, &home)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    // Killed whatever happens: a failed assertion must not leave the runtime (and its agents)
    // running, holding the test's output open.
    let mut child = Reaped(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready.exists() {
        assert!(
            Instant::now() < deadline,
            "the child runtime never got ready"
        );
        assert!(
            child.0.try_wait().unwrap().is_none(),
            "the child runtime exited"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let ids: Vec<AgentId> = std::fs::read_to_string(&ready)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(ids.len(), AGENTS + 2);
    let (shells, clis) = ids.split_at(AGENTS);
    let pids: Vec<i32> = shells.iter().flat_map(|id| agent_pids(*id)).collect();
    assert!(pids.len() >= AGENTS * 3, "{pids:?}");
    let cli_pids: Vec<i32> = clis.iter().flat_map(|id| agent_pids(*id)).collect();
    assert!(!cli_pids.is_empty());

    // The crash: the runtime dies, its agents' processes do not.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // The shell agents' processes do not read stdin: they live on. (The CLIs may notice their
    // closed stdin and exit by themselves, or not; either way none may be left below.)
    assert!(
        pids.iter().all(|p| alive(*p)),
        "orphans before the next start"
    );

    let rt = shell_runtime(&home).await;
    let snap = rt.handle().snapshot().await.unwrap();
    assert!(
        snap.notices
            .iter()
            .any(|n| n.contains("agent process group") && n.starts_with("Stopped ")),
        "{:?}",
        snap.notices
    );
    poll("no process of the killed runtime's agents left", || {
        pids.iter()
            .chain(&cli_pids)
            .all(|p| !alive(*p))
            .then_some(())
    })
    .await;
    for id in &ids {
        assert!(agent_pids(*id).is_empty());
    }
    assert!(
        alive(bystander.0.id() as i32),
        "a process not an agent's is left alone"
    );
    rt.shutdown().await;
}

/// A child process killed and reaped when dropped.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
