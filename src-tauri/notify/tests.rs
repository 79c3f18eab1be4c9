//! What to notify, decided from snapshots without a bus.

use super::*;
use paseo_core::model::{
    alert, bucket, needs_you, status_word, AttentionReason, PermissionRequest, Status,
};
use serde_json::json;

// The snapshot builders are the tray's: one idle root shell agent, times from one base.
use crate::tray::tests::{agent, at};

/// What the runtime sends for the record as it now stands: the core's rules' answers.
fn restated(mut a: AgentSnapshot) -> AgentSnapshot {
    let pending = a.pending_permission.as_ref();
    a.bucket = bucket(&a.record, pending.is_some());
    a.needs_you = needs_you(&a.record, pending.is_some());
    a.status_word = status_word(&a.record, a.bucket, pending, None).into_owned();
    a.alert = alert(
        a.record.is_archived(),
        a.parent_agent_id.is_none(),
        a.bucket,
        a.needs_you,
    );
    a
}

fn running(mut a: AgentSnapshot) -> AgentSnapshot {
    a.status = Status::Running;
    a.record.last_status = Status::Running;
    a.record.requires_attention = false;
    a.record.attention_reason = None;
    a.pending_permission = None;
    restated(a)
}

fn attention(mut a: AgentSnapshot, reason: AttentionReason, minute: i64) -> AgentSnapshot {
    a.record.requires_attention = true;
    a.record.attention_reason = Some(reason);
    a.record.attention_timestamp = Some(at(minute));
    restated(a)
}

fn failed(mut a: AgentSnapshot, error: &str, minute: i64) -> AgentSnapshot {
    a.status = Status::Error;
    a.record.last_status = Status::Error;
    a.record.last_error = Some(error.to_string());
    attention(a, AttentionReason::Error, minute)
}

fn finished(mut a: AgentSnapshot, minute: i64) -> AgentSnapshot {
    a.status = Status::Idle;
    a.record.last_status = Status::Idle;
    attention(a, AttentionReason::Finished, minute)
}

fn asking(mut a: AgentSnapshot, request: &str, tool: &str, minute: i64) -> AgentSnapshot {
    a.pending_permission = Some(PermissionRequest {
        request_id: request.into(),
        kind: paseo_core::model::PermissionKind::Tool,
        tool_name: tool.into(),
        input: json!({}),
        description: None,
        call_id: None,
    });
    a.status = Status::Running;
    a.record.last_status = Status::Running;
    attention(a, AttentionReason::Permission, minute)
}

fn seen(mut a: AgentSnapshot) -> AgentSnapshot {
    a.record.requires_attention = false;
    restated(a)
}

fn child_of(mut a: AgentSnapshot, parent: &AgentSnapshot) -> AgentSnapshot {
    a.parent_agent_id = Some(parent.id());
    restated(a)
}

fn defaults() -> NotificationsConfig {
    NotificationsConfig::default()
}

fn none() -> HashSet<AgentId> {
    HashSet::new()
}

fn one(before: &AgentSnapshot, after: &AgentSnapshot) -> Option<Note> {
    plan(
        std::slice::from_ref(before),
        std::slice::from_ref(after),
        &defaults(),
        &none(),
    )
}

#[test]
fn a_failure_names_the_agent_and_the_error_once() {
    let a = running(agent("broken"));
    let b = failed(a.clone(), "the command exited with status 3\nmore", 1);
    let note = one(&a, &b).unwrap();
    assert_eq!(note.summary, "broken");
    assert_eq!(note.body, "failed: the command exited with status 3");
    assert_eq!((note.open, note.agents.clone()), (b.id(), vec![b.id()]));
    // The same failure again (another field changed): nothing new.
    let mut again = b.clone();
    again.record.labels.insert("k".into(), "v".into());
    assert_eq!(one(&b, &again), None);
    // Seen by the user, then failing again later: a new event.
    let later = failed(running(seen(b.clone())), "exit 4", 9);
    assert_eq!(one(&seen(b), &later).unwrap().body, "failed: exit 4");
}

#[test]
fn permissions_name_the_tool_and_each_request_once() {
    let a = running(agent("lead"));
    let b = asking(a.clone(), "r1", "Bash", 1);
    assert_eq!(one(&a, &b).unwrap().body, "needs permission to run Bash");
    assert_eq!(one(&b, &b.clone()), None);
    let c = asking(b.clone(), "r2", "Write", 2);
    assert_eq!(one(&b, &c).unwrap().body, "needs permission to run Write");
    let mut held = asking(a.clone(), "h1", "create_agent", 3);
    if let Some(p) = held.pending_permission.as_mut() {
        p.kind = paseo_core::model::PermissionKind::HeldStart;
    }
    assert_eq!(one(&a, &held).unwrap().body, "needs you: approve start");
    let words = "budget: this tree used 1200 of 1000 tokens";
    let mut budget = asking(a.clone(), "b1", words, 4);
    if let Some(p) = budget.pending_permission.as_mut() {
        p.kind = paseo_core::model::PermissionKind::Budget;
        p.input = serde_json::json!({"tree": "nightly refactor"});
    }
    assert_eq!(
        one(&a, &budget).unwrap().body,
        format!("tree \"nightly refactor\" stopped: {words}")
    );
}

#[test]
fn root_finishes_notify_subagent_finishes_only_when_asked() {
    let lead = running(agent("lead"));
    let done = finished(lead.clone(), 1);
    assert_eq!(one(&lead, &done).unwrap().body, "finished");

    let kid = child_of(running(agent("kid")), &lead);
    let kid_done = finished(kid.clone(), 2);
    assert_eq!(one(&kid, &kid_done), None, "the parent gets a notice");
    let mut settings = defaults();
    settings.subagent_finished = true;
    let note = plan(&[kid], std::slice::from_ref(&kid_done), &settings, &none()).unwrap();
    assert_eq!(
        (note.summary.as_str(), note.body.as_str()),
        ("kid", "finished")
    );
    // A subagent's failure and permission requests are the user's anyway.
    let kid_failed = failed(kid_done.clone(), "boom", 3);
    assert_eq!(one(&kid_done, &kid_failed).unwrap().body, "failed: boom");
}

#[test]
fn settings_switch_kinds_and_everything_off() {
    let a = running(agent("a"));
    type SwitchOff = fn(&mut NotificationsConfig);
    let cases: [(AgentSnapshot, SwitchOff); 3] = [
        (failed(a.clone(), "x", 1), |s| s.error = false),
        (finished(a.clone(), 1), |s| s.finished = false),
        (asking(a.clone(), "r", "Bash", 1), |s| s.permission = false),
    ];
    for (after, switch_off) in cases {
        let mut settings = defaults();
        switch_off(&mut settings);
        let before = std::slice::from_ref(&a);
        let after = std::slice::from_ref(&after);
        assert_eq!(plan(before, after, &settings, &none()), None);
        assert!(plan(before, after, &defaults(), &none()).is_some());
        let off = NotificationsConfig {
            enabled: false,
            ..defaults()
        };
        assert_eq!(plan(before, after, &off, &none()), None);
    }
}

#[test]
fn a_watched_agent_is_never_notified() {
    let a = running(agent("in view"));
    let b = failed(a.clone(), "x", 1);
    let watched: HashSet<AgentId> = [a.id()].into();
    assert_eq!(
        plan(
            std::slice::from_ref(&a),
            std::slice::from_ref(&b),
            &defaults(),
            &watched
        ),
        None
    );
    // Another agent in the same burst still is.
    let c = running(agent("elsewhere"));
    let d = finished(c.clone(), 1);
    let note = plan(&[a, c], &[b, d.clone()], &defaults(), &watched).unwrap();
    assert_eq!((note.summary.as_str(), note.open), ("elsewhere", d.id()));
}

#[test]
fn a_burst_is_one_notification_most_urgent_first() {
    let before: Vec<AgentSnapshot> = (0..7).map(|i| running(agent(&format!("a{i}")))).collect();
    let after: Vec<AgentSnapshot> = before.iter().map(|a| finished(a.clone(), 1)).collect();
    let note = plan(&before, &after, &defaults(), &none()).unwrap();
    assert_eq!(note.summary, "7 agents finished");
    assert_eq!(note.agents.len(), 7);
    let lines: Vec<&str> = note.body.lines().collect();
    assert_eq!(lines.len(), MAX_LINES + 1);
    assert_eq!(lines[0], "a0 — finished");
    assert_eq!(lines[MAX_LINES], "and 2 more");

    let mut mixed = after.clone();
    mixed[3] = failed(before[3].clone(), "exit 2", 1);
    mixed[5] = asking(before[5].clone(), "r", "Bash", 1);
    let note = plan(&before, &mixed, &defaults(), &none()).unwrap();
    assert_eq!(note.summary, "7 agents need you");
    assert_eq!(
        note.open,
        mixed[5].id(),
        "the permission request comes first"
    );
    assert!(note
        .body
        .starts_with("a5 — needs permission to run Bash\na3 — failed: exit 2"));

    let two: Vec<AgentSnapshot> = before[..2]
        .iter()
        .map(|a| failed(a.clone(), "x", 1))
        .collect();
    let note = plan(&before[..2], &two, &defaults(), &none()).unwrap();
    assert_eq!(note.summary, "2 agents failed");
}

#[test]
fn new_agents_count_archived_and_quiet_ones_do_not() {
    let fresh = failed(agent("fresh"), "exit 1", 1);
    assert!(plan(&[], std::slice::from_ref(&fresh), &defaults(), &none()).is_some());
    let mut gone = fresh.clone();
    gone.record.archived_at = Some(at(2));
    let gone = restated(gone);
    assert_eq!(plan(&[], &[gone], &defaults(), &none()), None);
    let idle = agent("idle");
    assert_eq!(one(&idle, &running(idle.clone())), None);
    // A finish the user has already seen (e.g. in the window) is not news.
    assert_eq!(one(&running(idle.clone()), &seen(finished(idle, 1))), None);
}

#[test]
fn long_titles_and_errors_are_cut() {
    let a = running(agent(&"t".repeat(80)));
    let b = failed(a.clone(), &"e".repeat(500), 1);
    let note = one(&a, &b).unwrap();
    assert!(note.summary.chars().count() <= crate::names::MAX_TITLE_CHARS);
    assert_eq!(
        note.body.chars().count(),
        "failed: ".len() + MAX_DETAIL_CHARS
    );
    assert!(note.body.ends_with('…'));
}

/// A connected host's agent is notified by the same rule, named by its host (SPEC 17): the
/// stream [`with_hosts`] hands on carries it as `names::on_host` names it.
#[test]
fn a_hosts_agent_is_notified_named_by_its_host() {
    let a = running(agent("build"));
    let b = finished(a.clone(), 1);
    let note = one(
        &crate::names::on_host(a, "box"),
        &crate::names::on_host(b.clone(), "box"),
    )
    .unwrap();
    assert_eq!(note.summary, "build (on box)");
    assert_eq!(note.body, "finished");
    assert_eq!(note.open, b.id());
}
