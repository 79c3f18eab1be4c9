//! The tray's menu model, computed from snapshots without a display.

use super::*;
use paseo_core::model::power::Power;
use paseo_core::model::{
    alert, bucket, needs_you, status_word, AgentRecord, AttentionReason, Bucket, PermissionKind,
    PermissionRequest, Status, Timestamp, PARENT_LABEL,
};
use serde_json::json;

pub(crate) fn at(minute: i64) -> Timestamp {
    // 2026-12-02T10:00:00Z plus `minute` minutes.
    Timestamp::from_millis(1_796_205_600_000 + minute * 60_000)
}

/// A root shell agent, idle, nothing to see (the notify tests build on it too).
pub(crate) fn agent(title: &str) -> AgentSnapshot {
    let record: AgentRecord = serde_json::from_value(json!({
        "id": AgentId::new().to_string(),
        "provider": "shell",
        "cwd": "/tmp/work",
        "title": title,
        "lastStatus": "idle",
        "createdAt": "2026-12-02T09:00:00.000Z",
        "updatedAt": "2026-12-02T09:00:00.000Z",
    }))
    .unwrap();
    AgentSnapshot {
        record,
        name: None,
        parent_agent_id: None,
        status: Status::Idle,
        pending_permission: None,
        mcp_status: None,
        reads_prompts: false,
        cancel_requested: false,
        queued_notices: 0,
        bucket: Bucket::Done,
        needs_you: false,
        status_word: "idle".into(),
        look: "done".into(),
        alert: None,
        power: Power::Full,
        unconfined: false,
        waiting_for_slot: None,
        queue_place: None,
        changes: None,
        tree_usage: Default::default(),
        tree_budget: None,
        subagents: None,
        at_rest: false,
    }
}

trait Make {
    fn status(self, status: Status) -> Self;
    fn attention(self, reason: AttentionReason, minute: i64) -> Self;
    fn failed(self, minute: i64) -> Self;
    fn finished(self, minute: i64) -> Self;
    fn asking(self, minute: i64) -> Self;
    fn child_of(self, parent: &AgentSnapshot) -> Self;
    fn archived(self) -> Self;
    /// What the runtime sends for the record as it now stands: the status rule's answers.
    fn restated(self) -> Self;
}

impl Make for AgentSnapshot {
    fn status(mut self, status: Status) -> Self {
        self.status = status;
        self.record.last_status = status;
        self.restated()
    }
    fn attention(mut self, reason: AttentionReason, minute: i64) -> Self {
        self.record.requires_attention = true;
        self.record.attention_reason = Some(reason);
        self.record.attention_timestamp = Some(at(minute));
        self.restated()
    }
    fn failed(self, minute: i64) -> Self {
        self.status(Status::Error)
            .attention(AttentionReason::Error, minute)
    }
    fn finished(self, minute: i64) -> Self {
        self.attention(AttentionReason::Finished, minute)
    }
    fn asking(mut self, minute: i64) -> Self {
        self.pending_permission = Some(PermissionRequest {
            request_id: "r1".into(),
            kind: PermissionKind::Tool,
            tool_name: "Bash".into(),
            input: json!({"command": "rm -rf build"}),
            description: None,
            call_id: None,
        });
        self.status(Status::Running)
            .attention(AttentionReason::Permission, minute)
    }
    fn child_of(mut self, parent: &AgentSnapshot) -> Self {
        self.parent_agent_id = Some(parent.id());
        self.record
            .labels
            .insert(PARENT_LABEL.to_string(), parent.id().to_string());
        self.restated()
    }
    fn archived(mut self) -> Self {
        self.record.archived_at = Some(at(100));
        self.restated()
    }
    fn restated(mut self) -> Self {
        let pending = self.pending_permission.as_ref();
        self.bucket = bucket(&self.record, pending.is_some());
        self.needs_you = needs_you(&self.record, pending.is_some());
        self.status_word = status_word(&self.record, self.bucket, pending, None).into_owned();
        self.look = paseo_core::model::look(&self.record, self.bucket).into();
        self.alert = alert(
            self.record.is_archived(),
            self.parent_agent_id.is_none(),
            self.bucket,
            self.needs_you,
        );
        self
    }
}

/// The fleet's counts as the runtime counts them (`FleetCounts::of`): each agent by its bucket.
fn counts(fleet: &[&AgentSnapshot]) -> FleetCounts {
    let mut c = FleetCounts::default();
    for a in fleet {
        c.add(a.bucket, a.record.is_archived());
    }
    c
}

fn labels(model: &TrayModel) -> Vec<&str> {
    model.entries.iter().map(|e| e.label.as_str()).collect()
}

#[test]
fn an_empty_fleet_is_idle_with_only_the_counts_line() {
    let model = TrayModel::empty();
    assert_eq!(model.state, TrayState::Idle);
    assert_eq!(model.counts_line, "0 running · 0 need you · 0 total");
    assert_eq!(model.tooltip, "Paseo — 0 running · 0 need you · 0 total");
    assert!(model.entries.is_empty());
    assert_eq!(model.more, 0);
}

#[test]
fn running_agents_make_the_icon_running_and_list_nothing() {
    let a = agent("build").status(Status::Running);
    let b = agent("boot").status(Status::Initializing);
    let idle = agent("idle one");
    let model = TrayModel::of(&counts(&[&a, &b, &idle]), &[a.clone(), b.clone(), idle]);
    assert_eq!(model.state, TrayState::Running);
    assert!(model.entries.is_empty());
    assert_eq!(model.counts_line, "2 running · 0 need you · 3 total");
}

#[test]
fn permissions_errors_and_finished_roots_are_listed_most_urgent_first() {
    let lead = agent("lead").failed(5);
    let kid = agent("kid-2").child_of(&lead).asking(1);
    let docs = agent("docs").finished(9);
    let fleet = counts(&[&lead, &kid, &docs]);
    let model = TrayModel::of(&fleet, &[docs.clone(), lead.clone(), kid.clone()]);
    assert_eq!(
        labels(&model),
        [
            "◉ kid-2 — needs permission",
            "✕ lead — failed",
            "✓ docs — finished"
        ]
    );
    let ids: Vec<AgentId> = model.entries.iter().map(|e| e.agent_id).collect();
    assert_eq!(ids, [kid.id(), lead.id(), docs.id()]);
    let why: Vec<Alert> = model.entries.iter().map(|e| e.alert).collect();
    assert_eq!(why, [Alert::Permission, Alert::Failed, Alert::Finished]);
    // Needs input is the most urgent: its colour wins, even over running agents.
    assert_eq!(model.state, TrayState::Alert(Alert::Permission));
    // The line is the status bar's: the failed agent counts as failed there and here.
    assert_eq!(
        model.counts_line,
        "0 running · 1 needs you · 1 failed · 3 total"
    );
    assert_eq!(model.tooltip, format!("Paseo — {}", model.counts_line));
}

/// The tray's first line and the status bar's line are one line: the status bar shows the
/// parts of `counts.tally.line` the runtime sends (ui/components/counts-line.js joins their texts
/// with " · "), the tray `FleetCounts::line`. An unseen error "needs you" (it has a tray entry)
/// but its row says "failed", and both lines count it as failed.
#[test]
fn the_tray_and_the_status_bar_say_the_same_line() {
    let lead = agent("lead");
    let broken = agent("broken").failed(2);
    let seen = agent("seen").status(Status::Error);
    let asks = agent("asks").child_of(&lead).asking(3);
    let mut held = agent("held").child_of(&lead);
    held.pending_permission = Some(PermissionRequest {
        kind: PermissionKind::HeldStart,
        ..PermissionRequest::tool("h1", "Run a shell agent with full power", json!({}))
    });
    let held = held.attention(AttentionReason::Permission, 4);
    let busy = agent("busy").status(Status::Running);
    let done = agent("done").finished(5);
    let gone = agent("gone").failed(1).archived();
    let all = [&lead, &broken, &seen, &asks, &held, &busy, &done, &gone];
    let fleet = counts(&all);
    let owned: Vec<AgentSnapshot> = all.iter().map(|a| (*a).clone()).collect();
    let model = TrayModel::of(&fleet, &owned);
    let sent = serde_json::to_value(fleet).unwrap();
    let status_bar: Vec<&str> = sent["tally"]["line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(model.counts_line, status_bar.join(" · "));
    assert_eq!(
        model.counts_line,
        "1 running · 2 need you · 2 failed · 7 total"
    );
    // Each "needs you" and "failed" of the line has its entry; the held one says why.
    assert_eq!(
        labels(&model),
        [
            "◉ held — needs you: approve start",
            "◉ asks — needs permission",
            "✕ broken — failed",
            "✓ done — finished"
        ]
    );
    assert_eq!(held.status_word, paseo_core::model::APPROVE_START);
}

#[test]
fn within_a_reason_the_newest_comes_first() {
    let old = agent("old").failed(1);
    let new = agent("new").failed(7);
    let mid = agent("mid").failed(4);
    let fleet = counts(&[&old, &new, &mid]);
    let model = TrayModel::of(&fleet, &[old, new, mid]);
    assert_eq!(
        labels(&model),
        ["✕ new — failed", "✕ mid — failed", "✕ old — failed"]
    );
    assert_eq!(model.state, TrayState::Alert(Alert::Failed));
}

#[test]
fn what_needs_nobody_is_left_out() {
    let lead = agent("lead");
    let cases = [
        // A subagent's finish goes to its parent and its track.
        (
            "finished subagent",
            agent("kid").child_of(&lead).finished(1),
        ),
        // Seen (attention cleared): nothing left to look at.
        ("seen error", agent("seen").status(Status::Error)),
        // Running again: "finished" would be stale.
        (
            "finished root running again",
            agent("again").finished(1).status(Status::Running),
        ),
        ("archived error", agent("gone").failed(1).archived()),
        (
            "archived permission",
            agent("gone too").asking(1).archived(),
        ),
        // The request went away with its process: nothing to answer.
        (
            "stale permission reason",
            agent("stale").attention(AttentionReason::Permission, 1),
        ),
    ];
    for (what, snapshot) in cases {
        assert_eq!(entry_of(&snapshot), None, "{what}");
        let fleet = counts(&[&lead]);
        let model = TrayModel::of(&fleet, &[lead.clone(), snapshot]);
        assert!(model.entries.is_empty(), "{what}: {:?}", model.entries);
        assert_eq!(model.state, TrayState::Idle, "{what}");
    }
}

#[test]
fn subagents_that_fail_or_ask_are_listed() {
    let lead = agent("lead");
    let failed = agent("kid-1").child_of(&lead).failed(2);
    let asking = agent("kid-2").child_of(&lead).asking(3);
    assert_eq!(entry_of(&failed), Some(Alert::Failed));
    assert_eq!(entry_of(&asking), Some(Alert::Permission));
    // A failed root still shows failed after it was closed (e.g. across a restart).
    let closed = agent("closed").failed(1).status(Status::Closed);
    assert_eq!(entry_of(&closed), Some(Alert::Failed));
}

#[test]
fn a_finished_root_alone_shows_attention_even_while_others_run() {
    let docs = agent("docs").finished(3);
    let busy: Vec<AgentSnapshot> = (0..4)
        .map(|i| agent(&format!("busy-{i}")).status(Status::Running))
        .collect();
    let mut all: Vec<&AgentSnapshot> = busy.iter().collect();
    all.push(&docs);
    let model = TrayModel::of(&counts(&all), std::slice::from_ref(&docs));
    assert_eq!(model.state, TrayState::Alert(Alert::Finished));
    assert_eq!(model.counts_line, "4 running · 0 need you · 5 total");
}

#[test]
fn the_list_is_capped_with_an_and_more_line() {
    let mut agents: Vec<AgentSnapshot> = (0..12)
        .map(|i| agent(&format!("done-{i:02}")).finished(i))
        .collect();
    agents.push(agent("asks").asking(0));
    let fleet = counts(&agents.iter().collect::<Vec<_>>());
    let model = TrayModel::of(&fleet, &agents);
    assert_eq!(model.entries.len(), MAX_ENTRIES);
    assert_eq!(model.more, 13 - MAX_ENTRIES);
    // The urgent one is never the one cut off.
    assert_eq!(model.entries[0].label, "◉ asks — needs permission");
    assert_eq!(model.entries[1].label, "✓ done-11 — finished");
    assert_eq!(model.state, TrayState::Alert(Alert::Permission));
    assert_eq!(model.counts_line, "0 running · 1 needs you · 13 total");
    assert_eq!(more_label(model.more), "and 3 more…");
}

#[test]
fn titles_are_one_short_line_and_never_empty() {
    let mut long = agent(&"x".repeat(80));
    assert_eq!(display_title(&long).chars().count(), MAX_TITLE_CHARS);
    assert!(display_title(&long).ends_with('…'));
    long.record.title = "fix  the\nlogin\tform ".into();
    assert_eq!(display_title(&long), "fix the login form");
    // Untitled: named as the window names it (the core's rule), never an empty line.
    long.record.title = "  ".into();
    let id = long.record.id.to_string();
    assert_eq!(display_title(&long), format!("shell {}", &id[..8]));
    let spaced = agent(&format!("{} tail", "word ".repeat(8)));
    let shown = display_title(&spaced);
    assert!(!shown.contains(" …"), "{shown}");
    assert!(shown.chars().count() <= MAX_TITLE_CHARS, "{shown}");
}

#[test]
fn ampersands_reach_the_menu_literally() {
    assert_eq!(
        menu_text("✕ build & test — failed"),
        "✕ build && test — failed"
    );
}

#[test]
fn models_compare_equal_when_nothing_shown_changed() {
    // The tray on screen skips re-rendering on equal models (a timeline burst changes nothing here).
    let a = agent("lead").failed(1);
    let one = TrayModel::of(&counts(&[&a]), std::slice::from_ref(&a));
    let two = TrayModel::of(&counts(&[&a]), &[a]);
    assert_eq!(one, two);
}

/// SPEC 15: files the app cannot write are the app's own problem: an entry first, the failed
/// icon unless a permission waits.
#[test]
fn a_storage_problem_is_an_entry_and_turns_the_icon_to_failed() {
    let counts = FleetCounts::default();
    let m = TrayModel::of(&counts, &[]).with_storage(Some("1 file(s) cannot be written".into()));
    assert_eq!(m.state, TrayState::Alert(Alert::Failed));
    assert_eq!(m.storage.as_deref(), Some("1 file(s) cannot be written"));
    let m = TrayModel::of(&counts, &[]).with_storage(None);
    assert_eq!(m.state, TrayState::Idle);
}

/// A connected host's agents (SPEC 17) count in the tray's line with this machine's, and its
/// alerting agent is listed named by its host.
#[test]
fn a_hosts_agents_count_and_alert_named_by_their_host() {
    let here = agent("lead").failed(5);
    let there = agent("build").asking(1);
    let fleet = counts(&[&here]).plus(counts(&[&there]));
    let model = TrayModel::of(&fleet, &[here.clone(), on_host(there.clone(), "box")]);
    assert_eq!(
        labels(&model),
        ["◉ build (on box) — needs permission", "✕ lead — failed"]
    );
    assert_eq!(model.entries[0].agent_id, there.id());
    assert_eq!(
        model.counts_line,
        "0 running · 1 needs you · 1 failed · 2 total"
    );
}

/// A killed app's icon folder is swept at the next start; a running process's folder, this
/// process's own, other names and a planted link are left alone.
#[test]
fn the_icon_folders_of_killed_apps_are_removed() {
    let base = tempfile::tempdir().unwrap();
    // A process that has exited and been reaped: its id names no process now.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let mut alive = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let me = std::process::id();
    let dead_dir = base.path().join(format!("paseo-tray-{dead}"));
    std::fs::create_dir(&dead_dir).unwrap();
    std::fs::write(dead_dir.join("tray-icon-main-1.png"), b"png").unwrap();
    for kept in [
        format!("paseo-tray-{}", alive.id()),
        format!("paseo-tray-{me}"),
        "paseo-tray-x".to_string(),
        "other-1".to_string(),
    ] {
        std::fs::create_dir(base.path().join(kept)).unwrap();
    }
    // A link named like a dead app's folder: never followed, never removed through.
    let target = tempfile::tempdir().unwrap();
    std::fs::write(target.path().join("keep"), b"").unwrap();
    std::os::unix::fs::symlink(target.path(), base.path().join("paseo-tray-999999999")).unwrap();

    remove_dead_icon_dirs(base.path());

    let mut left: Vec<String> = std::fs::read_dir(base.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    let mut want = vec![
        format!("paseo-tray-{}", alive.id()),
        format!("paseo-tray-{me}"),
        "paseo-tray-999999999".to_string(),
        "paseo-tray-x".to_string(),
        "other-1".to_string(),
    ];
    want.sort();
    assert_eq!(left, want);
    assert!(target.path().join("keep").exists());
    alive.kill().unwrap();
    alive.wait().unwrap();
}
