//! Runtime tests: the actor with real files, driven through a scripted provider that lives only
//! in this test code (the app never ships it). The prompt text is the script:
//! `ok <text>` completes with <text>, `fail <msg>` fails, `hang` runs until interrupted,
//! `stubborn` ignores interrupts, `perm` asks for a permission, `die` exits mid-turn.

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;

use crate::model::{AgentId, ItemKind, NewItem, Status, TurnOrigin};
use crate::providers::TurnInput;
use crate::store::Layout;

// The scripted provider the integration tests use, written once (`paseo_core` names this
// crate in its own tests, see lib.rs).
#[path = "../../tests/support/scripted.rs"]
pub(super) mod scripted;
use scripted::{req, workspace, Env};

const T: Duration = Duration::from_secs(10);

/// A record a killed app left in `env`'s data root, in `status` and without a workspace (as
/// upstream data has none); returns its id and file.
fn left_by_a_crash(env: &Env, status: Status) -> (AgentId, std::path::PathBuf) {
    let mut rec = crate::store::tests::record(&env.work.display().to_string());
    rec.last_status = status;
    (rec.id, put_record(env, &rec))
}

/// Writes `rec` into `env`'s data root (the app not running); returns its file.
fn put_record(env: &Env, rec: &crate::model::AgentRecord) -> std::path::PathBuf {
    let p = Layout::new(env.home()).record_path(&rec.cwd, rec.id);
    crate::store::atomic::ensure_dir(p.parent().unwrap()).unwrap();
    std::fs::write(&p, crate::store::encode_record(rec).unwrap()).unwrap();
    p
}

/// The JSON in `p`, or None while it is missing or not whole.
fn json_at(p: &std::path::Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(p).ok()?).ok()
}

fn on_disk(h: &RuntimeHandle, a: &AgentSnapshot) -> serde_json::Value {
    let p = h.layout().record_path(&a.record.cwd, a.id());
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[tokio::test]
async fn an_agent_runs_its_first_prompt_and_its_state_is_on_disk() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let a = h.create(req(&ws, "ok hello there")).await.unwrap();
    assert_eq!(a.status, Status::Initializing);
    assert_eq!(a.record.title, "ok hello there");
    let w = h.wait(a.id(), T).await.unwrap();
    assert!(!w.timed_out);
    assert_eq!(w.agent.status, Status::Idle);
    assert_eq!(w.agent.record.last_message.as_deref(), Some("hello there"));
    h.flush().await;
    let disk = on_disk(&h, &a);
    assert_eq!(disk["lastStatus"], "idle");
    assert_eq!(disk["attentionReason"], "finished");
    assert_eq!(disk["persistence"]["sessionId"], format!("sess-{}", a.id()));
    let items = h.timeline(a.id(), 0, 50).await.unwrap();
    let kinds: Vec<_> = items.iter().map(|i| i.kind).collect();
    assert_eq!(kinds, vec![ItemKind::User, ItemKind::Assistant]);
    assert_eq!(items[0].seq, 1);
    rt.shutdown().await;
}

#[tokio::test]
async fn bad_input_is_refused_with_the_field_and_changes_nothing() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let mut r = req(&ws, "ok");
    r.provider = "nope".into();
    assert!(h.create(r).await.is_err());
    let r = req(&ws, &"x".repeat(MAX_PROMPT_BYTES + 1));
    let e = h.create(r).await.unwrap_err();
    assert!(e.to_string().starts_with("initialPrompt:"), "{e}");
    let mut r = req(&ws, "ok");
    r.workspace = WorkspaceTarget::Existing(ExistingWorkspace {
        id: ws.clone(),
        cwd: Some("/".into()),
    });
    let e = h.create(r).await.unwrap_err();
    assert!(e.to_string().starts_with("workspace.cwd:"), "{e}");
    let mut r = req(&ws, "ok");
    r.workspace = WorkspaceTarget::directory("relative/path");
    let e = h.create(r).await.unwrap_err();
    assert!(e.to_string().starts_with("workspace.source.path:"), "{e}");
    assert!(h
        .prompt(Caller::User, AgentId::new(), "ok".into(), None, None)
        .await
        .is_err());
    let (all, total) = h.list(Default::default(), 100).await.unwrap();
    assert!(all.is_empty() && total == 0);
    rt.shutdown().await;
}

#[tokio::test]
async fn archive_cascades_durably_and_closes_every_session() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let root = h.create(req(&ws, "hang")).await.unwrap();
    let mut k = req(&ws, "ok kid");
    k.caller = Caller::Agent(root.id());
    k.subagent = true;
    k.notify_on_finish = Some(false);
    let kid = h.create(k).await.unwrap();
    h.wait(kid.id(), T).await.unwrap();
    let mut d = req(&ws, "ok detached");
    d.caller = Caller::Agent(root.id());
    d.notify_on_finish = Some(false);
    let detached = h.create(d).await.unwrap();
    h.wait(detached.id(), T).await.unwrap();
    let mut rx = h.subscribe();
    let archived = h.archive(Caller::User, root.id()).await.unwrap();
    assert_eq!(archived, vec![root.id(), kid.id()]);
    // Durable before the call returned.
    for a in [&root, &kid] {
        assert!(on_disk(&h, a)["archivedAt"].is_string());
        assert_eq!(on_disk(&h, a)["lastStatus"], "closed");
    }
    assert!(on_disk(&h, &detached)["archivedAt"].is_null());
    let closes = env.log.lock().unwrap().closes.clone();
    assert!(closes.contains(&root.id()) && closes.contains(&kid.id()));
    // Every window hears of it.
    let mut seen = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let Event::AgentArchived { agent } = ev {
            seen.push(agent.id());
        }
    }
    assert!(seen.contains(&root.id()) && seen.contains(&kid.id()));
    // Restore brings the batch back, closed, linked.
    let restored = h.restore(kid.id(), false).await.unwrap();
    assert_eq!(restored.len(), 2);
    let k = h.get(kid.id()).await.unwrap();
    assert_eq!(k.parent_agent_id, Some(root.id()));
    assert_eq!(k.status, Status::Closed);
    rt.shutdown().await;
}

#[tokio::test]
async fn finish_notice_reaches_the_parent_as_its_next_turn() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let parent = h.create(req(&ws, "ok planning")).await.unwrap();
    h.wait(parent.id(), T).await.unwrap();
    let mut k = req(&ws, "ok tests pass");
    // Created by the parent as its subagent: it hears when the first turn ends.
    k.caller = Caller::Agent(parent.id());
    k.subagent = true;
    k.title = Some("kid-1".into());
    let kid = h.create(k).await.unwrap();
    // The notice becomes the parent's next turn; wait until it has run.
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let inputs = env.log.lock().unwrap().inputs.clone();
        if inputs
            .iter()
            .any(|(a, i)| *a == parent.id() && matches!(i, TurnInput::Notice(_)))
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no notice delivered"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let inputs = env.log.lock().unwrap().inputs.clone();
    let notice = inputs
        .iter()
        .find_map(|(a, i)| match i {
            TurnInput::Notice(t) if *a == parent.id() => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    assert!(notice.contains(&kid.id().to_string()));
    assert!(notice.contains("kid-1"));
    assert!(notice.contains("tests pass"));
    h.wait(parent.id(), T).await.unwrap();
    let items = h.timeline(parent.id(), 0, 100).await.unwrap();
    assert!(items
        .iter()
        .any(|i| i.kind == ItemKind::System && i.text.contains("paseo-notice")));
    rt.shutdown().await;
}

#[tokio::test]
async fn restart_normalizes_and_resumes_the_same_session() {
    let env = Env::new();
    let (id, parent) = {
        let rt = env.start().await;
        let h = rt.handle().runtime;
        let ws = workspace(&rt.handle(), &env).await;
        let parent = h.create(req(&ws, "ok p")).await.unwrap();
        h.wait(parent.id(), T).await.unwrap();
        let a = h.create(req(&ws, "ok first")).await.unwrap();
        h.wait(a.id(), T).await.unwrap();
        // A running armed child at quit: the parent hears of it after the restart.
        h.prompt_on_behalf(
            a.id(),
            "hang".into(),
            TurnOrigin::Agent(parent.id()),
            Some(parent.id()),
        )
        .await
        .unwrap();
        rt.shutdown().await;
        (a.id(), parent.id())
    };
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let a = h.get(id).await.unwrap();
    assert_eq!(a.status, Status::Closed);
    h.prompt(Caller::User, id, "ok again".into(), None, None)
        .await
        .unwrap();
    let w = h.wait(id, T).await.unwrap();
    assert_eq!(w.agent.record.last_message.as_deref(), Some("again"));
    let starts = env.log.lock().unwrap().starts.clone();
    let resumed = starts.iter().rev().find(|(a, _)| *a == id).unwrap();
    assert_eq!(resumed.1, Some(format!("sess-{id}")));
    // The parent was woken with the notice of the interrupted turn.
    let inputs = env.log.lock().unwrap().inputs.clone();
    let got = inputs
        .iter()
        .any(|(a, i)| *a == parent && matches!(i, TurnInput::Notice(t) if t.contains("canceled")));
    let deadline = tokio::time::Instant::now() + T;
    let mut got = got;
    while !got && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
        got = env.log.lock().unwrap().inputs.iter().any(|(a, i)| {
            *a == parent && matches!(i, TurnInput::Notice(t) if t.contains("canceled"))
        });
    }
    assert!(got, "the parent received the notice after the restart");
    rt.shutdown().await;
}

#[tokio::test]
async fn a_crash_leaves_records_that_load_normalized() {
    let env = Env::new();
    let (id, p) = left_by_a_crash(&env, Status::Running);
    std::fs::write(
        p.with_file_name(format!("{}.json", AgentId::new())),
        b"{oops",
    )
    .unwrap();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let a = h.get(id).await.unwrap();
    assert_eq!(a.status, Status::Error);
    assert_eq!(
        a.record.last_error.as_deref(),
        Some(crate::engine::INTERRUPTED)
    );
    // It got a workspace for its cwd (it had none).
    assert!(a.record.workspace_id.is_some());
    let snap = h.snapshot().await.unwrap();
    assert_eq!(snap.quarantined.len(), 1);
    assert!(snap.notices.iter().any(|n| n.contains("moved to")));
    assert_eq!(snap.workspaces.len(), 1);
    h.flush().await;
    assert_eq!(json_at(&p).unwrap()["lastStatus"], "error");
    rt.shutdown().await;
}

#[tokio::test]
async fn cancel_returns_once_the_turn_has_ended_and_times_out_a_stubborn_provider() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let a = h.create(req(&ws, "hang")).await.unwrap();
    let deadline = tokio::time::Instant::now() + T;
    while h.get(a.id()).await.unwrap().status != Status::Running {
        assert!(tokio::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(h.cancel(Caller::User, a.id()).await.unwrap(), Status::Idle);
    let b = h.create(req(&ws, "stubborn")).await.unwrap();
    while h.get(b.id()).await.unwrap().status != Status::Running {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(h.cancel(Caller::User, b.id()).await.unwrap(), Status::Idle);
    assert!(env.log.lock().unwrap().closes.contains(&b.id()));
    // The next prompt starts a fresh session.
    h.prompt(Caller::User, b.id(), "ok back".into(), None, None)
        .await
        .unwrap();
    assert_eq!(h.wait(b.id(), T).await.unwrap().agent.status, Status::Idle);
    rt.shutdown().await;
}

#[tokio::test]
async fn permission_and_process_death() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let a = h.create(req(&ws, "perm")).await.unwrap();
    let w = h.wait(a.id(), T).await.unwrap();
    assert_eq!(w.agent.status, Status::Running);
    let p = w.agent.pending_permission.clone().unwrap();
    assert_eq!(p.tool_name, "Bash");
    let snap = h.snapshot().await.unwrap();
    assert_eq!(
        snap.workspaces[0].bucket,
        Some(crate::model::Bucket::NeedsInput)
    );
    h.answer_permission(a.id(), p.request_id, false)
        .await
        .unwrap();
    let w = h.wait(a.id(), T).await.unwrap();
    assert_eq!(w.agent.record.last_message.as_deref(), Some("denied"));

    let b = h.create(req(&ws, "die")).await.unwrap();
    let w = h.wait(b.id(), T).await.unwrap();
    assert_eq!(w.agent.status, Status::Error);
    assert!(w.agent.record.last_error.unwrap().contains("exit code 3"));
    rt.shutdown().await;
}

#[tokio::test]
async fn wait_times_out_on_a_long_turn() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let a = h.create(req(&ws, "hang")).await.unwrap();
    let w = h.wait(a.id(), Duration::from_millis(200)).await.unwrap();
    assert!(w.timed_out);
    assert!(w.agent.status.is_active());
    rt.shutdown().await;
}

#[tokio::test]
async fn timeline_pages_back_beyond_the_in_memory_tail() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let a = h.create(req(&ws, "ok x")).await.unwrap();
    h.wait(a.id(), T).await.unwrap();
    let id = a.id();
    let items = (0..5_000)
        .map(|i| NewItem::new(ItemKind::Output, format!("line {i}")))
        .collect();
    h.push_items(id, items).await.unwrap();
    let last = h.timeline(id, 0, 10).await.unwrap();
    assert_eq!(last.last().unwrap().seq, 5_002);
    let old = h.timeline(id, 101, 100).await.unwrap();
    assert_eq!(old.len(), 100);
    assert_eq!(old[0].seq, 1);
    assert_eq!(old[0].kind, ItemKind::User);
    assert_eq!(old[99].seq, 100);
    rt.shutdown().await;
}

#[tokio::test]
async fn labels_cannot_forge_the_parent_link() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let mut r = req(&ws, "ok");
    r.labels = BTreeMap::from([(
        crate::model::PARENT_LABEL.to_string(),
        AgentId::new().to_string(),
    )]);
    let e = h.create(r).await.unwrap_err();
    assert!(e.to_string().contains("labels."), "{e}");
    rt.shutdown().await;
}

#[tokio::test]
async fn the_archived_list_comes_in_pages_most_recent_first() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let mut ids = Vec::new();
    for i in 0..7 {
        let a = h.create(req(&ws, &format!("ok {i}"))).await.unwrap();
        h.wait(a.id(), T).await.unwrap();
        h.archive(Caller::User, a.id()).await.unwrap();
        ids.push(a.id());
    }
    let live = h.create(req(&ws, "ok live")).await.unwrap();
    h.wait(live.id(), T).await.unwrap();
    let mut seen = Vec::new();
    for offset in [0, 3, 6] {
        let (page, total) = h.archived(offset, 3).await.unwrap();
        assert_eq!(total, 7);
        seen.extend(page.iter().map(|a| a.id()));
    }
    ids.reverse();
    assert_eq!(seen, ids, "pages neither overlap nor skip, newest first");
    let (past_the_end, total) = h.archived(50, 3).await.unwrap();
    assert!(past_the_end.is_empty());
    assert_eq!(total, 7);
    rt.shutdown().await;
}

#[tokio::test]
async fn load_repairs_are_written_once_the_app_answers_and_never_undo_a_later_change() {
    let env = Env::new();
    let layout = Layout::new(env.home());
    // Two records a crash left running, without a workspace.
    let (a, a_path) = left_by_a_crash(&env, Status::Running);
    let (b, b_path) = left_by_a_crash(&env, Status::Running);
    let disk = |p: &std::path::Path| json_at(p).expect("a whole record");
    let rt = env.start_held().await;
    let h = rt.handle().runtime;
    // Repaired in memory at once...
    assert_eq!(h.get(a).await.unwrap().status, Status::Error);
    // ...but not written before the app answers: after a crash they can be thousands.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(disk(&a_path)["lastStatus"], "running");
    assert!(!layout.workspaces_path().exists());
    // A change to one of them in the meantime is written with its repair...
    h.archive(Caller::User, b).await.unwrap();
    assert!(disk(&b_path)["archivedAt"].is_string());
    assert_eq!(disk(&b_path)["lastStatus"], "closed");
    // ...and the held-back write, once made, encodes the record as it is then: no undo.
    h.deliver_pending().await.unwrap();
    h.flush().await;
    assert_eq!(disk(&a_path)["lastStatus"], "error");
    assert!(disk(&a_path)["workspaceId"].is_string());
    assert!(disk(&b_path)["archivedAt"].is_string());
    assert!(layout.workspaces_path().exists());
    rt.shutdown().await;
}

#[tokio::test]
async fn many_load_repairs_are_written_in_batches_without_a_flush() {
    let env = Env::new();
    // More than a few batches' worth, as a crash of a big fleet leaves them.
    let paths: Vec<_> = (0..1_500)
        .map(|_| left_by_a_crash(&env, Status::Idle).1)
        .collect();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let closed = |p: &std::path::Path| json_at(p).is_some_and(|v| v["lastStatus"] == "closed");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !paths.iter().all(|p| closed(p)) {
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {} repairs still unwritten",
            paths.iter().filter(|p| !closed(p)).count(),
            paths.len()
        );
        // The runtime answers while they are written.
        h.snapshot().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    rt.shutdown().await;
}

#[tokio::test]
async fn waiting_on_an_agent_at_rest_tells_its_last_message() {
    let env = Env::new();
    // A closed agent whose last turn left an answer: loaded at rest, the answer in its file.
    let mut rec = crate::store::tests::record(&env.work.display().to_string());
    rec.provider = "script".into();
    rec.last_status = Status::Closed;
    rec.last_message = Some("the old turn's answer".into());
    put_record(&env, &rec);
    let id = rec.id;
    let rt = env.start().await;
    let h = rt.handle().runtime;
    // Woken (its session resumes) and waited on, as wait_for_agent does: the events about it
    // leave the answer in the file, the wait's result reads it back.
    let mut rx = h.subscribe();
    assert!(h.wake(id).await.unwrap());
    let w = h.wait(id, T).await.unwrap();
    assert!(!w.timed_out);
    assert_eq!(w.agent.status, Status::Idle);
    assert_eq!(
        w.agent.record.last_message.as_deref(),
        Some("the old turn's answer")
    );
    assert!(!w.agent.at_rest);
    let mut at_rest = 0;
    while let Ok(ev) = rx.try_recv() {
        if let Event::AgentUpdated { agent } = ev {
            assert!(
                agent.at_rest && agent.record.last_message.is_none(),
                "{agent:?}"
            );
            at_rest += 1;
        }
    }
    assert!(at_rest > 0, "no update event about the woken agent");
    // Archived while a wait is on (the wait started first): the archive's event snapshot is at
    // rest too, and the wait's result is whole. `done` is first called on the wait's own first
    // read, so its signal orders that read before the archive; what it sees afterwards shows
    // the wait took the archive from the event (at rest), not from a later read.
    let (started_tx, started) = tokio::sync::oneshot::channel::<()>();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(bool, bool)>::new()));
    let h2 = h.clone();
    let seen2 = seen.clone();
    let waiting = tokio::spawn(async move {
        let mut rx = h2.subscribe();
        h2.wait_on(id, T, &mut rx, |s| {
            if let Some(tx) = started_tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
            seen2
                .lock()
                .unwrap()
                .push((s.record.is_archived(), s.at_rest));
            false
        })
        .await
    });
    tokio::time::timeout(T, started)
        .await
        .expect("the wait never read the agent")
        .unwrap();
    h.archive(Caller::User, id).await.unwrap();
    let w = waiting.await.unwrap().unwrap();
    assert!(w.agent.record.is_archived() && !w.timed_out);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.first().map(|s| s.0),
        Some(false),
        "the wait began before the archive"
    );
    assert_eq!(
        seen.last(),
        Some(&(true, true)),
        "the archive reached the wait as an event snapshot at rest: {seen:?}"
    );
    assert_eq!(
        w.agent.record.last_message.as_deref(),
        Some("the old turn's answer")
    );
}

#[tokio::test]
async fn a_system_prompt_and_last_message_stay_in_the_file_until_read_back() {
    let env = Env::new();
    let prompt = "You review code for the team. ".repeat(20);
    // An upstream record with a system prompt, left running by a crash.
    let mut rec = crate::store::tests::record(&env.work.display().to_string());
    rec.provider = "script".into();
    rec.last_status = Status::Running;
    rec.config_mut().system_prompt = Some(prompt.clone());
    rec.last_message = Some("the old turn's answer".into());
    let p = put_record(&env, &rec);
    let id = rec.id;

    let rt = env.start().await;
    let h = rt.handle().runtime;
    // At rest: the fleet's copy holds no prompt...
    let (listed, _) = h.list(Default::default(), 10).await.unwrap();
    let at_rest = listed.iter().find(|a| a.id() == id).unwrap();
    assert_eq!(at_rest.record.config.system_prompt, None);
    assert!(at_rest.record.config.system_prompt_on_disk);
    assert_eq!(at_rest.record.last_message, None);
    assert!(at_rest.record.last_message_on_disk);
    // ...get_agent gives the whole record...
    let got = h.get(id).await.unwrap();
    assert_eq!(
        got.record.config.system_prompt.as_deref(),
        Some(prompt.as_str())
    );
    assert!(!got.record.config.system_prompt_on_disk);
    assert_eq!(
        got.record.last_message.as_deref(),
        Some("the old turn's answer")
    );
    // ...and the load's repair, written once the app answers, keeps it in the file.
    h.flush().await;
    let disk = json_at(&p).unwrap();
    assert_eq!(disk["lastStatus"], "error");
    assert_eq!(disk["config"]["systemPrompt"], prompt.as_str());
    assert!(disk["config"].get("systemPromptOnDisk").is_none());
    assert_eq!(disk["lastMessage"], "the old turn's answer");

    // A session started for it is given the prompt, read back from the file.
    h.prompt(Caller::User, id, "ok done".into(), None, None)
        .await
        .unwrap();
    let w = h.wait(id, T).await.unwrap();
    assert_eq!(w.agent.record.last_message.as_deref(), Some("done"));
    let given = env.log.lock().unwrap().system_prompts.clone();
    assert_eq!(given, vec![(id, Some(prompt.clone()))]);
    // Its turn's writes kept it too, and the record in memory is still at rest.
    h.flush().await;
    let disk = json_at(&p).unwrap();
    assert_eq!(disk["config"]["systemPrompt"], prompt.as_str());
    assert_eq!(disk["lastMessage"], "done");
    let (listed, _) = h.list(Default::default(), 10).await.unwrap();
    assert!(
        listed
            .iter()
            .find(|a| a.id() == id)
            .unwrap()
            .record
            .config
            .system_prompt_on_disk
    );

    // Should the file stop being its record, nothing is guessed: get_agent says why, and a
    // write is refused with a notice rather than written without the prompt.
    std::fs::write(&p, b"{}").unwrap();
    let err = h.get(id).await.unwrap_err().to_string();
    assert!(err.contains("could not be read back"), "{err}");
    h.archive(Caller::User, id).await.unwrap();
    h.flush().await;
    assert_eq!(std::fs::read(&p).unwrap(), b"{}");
    let snap = h.snapshot().await.unwrap();
    assert!(
        snap.notices
            .iter()
            .any(|n| n.contains(&id.to_string()) && n.contains("could not be written")),
        "{:?}",
        snap.notices
    );
    rt.shutdown().await;
}

/// SPEC 15: while a Changes action holds a checkout, an agent there cannot start a process (a
/// prompt or a notice resuming it waits), and the start runs once the hold goes.
#[tokio::test]
async fn a_start_in_a_held_checkout_waits_for_the_hold_and_then_runs() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let ws = workspace(&rt.handle(), &env).await;
    let a = h.create(req(&ws, "ok first")).await.unwrap();
    assert_eq!(h.wait(a.id(), T).await.unwrap().agent.status, Status::Idle);
    let hold = h
        .hold_checkouts(checkout::HoldRequest {
            stop: vec![env.work.clone()],
            guard: None,
        })
        .await
        .unwrap();
    assert_eq!(h.get(a.id()).await.unwrap().status, Status::Closed);
    h.prompt(Caller::User, a.id(), "ok second".into(), None, None)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = h.get(a.id()).await.unwrap();
    assert_eq!(held.status, Status::Initializing);
    assert_eq!(held.record.last_message.as_deref(), Some("first"));
    drop(hold);
    let w = h.wait(a.id(), T).await.unwrap();
    assert_eq!(w.agent.status, Status::Idle);
    assert_eq!(w.agent.record.last_message.as_deref(), Some("second"));
    rt.shutdown().await;
}

/// A window's snapshot says the number of the last event it reflects, in the numbering of the
/// events it then hears (`subscribe_numbered`, what the desktop shell forwards): every event
/// numbered up to it happened before the snapshot, and a change after it comes numbered above it.
/// This is what lets a window hold events while its snapshot loads and apply only the newer ones
/// (ui/sync.js), for this machine as for a host.
#[tokio::test]
async fn a_windows_snapshot_is_numbered_as_the_events_it_hears() {
    use crate::runtime::window::WindowQuery;
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle().runtime;
    let (mut rx, base) = h.subscribe_numbered().await.unwrap();
    let ws = workspace(&rt.handle(), &env).await;
    let first = |text: String| -> u64 {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["seq"].as_u64().expect("a numbered snapshot")
    };
    let before = first(
        h.window_snapshot(WindowQuery::First {
            workspace_id: None,
            agent_ids: vec![],
        })
        .await
        .unwrap(),
    );
    // The workspace's own events came before the snapshot: numbered up to it, not past it.
    let mut n = base;
    let mut seen_ws = false;
    while n < before {
        let ev = rx.recv().await.unwrap();
        n += 1;
        seen_ws |= matches!(&ev, Event::WorkspaceUpdated { workspace } if workspace.record.workspace_id == ws);
    }
    assert!(
        seen_ws,
        "the workspace's event is numbered at most {before}"
    );
    assert!(rx.try_recv().is_err(), "nothing after the snapshot yet");
    // A change after the snapshot: the next event, numbered just above it, and the whole
    // snapshot taken then is numbered past it.
    h.rename_workspace(ws.clone(), "numbered").await.unwrap();
    let ev = rx.recv().await.unwrap();
    assert!(
        matches!(&ev, Event::WorkspaceUpdated { workspace } if workspace.record.name.as_deref() == Some("numbered")),
        "{ev:?}"
    );
    let whole = first(h.window_snapshot(WindowQuery::Whole).await.unwrap());
    assert_eq!(whole, before + 1, "one event since");
    let (seq, _) = h.sync_snapshot().await.unwrap();
    assert_eq!(seq, whole, "syncSnapshot numbers it the same");
    rt.shutdown().await;
}
