//! Lifecycle gaps found by an audit (SPEC 4, 5, 15): an archive announced only once durable, the
//! finish notice of an agent's background prompt, inboxes of quarantined parents, worktrees of
//! failed creates, and unknown keys of the workspace registry.

use crate::support;

use std::time::{Duration, Instant};

use paseo_core::model::{AgentId, Status, TurnInput};
use paseo_core::runtime::{AgentSnapshot, Caller, CreateAgent, Event, WorkspaceTarget};
use paseo_core::server::Server;
use support::scripted::{req, workspace, Env};
use support::Door;

const T: Duration = Duration::from_secs(10);

fn on_disk(h: &Server, a: &AgentSnapshot) -> serde_json::Value {
    let p = h.layout().record_path(&a.record.cwd, a.id());
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Windows close an agent's tabs on `AgentArchived`: it must not go out while the archived
/// record is not on disk (SPEC 1, 5). A record path the writer cannot replace (a directory in
/// its way) holds the write back; the event comes only once the write lands.
#[tokio::test]
async fn an_archive_is_announced_only_once_its_record_is_durable() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let a = h.create(req(&ws, "ok hello")).await.unwrap();
    h.wait(a.id(), T).await.unwrap();
    // The turn's last record write may still be on its way: a rename landing after the blocker
    // is made would fail the setup, not the rule.
    h.flush().await;
    let path = h.layout().record_path(&a.record.cwd, a.id());
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("blocker"), b"x").unwrap();

    let mut rx = h.subscribe();
    let h2 = h.clone();
    let id = a.id();
    let call = tokio::spawn(async move { h2.archive(Caller::User, id).await });
    // While the write fails, the archive is not announced.
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        match tokio::time::timeout(Duration::from_millis(100), rx.recv()).await {
            Ok(Ok(Event::AgentArchived { agent })) if agent.id() == id => {
                panic!("AgentArchived went out before the record was durable")
            }
            _ => {}
        }
    }
    // The caller is told the write failed.
    let r = tokio::time::timeout(T, call).await.unwrap().unwrap();
    assert!(r.is_err(), "{r:?}");
    // The writer retries; once it lands, the archive is announced, and it is on disk then.
    std::fs::remove_dir_all(&path).unwrap();
    let deadline = Instant::now() + T;
    loop {
        let ev = tokio::time::timeout_at(deadline.into(), rx.recv())
            .await
            .expect("AgentArchived once the record landed")
            .unwrap();
        if let Event::AgentArchived { agent } = ev {
            if agent.id() == id {
                assert!(on_disk(&h, &a)["archivedAt"].is_string());
                break;
            }
        }
    }
    rt.shutdown().await;
}

fn notices_to(env: &Env, parent: AgentId, about: AgentId) -> usize {
    env.log
        .lock()
        .unwrap()
        .inputs
        .iter()
        .filter(|(to, input)| {
            *to == parent && matches!(input, TurnInput::Notice(t) if t.contains(&about.to_string()))
        })
        .count()
}

/// An agent's background `send_agent_prompt` notifies it once when the turn ends (the default);
/// a foreground one does not (the caller already has the answer).
#[tokio::test]
async fn an_agents_background_prompt_notifies_once_and_a_foreground_one_does_not() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let lead = h.create(req(&ws, "ok lead")).await.unwrap();
    h.wait(lead.id(), T).await.unwrap();
    let mut k = req(&ws, "ok kid");
    k.caller = Caller::Agent(lead.id());
    k.subagent = true;
    k.notify_on_finish = Some(false);
    let kid = h.create(k).await.unwrap();
    h.wait(kid.id(), T).await.unwrap();
    assert_eq!(notices_to(&env, lead.id(), kid.id()), 0);

    let sent = h
        .prompt(
            Caller::Agent(lead.id()),
            kid.id(),
            "ok in the background".into(),
            None,
            None,
        )
        .await
        .unwrap();
    assert!(sent.background, "background is the default for an agent");
    assert_eq!(sent.notify, Some(lead.id()));
    support::poll("one notice to the lead", || {
        (notices_to(&env, lead.id(), kid.id()) == 1).then_some(())
    })
    .await;
    h.wait(lead.id(), T).await.unwrap();

    let sent = h
        .prompt(
            Caller::Agent(lead.id()),
            kid.id(),
            "ok in the foreground".into(),
            Some(false),
            None,
        )
        .await
        .unwrap();
    assert!(!sent.background);
    assert_eq!(sent.notify, None);
    let w = h.wait(kid.id(), T).await.unwrap();
    assert_eq!(w.agent.status, Status::Idle);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        notices_to(&env, lead.id(), kid.id()),
        1,
        "exactly one notice in all: the background turn's"
    );
    rt.shutdown().await;
}

/// Top-level keys of `workspaces.json` and `projects.json` this version does not know (a newer
/// version's) survive the app's rewrites, like a record's unknown fields.
#[tokio::test]
async fn unknown_top_level_registry_keys_survive_a_rewrite() {
    let env = Env::new();
    let layout = paseo_core::store::Layout::new(env.home());
    let (wpath, ppath) = (layout.workspaces_path(), layout.projects_path());
    std::fs::create_dir_all(wpath.parent().unwrap()).unwrap();
    std::fs::write(
        &wpath,
        r#"{"workspaces": [], "schemaVersion": 7, "future": {"pinned": ["x"]}}"#,
    )
    .unwrap();
    std::fs::write(&ppath, r#"{"projects": [], "sortOrder": "recent"}"#).unwrap();
    // A repository, so adding its workspace registers a project too.
    support::git::init_repo(&env.work);
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    h.flush().await;
    let w: serde_json::Value = serde_json::from_slice(&std::fs::read(&wpath).unwrap()).unwrap();
    assert_eq!(w["schemaVersion"], 7);
    assert_eq!(w["future"]["pinned"][0], "x");
    assert_eq!(w["workspaces"][0]["workspaceId"], ws.to_string());
    let p: serde_json::Value = serde_json::from_slice(&std::fs::read(&ppath).unwrap()).unwrap();
    assert_eq!(p["sortOrder"], "recent");
    assert_eq!(p["projects"].as_array().map(Vec::len), Some(1));
    rt.shutdown().await;
}

/// A parent whose record cannot be read is quarantined; its notice inbox goes with it (not
/// deleted), so putting both back brings its notices back.
#[tokio::test]
async fn a_quarantined_parents_inbox_is_kept_with_it_and_comes_back_on_restore() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    // The lead is busy, so its child's finish notice waits in its inbox.
    let lead = h.create(req(&ws, "hang")).await.unwrap();
    support::poll("the lead running", || {
        env.log
            .lock()
            .unwrap()
            .inputs
            .iter()
            .any(|(a, _)| *a == lead.id())
            .then_some(())
    })
    .await;
    let mut k = req(&ws, "ok kid done");
    k.caller = Caller::Agent(lead.id());
    k.subagent = true;
    let kid = h.create(k).await.unwrap();
    h.wait(kid.id(), T).await.unwrap();
    let inbox = h.layout().inbox_path(lead.id());
    support::poll("the lead's inbox on disk", || inbox.is_file().then_some(())).await;
    let record = h.layout().record_path(&lead.record.cwd, lead.id());
    rt.shutdown().await;
    assert!(inbox.is_file(), "the inbox survives a clean stop");
    let good = std::fs::read(&record).unwrap();
    let notices = std::fs::read(&inbox).unwrap();

    // The lead's record is damaged: it is quarantined, and its inbox with it.
    std::fs::write(&record, b"{ not json").unwrap();
    let rt = env.start().await;
    let h = rt.handle();
    assert!(h.get(lead.id()).await.is_err());
    assert!(!inbox.exists());
    let qdir = h.layout().quarantine_dir();
    let aside = std::fs::read_dir(&qdir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .ends_with(&format!("inbox_{}.json", lead.id()))
        })
        .expect("the inbox set aside in quarantine/");
    assert_eq!(std::fs::read(&aside).unwrap(), notices);
    rt.shutdown().await;

    // Restoring both brings the notice back: it reaches the lead as a turn.
    std::fs::write(&record, &good).unwrap();
    std::fs::rename(&aside, &inbox).unwrap();
    let before = notices_to(&env, lead.id(), kid.id());
    let rt = env.start().await;
    let h = rt.handle();
    h.get(lead.id()).await.unwrap();
    support::poll("the restored notice delivered", || {
        (notices_to(&env, lead.id(), kid.id()) > before).then_some(())
    })
    .await;
    rt.shutdown().await;
}

/// A worktree made for a `create_agent` that is then refused (here: the record folder named
/// after its path would be too long for the data root's file system) is removed again, with
/// the branch it made; no workspace is left registered.
#[tokio::test]
async fn a_worktree_made_for_a_refused_create_is_removed() {
    use paseo_core::workspaces::worktree::WorktreeTarget;
    let env = Env::new();
    let repo = env.work.clone();
    support::git::init_repo(&repo);
    // A data root deep enough that a worktree's path, as a folder name, passes 255 bytes.
    let home = env.dir.path().join("h".repeat(120)).join("o".repeat(120));
    let mut reg = paseo_core::providers::ProviderRegistry::new();
    reg.insert(
        "script",
        std::sync::Arc::new(support::scripted::Scripted {
            id: "script",
            reads: true,
            log: env.log.clone(),
        }),
    );
    let opts = paseo_core::runtime::RuntimeOptions::new(&home, reg);
    let rt = paseo_core::server::Runtime::start(opts, None)
        .await
        .unwrap();
    let h = rt.handle();
    let mut r = CreateAgent::new(
        "script",
        WorkspaceTarget::worktree(
            Some(repo.display().to_string()),
            WorktreeTarget::branch_off("feat/refused", None),
        ),
    );
    r.initial_prompt = Some("ok never".into());
    let e = h
        .create(r)
        .await
        .expect_err("refused: the record folder name is too long");
    assert!(e.to_string().contains("cwd"), "{e}");
    let listed = support::git::git(&repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");
    let branches = support::git::git(&repo, &["branch", "--list", "feat/refused"]);
    assert!(branches.trim().is_empty(), "{branches}");
    let left: Vec<_> = walk_files(&h.layout().worktrees_dir());
    assert!(left.is_empty(), "{left:?}");
    let snap = h.snapshot().await.unwrap();
    assert!(snap.workspaces.is_empty(), "no workspace registered");
    rt.shutdown().await;
}

fn walk_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk_files(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}
