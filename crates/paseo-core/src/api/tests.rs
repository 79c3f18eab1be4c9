//! The frames themselves: every request survives JSON both ways, bad ones name their field.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::api::verbs;
use crate::config::NotificationsConfig;
use crate::model::tagged::reversed;
use crate::model::{AgentId, Budget, Status, WorkspaceId};
use crate::runtime::{CurrentWorkspace, DirectoryWorkspace, ExistingWorkspace, WorkspaceTarget};
use crate::workspaces::worktree::WorktreeTarget;

fn every_request() -> Vec<Request> {
    let a = AgentId::new();
    let b = AgentId::new();
    let w = WorkspaceId::new();
    let mut labels = BTreeMap::new();
    labels.insert("team".to_string(), "docs".to_string());
    vec![
        Request::FleetSnapshot(verbs::FleetSnapshot {}),
        Request::GetAgent(verbs::GetAgent { agent_id: a }),
        Request::ListAgents(verbs::ListAgents {
            include_archived: true,
            parent_id: Some(a),
            workspace_id: Some(w.clone()),
            statuses: Some(vec![Status::Idle, Status::Running]),
            limit: Some(7),
            labels: labels.clone(),
            host: Some("box".into()),
            this_machine: false,
        }),
        Request::ListAgents(verbs::ListAgents {
            statuses: Some(vec![Status::Running]),
            this_machine: true,
            ..Default::default()
        }),
        Request::ArchivedAgents(verbs::ArchivedAgents {
            offset: Some(3),
            limit: None,
            host: None,
        }),
        Request::ArchivedAgents(verbs::ArchivedAgents {
            offset: None,
            limit: Some(10),
            host: Some("box".into()),
        }),
        Request::CreateAgent(verbs::CreateAgent {
            provider: "shell".into(),
            workspace: WorkspaceTarget::worktree(
                Some("/r".into()),
                WorktreeTarget::branch_off("feat", Some("main")),
            ),
            model: Some("m".into()),
            mode: Some("default".into()),
            title: Some("t".into()),
            prompt: Some("p".into()),
            subagent: true,
            notify_on_finish: Some(false),
            auto_archive: true,
            unconfined: true,
            labels,
            request_id: Some("mcp:1".into()),
            budget: Some(Budget {
                tree_tokens: Some(5_000),
                tree_cost_usd: Some(1.5),
            }),
            host: Some("box".into()),
        }),
        Request::CreateAgent(verbs::CreateAgent {
            provider: "claude".into(),
            workspace: WorkspaceTarget::Existing(ExistingWorkspace {
                id: w.clone(),
                cwd: Some("sub".into()),
            }),
            model: None,
            mode: None,
            title: None,
            prompt: None,
            subagent: false,
            notify_on_finish: None,
            auto_archive: false,
            unconfined: false,
            labels: BTreeMap::new(),
            request_id: None,
            budget: None,
            host: None,
        }),
        Request::CreateWorktree(verbs::CreateWorktree {
            repo: None,
            target: WorktreeTarget::checkout("old"),
            request_id: None,
            host: None,
        }),
        Request::CreateWorktree(verbs::CreateWorktree {
            repo: Some("/r".into()),
            target: WorktreeTarget::checkout("old"),
            request_id: None,
            host: Some("box".into()),
        }),
        Request::Prompt(verbs::Prompt {
            agent_id: a,
            prompt: "go".into(),
            background: Some(true),
            notify_on_finish: None,
        }),
        Request::Cancel(verbs::Cancel { agent_id: a }),
        Request::Stop(verbs::Stop { agent_id: a }),
        Request::Wait(verbs::Wait {
            agent_id: a,
            timeout_secs: Some(1.5),
        }),
        Request::Archive(verbs::Archive { agent_id: a }),
        Request::ArchiveFinished(verbs::ArchiveFinished { parent_id: a }),
        Request::ArchivePlan(verbs::ArchivePlan { agent_id: a }),
        Request::FinishedPlan(verbs::FinishedPlan { parent_id: b }),
        Request::Restore(verbs::Restore {
            agent_id: a,
            as_root: true,
            member: true,
        }),
        Request::Detach(verbs::Detach { agent_id: a }),
        Request::Reattach(verbs::Reattach {
            agent_id: a,
            parent_id: b,
            check: true,
        }),
        Request::Wake(verbs::Wake { agent_id: a }),
        Request::AnswerPermission(verbs::AnswerPermission {
            agent_id: a,
            request_id: "r1".into(),
            allow: false,
        }),
        Request::MarkSeen(verbs::MarkSeen { agent_id: a }),
        Request::Timeline(verbs::Timeline {
            agent_id: a,
            before: Some(40),
            limit: Some(10),
        }),
        Request::SearchTimeline(verbs::SearchTimeline {
            agent_id: a,
            query: "needle".into(),
            scope: Some("main".into()),
        }),
        Request::CancelSearch(verbs::CancelSearch { scope: None }),
        Request::Changes(verbs::Changes { agent_id: a }),
        Request::Diff(verbs::Diff {
            agent_id: a,
            path: "src/x.rs".into(),
            offset: 10,
            limit: 20,
        }),
        Request::Commit(verbs::Commit {
            agent_id: a,
            message: "m".into(),
        }),
        Request::Discard(verbs::Discard { agent_id: a }),
        Request::Merge(verbs::Merge { agent_id: a }),
        Request::CreatePr(verbs::CreatePr {
            agent_id: a,
            title: "t".into(),
            body: "b".into(),
        }),
        Request::PrStatus(verbs::PrStatus { agent_id: a }),
        Request::OpenInEditor(verbs::OpenInEditor {
            agent_id: a,
            path: Some("f".into()),
        }),
        Request::AddWorkspace(verbs::AddWorkspace {
            path: "/w".into(),
            host: None,
        }),
        Request::AddWorkspace(verbs::AddWorkspace {
            path: "/w".into(),
            host: Some("box".into()),
        }),
        Request::RenameWorkspace(verbs::RenameWorkspace {
            workspace_id: w.clone(),
            name: "n".into(),
        }),
        Request::ArchiveWorkspace(verbs::ArchiveWorkspace {
            workspace_id: w,
            even_if_running: true,
        }),
        Request::NotificationSettings(verbs::NotificationSettings {}),
        Request::SetNotificationSettings(verbs::SetNotificationSettings {
            settings: NotificationsConfig {
                enabled: false,
                ..NotificationsConfig::default()
            },
        }),
        Request::FleetFirstScreen(verbs::FleetFirstScreen {
            workspace_id: Some(WorkspaceId::new().to_string()),
            agent_ids: vec![a.to_string(), "not an id".into()],
        }),
        Request::FleetCards(verbs::FleetCards {
            after: Some((1_700_000_000_000, b)),
            limit: Some(5_000),
        }),
        Request::SyncSnapshot(verbs::SyncSnapshot { host: None }),
        Request::SyncSnapshot(verbs::SyncSnapshot {
            host: Some("box".into()),
        }),
        Request::SetBudget(verbs::SetBudget {
            agent_id: a,
            budget: Some(Budget {
                tree_tokens: Some(1_000),
                tree_cost_usd: None,
            }),
        }),
        Request::SetBudget(verbs::SetBudget {
            agent_id: a,
            budget: None,
        }),
        Request::ListHosts(verbs::ListHosts {}),
        Request::AddHost(verbs::AddHost {
            host: crate::config::Host {
                name: "box".into(),
                ssh: "me@box".into(),
                command: Some(vec!["/opt/paseo-headless".into()]),
            },
        }),
        Request::RemoveHost(verbs::RemoveHost { name: "box".into() }),
        Request::InstallHost(verbs::InstallHost { name: "box".into() }),
        Request::ListSchedules(verbs::ListSchedules {
            host: Some("box".into()),
        }),
        Request::PreviewSchedule(verbs::PreviewSchedule {
            every: Some("15m".into()),
            ..Default::default()
        }),
        Request::SaveSchedule(verbs::SaveSchedule {
            schedule: serde_json::json!({"name": "nightly", "cron": "0 7 * * *"}),
            replaces: Some("old".into()),
            host: None,
        }),
        Request::DeleteSchedule(verbs::DeleteSchedule {
            name: "nightly".into(),
            host: None,
        }),
        Request::PauseSchedule(verbs::PauseSchedule {
            name: "nightly".into(),
            paused: true,
            host: Some("box".into()),
        }),
        Request::RunSchedule(verbs::RunSchedule {
            name: "nightly".into(),
            host: None,
        }),
        Request::Alerts(verbs::Alerts {}),
        Request::Fleet(verbs::Fleet {}),
        Request::Counts(verbs::Counts {}),
        Request::Providers(verbs::Providers {}),
        Request::Shown(verbs::Shown {
            window: "main".into(),
            agent_id: Some(a),
        }),
        Request::Shown(verbs::Shown {
            window: "main".into(),
            agent_id: None,
        }),
    ]
}

#[test]
fn every_request_round_trips_through_json() {
    let all = every_request();
    let mut kinds: Vec<_> = all.iter().map(Request::kind).collect();
    kinds.sort();
    kinds.dedup();
    let mut every: Vec<_> = Request::kinds().to_vec();
    every.sort();
    assert_eq!(kinds, every, "an example of every verb");
    for r in all {
        let text = serde_json::to_string(&r).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        // Each verb's own `KIND` is its tag on the wire.
        assert_eq!(value["kind"], r.kind(), "{text}");
        assert_eq!(Request::from_json(&text).unwrap(), r, "{text}");
    }
}

#[test]
fn fields_are_camel_case_and_optional_ones_may_be_left_out() {
    let a = AgentId::new();
    let r = Request::from_value(json!({"kind": "restore", "agentId": a.to_string()})).unwrap();
    assert_eq!(
        r,
        Request::Restore(verbs::Restore {
            agent_id: a,
            as_root: false,
            member: false
        })
    );
    let r = Request::from_value(json!({
        "kind": "createAgent", "provider": "shell",
        "workspace": {"kind": "worktree", "repo": "/r",
                      "target": {"kind": "branch-off", "newBranch": "x"}},
        "autoArchive": true
    }))
    .unwrap();
    let Request::CreateAgent(verbs::CreateAgent {
        workspace,
        auto_archive,
        ..
    }) = r
    else {
        panic!("{r:?}")
    };
    assert!(auto_archive);
    assert_eq!(
        workspace,
        WorkspaceTarget::worktree(Some("/r".into()), WorktreeTarget::branch_off("x", None))
    );
}

/// Every workspace target and worktree target, read by hand kind first (`model::tagged`), reads
/// back as written, whatever the order of its fields.
#[test]
fn every_workspace_target_round_trips_in_any_order() {
    let w = WorkspaceId::new();
    let branch_off = WorktreeTarget::branch_off("feat", Some("main"));
    let checkout = WorktreeTarget::checkout("old");
    for target in [
        WorkspaceTarget::Existing(ExistingWorkspace {
            id: w.clone(),
            cwd: Some("sub".into()),
        }),
        WorkspaceTarget::existing(w),
        WorkspaceTarget::Current(CurrentWorkspace {
            cwd: Some("/w/sub".into()),
        }),
        WorkspaceTarget::Current(CurrentWorkspace { cwd: None }),
        WorkspaceTarget::directory("/w"),
        WorkspaceTarget::worktree(Some("/r".into()), branch_off),
        WorkspaceTarget::worktree(None, checkout),
    ] {
        let written = serde_json::to_value(&target).unwrap();
        assert_eq!(
            serde_json::from_value::<WorkspaceTarget>(written.clone()).unwrap(),
            target
        );
        let reversed = reversed(&written);
        assert_eq!(
            serde_json::from_value::<WorkspaceTarget>(reversed.clone()).unwrap(),
            target,
            "{reversed}"
        );
    }
}

/// What each workspace and worktree target writes, byte for byte: the window, a host's backend
/// and older clients read these frames, so a change to the types must not change them.
#[test]
fn workspace_targets_keep_their_wire_shape() {
    let w: WorkspaceId = "ws-1".parse().unwrap();
    let cases = [
        (
            WorkspaceTarget::Existing(ExistingWorkspace {
                id: w.clone(),
                cwd: Some("sub".into()),
            }),
            r#"{"kind":"existing","workspaceId":"ws-1","cwd":"sub"}"#,
        ),
        (
            WorkspaceTarget::existing(w),
            r#"{"kind":"existing","workspaceId":"ws-1","cwd":null}"#,
        ),
        (
            WorkspaceTarget::Current(CurrentWorkspace { cwd: None }),
            r#"{"kind":"current","cwd":null}"#,
        ),
        (
            WorkspaceTarget::directory("/w"),
            r#"{"kind":"directory","path":"/w"}"#,
        ),
        (
            WorkspaceTarget::Directory(DirectoryWorkspace {
                path: "/w".into(),
                reuse: true,
            }),
            r#"{"kind":"directory","path":"/w","reuse":true}"#,
        ),
        (
            WorkspaceTarget::worktree(
                Some("/r".into()),
                WorktreeTarget::branch_off("feat", Some("main")),
            ),
            r#"{"kind":"worktree","repo":"/r","target":{"kind":"branch-off","newBranch":"feat","base":"main"}}"#,
        ),
        (
            WorkspaceTarget::worktree(None, WorktreeTarget::branch_off("feat", None)),
            r#"{"kind":"worktree","repo":null,"target":{"kind":"branch-off","newBranch":"feat"}}"#,
        ),
        (
            WorkspaceTarget::worktree(None, WorktreeTarget::checkout("old")),
            r#"{"kind":"worktree","repo":null,"target":{"kind":"checkout-branch","branch":"old"}}"#,
        ),
    ];
    for (target, wire) in cases {
        assert_eq!(serde_json::to_string(&target).unwrap(), wire);
        assert_eq!(
            serde_json::from_str::<WorkspaceTarget>(wire).unwrap(),
            target
        );
    }
}

/// The requests that took `host` later (SPEC 17) read as they did without it, and write
/// without it when it is absent: a host's backend and an older client see the same frame.
#[test]
fn requests_written_before_host_existed_still_read() {
    for (frame, host_less) in [
        (
            json!({"kind": "syncSnapshot"}),
            Request::SyncSnapshot(verbs::SyncSnapshot { host: None }),
        ),
        (
            json!({"kind": "archivedAgents", "offset": 2}),
            Request::ArchivedAgents(verbs::ArchivedAgents {
                offset: Some(2),
                limit: None,
                host: None,
            }),
        ),
        (
            json!({"kind": "addWorkspace", "path": "/w"}),
            Request::AddWorkspace(verbs::AddWorkspace {
                path: "/w".into(),
                host: None,
            }),
        ),
        (
            json!({"kind": "createWorktree", "target": {"kind": "checkout-branch", "branch": "b"}}),
            Request::CreateWorktree(verbs::CreateWorktree {
                repo: None,
                target: WorktreeTarget::checkout("b"),
                request_id: None,
                host: None,
            }),
        ),
    ] {
        assert_eq!(Request::from_value(frame.clone()).unwrap(), host_less);
        let written = serde_json::to_value(&host_less).unwrap();
        assert!(written.get("host").is_none(), "{written}");
    }
    let named = Request::from_value(json!({"kind": "syncSnapshot", "host": "box"})).unwrap();
    assert_eq!(
        named,
        Request::SyncSnapshot(verbs::SyncSnapshot {
            host: Some("box".into())
        })
    );
}

#[test]
fn a_bad_request_names_what_is_wrong() {
    let a = AgentId::new().to_string();
    let cases = [
        (json!({"kind": "explode", "agentId": a}), "kind"),
        (json!({"agentId": a}), "kind"),
        (json!({"kind": "archive"}), "agentId"),
        (json!({"kind": "prompt", "agentId": a}), "prompt"),
        (
            json!({"kind": "archive", "agentId": a, "force": true}),
            "force",
        ),
        (
            json!({"kind": "createAgent", "provider": "shell", "workspace": {"kind": "directory"}}),
            "workspace.path",
        ),
        (
            json!({"kind": "setBudget", "agentId": a, "budget": {"tokens": 5}}),
            "budget.tokens",
        ),
    ];
    for (frame, field) in cases {
        let e = Request::from_value(frame.clone()).unwrap_err();
        assert_eq!(e.code, "invalid", "{frame}");
        assert_eq!(e.field.as_deref(), Some(field), "{frame}: {e:?}");
        assert!(e.message.contains(field), "{frame}: {}", e.message);
    }
    let e = Request::from_value(json!({"kind": "archive", "agentId": "not-an-id"})).unwrap_err();
    assert_eq!(e.code, "invalid");
    assert_eq!(e.field.as_deref(), Some("agentId"), "{e:?}");
    assert!(e.message.starts_with("agentId: "), "{e:?}");
    let e = Request::from_value(
        json!({"kind": "restore", "agentId": AgentId::new().to_string(),
                                       "asRoot": "yes"}),
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("asRoot"), "{e:?}");
    assert!(Request::from_json("{not json").is_err());
}

/// A bad field deep in a frame is named by its whole path, even where another field holds the
/// same value, in an array, or after a `kind` written last.
#[test]
fn a_bad_field_is_named_by_its_whole_path() {
    let a = AgentId::new().to_string();
    let worktree = |target: serde_json::Value| {
        json!({"kind": "createAgent", "provider": "shell",
               "workspace": {"kind": "worktree", "repo": "/r", "target": target}})
    };
    let cases = [
        // A bad value two tagged objects down.
        (
            worktree(json!({"kind": "branch-off", "newBranch": 5})),
            "workspace.target.newBranch",
            "invalid type: integer `5`",
        ),
        // A missing field is named inside the object that lacks it.
        (
            worktree(json!({"kind": "branch-off"})),
            "workspace.target.newBranch",
            "missing field `newBranch`",
        ),
        (
            worktree(json!({"kind": "checkout-branch", "branch": "b", "base": "main"})),
            "workspace.target.base",
            "unknown field `base`",
        ),
        (
            worktree(json!({"kind": "rebase"})),
            "workspace.target.kind",
            "unknown variant `rebase`",
        ),
        (
            worktree(json!({"newBranch": "x"})),
            "workspace.target.kind",
            "missing field `kind`",
        ),
        (
            json!({"kind": "createAgent", "provider": "shell", "title": "5",
                   "workspace": {"kind": "existing", "workspaceId": "w", "cwd": 5}}),
            "workspace.cwd",
            "invalid type: integer `5`",
        ),
        // The same value in the field before it.
        (
            json!({"kind": "archivedAgents", "offset": 5, "limit": "5"}),
            "limit",
            "invalid type: string \"5\"",
        ),
        // In arrays, by index.
        (
            json!({"kind": "listAgents", "statuses": ["idle", 5]}),
            "statuses[1]",
            "invalid type: integer `5`",
        ),
        (
            json!({"kind": "fleetCards", "after": [-1, "not an id"]}),
            "after[1]",
            "not an id",
        ),
        (
            json!({"kind": "addHost", "host": {"name": "box", "ssh": "box",
                                               "command": ["paseo-headless", 7]}}),
            "host.command[1]",
            "invalid type: integer `7`",
        ),
        (
            json!({"kind": "setNotificationSettings",
                   "settings": {"enabled": "no", "permission": true, "error": true,
                                "finished": true, "subagentFinished": true}}),
            "settings.enabled",
            "expected a boolean",
        ),
        (
            json!({"kind": "setBudget", "agentId": a, "budget": {"treeTokens": -5}}),
            "budget.treeTokens",
            "invalid value: integer `-5`",
        ),
        // `kind` written last, at the top and inside.
        (
            json!({"provider": "shell",
                   "workspace": {"target": {"newBranch": 5, "kind": "branch-off"},
                                 "kind": "worktree"},
                   "kind": "createAgent"}),
            "workspace.target.newBranch",
            "invalid type: integer `5`",
        ),
        (json!({"kind": 7}), "kind", "invalid type: integer `7`"),
    ];
    for (frame, field, says) in cases {
        let e = Request::from_value(frame.clone()).unwrap_err();
        assert_eq!(e.code, "invalid", "{frame}");
        assert_eq!(e.field.as_deref(), Some(field), "{frame}: {e:?}");
        assert!(
            e.message.starts_with(&format!("{field}: ")),
            "{frame}: {e:?}"
        );
        assert!(e.message.contains(says), "{frame}: {e:?}");
        // The text says the same.
        assert_eq!(Request::from_json(&frame.to_string()).unwrap_err(), e);
    }
    // What is no object at all names no field.
    for frame in [json!(5), json!("archive"), json!(null), json!([])] {
        let e = Request::from_value(frame.clone()).unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.field.as_deref()),
            ("invalid", None),
            "{frame}"
        );
        assert!(
            e.message
                .contains("expected internally tagged enum Request"),
            "{e:?}"
        );
    }
    let e = Request::from_json("{not json").unwrap_err();
    assert_eq!(
        (e.code.as_str(), e.field.as_deref()),
        ("invalid", None),
        "{e:?}"
    );
}

#[test]
fn callers_and_errors_are_frames_too() {
    let a = AgentId::new();
    for c in [Caller::User, Caller::Agent(a)] {
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Caller>(&text).unwrap(), c);
    }
    assert_eq!(
        serde_json::to_value(Caller::Agent(a)).unwrap(),
        json!({"kind": "agent", "agentId": a.to_string()})
    );
    let e: ApiError = crate::runtime::RuntimeError::invalid("prompt", "the prompt is empty").into();
    let text = serde_json::to_string(&e).unwrap();
    assert_eq!(serde_json::from_str::<ApiError>(&text).unwrap(), e);
    assert_eq!(e.field.as_deref(), Some("prompt"));
}

#[test]
fn a_window_snapshot_goes_out_as_the_text_it_is() {
    let r = Response::Window(r#"{"agents":[1,2]}"#.to_string());
    let fast: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
    assert_eq!(fast, json!({"kind": "window", "value": {"agents": [1, 2]}}));
    assert_eq!(serde_json::to_value(&r).unwrap(), fast);
    let done: serde_json::Value = serde_json::from_str(&Response::Done.to_json().unwrap()).unwrap();
    assert_eq!(done, json!({"kind": "done"}));
    let ids = Response::AgentIds(vec![AgentId::new()]).to_json().unwrap();
    assert!(ids.starts_with(r#"{"kind":"agentIds","value":["#), "{ids}");
}
