//! The scheduler: a task beside the runtime that wakes at each schedule's next due time (and at
//! least every [`RECHECK`], so a clock jump after a suspend is noticed within it), asks the rule
//! ([`decide`]) what to do, and does it through the one door, as the user: a run is an
//! ordinary `createAgent` request, with its budget and its configured powers (SPEC 20).
//!
//! Exactly once: the fire is written to the ledger before the run is created, and the run is
//! found again by its labels after a crash ([`Runner::finish`]), so a recorded due time is
//! never lost and, once its run's record is on disk, never started twice. (The record is
//! written in the step that starts the run's session, and fsynced a moment later: a crash in
//! those milliseconds can leave a prompt begun with no record, and the due time runs again.)

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Local, SecondsFormat, TimeZone, Timelike, Utc};
use tokio::task::JoinHandle;

use super::book::Book;
use super::ledger::{Entry, Ledger, Outcome, OutcomeKind};
use crate::api::verbs::{CreateAgent, ListAgents};
use crate::api::{Request, Response};
use crate::model::schedule::{decide, Decision, Fire, Schedule, ScheduleWorkspace};
use crate::model::{AgentId, Status, WorkspaceId};
use crate::runtime::{Caller, DirectoryWorkspace, WorkspaceTarget};
use crate::server::Server;
use crate::store::Layout;
use crate::workspaces::worktree::WorktreeTarget;

pub use crate::model::schedule::{DUE_LABEL, SCHEDULE_LABEL};

/// The longest the scheduler sleeps before looking at the clock again.
pub const RECHECK: Duration = Duration::from_secs(30);

/// How often a due time queued behind a working run looks again.
const QUEUED_RECHECK: Duration = Duration::from_secs(5);

/// The running scheduler; stopping it ends the task (a fire in flight is finished by the next
/// start, from the ledger).
pub struct Scheduler {
    task: JoinHandle<()>,
}

impl Scheduler {
    /// Starts the schedules of config.json on `server` (this machine's runtime), and gives the
    /// server's schedule verbs their side of it.
    pub fn start(server: Server, home: PathBuf, schedules: Vec<Schedule>) -> Scheduler {
        let book = Book::new(home.clone(), schedules.clone());
        server.set_schedules(book.clone());
        let runner = Runner {
            server,
            layout: Layout::new(home),
            schedules,
            tz: Local,
        };
        Scheduler {
            task: tokio::spawn(runner.run(book)),
        }
    }

    pub fn stop(self) {
        self.task.abort();
    }
}

/// The scheduler's work, one pass at a time (a test drives [`Runner::pass`] with its own
/// clock and time zone).
pub struct Runner<Tz: TimeZone> {
    pub server: Server,
    pub layout: Layout,
    pub schedules: Vec<Schedule>,
    pub tz: Tz,
}

impl<Tz: TimeZone + Send + Sync + 'static> Runner<Tz>
where
    Tz::Offset: Send + Sync,
{
    async fn run(mut self, book: Arc<Book>) {
        let mut ledger = Ledger::load(&self.layout);
        loop {
            self.schedules = book.schedules();
            let now = Utc::now();
            let mut next = self.pass(&mut ledger, now).await;
            for name in book.take_run_now() {
                match self.schedules.iter().find(|s| s.name == name) {
                    Some(s) if !self.run_now(&mut ledger, s, now).await => {
                        book.run_later(name);
                        next = Some(now);
                    }
                    _ => {}
                }
            }
            book.set_ledger(&ledger);
            let wait = next
                .and_then(|t| (t - Utc::now()).to_std().ok())
                .unwrap_or_default()
                .clamp(Duration::from_millis(200), RECHECK);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = book.wake.notified() => {}
            }
        }
    }

    /// A run of `s` now, asked for by the user, recorded as the due time `now` like any fire
    /// (so it too starts once). Returns false when the schedule has a fire in flight (it waits
    /// for the next pass).
    pub async fn run_now(&self, ledger: &mut Ledger, s: &Schedule, now: DateTime<Utc>) -> bool {
        let e = ledger
            .schedules
            .entry(s.name.clone())
            .or_insert_with(|| Entry::new(now));
        if e.pending.is_some() {
            return false;
        }
        let f = Fire {
            due: now.with_nanosecond(0).unwrap_or(now),
            late: false,
        };
        e.fire(f);
        if !self.save(ledger) {
            return false;
        }
        self.finish(ledger, s, f, now).await;
        true
    }

    /// Deals with every schedule at `now`; returns the earliest instant anything is due next.
    pub async fn pass(&self, ledger: &mut Ledger, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let mut next: Option<DateTime<Utc>> = None;
        for s in &self.schedules {
            let wake = self.tick(ledger, s, now).await;
            next = match (next, wake) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        next
    }

    /// One schedule at `now`: what the rule says, done, the ledger written at each step.
    async fn tick(
        &self,
        ledger: &mut Ledger,
        s: &Schedule,
        now: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        if !ledger.schedules.contains_key(&s.name) {
            ledger.schedules.insert(s.name.clone(), Entry::new(now));
            self.save(ledger);
        }
        let seen = ledger.schedules.get(&s.name)?.seen();
        let mut decision = decide(s, &seen, now, &self.tz, false);
        if matches!(decision, Decision::Fire(_)) && self.busy(s).await {
            decision = decide(s, &seen, now, &self.tz, true);
        }
        match decision {
            Decision::Wait { next } => next,
            Decision::Queued(_) => Some(now + QUEUED_RECHECK),
            Decision::Pass { due, why } => {
                tracing::info!(schedule = %s.name, %due, why = why.as_str(), "a due time passed");
                self.close(
                    ledger,
                    s,
                    Outcome {
                        due,
                        at: now,
                        what: OutcomeKind::Passed,
                        agent_id: None,
                        late: false,
                        why: Some(why.as_str().to_string()),
                    },
                );
                Some(now)
            }
            Decision::Fire(f) => {
                if let Some(e) = ledger.schedules.get_mut(&s.name) {
                    e.fire(f);
                }
                // Durable before the run exists: a crash from here on finishes this fire.
                if !self.save(ledger) {
                    return Some(now + QUEUED_RECHECK);
                }
                self.finish(ledger, s, f, now).await;
                Some(now)
            }
            Decision::Finish(f) => {
                self.finish(ledger, s, f, now).await;
                Some(now)
            }
        }
    }

    /// Makes sure the run of fire `f` exists (found by its labels, else created) and closes
    /// the fire.
    pub async fn finish(&self, ledger: &mut Ledger, s: &Schedule, f: Fire, now: DateTime<Utc>) {
        let due = due_label(f.due);
        let outcome = match self.find_run(s, &due).await {
            Ok(Some(id)) => Ok(id),
            Ok(None) => self.create_run(s, f, &due).await,
            Err(e) => Err(e),
        };
        let (what, agent_id, why) = match outcome {
            Ok(id) => {
                tracing::info!(schedule = %s.name, due = %due, agent = %id, late = f.late, "a schedule started its run");
                (OutcomeKind::Started, Some(id), None)
            }
            Err(why) => {
                tracing::error!(schedule = %s.name, due = %due, %why, "a schedule's run could not start");
                (OutcomeKind::Failed, None, Some(why))
            }
        };
        self.close(
            ledger,
            s,
            Outcome {
                due: f.due,
                at: now,
                what,
                agent_id,
                late: f.late,
                why,
            },
        );
    }

    fn close(&self, ledger: &mut Ledger, s: &Schedule, outcome: Outcome) {
        if let Some(e) = ledger.schedules.get_mut(&s.name) {
            e.close(outcome);
        }
        self.save(ledger);
    }

    fn save(&self, ledger: &Ledger) -> bool {
        match ledger.save(&self.layout) {
            Ok(()) => true,
            Err(error) => {
                tracing::error!(%error, "cannot write schedules.json: no schedule fires until it can be written");
                false
            }
        }
    }

    /// Whether an earlier run of `s` still works (starting, waiting for a slot, or running).
    async fn busy(&self, s: &Schedule) -> bool {
        let working = Some(vec![Status::Initializing, Status::Running]);
        self.runs(s, None, working)
            .await
            .is_ok_and(|found| found.is_some())
    }

    /// The run of `s` for the due time `due`, archived or not, if it exists.
    async fn find_run(&self, s: &Schedule, due: &str) -> Result<Option<AgentId>, String> {
        self.runs(s, Some(due), None).await
    }

    /// The first run of `s` (for the due time `due`, when given; archived ones too unless
    /// `statuses` narrows them), found by its labels.
    async fn runs(
        &self,
        s: &Schedule,
        due: Option<&str>,
        statuses: Option<Vec<Status>>,
    ) -> Result<Option<AgentId>, String> {
        let mut labels = BTreeMap::from([(SCHEDULE_LABEL.to_string(), s.name.clone())]);
        if let Some(due) = due {
            labels.insert(DUE_LABEL.to_string(), due.to_string());
        }
        let list = ListAgents {
            include_archived: statuses.is_none(),
            statuses,
            labels,
            limit: Some(1),
            this_machine: true,
            ..Default::default()
        };
        match self
            .server
            .call(Caller::User, Request::ListAgents(list))
            .await
        {
            Ok(Response::Agents { agents, .. }) => Ok(agents.first().map(|a| a.id())),
            Ok(other) => Err(format!("listAgents answered {other:?}")),
            Err(e) => Err(e.to_string()),
        }
    }

    async fn create_run(&self, s: &Schedule, f: Fire, due: &str) -> Result<AgentId, String> {
        let workspace = match &s.workspace {
            ScheduleWorkspace::Directory { path } => {
                WorkspaceTarget::Directory(DirectoryWorkspace {
                    path: path.clone(),
                    reuse: true,
                })
            }
            ScheduleWorkspace::Existing { workspace_id } => {
                let id: WorkspaceId = workspace_id
                    .parse()
                    .map_err(|e| format!("workspace {workspace_id:?}: {e}"))?;
                WorkspaceTarget::existing(id)
            }
            ScheduleWorkspace::Worktree { repo, base } => WorkspaceTarget::worktree(
                Some(repo.clone()),
                WorktreeTarget::branch_off(branch_for(&s.name, f.due), base.as_deref()),
            ),
        };
        let mut c = CreateAgent::new(&s.provider, workspace);
        c.model = s.model.clone();
        c.mode = s.mode.clone();
        let when = f
            .due
            .with_timezone(&self.tz)
            .naive_local()
            .format("%Y-%m-%d %H:%M");
        let late = if f.late { " (late)" } else { "" };
        c.title = Some(format!("{} · {when}{late}", s.name));
        c.prompt = Some(s.prompt.clone());
        c.auto_archive = s.auto_archive;
        c.budget = s.budget;
        c.labels = BTreeMap::from([
            (SCHEDULE_LABEL.to_string(), s.name.clone()),
            (DUE_LABEL.to_string(), due.to_string()),
        ]);
        match self
            .server
            .call(Caller::User, Request::CreateAgent(c))
            .await
        {
            Ok(Response::Agent(a)) => Ok(a.id()),
            Ok(other) => Err(format!("createAgent answered {other:?}")),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// A due time as its run's label says it: RFC 3339 in UTC, to the second.
pub fn due_label(due: DateTime<Utc>) -> String {
    due.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The branch a worktree run works on: `schedule/<name>/<due>`, the name in branch-safe
/// characters.
fn branch_for(name: &str, due: DateTime<Utc>) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("schedule/{safe}/{}", due.format("%Y%m%d-%H%M%S"))
}
