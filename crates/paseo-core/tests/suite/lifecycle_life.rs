//! Lifecycle and archive rules with the scripted provider and real files: an archive's track
//! and workspace news only once it is durable (SPEC 5), refused creates leave nothing (SPEC 14),
//! an unwritable record refuses the agent before it starts (SPEC 15), and stop or quit closes
//! an errored agent (SPEC 2).

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use paseo_core::config::Limits;
use paseo_core::engine::ListFilter;
use paseo_core::model::Status;
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Caller, Event, RuntimeOptions, WorkspaceTarget};
use paseo_core::server::{Runtime, Server};
use support::scripted::{req, workspace, Env, Scripted};
use support::Door;

const T: Duration = Duration::from_secs(10);

async fn start_limited(env: &Env, limits: Limits) -> Runtime {
    let mut reg = ProviderRegistry::new();
    reg.insert(
        "script",
        Arc::new(Scripted {
            id: "script",
            reads: true,
            log: env.log.clone(),
        }),
    );
    let mut opts = RuntimeOptions::new(env.home(), reg);
    opts.limits = limits;
    let rt = Runtime::start(opts, None).await.unwrap();
    rt.handle.deliver_pending().await.unwrap();
    rt
}

fn on_disk(p: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// SPEC 5: windows hear of an archive once its record is durable, and that holds for the
/// parent's track and the workspace's bucket as much as for the agent itself: a row that leaves
/// a track before the archive is on disk may come back when the write fails.
#[tokio::test]
async fn an_archives_track_and_workspace_news_wait_for_the_durable_record() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let lead = h.create(req(&ws, "ok lead")).await.unwrap();
    h.wait(lead.id(), T).await.unwrap();
    let mut k = req(&ws, "hang");
    k.caller = Caller::Agent(lead.id());
    k.subagent = true;
    let kid = h.create(k).await.unwrap();
    support::poll("the kid runs", || {
        (env.log
            .lock()
            .unwrap()
            .inputs
            .iter()
            .any(|(a, _)| *a == kid.id()))
        .then_some(())
    })
    .await;
    h.flush().await;
    // A directory in the way of the kid's record: its archived record cannot land yet.
    let path = h.layout().record_path(&kid.record.cwd, kid.id());
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("blocker"), b"x").unwrap();

    let mut rx = h.subscribe();
    let h2 = h.clone();
    let id = kid.id();
    let call = tokio::spawn(async move { h2.archive(Caller::User, id).await });
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        match tokio::time::timeout(Duration::from_millis(100), rx.recv()).await {
            Ok(Ok(Event::TrackChanged { track })) if track.parent_agent_id == lead.id() => {
                panic!("the lead's track changed before the archive was durable: {track:?}")
            }
            Ok(Ok(Event::WorkspaceUpdated { workspace }))
                if workspace.record.workspace_id == ws =>
            {
                panic!("the workspace was updated before the archive was durable")
            }
            Ok(Ok(Event::AgentArchived { .. })) => panic!("announced before durable"),
            _ => {}
        }
    }
    let r = tokio::time::timeout(T, call).await.unwrap().unwrap();
    assert!(r.is_err(), "{r:?}");
    std::fs::remove_dir_all(&path).unwrap();
    // Once it lands: the archive, then the track without the kid.
    let deadline = Instant::now() + T;
    let mut archived = false;
    loop {
        let ev = tokio::time::timeout_at(deadline.into(), rx.recv())
            .await
            .expect("the track's news once the record landed")
            .unwrap();
        match ev {
            Event::AgentArchived { agent } if agent.id() == id => archived = true,
            Event::TrackChanged { track } if track.parent_agent_id == lead.id() => {
                assert!(
                    archived,
                    "the track changed before the archive was announced"
                );
                assert!(!track.members.contains(&id), "{track:?}");
                break;
            }
            _ => {}
        }
    }
    assert!(on_disk(&path)["archivedAt"].is_string());
    rt.shutdown().await;
}

/// SPEC 14: a create refused for a limit, with a new directory workspace asked for, registers
/// nothing: no workspace, no agent, even when several race for the last allowed create.
#[tokio::test]
async fn a_refused_create_with_a_new_directory_leaves_nothing_behind() {
    let env = Env::new();
    let rt = start_limited(
        &env,
        Limits {
            max_live_agents: 50,
            max_depth: 1,
            create_per_minute: 2,
        },
    )
    .await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let lead = h.create(req(&ws, "ok lead")).await.unwrap();
    h.wait(lead.id(), T).await.unwrap();
    let dirs: Vec<_> = (0..6)
        .map(|i| {
            let d = env.work.join(format!("d{i}"));
            std::fs::create_dir_all(&d).unwrap();
            d
        })
        .collect();
    let by = |caller, d: &std::path::Path| {
        let mut r = req(&ws, "ok child");
        r.caller = Caller::Agent(caller);
        r.subagent = true;
        r.workspace = WorkspaceTarget::directory(d.display().to_string());
        r
    };
    // Several at once against a rate of two: two created, the others refused.
    let calls: Vec<_> = dirs[..4]
        .iter()
        .map(|d| {
            let h = h.clone();
            let r = by(lead.id(), d);
            tokio::spawn(async move { h.create(r).await })
        })
        .collect();
    let mut made = Vec::new();
    for c in calls {
        match c.await.unwrap() {
            Ok(a) => made.push(a),
            Err(e) => assert!(e.to_string().contains("createPerMinute"), "{e}"),
        }
    }
    assert_eq!(made.len(), 2);
    // A child at the depth limit may not create at all.
    let deep = h.create(by(made[0].id(), &dirs[4])).await.unwrap_err();
    assert!(deep.to_string().contains("maxDepth"), "{deep}");
    let snap = h.snapshot().await.unwrap();
    assert_eq!(snap.agents.len(), 3, "the lead and two children");
    assert_eq!(
        snap.workspaces.len(),
        3,
        "the lead's and the two children's, nothing for a refused create: {:?}",
        snap.workspaces
            .iter()
            .map(|w| w.record.cwd.clone())
            .collect::<Vec<_>>()
    );
    h.flush().await;
    let reg = std::fs::read_to_string(env.home().join("projects/workspaces.json")).unwrap();
    for d in &dirs[2..] {
        let made_here = made.iter().any(|a| a.record.cwd == d.display().to_string());
        assert!(
            made_here || !reg.contains(&format!("\"{}\"", d.display())),
            "{} registered for a refused create",
            d.display()
        );
    }
    rt.shutdown().await;
}

/// SPEC 15: an agent whose record cannot be written (here a file where its folder must be) is
/// refused at creation, before its session starts: nothing runs, nothing stays in the fleet.
#[tokio::test]
async fn an_unwritable_record_refuses_the_agent_before_it_starts() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let folder = h
        .layout()
        .record_path(
            &env.work.display().to_string(),
            paseo_core::model::AgentId::new(),
        )
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::create_dir_all(folder.parent().unwrap()).unwrap();
    std::fs::write(&folder, b"not a folder").unwrap();

    let e = h.create(req(&ws, "ok never")).await.unwrap_err();
    assert!(
        e.to_string().contains(&folder.display().to_string()),
        "the error names the record's folder: {e}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        env.log.lock().unwrap().starts.is_empty(),
        "no session was started"
    );
    assert!(h.snapshot().await.unwrap().agents.is_empty());
    // With a new directory workspace asked for, no workspace is left for the refused agent
    // either (SPEC 14: nothing is created).
    let sub = env.work.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let sub_folder = h
        .layout()
        .record_path(
            &sub.display().to_string(),
            paseo_core::model::AgentId::new(),
        )
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::write(&sub_folder, b"not a folder").unwrap();
    let mut by_dir = req(&ws, "ok never");
    by_dir.workspace = WorkspaceTarget::directory(sub.display().to_string());
    h.create(by_dir).await.unwrap_err();
    assert_eq!(h.snapshot().await.unwrap().workspaces.len(), 1);
    assert!(env.log.lock().unwrap().starts.is_empty());
    // Once the folder can be made, the same create works.
    std::fs::remove_file(&folder).unwrap();
    let a = h.create(req(&ws, "ok now")).await.unwrap();
    assert_eq!(h.wait(a.id(), T).await.unwrap().agent.status, Status::Idle);
    rt.shutdown().await;
}

/// SPEC 2: any → closed when the runtime is closed, an errored agent included, by an explicit
/// stop and by quitting; what failed stays readable in `lastError`.
#[tokio::test]
async fn stop_and_quit_close_errored_agents() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let a = h.create(req(&ws, "fail boom")).await.unwrap();
    let b = h.create(req(&ws, "fail bang")).await.unwrap();
    for id in [a.id(), b.id()] {
        assert_eq!(h.wait(id, T).await.unwrap().agent.status, Status::Error);
    }
    h.stop(a.id()).await.unwrap();
    let got = h.get(a.id()).await.unwrap();
    assert_eq!(got.status, Status::Closed);
    assert!(
        got.record.last_error.is_some(),
        "the failure stays readable"
    );
    let pa = h.layout().record_path(&a.record.cwd, a.id());
    let pb = h.layout().record_path(&b.record.cwd, b.id());
    rt.shutdown().await;
    assert_eq!(on_disk(&pa)["lastStatus"], "closed");
    assert_eq!(on_disk(&pb)["lastStatus"], "closed");
}

/// SPEC 14: an agent whose start waits for a live slot is `queued`, with its place in line,
/// and counts as queued, not running, in its parent's track, the fleet counts (tray, quit
/// dialog) and its workspace's bucket.
#[tokio::test]
async fn queued_agents_have_their_own_bucket_place_and_counts() {
    use paseo_core::model::Bucket;
    let env = Env::new();
    let rt = start_limited(
        &env,
        Limits {
            max_live_agents: 2,
            max_depth: 8,
            create_per_minute: 30,
        },
    )
    .await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let lead = h.create(req(&ws, "hang")).await.unwrap();
    let mut kids = Vec::new();
    for _ in 0..4 {
        let mut k = req(&ws, "hang");
        k.caller = Caller::Agent(lead.id());
        k.subagent = true;
        kids.push(h.create(k).await.unwrap().id());
    }
    // A root of its own in another workspace, queued too: its workspace shows it queued.
    let other_dir = env.work.join("other");
    std::fs::create_dir_all(&other_dir).unwrap();
    let other_ws = h
        .add_workspace(other_dir.display().to_string())
        .await
        .unwrap()
        .record
        .workspace_id;
    let other = h.create(req(&other_ws, "ok later")).await.unwrap();
    let snap = support::eventually(T, || async {
        let s = h.get(other.id()).await.map_err(|e| e.to_string())?;
        let place = s.queue_place;
        (place == Some(4)).then_some(s).ok_or(format!("{place:?}"))
    })
    .await;
    assert_eq!(snap.bucket, Bucket::Queued);
    assert_eq!(snap.status_word, "queued · 4th");
    for (i, id) in kids[1..].iter().enumerate() {
        let k = h.get(*id).await.unwrap();
        assert_eq!((k.bucket, k.queue_place), (Bucket::Queued, Some(i + 1)));
        assert_eq!(k.status, Status::Initializing);
        // The word its row shows, computed once in the core (the window only renders it).
        let place = ["1st", "2nd", "3rd", "4th"][i];
        assert_eq!(k.status_word, format!("queued · {place}"));
    }
    assert_eq!(h.get(kids[0]).await.unwrap().bucket, Bucket::Running);
    let counts = h.counts().await.unwrap();
    assert_eq!((counts.tally.running, counts.tally.queued), (2, 4));
    let fleet = h.snapshot().await.unwrap();
    let track = fleet
        .tracks
        .iter()
        .find(|t| t.parent_agent_id == lead.id())
        .unwrap();
    assert_eq!((track.counts.running, track.counts.queued), (1, 3));
    let bucket_of = |w| {
        fleet
            .workspaces
            .iter()
            .find(|x| x.record.workspace_id == w)
            .unwrap()
            .bucket
    };
    assert_eq!(bucket_of(other_ws.clone()), Some(Bucket::Queued));
    assert_eq!(bucket_of(ws.clone()), Some(Bucket::Running));
    // A slot frees: the next in line starts and every place moves up.
    h.stop(kids[0]).await.unwrap();
    support::eventually(T, || async {
        let s = h.get(kids[2]).await.map_err(|e| e.to_string())?;
        (s.queue_place == Some(1))
            .then_some(())
            .ok_or(format!("{:?}", s.queue_place))
    })
    .await;
    assert_eq!(h.get(kids[1]).await.unwrap().bucket, Bucket::Running);
    rt.shutdown().await;
}

/// SPEC 5, one member of a batch: restoring it brings back it and the members of its batch
/// below it (nothing restored is cut from its own children), closed, linked to its live
/// parent, its last error kept; its batch-mates stay archived, still restorable as what is
/// left of the batch; a restart keeps all of that.
#[tokio::test]
async fn restoring_one_member_of_a_batch_brings_back_its_subtree_and_leaves_the_rest() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let lead = h.create(req(&ws, "ok lead")).await.unwrap();
    h.wait(lead.id(), T).await.unwrap();
    let sub = |caller, prompt: &str| {
        let mut k = req(&ws, prompt);
        k.caller = Caller::Agent(caller);
        k.subagent = true;
        k
    };
    let a = h.create(sub(lead.id(), "ok part a")).await.unwrap();
    h.wait(a.id(), T).await.unwrap();
    let a1 = h.create(sub(a.id(), "fail boom")).await.unwrap();
    h.wait(a1.id(), T).await.unwrap();
    h.mark_seen(a1.id()).await.unwrap();
    let b = h.create(sub(lead.id(), "ok part b")).await.unwrap();
    h.wait(b.id(), T).await.unwrap();
    // One gesture, one batch: a (with a1 below it) and b.
    let mut batch = h.archive_finished(lead.id()).await.unwrap();
    batch.sort();
    let mut want = vec![a.id(), a1.id(), b.id()];
    want.sort();
    assert_eq!(batch, want);

    let mut back = h.restore_member(a.id(), false).await.unwrap();
    back.sort();
    let mut want = vec![a.id(), a1.id()];
    want.sort();
    assert_eq!(back, want, "a and the member below it come back, not b");

    let (lead_id, a_id, a1_id, b_id) = (lead.id(), a.id(), a1.id(), b.id());
    let check = move |h: Server| async move {
        let (lead, a, a1, b) = (lead_id, a_id, a1_id, b_id);
        let ra = h.get(a).await.unwrap();
        assert!(ra.record.archived_at.is_none());
        assert_eq!(ra.parent_agent_id, Some(lead), "linked to its live parent");
        assert_eq!(ra.status, Status::Closed);
        let ra1 = h.get(a1).await.unwrap();
        assert!(ra1.record.archived_at.is_none());
        assert_eq!(ra1.parent_agent_id, Some(a));
        assert_eq!(ra1.status, Status::Closed);
        assert_eq!(
            ra1.record.last_error.as_deref(),
            Some("boom"),
            "its failure kept"
        );
        let rb = h.get(b).await.unwrap();
        assert!(
            rb.record.archived_at.is_some(),
            "its batch-mate stays archived"
        );
        assert!(rb.record.archive_batch_id.is_some());
        let filter = ListFilter {
            parent: Some(lead),
            ..Default::default()
        };
        let track: Vec<_> = h
            .list(filter, 100)
            .await
            .unwrap()
            .0
            .iter()
            .map(|r| r.id())
            .collect();
        assert_eq!(track, vec![a]);
    };
    check(h.clone()).await;
    h.flush().await;
    rt.shutdown().await;

    // A restart keeps it, and what is left of the batch is restored on its own.
    let rt = env.start().await;
    let h = rt.handle();
    check(h.clone()).await;
    assert_eq!(h.restore(b.id(), false).await.unwrap(), vec![b.id()]);
    assert!(h.get(b.id()).await.unwrap().record.archived_at.is_none());
    assert_eq!(
        h.get(b.id()).await.unwrap().parent_agent_id,
        Some(lead.id())
    );
    rt.shutdown().await;
}

/// One member whose parent stays archived (it was archived in the same batch) is refused like
/// a whole batch's would be, and comes back as a root agent, with its own subtree, on request.
#[tokio::test]
async fn a_member_under_an_archived_parent_comes_back_as_root_with_its_subtree() {
    let env = Env::new();
    let rt = env.start().await;
    let h = rt.handle();
    let ws = workspace(&h, &env).await;
    let lead = h.create(req(&ws, "ok lead")).await.unwrap();
    h.wait(lead.id(), T).await.unwrap();
    let mut k = req(&ws, "ok kid");
    k.caller = Caller::Agent(lead.id());
    k.subagent = true;
    let kid = h.create(k).await.unwrap();
    h.wait(kid.id(), T).await.unwrap();
    let mut g = req(&ws, "ok grandkid");
    g.caller = Caller::Agent(kid.id());
    g.subagent = true;
    let gk = h.create(g).await.unwrap();
    h.wait(gk.id(), T).await.unwrap();
    assert_eq!(h.archive(Caller::User, lead.id()).await.unwrap().len(), 3);

    let err = h.restore_member(kid.id(), false).await.unwrap_err();
    assert!(err.to_string().contains("archived"), "{err}");
    assert!(
        h.get(kid.id()).await.unwrap().record.archived_at.is_some(),
        "nothing changed"
    );

    let mut back = h.restore_member(kid.id(), true).await.unwrap();
    back.sort();
    let mut want = vec![kid.id(), gk.id()];
    want.sort();
    assert_eq!(back, want);
    assert_eq!(h.get(kid.id()).await.unwrap().parent_agent_id, None);
    assert_eq!(
        h.get(gk.id()).await.unwrap().parent_agent_id,
        Some(kid.id())
    );
    assert!(h.get(lead.id()).await.unwrap().record.archived_at.is_some());
    // The lead alone is left of its batch.
    assert_eq!(h.restore(lead.id(), false).await.unwrap(), vec![lead.id()]);
    rt.shutdown().await;
}
