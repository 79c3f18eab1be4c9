//! Schedules at work (SPEC 20), against the real runtime with shell agents, the clock given to
//! each pass: a due time starts one run (an ordinary root agent with its labels), downtime gives
//! one late catch-up, paused and overlap pass, a worktree per run, a failed start is said and not
//! retried, and a crash at each write boundary of a fire still gives exactly one run.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};
use paseo_core::api::verbs::ListAgents;
use paseo_core::api::{ApiError, Request, Response};
use paseo_core::model::schedule::{Fire, Overlap, Schedule, ScheduleWorkspace, When};
use paseo_core::model::Status;
use paseo_core::runtime::{AgentSnapshot, Caller};
use paseo_core::schedules::ledger::{Entry, OutcomeKind};
use paseo_core::schedules::{Ledger, Runner, DUE_LABEL, SCHEDULE_LABEL};
use paseo_core::server::{Runtime, Server};
use paseo_core::store::Layout;

use crate::support::git::{git, init_repo, shell_runtime};
use crate::support::Door;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn schedule(name: &str, when: When, work: &Path, prompt: &str) -> Schedule {
    Schedule {
        name: name.into(),
        when,
        provider: "shell".into(),
        prompt: prompt.into(),
        workspace: ScheduleWorkspace::Directory {
            path: work.display().to_string(),
        },
        model: None,
        mode: None,
        budget: None,
        auto_archive: false,
        overlap: Overlap::Skip,
        paused: false,
    }
}

struct Fx {
    _dir: tempfile::TempDir,
    home: std::path::PathBuf,
    work: std::path::PathBuf,
    rt: Runtime,
}

impl Fx {
    async fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let rt = shell_runtime(&home).await;
        rt.handle().deliver_pending().await.unwrap();
        Fx {
            _dir: dir,
            home,
            work,
            rt,
        }
    }

    fn runner(&self, schedules: Vec<Schedule>) -> Runner<Utc> {
        Runner {
            server: self.rt.handle(),
            layout: Layout::new(&self.home),
            schedules,
            tz: Utc,
        }
    }

    /// The app again on the same data root, as after a crash or a quit.
    async fn restart(self) -> Fx {
        self.rt.shutdown().await;
        let rt = shell_runtime(&self.home).await;
        rt.handle().deliver_pending().await.unwrap();
        Fx { rt, ..self }
    }
}

/// Every run of `name`, archived ones included, oldest first.
async fn runs(server: &Server, name: &str) -> Vec<AgentSnapshot> {
    let list = ListAgents {
        include_archived: true,
        labels: BTreeMap::from([(SCHEDULE_LABEL.to_string(), name.to_string())]),
        limit: Some(1000),
        this_machine: true,
        ..Default::default()
    };
    match server.call(Caller::User, Request::ListAgents(list)).await {
        Ok(Response::Agents { agents, .. }) => agents,
        other => panic!("{other:?}"),
    }
}

async fn settled(server: &Server, a: &AgentSnapshot) -> AgentSnapshot {
    server
        .wait(a.id(), Duration::from_secs(20))
        .await
        .unwrap()
        .agent
}

#[tokio::test]
async fn a_due_time_starts_one_run_and_downtime_one_late_catch_up() {
    let fx = Fx::new().await;
    let s = schedule("hourly", When::every("1h").unwrap(), &fx.work, "echo ran");
    let r = fx.runner(vec![s]);
    let mut ledger = Ledger::load(&r.layout);
    let t0 = t("2026-12-08T08:00:00Z");
    // First seen: nothing owed before it.
    let next = r.pass(&mut ledger, t0).await;
    assert_eq!(next, Some(t("2026-12-08T09:00:00Z")));
    assert!(runs(&r.server, "hourly").await.is_empty());

    // On time: one run, an ordinary root agent with its labels and the schedule's name.
    r.pass(&mut ledger, t("2026-12-08T09:00:02Z")).await;
    r.pass(&mut ledger, t("2026-12-08T09:00:05Z")).await;
    let v = runs(&r.server, "hourly").await;
    assert_eq!(v.len(), 1, "{v:?}");
    let run = settled(&r.server, &v[0]).await;
    assert_eq!(run.status, Status::Idle, "{:?}", run.record.last_error);
    assert_eq!(
        run.record.labels.get(DUE_LABEL),
        Some("2026-12-08T09:00:00Z")
    );
    assert_eq!(run.parent_agent_id, None);
    assert!(
        run.record.title.starts_with("hourly · 2026-12-08 09:00"),
        "{}",
        run.record.title
    );
    let e = &ledger.schedules["hourly"];
    let last = e.last.as_ref().unwrap();
    assert_eq!(
        (last.what, last.agent_id, last.late),
        (OutcomeKind::Started, Some(run.id()), false)
    );

    // The machine slept from 09:10 to 14:20: one run for 14:00, marked late.
    r.pass(&mut ledger, t("2026-12-08T14:20:00Z")).await;
    r.pass(&mut ledger, t("2026-12-08T14:20:01Z")).await;
    let v = runs(&r.server, "hourly").await;
    assert_eq!(v.len(), 2, "{v:?}");
    assert_eq!(
        v[1].record.labels.get(DUE_LABEL),
        Some("2026-12-08T14:00:00Z")
    );
    assert!(
        v[1].record.title.ends_with("(late)"),
        "{}",
        v[1].record.title
    );
    assert!(ledger.schedules["hourly"].last.as_ref().unwrap().late);

    // The ledger on disk is what a restart reads.
    assert_eq!(Ledger::load(&r.layout), ledger);
    fx.rt.shutdown().await;
}

/// A crash at each write boundary of a fire: after the fire is recorded (before its run
/// exists), after its run exists (before the fire is closed), after it is closed. Each restart
/// gives exactly one run for the due time.
#[tokio::test]
async fn a_crash_at_each_write_boundary_of_a_fire_gives_exactly_one_run() {
    let due = t("2026-12-08T09:00:00Z");
    let fire = Fire { due, late: false };
    for boundary in ["fire recorded", "run created", "fire closed"] {
        let fx = Fx::new().await;
        let s = schedule(
            "b",
            When::every("1h").unwrap(),
            &fx.work,
            "echo once >> once.log",
        );
        let r = fx.runner(vec![s.clone()]);
        let mut ledger = Ledger::default();
        ledger
            .schedules
            .insert("b".into(), Entry::new(t("2026-12-08T08:00:00Z")));
        ledger.schedules.get_mut("b").unwrap().fire(fire);
        ledger.save(&r.layout).unwrap();
        let recorded = ledger.clone();
        if boundary != "fire recorded" {
            r.finish(&mut ledger, &s, fire, due).await;
            // Its turn ends before the crash: a second run would show in its output.
            let v = runs(&r.server, "b").await;
            settled(&r.server, &v[0]).await;
            if boundary == "run created" {
                // The close never reached the disk.
                recorded.save(&r.layout).unwrap();
            }
        }
        drop(r);
        let fx = fx.restart().await;
        let r = fx.runner(vec![s.clone()]);
        let mut ledger = Ledger::load(&r.layout);
        r.pass(&mut ledger, t("2026-12-08T09:00:10Z")).await;
        r.pass(&mut ledger, t("2026-12-08T09:00:20Z")).await;
        let v = runs(&r.server, "b").await;
        assert_eq!(v.len(), 1, "{boundary}: {v:?}");
        let run = settled(&r.server, &v[0]).await;
        assert_eq!(run.record.turn_count, 1, "{boundary}");
        let log = std::fs::read_to_string(fx.work.join("once.log")).unwrap_or_default();
        assert_eq!(log.lines().count(), 1, "{boundary}: the prompt ran {log:?}");
        let e = &ledger.schedules["b"];
        assert_eq!(e.pending, None, "{boundary}");
        assert_eq!(e.last_due, Some(due), "{boundary}");
        assert_eq!(
            e.last.as_ref().unwrap().agent_id,
            Some(v[0].id()),
            "{boundary}"
        );
        fx.rt.shutdown().await;
    }
}

#[tokio::test]
async fn paused_and_overlap_pass_their_due_times_and_queue_waits() {
    let fx = Fx::new().await;
    let mut paused = schedule("paused", When::every("1h").unwrap(), &fx.work, "true");
    paused.paused = true;
    let skip = schedule("skip", When::every("1h").unwrap(), &fx.work, "sleep 30");
    let mut queue = schedule("queue", When::every("1h").unwrap(), &fx.work, "sleep 1");
    queue.overlap = Overlap::Queue;
    let r = fx.runner(vec![paused, skip, queue]);
    let mut ledger = Ledger::default();
    r.pass(&mut ledger, t("2026-12-08T08:00:00Z")).await;
    r.pass(&mut ledger, t("2026-12-08T09:00:01Z")).await;
    assert!(runs(&r.server, "paused").await.is_empty());
    let e = &ledger.schedules["paused"];
    assert_eq!(e.last.as_ref().unwrap().what, OutcomeKind::Passed);
    assert_eq!(e.last.as_ref().unwrap().why.as_deref(), Some("paused"));
    let first_skip = runs(&r.server, "skip").await;
    let first_queue = runs(&r.server, "queue").await;
    assert_eq!((first_skip.len(), first_queue.len()), (1, 1));

    // The next hour comes while both still work: `skip` passes it, `queue` waits for its run.
    paseo_core_wait_running(&r.server, &first_skip[0]).await;
    paseo_core_wait_running(&r.server, &first_queue[0]).await;
    r.pass(&mut ledger, t("2026-12-08T10:00:01Z")).await;
    assert_eq!(runs(&r.server, "skip").await.len(), 1);
    let e = &ledger.schedules["skip"];
    assert_eq!(e.last.as_ref().unwrap().what, OutcomeKind::Passed);
    assert_eq!(e.last_due, Some(t("2026-12-08T10:00:00Z")));
    assert_eq!(
        runs(&r.server, "queue").await.len(),
        1,
        "queued behind its run"
    );
    settled(&r.server, &first_queue[0]).await;
    r.pass(&mut ledger, t("2026-12-08T10:00:30Z")).await;
    let q = runs(&r.server, "queue").await;
    assert_eq!(
        q.len(),
        2,
        "the queued due time ran once the first run stopped"
    );
    assert_eq!(
        q[1].record.labels.get(DUE_LABEL),
        Some("2026-12-08T10:00:00Z")
    );
    fx.rt.shutdown().await;
}

async fn paseo_core_wait_running(server: &Server, a: &AgentSnapshot) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let v = runs(server, a.record.labels.get(SCHEDULE_LABEL).unwrap()).await;
        if v.iter()
            .any(|x| x.id() == a.id() && x.status == Status::Running)
        {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_worktree_run_gets_its_own_branch_and_a_failed_start_is_said_once() {
    let fx = Fx::new().await;
    let repo = fx.work.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init_repo(&repo);
    let mut wt = schedule(
        "tree",
        When::every("1h").unwrap(),
        &fx.work,
        "git branch --show-current > branch.txt",
    );
    wt.workspace = ScheduleWorkspace::Worktree {
        repo: repo.display().to_string(),
        base: None,
    };
    let mut gone = schedule("gone", When::every("1h").unwrap(), &fx.work, "true");
    gone.workspace = ScheduleWorkspace::Existing {
        workspace_id: "f0f0f0f0-0000-4000-8000-000000000000".into(),
    };
    let r = fx.runner(vec![wt, gone]);
    let mut ledger = Ledger::default();
    r.pass(&mut ledger, t("2026-12-08T08:00:00Z")).await;
    r.pass(&mut ledger, t("2026-12-08T09:00:01Z")).await;
    let v = runs(&r.server, "tree").await;
    assert_eq!(v.len(), 1);
    let run = settled(&r.server, &v[0]).await;
    assert_eq!(run.status, Status::Idle, "{:?}", run.record.last_error);
    let branch = std::fs::read_to_string(Path::new(&run.record.cwd).join("branch.txt")).unwrap();
    assert_eq!(branch.trim(), "schedule/tree/20261208-090000");
    assert_ne!(Path::new(&run.record.cwd), repo.as_path());
    assert!(git(&repo, &["branch", "--list", "schedule/tree/*"]).contains("20261208-090000"));

    let e = &ledger.schedules["gone"];
    let last = e.last.as_ref().unwrap();
    assert_eq!(last.what, OutcomeKind::Failed);
    assert!(
        last.why.as_deref().unwrap().contains("workspace"),
        "{last:?}"
    );
    // Dealt with: the next pass does not try that due time again.
    r.pass(&mut ledger, t("2026-12-08T09:00:30Z")).await;
    assert_eq!(
        ledger.schedules["gone"].last.as_ref().unwrap().at,
        t("2026-12-08T09:00:01Z")
    );
    fx.rt.shutdown().await;
}

async fn ask(server: &Server, request: Request) -> Result<Response, ApiError> {
    server
        .call(Caller::User, request)
        .await
        .map_err(ApiError::from)
}

fn listed(r: Result<Response, ApiError>) -> Vec<paseo_core::api::ScheduleView> {
    match r {
        Ok(Response::Schedules(v)) => v,
        other => panic!("{other:?}"),
    }
}

/// The schedule verbs (the window's Schedules section): saved to config.json when valid and
/// refused with the field named when not (nothing written), listed with their next due times,
/// paused, run now (one labelled run), removed; previewed as the user types; the user's only.
#[tokio::test]
async fn the_schedule_verbs_edit_config_json_and_run_now_starts_one_run() {
    use paseo_core::api::verbs::{
        DeleteSchedule, ListSchedules, PauseSchedule, PreviewSchedule, RunSchedule, SaveSchedule,
    };
    let fx = Fx::new().await;
    let server = fx.rt.handle();
    let scheduler =
        paseo_core::schedules::Scheduler::start(server.clone(), fx.home.clone(), vec![]);
    assert!(
        listed(ask(&server, Request::ListSchedules(ListSchedules::default())).await).is_empty()
    );
    let config = fx.home.join("config.json");

    // Bad: refused with the field, nothing written.
    let bad = serde_json::json!({"name": "hourly", "every": "10s", "provider": "shell",
        "prompt": "echo hi", "workspace": {"kind": "directory", "path": fx.work}});
    let e = ask(
        &server,
        Request::SaveSchedule(SaveSchedule {
            schedule: bad,
            replaces: None,
            host: None,
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.field.as_deref()),
        ("invalid", Some("schedule.every")),
        "{e:?}"
    );
    assert!(e.message.contains("under one minute"), "{e:?}");
    assert!(!config.exists(), "nothing written");

    let good = serde_json::json!({"name": "hourly", "every": "1h", "provider": "shell",
        "prompt": "echo hi", "workspace": {"kind": "directory", "path": fx.work}});
    let v = listed(
        ask(
            &server,
            Request::SaveSchedule(SaveSchedule {
                schedule: good.clone(),
                replaces: None,
                host: None,
            }),
        )
        .await,
    );
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].words, "every hour");
    assert_eq!(v[0].next.len(), 3);
    assert_eq!(v[0].entry, good);
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(on_disk["schedules"][0], good);
    let twice = ask(
        &server,
        Request::SaveSchedule(SaveSchedule {
            schedule: good.clone(),
            replaces: None,
            host: None,
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(twice.code, "conflict");

    // Paused in the file; run now still starts one run.
    let v = listed(
        ask(
            &server,
            Request::PauseSchedule(PauseSchedule {
                name: "hourly".into(),
                paused: true,
                host: None,
            }),
        )
        .await,
    );
    assert!(v[0].paused);
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(on_disk["schedules"][0]["paused"], true);
    ask(
        &server,
        Request::RunSchedule(RunSchedule {
            name: "hourly".into(),
            host: None,
        }),
    )
    .await
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let run = loop {
        let v = runs(&server, "hourly").await;
        if let Some(r) = v.first() {
            break r.clone();
        }
        assert!(std::time::Instant::now() < deadline, "run now never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let run = settled(&server, &run).await;
    assert_eq!(run.status, Status::Idle, "{:?}", run.record.last_error);
    assert!(run.record.labels.get(DUE_LABEL).is_some());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(runs(&server, "hourly").await.len(), 1, "once");
    let v = listed(ask(&server, Request::ListSchedules(ListSchedules::default())).await);
    let last = v[0].last.as_ref().expect("the run is its last outcome");
    assert_eq!(last.agent_id, Some(run.id()));

    // Preview as the user types.
    let p = ask(
        &server,
        Request::PreviewSchedule(PreviewSchedule {
            every: Some("15m".into()),
            ..Default::default()
        }),
    )
    .await
    .unwrap();
    let Response::Preview { words, next } = p else {
        panic!("{p:?}")
    };
    assert_eq!(words, "every 15 minutes");
    assert_eq!(next.len(), 3);
    assert_eq!((next[1] - next[0]).num_minutes(), 15);
    let e = ask(
        &server,
        Request::PreviewSchedule(PreviewSchedule {
            cron: Some("0 7 * *".into()),
            ..Default::default()
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("cron"));

    // An agent may not see or change schedules.
    let agent = paseo_core::model::AgentId::new();
    let refused = ApiError::from(
        server
            .call(
                Caller::Agent(agent),
                Request::ListSchedules(ListSchedules::default()),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(refused.code, "forbidden", "{refused:?}");

    // Removed; its run stays.
    let v = listed(
        ask(
            &server,
            Request::DeleteSchedule(DeleteSchedule {
                name: "hourly".into(),
                host: None,
            }),
        )
        .await,
    );
    assert!(v.is_empty());
    assert_eq!(runs(&server, "hourly").await.len(), 1);
    let gone = ask(
        &server,
        Request::DeleteSchedule(DeleteSchedule {
            name: "hourly".into(),
            host: None,
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(
        (gone.code.as_str(), gone.field.as_deref()),
        ("not_found", Some("name"))
    );
    scheduler.stop();
    fx.rt.shutdown().await;
}
