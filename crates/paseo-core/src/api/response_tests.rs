//! Answers and events are frames both ways (a host's client reads what the app sends, SPEC 17):
//! every kind reads back into a value that writes the same JSON again.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::config::NotificationsConfig;
use crate::engine::{Engine, NewAgent};
use crate::model::{
    AgentId, AgentRecord, ArchiveHead, ArchivePlan, Budget, ChangeCounts, FleetCounts, ItemKind,
    KeptChild, PermissionKind, PermissionRequest, Spent, StyledRun, Tally, TermColor, TermStyle,
    TimelineItem, Timestamp, TreeBudget, Unfinished, Usage, WorkspaceKind,
};
use crate::runtime::events::TrackSnapshot;
use crate::runtime::CheckoutAgent;
use crate::runtime::{AgentChanges, AgentDiff, AgentSnapshot, WorkspaceSnapshot};
use crate::store::timeline::search::{SearchHit, TimelineSearch};
use crate::workspaces::changes::{
    ChangeSet, ChangedFile, DiffLine, Discarded, FileDiff, FileStatus, GhStatus, Hunk, LineKind,
    MergeKind, Merged, Totals,
};
use crate::workspaces::directory_workspace_with;

/// The answer's kind, by an exhaustive match: a new variant fails to compile here until it has
/// an example in [`every_response`].
fn kind_of(r: &Response) -> &'static str {
    match r {
        Response::Window(_) => "window",
        Response::Agent(_) => "agent",
        Response::Agents { .. } => "agents",
        Response::Prompted { .. } => "prompted",
        Response::Waited { .. } => "waited",
        Response::AgentIds(_) => "agentIds",
        Response::ArchivePlan(_) => "archivePlan",
        Response::Flag(_) => "flag",
        Response::Done => "done",
        Response::Timeline(_) => "timeline",
        Response::Found(_) => "found",
        Response::Workspace(_) => "workspace",
        Response::Changes(_) => "changes",
        Response::Diff(_) => "diff",
        Response::Text(_) => "text",
        Response::Merged(_) => "merged",
        Response::Discarded(_) => "discarded",
        Response::PrStatus(_) => "prStatus",
        Response::NotificationSettings(_) => "notificationSettings",
        Response::Synced { .. } => "synced",
        Response::Hosts(_) => "hosts",
        Response::Schedules(_) => "schedules",
        Response::Preview { .. } => "preview",
        Response::Alerts(_) => "alerts",
        Response::Counts(_) => "counts",
        Response::Providers(_) => "providers",
        Response::Fleet(_) => "fleet",
    }
}

/// The event's type, as [`kind_of`] for answers.
fn type_of(e: &Event) -> &'static str {
    match e {
        Event::AgentUpdated { .. } => "agentUpdated",
        Event::AgentArchived { .. } => "agentArchived",
        Event::TimelineItems { .. } => "timelineItems",
        Event::WorkspaceUpdated { .. } => "workspaceUpdated",
        Event::TrackChanged { .. } => "trackChanged",
        Event::CountsChanged { .. } => "countsChanged",
        Event::Notice { .. } => "notice",
        Event::ClosedForRoom { .. } => "closedForRoom",
    }
}

/// Real values, made the way the runtime makes them, with every optional part filled in
/// somewhere.
struct Fleet {
    /// Waiting for permission, with changes, usage, a queue place and a field only upstream
    /// knows in its record.
    busy: AgentSnapshot,
    /// Fresh: its optional parts absent.
    quiet: AgentSnapshot,
    workspace: WorkspaceSnapshot,
    track: TrackSnapshot,
    counts: FleetCounts,
}

fn fleet() -> Fleet {
    let mut e = Engine::new();
    let now = Timestamp::now();
    let (ws, project) = directory_workspace_with(Path::new("/src"), None, &[], now);
    let workspace_id = ws.workspace_id.clone();
    e.upsert_workspace(ws.clone(), project);
    let a = e
        .create(NewAgent {
            initial_prompt: Some("ls".into()),
            ..NewAgent::new("shell", false, "/src", workspace_id.clone())
        })
        .unwrap();
    let b = e
        .create(NewAgent::new("shell", false, "/src", workspace_id))
        .unwrap();
    e.session_ready(a).unwrap();
    e.permission_requested(
        a,
        PermissionRequest {
            request_id: "r".into(),
            kind: PermissionKind::Tool,
            tool_name: "Bash".into(),
            input: json!({"command": "rm -rf build", "n": [1, 2.5, null]}),
            description: Some("clean".into()),
            call_id: Some("c1".into()),
        },
    )
    .unwrap();
    let mut busy = AgentSnapshot::of(&e, e.agent(a).unwrap());
    let mut record = serde_json::to_value(&busy.record).unwrap();
    record["upstreamOnly"] = json!({"kept": true});
    // Escapes make the reader take owned strings, not borrowed ones.
    record["labels"] = json!({"team": "docs", "q\"uote": "tab\there"});
    record["title"] = json!("say \"hi\" \u{e9}");
    busy.record = serde_json::from_value::<AgentRecord>(record).unwrap();
    busy.mcp_status = Some("connected".into());
    busy.unconfined = true;
    busy.waiting_for_slot = Some(4);
    busy.queue_place = Some(2);
    busy.changes = Some(ChangeCounts {
        files: 2,
        additions: 10,
        deletions: 3,
    });
    busy.tree_usage = Usage {
        input_tokens: 120,
        output_tokens: 40,
        cost_usd: Some(0.25),
        turns: 1,
        ..Usage::default()
    };
    busy.at_rest = true;
    busy.record.budget = Some(Box::new(Budget {
        tree_tokens: Some(1_000),
        tree_cost_usd: Some(2.5),
    }));
    busy.tree_budget = Some(TreeBudget {
        agent_id: a,
        budget: *busy.record.budget.clone().unwrap(),
        used: Spent {
            tokens: 160,
            cost_usd: Some(0.25),
        },
        left: Budget {
            tree_tokens: Some(840),
            tree_cost_usd: Some(2.25),
        },
        reached: false,
    });
    assert!(busy.alert.is_some() && busy.pending_permission.is_some());
    let quiet = AgentSnapshot::of(&e, e.agent(b).unwrap());
    let mut workspace = WorkspaceSnapshot::of(&e, &ws);
    workspace.usage = busy.tree_usage.clone();
    let mut counts = Tally::default();
    counts.add(quiet.bucket);
    Fleet {
        track: TrackSnapshot {
            parent_agent_id: a,
            members: vec![b],
            counts,
        },
        counts: FleetCounts::of(&e),
        busy,
        quiet,
        workspace,
    }
}

fn items() -> Vec<TimelineItem> {
    vec![
        TimelineItem {
            seq: 1,
            ts: Timestamp::now(),
            kind: ItemKind::Output,
            text: "ok\n".into(),
            turn: 1,
            call_id: None,
            tool_name: None,
            input: None,
            is_error: false,
            stream: Some("stdout".into()),
            runs: vec![StyledRun {
                len: 3,
                style: TermStyle {
                    fg: Some(TermColor::Rgb([1, 2, 3])),
                    bold: true,
                    ..TermStyle::default()
                },
            }],
            notice: None,
        },
        TimelineItem {
            seq: 2,
            ts: Timestamp::now(),
            kind: ItemKind::ToolCall,
            text: String::new(),
            turn: 1,
            call_id: Some("c1".into()),
            tool_name: Some("Bash".into()),
            input: Some(json!({"command": "ls"})),
            is_error: true,
            stream: None,
            runs: Vec::new(),
            notice: None,
        },
    ]
}

fn changed_file() -> ChangedFile {
    ChangedFile {
        path: "src/new.rs".into(),
        old_path: Some("src/old.rs".into()),
        status: FileStatus::Renamed,
        additions: Some(3),
        deletions: None,
        binary: false,
    }
}

fn every_response(f: &Fleet) -> Vec<Response> {
    let (a, b) = (f.busy.id(), f.quiet.id());
    vec![
        Response::Window(r#"{"home":"/h","agents":[{"id":1}],"z":null}"#.to_string()),
        // Spaced and unordered as a writer may leave it: read back as the very same text.
        Response::Window("{ \"z\": [1, 2],\n  \"a\": {} }".to_string()),
        Response::Synced {
            seq: 42,
            window: r#"{"home":"/h","agents":[{"id":1}],"z":null}"#.to_string(),
        },
        Response::Schedules(vec![crate::api::ScheduleView {
            name: "nightly".into(),
            entry: serde_json::json!({"name": "nightly", "cron": "0 7 * * *"}),
            words: "At 07:00".into(),
            paused: false,
            next: vec![chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap()],
            last: Some(crate::model::schedule::Outcome {
                due: chrono::DateTime::from_timestamp(1_699_990_000, 0).unwrap(),
                at: chrono::DateTime::from_timestamp(1_699_990_001, 0).unwrap(),
                what: crate::model::schedule::OutcomeKind::Started,
                agent_id: Some(a),
                late: true,
                why: None,
            }),
        }]),
        Response::Preview {
            words: "every 15 minutes".into(),
            next: vec![chrono::DateTime::from_timestamp(1_700_000_900, 0).unwrap()],
        },
        Response::Hosts(vec![
            crate::api::HostStatus {
                host: crate::config::Host {
                    name: "box".into(),
                    ssh: "box".into(),
                    command: None,
                },
                state: crate::api::HostState::Disconnected {
                    last_seen: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
                    error: "the connection to box ended".into(),
                },
                agents: 3,
                counts: f.counts,
            },
            crate::api::HostStatus {
                host: crate::config::Host {
                    name: "big".into(),
                    ssh: "me@big".into(),
                    command: Some(vec!["/opt/paseo-headless".into()]),
                },
                state: crate::api::HostState::Failed {
                    code: "version".into(),
                    error: "version mismatch".into(),
                    install_helps: true,
                },
                agents: 0,
                counts: Default::default(),
            },
        ]),
        Response::Agent(Box::new(f.busy.clone())),
        Response::Agent(Box::new(f.quiet.clone())),
        Response::Alerts(Box::new(crate::runtime::Alerts {
            counts: f.counts,
            agents: vec![f.busy.clone()],
            storage: Some("timelines/a.jsonl: the disk is full".into()),
        })),
        Response::Alerts(Box::default()),
        Response::Counts(f.counts),
        Response::Providers(vec![
            crate::providers::ProviderInfo {
                id: "shell".into(),
                label: "Shell".into(),
                kind: "shell".into(),
                available: true,
                reason: None,
                reads_prompts: false,
                models: Vec::new(),
                unconfined: false,
            },
            crate::providers::ProviderInfo {
                id: "claude".into(),
                label: "Claude Code".into(),
                kind: "claude".into(),
                available: false,
                reason: Some("`claude` is not on PATH".into()),
                reads_prompts: true,
                models: vec!["opus".into()],
                unconfined: true,
            },
        ]),
        Response::Agents {
            agents: vec![f.busy.clone(), f.quiet.clone()],
            total: 9,
        },
        Response::Prompted {
            agent: Box::new(f.busy.clone()),
            background: true,
            notify: Some(b),
        },
        Response::Prompted {
            agent: Box::new(f.quiet.clone()),
            background: false,
            notify: None,
        },
        Response::Waited {
            agent: Box::new(f.quiet.clone()),
            timed_out: true,
        },
        Response::AgentIds(vec![a, b]),
        Response::ArchivePlan(ArchivePlan {
            heads: vec![ArchiveHead {
                id: a,
                title: "fix the parser".into(),
                provider: "shell".into(),
                running: true,
                word: "running".into(),
                subagents: 3,
                running_subagents: 1,
            }],
            kept: vec![KeptChild {
                id: b,
                title: String::new(),
                provider: "claude".into(),
                why: Unfinished::NeedsYou,
            }],
        }),
        Response::Flag(true),
        Response::Done,
        Response::Timeline(items()),
        Response::Found(TimelineSearch {
            hits: vec![SearchHit { seq: 4, count: 2 }],
            total: 7,
            truncated: true,
        }),
        Response::Workspace(Box::new(f.workspace.clone())),
        Response::Changes(Box::new(AgentChanges {
            agent_id: a,
            workspace_kind: Some(WorkspaceKind::Directory),
            base_branch: Some("main".into()),
            checkout_agents: vec![CheckoutAgent {
                agent_id: b,
                title: "helper".into(),
                name: "helper".into(),
                working: true,
            }],
            base_checkout: Some("/src".into()),
            merge_blockers: vec![CheckoutAgent {
                agent_id: b,
                title: "helper".into(),
                name: "helper".into(),
                working: true,
            }],
            changes: ChangeSet {
                root: "/src".into(),
                branch: Some("feat".into()),
                head: Some("abc123".into()),
                base: None,
                from: "abc123".into(),
                files: vec![changed_file()],
                totals: Totals {
                    files: 1,
                    additions: 3,
                    deletions: 0,
                    binary: 0,
                },
            },
        })),
        Response::Diff(Box::new(AgentDiff {
            agent_id: a,
            diff: FileDiff {
                file: changed_file(),
                binary: false,
                hunks: vec![Hunk {
                    old_start: 1,
                    old_lines: 1,
                    new_start: 1,
                    new_lines: 2,
                    section: "fn main".into(),
                    lines: vec![DiffLine {
                        kind: LineKind::Add,
                        old_line: None,
                        new_line: Some(2),
                        text: "x".into(),
                        no_newline: true,
                    }],
                }],
                total_lines: 40,
                offset: 0,
                next_offset: Some(20),
            },
        })),
        Response::Text("https://example.com/pr/1".into()),
        Response::Merged(Merged {
            kind: MergeKind::FastForward,
            base_branch: "main".into(),
            commit: "def456".into(),
            merged_in: None,
        }),
        Response::Discarded(Some(Discarded {
            commit: "0a1b".into(),
            reference: "refs/paseo/discarded/x".into(),
        })),
        Response::Discarded(None),
        Response::PrStatus(GhStatus::Ready),
        Response::PrStatus(GhStatus::Unavailable {
            reason: "gh is not installed".into(),
        }),
        Response::NotificationSettings(NotificationsConfig {
            enabled: false,
            ..NotificationsConfig::default()
        }),
    ]
}

fn every_event(f: &Fleet) -> Vec<Event> {
    vec![
        Event::AgentUpdated {
            agent: Box::new(f.busy.clone()),
        },
        Event::AgentArchived {
            agent: Box::new(f.quiet.clone()),
        },
        Event::TimelineItems {
            agent_id: f.busy.id(),
            items: items(),
        },
        Event::WorkspaceUpdated {
            workspace: Box::new(f.workspace.clone()),
        },
        Event::TrackChanged {
            track: f.track.clone(),
        },
        Event::CountsChanged { counts: f.counts },
        Event::Notice {
            level: "warn".into(),
            message: "a file was quarantined".into(),
        },
        Event::ClosedForRoom {
            agent_id: f.quiet.id(),
            message: "closed to make room".into(),
        },
    ]
}

/// `fleet` is this machine's only (no host answers it), so it is written and never read back:
/// reading one is a clear error, not a half-read fleet.
#[test]
fn the_fleet_of_records_is_written_whole_and_never_read_back() {
    let f = fleet();
    let r = Response::Fleet(Box::new(crate::runtime::FleetSnapshot {
        home: "/h".into(),
        agents: vec![f.busy.clone(), f.quiet.clone()],
        workspaces: vec![f.workspace.clone()],
        projects: Vec::new(),
        tracks: vec![f.track.clone()],
        providers: Vec::new(),
        counts: f.counts,
        notices: vec!["a file was quarantined".into()],
        quarantined: Vec::new(),
        mcp_url: None,
        containment: crate::sandbox::ContainmentInfo {
            state: "on",
            engine: Some("bubblewrap"),
            message: "contained by bubblewrap".into(),
        },
    }));
    assert_eq!(kind_of(&r), "fleet");
    let frame = r.to_json().unwrap();
    let value: serde_json::Value = serde_json::from_str(&frame).unwrap();
    assert_eq!(value["kind"], "fleet");
    assert_eq!(
        value["value"]["agents"],
        serde_json::to_value(vec![&f.busy, &f.quiet]).unwrap()
    );
    assert_eq!(value["value"]["containment"]["engine"], "bubblewrap");
    let err = serde_json::from_str::<Response>(&frame).unwrap_err();
    assert!(err.to_string().contains("fleet"), "{err}");
}

#[test]
fn every_response_reads_back_as_the_json_it_was() {
    let f = fleet();
    let all = every_response(&f);
    let mut kinds: Vec<_> = all.iter().map(kind_of).collect();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds.len(), 26, "an example of every variant");
    for r in all {
        // The frame the app sends (the window's fast path), and serde's own encoding.
        let frame = r.to_json().unwrap();
        let back: Response =
            serde_json::from_str(&frame).unwrap_or_else(|e| panic!("{e}: {frame}"));
        assert_eq!(kind_of(&back), kind_of(&r));
        assert_eq!(back.to_json().unwrap(), frame);
        let text = serde_json::to_string(&r).unwrap();
        let back: Response = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["kind"], kind_of(&r), "{text}");
    }
}

#[test]
fn every_event_reads_back_as_the_json_it_was() {
    let f = fleet();
    let all = every_event(&f);
    let mut types: Vec<_> = all.iter().map(type_of).collect();
    types.sort();
    types.dedup();
    assert_eq!(types.len(), 8, "an example of every variant");
    for e in all {
        let text = serde_json::to_string(&e).unwrap();
        let back: Event = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{err}: {text}"));
        assert_eq!(type_of(&back), type_of(&e));
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }
}

#[test]
fn a_snapshot_read_back_keeps_its_record_and_its_live_state_apart() {
    let f = fleet();
    let text = serde_json::to_string(&f.busy).unwrap();
    let back: AgentSnapshot = serde_json::from_str(&text).unwrap();
    assert_eq!(back.record, f.busy.record);
    // The live fields are the snapshot's, not unknown fields of the record.
    assert!(back.record.extra.get("statusWord").is_none());
    assert_eq!(
        back.record.extra.get("upstreamOnly"),
        Some(&json!({"kept": true}))
    );
    assert_eq!(back.status_word, f.busy.status_word);
    assert_eq!(back.alert, f.busy.alert);
    assert_eq!(back.pending_permission, f.busy.pending_permission);
    assert_eq!(back.tree_usage, f.busy.tree_usage);
    assert_eq!(back.tree_budget, f.busy.tree_budget);
    assert!(back.tree_budget.is_some() && back.record.budget.is_some());
    assert!(back.at_rest && back.unconfined);
    // A count's line is said again from its numbers, never taken from the frame.
    let mut counts = serde_json::to_value(f.track.counts).unwrap();
    counts["line"] = json!("forged");
    let read: Tally = serde_json::from_value(counts).unwrap();
    assert_eq!(read, f.track.counts);
}

#[test]
fn a_bad_answer_is_an_error_naming_what_is_wrong() {
    let e = serde_json::from_str::<Response>(r#"{"kind":"explode"}"#).unwrap_err();
    assert!(e.to_string().contains("explode"), "{e}");
    let a = AgentId::new();
    let mut agent = serde_json::to_value(fleet().quiet).unwrap();
    agent["alert"] = json!("panic");
    let frame = json!({"kind": "agent", "value": agent}).to_string();
    let e = serde_json::from_str::<Response>(&frame).unwrap_err();
    assert!(e.to_string().contains("panic"), "{e}");
    let e = serde_json::from_str::<Event>(
        &json!({"type": "closedForRoom", "agentId": a.to_string()}).to_string(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("message"), "{e}");
}
