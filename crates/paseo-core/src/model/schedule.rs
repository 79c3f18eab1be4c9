//! Schedules (SPEC 20): recurring work that starts a new root agent on its due times. What a
//! schedule says (config.json `schedules[]`), when it is due (`cron` in the user's time zone,
//! `every`, `at`), and the one rule of what to do at an instant ([`decide`]): pure functions of
//! the schedule, what its ledger recorded and the clock, so every case (catch-up after sleep,
//! overlap, a time zone's daylight-saving change) is tested without waiting.

use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use croner::parser::{CronParser, Seconds};
use croner::Cron;

use serde::{Deserialize, Serialize};

use super::{AgentId, Budget};

/// The label every run carries, with its schedule's name (`list_agents` finds a schedule's runs
/// by it; the window marks them).
pub const SCHEDULE_LABEL: &str = "schedule";
/// The label every run carries, with the due time it ran for (RFC 3339, UTC).
pub const DUE_LABEL: &str = "scheduleDue";

/// The shortest `every` accepted: a schedule is work for an agent, not a busy loop.
pub const MIN_EVERY: Duration = Duration::from_secs(60);

/// A due time further back than this when it is seen is a late run (the app was not running,
/// or the machine slept, when it came).
pub const LATE_AFTER: Duration = Duration::from_secs(120);

/// One schedule, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// Unique among the schedules: the ledger and the runs' label (`schedule: <name>`) know it
    /// by it.
    pub name: String,
    pub when: When,
    pub provider: String,
    pub prompt: String,
    pub workspace: ScheduleWorkspace,
    pub model: Option<String>,
    pub mode: Option<String>,
    /// Each run's budget; absent: config.json's `budget` (every new root agent's).
    pub budget: Option<Budget>,
    pub auto_archive: bool,
    pub overlap: Overlap,
    pub paused: bool,
}

/// Where each run works.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleWorkspace {
    /// The directory's open workspace (a new one when none is open).
    Directory { path: String },
    /// A workspace by its id.
    Existing { workspace_id: String },
    /// A new worktree of `repo` for each run, branched off `base` (default: the repository's
    /// current branch).
    Worktree { repo: String, base: Option<String> },
}

/// What a due time does while an earlier run still works.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overlap {
    /// It is skipped (recorded as such): the default.
    #[default]
    Skip,
    /// It waits, and starts when the earlier run stops working.
    Queue,
}

/// When a schedule is due.
#[derive(Clone, Debug)]
pub enum When {
    /// Five fields (minute, hour, day of month, month, day of week), in the user's time zone.
    Cron { pattern: String, cron: Box<Cron> },
    /// Every this long from when the schedule was first seen.
    Every(Duration),
    /// Once, at this instant.
    At(DateTime<Utc>),
}

impl Eq for When {}

/// Its budget's cost is a number of USD, compared as config.json's other settings are.
impl Eq for Schedule {}

impl PartialEq for When {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (When::Cron { pattern: a, .. }, When::Cron { pattern: b, .. }) => a == b,
            (When::Every(a), When::Every(b)) => a == b,
            (When::At(a), When::At(b)) => a == b,
            _ => false,
        }
    }
}

/// How far ahead a cron pattern is looked at for a first due time: one that has none in eight
/// years (29 February on a Monday is at most 28 years away, and refused) never fires.
const CRON_HORIZON_DAYS: i64 = 8 * 366;

impl When {
    /// The one of `cron`, `every` or `at` a schedule gives (config.json's entries and the form's
    /// preview alike); an error is the field at fault and why.
    pub fn one_of(
        cron: Option<&str>,
        every: Option<&str>,
        at: Option<&str>,
    ) -> Result<When, (&'static str, String)> {
        match (cron, every, at) {
            (Some(c), None, None) => When::cron(c).map_err(|w| ("cron", w)),
            (None, Some(e), None) => When::every(e).map_err(|w| ("every", w)),
            (None, None, Some(a)) => When::at(a).map_err(|w| ("at", w)),
            (None, None, None) => Err((
                "cron",
                "missing: a schedule needs one of cron, every or at".into(),
            )),
            _ => Err(("cron", "give only one of cron, every or at".into())),
        }
    }

    /// A five-field cron pattern (`0 7 * * 1-5`); one that never fires is refused.
    pub fn cron(pattern: &str) -> Result<When, String> {
        let parser = CronParser::builder().seconds(Seconds::Disallowed).build();
        let cron = parser
            .parse(pattern)
            .map_err(|e| format!("{pattern:?} is not a five-field cron pattern: {e}"))?;
        let now = Utc::now();
        let fires = cron
            .find_next_occurrence(&now, false)
            .is_ok_and(|t| (t - now).num_days() <= CRON_HORIZON_DAYS);
        if !fires {
            return Err(format!("{pattern:?} never fires"));
        }
        Ok(When::Cron {
            pattern: pattern.trim().to_string(),
            cron: Box::new(cron),
        })
    }

    /// A duration of at least a minute: a number and a unit, `s`, `m`, `h` or `d`, several
    /// in a row (`90s`, `15m`, `1h30m`, `1d`).
    pub fn every(text: &str) -> Result<When, String> {
        let what =
            || format!("{text:?} is not a duration (expected e.g. \"15m\", \"1h30m\", \"1d\")");
        let mut total: u64 = 0;
        let mut digits = String::new();
        for c in text.trim().chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            let unit = match c {
                's' => 1,
                'm' => 60,
                'h' => 3600,
                'd' => 86_400,
                _ => return Err(what()),
            };
            let n: u64 = digits.parse().map_err(|_| what())?;
            total = n
                .checked_mul(unit)
                .and_then(|s| total.checked_add(s))
                .ok_or_else(what)?;
            digits.clear();
        }
        if !digits.is_empty() || total == 0 {
            return Err(what());
        }
        let every = Duration::from_secs(total);
        if every < MIN_EVERY {
            return Err(format!("{text:?} is under one minute"));
        }
        Ok(When::Every(every))
    }

    /// One instant, RFC 3339 with its offset (`2026-12-24T07:00:00+01:00`).
    pub fn at(text: &str) -> Result<When, String> {
        DateTime::parse_from_rfc3339(text.trim())
            .map(|t| When::At(t.with_timezone(&Utc)))
            .map_err(|e| format!("{text:?} is not an RFC 3339 time with its offset: {e}"))
    }

    /// The first due time strictly after `after`. `anchor` is when the schedule was first
    /// seen (what `every` counts from); `tz` is the user's time zone (what `cron` reads in).
    pub fn next_after<Tz: TimeZone>(
        &self,
        after: DateTime<Utc>,
        anchor: DateTime<Utc>,
        tz: &Tz,
    ) -> Option<DateTime<Utc>> {
        match self {
            When::Cron { cron, .. } => cron
                .find_next_occurrence(&after.with_timezone(tz), false)
                .ok()
                .map(|t| t.with_timezone(&Utc)),
            When::Every(every) => {
                let step = chrono::Duration::from_std(*every).ok()?;
                if after < anchor {
                    return Some(anchor + step);
                }
                let n = (after - anchor).num_milliseconds() / step.num_milliseconds().max(1);
                Some(anchor + step * (n as i32 + 1))
            }
            When::At(t) => (*t > after).then_some(*t),
        }
    }

    /// The latest due time in `(after, now]`, and whether another came before it in the same
    /// span (more than one was missed).
    pub fn latest_due<Tz: TimeZone>(
        &self,
        after: DateTime<Utc>,
        now: DateTime<Utc>,
        anchor: DateTime<Utc>,
        tz: &Tz,
    ) -> Option<(DateTime<Utc>, bool)> {
        let first = self.next_after(after, anchor, tz).filter(|t| *t <= now)?;
        let latest = match self {
            When::Cron { cron, .. } => cron
                .find_previous_occurrence(&now.with_timezone(tz), true)
                .ok()
                .map(|t| t.with_timezone(&Utc))
                .filter(|t| *t >= first)
                .unwrap_or(first),
            When::Every(every) => {
                let step = chrono::Duration::from_std(*every).ok()?;
                let n = (now - anchor).num_milliseconds() / step.num_milliseconds().max(1);
                anchor + step * (n as i32)
            }
            When::At(t) => *t,
        };
        Some((latest, latest > first))
    }
}

impl FromStr for Overlap {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "skip" => Ok(Overlap::Skip),
            "queue" => Ok(Overlap::Queue),
            other => Err(format!("{other:?} (expected \"skip\" or \"queue\")")),
        }
    }
}

/// What a due time gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub due: DateTime<Utc>,
    /// When it was dealt with.
    pub at: DateTime<Utc>,
    /// `started` (its run is `agentId`), `passed` (paused, or skipped behind a run still
    /// working: `why`) or `failed` (the run could not be created: `why`).
    pub what: OutcomeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<AgentId>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OutcomeKind {
    Started,
    Passed,
    Failed,
}

/// What the ledger knows of a schedule (SPEC 20): when it was first seen, the last due time it
/// dealt with (ran or skipped), and a fire recorded but not yet known to have its agent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    pub first_seen: Option<DateTime<Utc>>,
    pub last_due: Option<DateTime<Utc>>,
    pub pending: Option<Fire>,
}

/// One due time fired: the run it starts, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fire {
    pub due: DateTime<Utc>,
    /// Marked late: a catch-up for due times missed while nothing ran, or one seen long after
    /// it came.
    pub late: bool,
}

/// What to do about one schedule now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// A fire is recorded and its agent may not exist yet: make sure it does (once).
    Finish(Fire),
    /// Record this fire, then start its run.
    Fire(Fire),
    /// Record this due time as dealt with, without a run (paused, or an earlier run still
    /// works and the schedule skips).
    Pass { due: DateTime<Utc>, why: PassReason },
    /// Nothing now; the next due time, if any (checked again then).
    Wait { next: Option<DateTime<Utc>> },
    /// A due time waits for the earlier run to stop working (`overlap: queue`).
    Queued(Fire),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassReason {
    Paused,
    Overlap,
}

impl PassReason {
    pub fn as_str(self) -> &'static str {
        match self {
            PassReason::Paused => "paused",
            PassReason::Overlap => "skipped: the previous run was still working",
        }
    }
}

/// The one rule (SPEC 20) of what a schedule does at `now`: a recorded fire is finished first;
/// due times missed since the last one dealt with give one run for the latest of them, marked
/// late when more than one was missed or it came more than [`LATE_AFTER`] ago; a paused
/// schedule passes its due times; one whose earlier run still works (`busy`) skips or queues.
/// A schedule first seen now (`seen.first_seen` absent) counts from `now`: no due time before
/// it is owed.
pub fn decide<Tz: TimeZone>(
    s: &Schedule,
    seen: &Seen,
    now: DateTime<Utc>,
    tz: &Tz,
    busy: bool,
) -> Decision {
    if let Some(f) = seen.pending {
        return Decision::Finish(f);
    }
    let anchor = seen.first_seen.unwrap_or(now);
    let after = seen.last_due.map_or(anchor, |d| d.max(anchor));
    let Some((due, missed)) = s.when.latest_due(after, now, anchor, tz) else {
        return Decision::Wait {
            next: s.when.next_after(after.max(now), anchor, tz),
        };
    };
    if s.paused {
        return Decision::Pass {
            due,
            why: PassReason::Paused,
        };
    }
    let late_after = chrono::Duration::from_std(LATE_AFTER).unwrap_or_default();
    let fire = Fire {
        due,
        late: missed || now - due > late_after,
    };
    match (busy, s.overlap) {
        (false, _) => Decision::Fire(fire),
        (true, Overlap::Skip) => Decision::Pass {
            due,
            why: PassReason::Overlap,
        },
        (true, Overlap::Queue) => Decision::Queued(fire),
    }
}

/// A `when` in words, for rows and the form: croner's description of a cron pattern ("At
/// 07:00, on Monday through Friday."), "every 15 minutes", "once, 2026-12-24 07:00" (local).
pub fn words<Tz: TimeZone>(when: &When, tz: &Tz) -> String
where
    Tz::Offset: std::fmt::Display,
{
    match when {
        When::Cron { pattern, cron } => {
            cron_words(pattern).unwrap_or_else(|| cron.describe().trim_end_matches('.').to_string())
        }
        When::Every(d) => {
            let s = d.as_secs();
            let (n, unit) = match (s % 86_400, s % 3600, s % 60) {
                (0, _, _) => (s / 86_400, "day"),
                (_, 0, _) => (s / 3600, "hour"),
                (_, _, 0) => (s / 60, "minute"),
                _ => (s, "second"),
            };
            if n == 1 {
                format!("every {unit}")
            } else {
                format!("every {n} {unit}s")
            }
        }
        When::At(t) => format!("once, {}", t.with_timezone(tz).format("%Y-%m-%d %H:%M")),
    }
}

/// The common cron patterns in the words a person uses ("every day at 07:00", "weekdays at
/// 09:30", "every 15 minutes", "every hour at :05"); `None` for the rest, which croner words.
fn cron_words(pattern: &str) -> Option<String> {
    let f: Vec<&str> = pattern.split_whitespace().collect();
    let [minute, hour, dom, month, dow] = f[..] else {
        return None;
    };
    let number = |s: &str, max: u32| s.parse::<u32>().ok().filter(|n| *n <= max);
    if (dom, month) != ("*", "*") {
        return None;
    }
    if let (Some(m), Some(h)) = (number(minute, 59), number(hour, 23)) {
        let at = format!("{h:02}:{m:02}");
        return match dow {
            "*" => Some(format!("every day at {at}")),
            "1-5" => Some(format!("weekdays at {at}")),
            "0,6" | "6,0" => Some(format!("weekends at {at}")),
            _ => None,
        };
    }
    if (hour, dow) != ("*", "*") {
        return None;
    }
    if minute == "*" {
        return Some("every minute".into());
    }
    if let Some(n) = minute.strip_prefix("*/").and_then(|n| number(n, 59)) {
        return Some(format!("every {n} minutes"));
    }
    number(minute, 59).map(|m| format!("every hour at :{m:02}"))
}

/// The next `n` due times after `now` (the form shows three as the user types).
pub fn upcoming<Tz: TimeZone>(
    when: &When,
    now: DateTime<Utc>,
    anchor: DateTime<Utc>,
    tz: &Tz,
    n: usize,
) -> Vec<DateTime<Utc>> {
    let mut out = Vec::with_capacity(n);
    let mut t = now;
    while out.len() < n {
        match when.next_after(t, anchor, tz) {
            Some(next) => {
                out.push(next);
                t = next;
            }
            None => break,
        }
    }
    out
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
