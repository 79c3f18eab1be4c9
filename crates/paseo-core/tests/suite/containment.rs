//! Containment (SPEC 16) tried from inside real agents: a shell agent started by the runtime
//! (the same path every agent takes) attempts what a hostile agent would, and the app's own
//! git runs over a repository that agent planted commands in.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use paseo_core::config::{Config, EngineChoice, SandboxConfig};
use paseo_core::model::{AgentId, Status, WorkspaceId};
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{CreateAgent, RuntimeOptions, WorkspaceTarget};
use paseo_core::server::{Runtime, Server};
use support::eventually;
use support::Door;

/// A data root, a home with secrets, and a project an agent works in.
struct World {
    _dir: tempfile::TempDir,
    data: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (data, home) = (root.join("paseo-home"), root.join("home"));
    let project = home.join("src/app");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE-KEY-BYTES").unwrap();
    World {
        _dir: dir,
        data,
        home,
        project,
    }
}

async fn start(w: &World, sandbox: SandboxConfig) -> Runtime {
    let mut opts = RuntimeOptions::new(&w.data, ProviderRegistry::from_config(&Config::default()));
    opts.sandbox = SandboxConfig {
        hide: vec![w.home.join(".ssh").display().to_string()],
        ..sandbox
    };
    let rt = Runtime::start(opts, None).await.unwrap();
    rt.handle.deliver_pending().await.unwrap();
    rt
}

async fn workspace(h: &Server, dir: &Path) -> WorkspaceId {
    h.add_workspace(dir.display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id
}

/// Runs `script` as a shell agent's first turn in `dir` and returns its status and output.
async fn run_agent(h: &Server, ws: &WorkspaceId, script: &str) -> (AgentId, Status, String) {
    let mut req = CreateAgent::new("shell", WorkspaceTarget::existing(ws.clone()));
    req.initial_prompt = Some(script.to_string());
    let id = h.create(req).await.unwrap().record.id;
    let r = h.wait(id, Duration::from_secs(30)).await.unwrap();
    assert!(!r.timed_out, "the turn ended");
    (
        id,
        r.agent.status,
        r.agent.record.last_message.clone().unwrap_or_default(),
    )
}

/// Both engines: bubblewrap, and Landlock where user namespaces are off.
const ENGINES: [EngineChoice; 2] = [EngineChoice::Bubblewrap, EngineChoice::Landlock];

fn with(engine: EngineChoice) -> SandboxConfig {
    SandboxConfig {
        engine,
        ..SandboxConfig::default()
    }
}

#[tokio::test]
async fn an_agent_cannot_read_the_user_token_the_secrets_or_other_processes() {
    for engine in ENGINES {
        cannot_read(engine).await;
    }
}

async fn cannot_read(engine: EngineChoice) {
    let w = world();
    let rt = start(&w, with(engine)).await;
    let h = rt.handle();
    // The MCP user token as the app keeps it (this test starts no MCP server).
    std::fs::write(w.data.join("mcp-token"), "USER-TOKEN-VALUE").unwrap();
    let ws = workspace(&h, &w.project).await;
    // Another agent's process outside this one's box, a token in its environment.
    let mut other = std::process::Command::new("sleep")
        .arg("60")
        .env("PASEO_MCP_TOKEN", "OTHER-AGENT-TOKEN")
        .spawn()
        .unwrap();
    std::os::unix::fs::symlink(w.home.join(".ssh"), w.project.join("keys")).unwrap();
    let script = format!(
        "cat '{data}/mcp-token'; cat '{home}/.ssh/id_ed25519'; cat keys/id_ed25519; \
         cat /proc/{pid}/environ; ls '{data}/agents' | head; echo done",
        data = w.data.display(),
        home = w.home.display(),
        pid = other.id(),
    );
    let said = h.snapshot().await.unwrap().containment;
    let name = match engine {
        EngineChoice::Landlock => "landlock",
        _ => "bubblewrap",
    };
    assert_eq!((said.state, said.engine), ("on", Some(name)));
    let (id, _, out) = run_agent(&h, &ws, &script).await;
    assert!(out.contains("done"), "{engine:?}: {out}");
    assert!(!h.get(id).await.unwrap().unconfined, "shown contained");
    for secret in ["USER-TOKEN-VALUE", "PRIVATE-KEY-BYTES"] {
        assert!(!out.contains(secret), "{engine:?} read {secret}: {out}");
    }
    // Another process's environment: bubblewrap's own PID namespace hides it; Landlock does
    // not on this kernel (docs/security.md says so of the fallback).
    if engine == EngineChoice::Bubblewrap {
        assert!(!out.contains("OTHER-AGENT-TOKEN"), "{engine:?}: {out}");
    }
    let _ = other.kill();
    let _ = other.wait();
    rt.shutdown().await;
}

#[tokio::test]
async fn an_agent_writes_its_cwd_and_nothing_outside_it() {
    for engine in ENGINES {
        writes_only_its_cwd(engine).await;
    }
}

async fn writes_only_its_cwd(engine: EngineChoice) {
    let w = world();
    let rt = start(&w, with(engine)).await;
    let h = rt.handle();
    let ws = workspace(&h, &w.project).await;
    std::os::unix::fs::symlink(&w.home, w.project.join("up")).unwrap();
    let script = format!(
        "echo mine > mine.txt; echo x > '{home}/planted'; echo x > up/via-link; \
         echo '{{}}' > '{data}/config.json'; echo x > \"$TMPDIR/scratch\" && echo tmp-ok",
        home = w.home.display(),
        data = w.data.display(),
    );
    let (_, _, out) = run_agent(&h, &ws, &script).await;
    assert!(
        out.contains("tmp-ok"),
        "{engine:?}: a private temp folder works: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(w.project.join("mine.txt")).unwrap(),
        "mine\n"
    );
    for planted in [
        w.home.join("planted"),
        w.home.join("via-link"),
        w.data.join("config.json"),
    ] {
        assert!(!planted.exists(), "{engine:?} wrote {planted:?}: {out}");
    }
    rt.shutdown().await;
}

/// Commands in the repository's own config that git runs for `add`: a clean filter, an
/// fsmonitor and a hook. Each, if run, leaves a marker in the agent's own tree (where even a
/// boxed command could write), so the test sees the guard, not only the box.
fn plant(project: &Path) -> Vec<PathBuf> {
    let marks: Vec<PathBuf> = ["filter", "fsmonitor", "hook"]
        .iter()
        .map(|m| project.join(format!("ran-{m}")))
        .collect();
    let script = format!(
        "set -e; git init -q; \
         git config filter.x.clean 'sh -c \"touch {f}; cat\"'; git config filter.x.required true; \
         git config core.fsmonitor '{p}/fsm.sh'; printf '#!/bin/sh\\ntouch {m}\\n' > fsm.sh; \
         chmod +x fsm.sh; \
         printf '#!/bin/sh\\ntouch {k}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
         echo '* filter=x' > .gitattributes; echo hello > a.txt",
        f = marks[0].display(),
        p = project.display(),
        m = marks[1].display(),
        k = marks[2].display(),
    );
    let ok = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(project)
        .status()
        .unwrap();
    assert!(ok.success());
    marks
}

#[tokio::test]
async fn git_the_app_runs_in_an_agent_tree_runs_nothing_the_agent_planted() {
    let w = world();
    let rt = start(&w, SandboxConfig::default()).await;
    let h = rt.handle();
    let ws = workspace(&h, &w.project).await;
    // The agent plants its commands in its own turn and ends it without running git again:
    // then the app counts its changes (after every turn) and the user opens Changes.
    let marks = plant(&w.project);
    let (id, status, out) = run_agent(&h, &ws, "echo more > b.txt").await;
    assert_eq!(status, Status::Idle, "{out}");
    let changes = h.agent_changes(id).await.unwrap();
    assert!(
        changes.changes.files.iter().any(|f| f.path == "a.txt"),
        "git still sees the work: {:?}",
        changes.changes.files
    );
    // The count after the turn ran too (it is what the track row shows).
    eventually(Duration::from_secs(10), || async {
        match h.get(id).await.unwrap().changes {
            Some(c) => Ok(c),
            None => Err("no change count yet".to_string()),
        }
    })
    .await;
    for m in &marks {
        assert!(!m.exists(), "the app ran what the agent planted: {m:?}");
    }
    rt.shutdown().await;
}

#[tokio::test]
async fn containment_off_is_the_users_choice_and_then_nothing_is_boxed() {
    let w = world();
    let rt = start(
        &w,
        SandboxConfig {
            enabled: false,
            ..SandboxConfig::default()
        },
    )
    .await;
    let h = rt.handle();
    let ws = workspace(&h, &w.project).await;
    let script = format!("cat '{}/.ssh/id_ed25519'", w.home.display());
    let (id, _, out) = run_agent(&h, &ws, &script).await;
    assert!(out.contains("PRIVATE-KEY-BYTES"), "{out}");
    // What the window shows beside its power, by the same rule the spawn followed.
    assert!(h.get(id).await.unwrap().unconfined);
    rt.shutdown().await;
}

#[tokio::test]
async fn an_unconfined_agent_is_the_users_choice() {
    let w = world();
    let rt = start(&w, SandboxConfig::default()).await;
    let h = rt.handle();
    let ws = workspace(&h, &w.project).await;
    let mut req = CreateAgent::new("shell", WorkspaceTarget::existing(ws.clone()));
    req.unconfined = true;
    req.initial_prompt = Some(format!("cat '{}/.ssh/id_ed25519'", w.home.display()));
    let id = h.create(req).await.unwrap().record.id;
    let r = h.wait(id, Duration::from_secs(30)).await.unwrap();
    let out = r.agent.record.last_message.clone().unwrap_or_default();
    assert!(out.contains("PRIVATE-KEY-BYTES"), "{out}");
    let snap = h.get(id).await.unwrap();
    assert!(snap.record.config.unconfined && snap.unconfined);
    rt.shutdown().await;
}

#[tokio::test]
async fn a_hook_an_agent_plants_does_not_run_in_the_snapshot_before_its_worktree_goes() {
    use paseo_core::workspaces::worktree::WorktreeTarget;
    let w = world();
    let repo = w.home.join("src/repo");
    support::git::init_repo(&repo);
    let rt = start(&w, SandboxConfig::default()).await;
    let h = rt.handle();
    // The agent works in a worktree of the repository; its git dirs are writable to it, so it
    // plants hooks there, and leaves work for the snapshot to commit when it is archived.
    let marker = repo.join(".git/hook-ran");
    // A hook planted before the box kept hooks read-only (by an earlier version's agent):
    // the app's own git still runs none.
    let planted = repo.join(".git/hooks/pre-commit");
    std::fs::write(&planted, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(
        &planted,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let script = format!(
        "for hook in pre-commit commit-msg post-commit reference-transaction; do \
           printf '#!/bin/sh\\ntouch {m}\\n' > \"$(git rev-parse --git-common-dir)/hooks/$hook\"; \
           chmod +x \"$(git rev-parse --git-common-dir)/hooks/$hook\"; \
         done; echo left > left.txt; echo planted",
        m = marker.display()
    );
    let mut req = CreateAgent::new(
        "shell",
        WorkspaceTarget::worktree(
            Some(repo.display().to_string()),
            WorktreeTarget::branch_off("planted", None),
        ),
    );
    req.initial_prompt = Some(script);
    req.auto_archive = true;
    let a = h.create(req).await.unwrap();
    let path = PathBuf::from(a.record.cwd.as_str());
    // autoArchive: the turn ends, the snapshot is committed, the worktree goes to the trash.
    eventually(Duration::from_secs(30), || async {
        let listed = support::git::git(&repo, &["worktree", "list"]);
        if !path.exists() && listed.lines().count() == 1 {
            Ok(())
        } else {
            Err(format!("worktree still there: {listed}"))
        }
    })
    .await;
    // The hooks folder is read-only in the box (SPEC 16b): the agent planted nothing.
    assert!(
        !repo.join(".git/hooks/commit-msg").exists(),
        "the agent planted a hook"
    );
    let log = support::git::git(&repo, &["log", "-1", "--format=%s", "planted"]);
    assert!(log.starts_with("Paseo: work left in"), "{log}");
    let files = support::git::git(&repo, &["show", "--name-only", "--format=", "planted"]);
    assert!(files.contains("left.txt"), "{files}");
    assert!(!marker.exists(), "the app ran a hook the agent planted");
    rt.shutdown().await;
}
