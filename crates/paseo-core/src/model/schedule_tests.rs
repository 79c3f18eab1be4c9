//! The schedule rule with a controlled clock: due times of `cron`, `every` and `at`, a time
//! zone's daylight-saving changes, catch-up after downtime (one run, late), paused, overlap.

use chrono::{FixedOffset, MappedLocalTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

use super::*;

/// Central European time in 2026 (the same rule as Europe/Berlin that year): +01:00, and
/// +02:00 from 29 March 01:00 UTC to 25 October 01:00 UTC. Local 02:00–03:00 on 29 March does
/// not exist; local 02:00–03:00 on 25 October happens twice.
#[derive(Clone, Copy, Debug)]
struct Cet2026;

impl Cet2026 {
    fn summer(utc: &NaiveDateTime) -> bool {
        let start = utc_at("2026-03-29T01:00:00Z").naive_utc();
        let end = utc_at("2026-10-25T01:00:00Z").naive_utc();
        (start..end).contains(utc)
    }
}

fn hours(h: i32) -> FixedOffset {
    FixedOffset::east_opt(h * 3600).unwrap()
}

impl TimeZone for Cet2026 {
    type Offset = FixedOffset;
    fn from_offset(_: &FixedOffset) -> Self {
        Cet2026
    }
    fn offset_from_local_date(&self, local: &NaiveDate) -> MappedLocalTime<FixedOffset> {
        self.offset_from_local_datetime(&local.and_hms_opt(12, 0, 0).unwrap())
    }
    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> MappedLocalTime<FixedOffset> {
        let as_summer = Self::summer(&(*local - chrono::Duration::hours(2)));
        let as_winter = !Self::summer(&(*local - chrono::Duration::hours(1)));
        match (as_summer, as_winter) {
            (true, true) => MappedLocalTime::Ambiguous(hours(2), hours(1)),
            (true, false) => MappedLocalTime::Single(hours(2)),
            (false, true) => MappedLocalTime::Single(hours(1)),
            (false, false) => MappedLocalTime::None,
        }
    }
    fn offset_from_utc_date(&self, utc: &NaiveDate) -> FixedOffset {
        self.offset_from_utc_datetime(&utc.and_hms_opt(12, 0, 0).unwrap())
    }
    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> FixedOffset {
        if Self::summer(utc) {
            hours(2)
        } else {
            hours(1)
        }
    }
}

fn utc_at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn schedule(when: When) -> Schedule {
    Schedule {
        name: "nightly".into(),
        when,
        provider: "shell".into(),
        prompt: "true".into(),
        workspace: ScheduleWorkspace::Directory { path: "/".into() },
        model: None,
        mode: None,
        budget: None,
        auto_archive: false,
        overlap: Overlap::Skip,
        paused: false,
    }
}

fn seen(first: &str, last: Option<&str>) -> Seen {
    Seen {
        first_seen: Some(utc_at(first)),
        last_due: last.map(utc_at),
        pending: None,
    }
}

#[test]
fn cron_is_read_in_the_users_time_zone() {
    let w = When::cron("0 7 * * *").unwrap();
    let anchor = utc_at("2026-01-10T00:00:00Z");
    // 07:00 in Berlin in winter is 06:00 UTC; in summer 05:00 UTC.
    assert_eq!(
        w.next_after(utc_at("2026-01-10T00:00:00Z"), anchor, &Cet2026),
        Some(utc_at("2026-01-10T06:00:00Z"))
    );
    assert_eq!(
        w.next_after(utc_at("2026-07-01T00:00:00Z"), anchor, &Cet2026),
        Some(utc_at("2026-07-01T05:00:00Z"))
    );
    assert_eq!(
        w.next_after(utc_at("2026-01-10T00:00:00Z"), anchor, &Utc),
        Some(utc_at("2026-01-10T07:00:00Z"))
    );
}

#[test]
fn a_daylight_saving_change_neither_skips_nor_doubles_a_due_time() {
    let anchor = utc_at("2026-01-01T00:00:00Z");
    // 02:30 does not exist on 29 March: that day's run comes right after the change, once.
    let w = When::cron("30 2 * * *").unwrap();
    let march = upcoming(&w, utc_at("2026-03-28T12:00:00Z"), anchor, &Cet2026, 3);
    assert_eq!(
        march,
        vec![
            utc_at("2026-03-29T01:00:00Z"),
            utc_at("2026-03-30T00:30:00Z"),
            utc_at("2026-03-31T00:30:00Z"),
        ]
    );
    // 02:30 happens twice on 25 October: it runs once, at the first.
    let october = upcoming(&w, utc_at("2026-10-24T12:00:00Z"), anchor, &Cet2026, 3);
    assert_eq!(
        october,
        vec![
            utc_at("2026-10-25T00:30:00Z"),
            utc_at("2026-10-26T01:30:00Z"),
            utc_at("2026-10-27T01:30:00Z"),
        ]
    );
    // `every` counts real time, whatever the clock on the wall says.
    let e = When::every("1h").unwrap();
    let a = utc_at("2026-03-29T00:00:00Z");
    assert_eq!(
        upcoming(&e, a, a, &Cet2026, 3),
        vec![
            utc_at("2026-03-29T01:00:00Z"),
            utc_at("2026-03-29T02:00:00Z"),
            utc_at("2026-03-29T03:00:00Z"),
        ]
    );
}

#[test]
fn every_counts_from_when_the_schedule_was_first_seen_and_at_fires_once() {
    let e = When::every("15m").unwrap();
    let anchor = utc_at("2026-12-08T10:07:00Z");
    assert_eq!(
        upcoming(&e, utc_at("2026-12-08T10:30:00Z"), anchor, &Utc, 2),
        vec![
            utc_at("2026-12-08T10:37:00Z"),
            utc_at("2026-12-08T10:52:00Z")
        ]
    );
    let at = When::at("2026-12-24T07:00:00+01:00").unwrap();
    assert_eq!(
        upcoming(&at, anchor, anchor, &Utc, 3),
        vec![utc_at("2026-12-24T06:00:00Z")]
    );
    assert_eq!(
        at.next_after(utc_at("2026-12-24T06:00:00Z"), anchor, &Utc),
        None
    );
}

#[test]
fn bad_whens_say_what_is_wrong() {
    assert!(When::every("30s").unwrap_err().contains("under one minute"));
    assert!(When::every("59s").is_err());
    assert!(When::every("1m").is_ok());
    assert_eq!(
        When::every("1h30m").unwrap(),
        When::Every(Duration::from_secs(5400))
    );
    for bad in [
        "",
        "15",
        "m",
        "15 minutes",
        "-5m",
        "1.5h",
        "99999999999999999999d",
    ] {
        assert!(When::every(bad).is_err(), "{bad}");
    }
    assert!(When::cron("0 7 * *").unwrap_err().contains("five-field"));
    assert!(
        When::cron("0 0 7 * * *").is_err(),
        "six fields (seconds) are not cron here"
    );
    assert!(When::cron("61 7 * * *").is_err());
    assert!(When::cron("0 0 31 2 *")
        .unwrap_err()
        .contains("never fires"));
    assert!(When::at("tomorrow").is_err());
    assert!(
        When::at("2026-12-24T07:00:00").is_err(),
        "an instant needs its offset"
    );
    assert_eq!("queue".parse::<Overlap>(), Ok(Overlap::Queue));
    assert!("later".parse::<Overlap>().is_err());
}

#[test]
fn a_new_schedule_owes_nothing_before_it_was_seen() {
    let s = schedule(When::cron("0 7 * * *").unwrap());
    let now = utc_at("2026-12-08T12:00:00Z");
    assert_eq!(
        decide(&s, &Seen::default(), now, &Utc, false),
        Decision::Wait {
            next: Some(utc_at("2026-12-09T07:00:00Z"))
        }
    );
    // An `at` in the past when first seen never fires.
    let past = schedule(When::at("2026-12-01T07:00:00Z").unwrap());
    assert_eq!(
        decide(&past, &Seen::default(), now, &Utc, false),
        Decision::Wait { next: None }
    );
}

#[test]
fn a_due_time_fires_once_on_time_and_then_waits_for_the_next() {
    let s = schedule(When::cron("0 7 * * *").unwrap());
    let st = seen("2026-12-01T00:00:00Z", Some("2026-12-07T07:00:00Z"));
    let on_time = utc_at("2026-12-08T07:00:03Z");
    let fire = Fire {
        due: utc_at("2026-12-08T07:00:00Z"),
        late: false,
    };
    assert_eq!(decide(&s, &st, on_time, &Utc, false), Decision::Fire(fire));
    // Recorded: the same instant decides nothing more.
    let done = seen("2026-12-01T00:00:00Z", Some("2026-12-08T07:00:00Z"));
    assert_eq!(
        decide(&s, &done, on_time, &Utc, false),
        Decision::Wait {
            next: Some(utc_at("2026-12-09T07:00:00Z"))
        }
    );
    // A fire recorded and not known to have its run is finished, whatever the clock says.
    let pending = Seen {
        pending: Some(fire),
        ..st
    };
    assert_eq!(
        decide(&s, &pending, utc_at("2026-12-20T00:00:00Z"), &Utc, true),
        Decision::Finish(fire)
    );
}

#[test]
fn downtime_gives_one_late_catch_up_for_the_latest_missed_due_time() {
    let s = schedule(When::every("1h").unwrap());
    // Last dealt with at 09:00; the machine slept until 14:20: 10:00 … 14:00 were missed.
    let st = seen("2026-12-08T08:00:00Z", Some("2026-12-08T09:00:00Z"));
    let woke = utc_at("2026-12-08T14:20:00Z");
    assert_eq!(
        decide(&s, &st, woke, &Utc, false),
        Decision::Fire(Fire {
            due: utc_at("2026-12-08T14:00:00Z"),
            late: true,
        })
    );
    // One missed due time seen well after it came is late too; seen at once it is not.
    let one = seen("2026-12-08T08:00:00Z", Some("2026-12-08T13:00:00Z"));
    let late = decide(&s, &one, woke, &Utc, false);
    assert_eq!(
        late,
        Decision::Fire(Fire {
            due: utc_at("2026-12-08T14:00:00Z"),
            late: true,
        })
    );
    let prompt = decide(&s, &one, utc_at("2026-12-08T14:00:30Z"), &Utc, false);
    assert_eq!(
        prompt,
        Decision::Fire(Fire {
            due: utc_at("2026-12-08T14:00:00Z"),
            late: false,
        })
    );
}

#[test]
fn paused_passes_its_due_times_and_owes_none_when_resumed() {
    let mut s = schedule(When::every("1h").unwrap());
    s.paused = true;
    let st = seen("2026-12-08T08:00:00Z", Some("2026-12-08T09:00:00Z"));
    let now = utc_at("2026-12-08T12:10:00Z");
    assert_eq!(
        decide(&s, &st, now, &Utc, false),
        Decision::Pass {
            due: utc_at("2026-12-08T12:00:00Z"),
            why: PassReason::Paused,
        }
    );
    // Passed and resumed: the next due time is the next hour, nothing owed before it.
    s.paused = false;
    let passed = seen("2026-12-08T08:00:00Z", Some("2026-12-08T12:00:00Z"));
    assert_eq!(
        decide(&s, &passed, now, &Utc, false),
        Decision::Wait {
            next: Some(utc_at("2026-12-08T13:00:00Z"))
        }
    );
}

#[test]
fn an_earlier_run_still_working_skips_or_queues_the_due_time() {
    let mut s = schedule(When::every("15m").unwrap());
    let st = seen("2026-12-08T08:00:00Z", Some("2026-12-08T08:15:00Z"));
    let now = utc_at("2026-12-08T08:30:01Z");
    let due = utc_at("2026-12-08T08:30:00Z");
    assert_eq!(
        decide(&s, &st, now, &Utc, true),
        Decision::Pass {
            due,
            why: PassReason::Overlap,
        }
    );
    s.overlap = Overlap::Queue;
    let fire = Fire { due, late: false };
    assert_eq!(decide(&s, &st, now, &Utc, true), Decision::Queued(fire));
    // The earlier run stopped: the queued due time fires.
    assert_eq!(decide(&s, &st, now, &Utc, false), Decision::Fire(fire));
}

#[test]
fn whens_in_words() {
    assert_eq!(
        words(&When::every("15m").unwrap(), &Utc),
        "every 15 minutes"
    );
    assert_eq!(words(&When::every("1h").unwrap(), &Utc), "every hour");
    assert_eq!(words(&When::every("2d").unwrap(), &Utc), "every 2 days");
    assert_eq!(
        words(&When::at("2026-12-24T07:00:00+01:00").unwrap(), &Utc),
        "once, 2026-12-24 06:00"
    );
    let cron = |p: &str| words(&When::cron(p).unwrap(), &Utc);
    assert_eq!(cron("0 7 * * *"), "every day at 07:00");
    assert_eq!(cron("30 9 * * 1-5"), "weekdays at 09:30");
    assert_eq!(cron("0 10 * * 0,6"), "weekends at 10:00");
    assert_eq!(cron("*/15 * * * *"), "every 15 minutes");
    assert_eq!(cron("5 * * * *"), "every hour at :05");
    assert_eq!(cron("* * * * *"), "every minute");
    // The rest as croner words them.
    let other = cron("0 7 1 * *");
    assert!(other.contains("07:00"), "{other}");
}
