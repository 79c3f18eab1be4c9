//! docs/data-model.md stays true: every file the core writes is built here through the code that
//! writes it, with every optional field set, and each JSON key (with its path) must have a row in
//! that file's table; each row must name a key the code still writes. Structs are written out
//! field by field (no `..`), so a new field does not compile until this test sets it, and then
//! fails until the doc has its row.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use paseo_core::config::Limits;
use paseo_core::config::{
    Config, McpConfig, NotificationsConfig, ProviderConfig, ProviderKind, SandboxConfig,
    StorageConfig, DEFAULT_START_TIMEOUT,
};
use paseo_core::mcp::McpServer;
use paseo_core::model::schedule::Fire;
use paseo_core::model::{
    AgentConfig, AgentId, AgentRecord, AttentionReason, BatchId, Budget, BudgetHold, Extra,
    HeldTurn, HoldReason, ItemKind, LastRun, Notice, NotifyArm, Persistence, Power, Status,
    StyledRun, TermColor, TermStyle, TimelineItem, Timestamp, Usage, WaitingPrompt, WorkspaceId,
    PARENT_LABEL,
};
use paseo_core::providers::claude::mcp_config_json;
use paseo_core::providers::groups::GroupRecorder;
use paseo_core::providers::{McpAccess, ProviderRegistry};
use paseo_core::runtime::RuntimeOptions;
use paseo_core::schedules::{ledger, Ledger};
use paseo_core::server::Runtime;
use paseo_core::store::timeline::Timelines;
use paseo_core::store::{self, Layout};
use paseo_core::workspaces::trash;
use paseo_core::workspaces::worktree::{self, WorktreeTarget};
use serde_json::{json, Value};

#[path = "support/doc_keys.rs"]
mod doc_keys;
#[allow(dead_code)]
#[path = "support/git.rs"]
mod git_support;
use doc_keys::{compare, keys, Shape};
use git_support::{git, init_repo};

fn doc() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/data-model.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// An agent record with every field set, as the store writes it.
fn full_record(now: Timestamp) -> AgentRecord {
    let parent = AgentId::new();
    let caller = AgentId::new();
    let mut labels = BTreeMap::from([("team".to_string(), "docs".to_string())]);
    labels.insert(PARENT_LABEL.to_string(), parent.to_string());
    let mut config_extra = Extra::new();
    config_extra.insert("sandbox".into(), json!("read-only"));
    let mut arm = NotifyArm::new(caller);
    arm.turn = 3;
    AgentRecord {
        id: AgentId::new(),
        provider: "codex".into(),
        cwd: "/home/me/src/app".into(),
        workspace_id: Some(WorkspaceId::new()),
        title: "lead".into(),
        labels: labels.into(),
        last_status: Status::Error,
        created_at: now,
        updated_at: now,
        last_activity_at: Some(now),
        last_user_message_at: Some(now),
        config: AgentConfig {
            model: Some("gpt-5".into()),
            mode: Some("never".into()),
            system_prompt: Some("be brief".into()),
            system_prompt_on_disk: false,
            unconfined: true,
            extra: config_extra,
        }
        .shared(),
        persistence: Some(Box::new(Persistence {
            session_id: Some("thread-1".into()),
            extra: Extra::new(),
        })),
        requires_attention: true,
        attention_reason: Some(AttentionReason::Error),
        attention_timestamp: Some(now),
        last_error: Some("boom".into()),
        archived_at: Some(now),
        auto_archive: true,
        notify_on_finish: true,
        created_by: Some(caller),
        archive_batch_id: Some(BatchId::new()),
        created_workspace_id: Some(WorkspaceId::new()),
        notify_arm: Some(Box::new(arm)),
        last_message: Some("done".into()),
        last_message_on_disk: false,
        turn_count: 3,
        auto_archive_done: true,
        held_turn: Some(Box::new(
            HeldTurn::new("make".into(), caller, Power::Asks, Power::Full).because(vec![
                HoldReason::WiderMode,
                HoldReason::OutsideReach {
                    caller_cwd: "/home/me/src/app".into(),
                    cwd: "/home/me".into(),
                },
            ]),
        )),
        waiting_prompt: Some(Box::new(WaitingPrompt {
            prompt: "next".into(),
            caller: Some(caller),
        })),
        usage: Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_tokens: 4,
            cost_usd: Some(0.5),
            turns: 1,
            session_cost_usd: Some(0.5),
            extra: Extra::new(),
        }
        .into(),
        last_run: Some(Box::new(LastRun {
            wall_ms: 1500,
            exit_code: Some(2),
            extra: Extra::new(),
        })),
        budget: Some(Box::new(Budget {
            tree_tokens: Some(50_000),
            tree_cost_usd: Some(2.5),
        })),
        extra: Extra::new(),
    }
}

/// A held turn that waits on a budget (SPEC 18), as the engine writes it.
fn budget_held_turn(caller: AgentId) -> HeldTurn {
    let HeldTurn {
        request_id,
        prompt,
        caller,
        caller_power,
        power,
        reasons,
        budget: _,
    } = HeldTurn::new("go on".into(), caller, Power::Asks, Power::Asks);
    HeldTurn {
        request_id,
        prompt,
        caller,
        caller_power,
        power,
        reasons,
        budget: Some(BudgetHold {
            agent_id: caller,
            tree: "lead".into(),
            words: "budget: this tree used 1200 of 1000 tokens".into(),
            notice: true,
        }),
    }
}

/// Every key config.json takes, each with a value other than its default.
fn full_config() -> Value {
    json!({
        "providers": {
            "claude": {"command": ["/opt/wrap", "claude"], "env": {"A": "1"}},
            "mybot": {
                "kind": "command", "label": "My bot", "command": ["bot", "{prompt}"],
                "stdin": true, "readsPrompts": false, "env": {"B": "2"}, "models": ["m1"],
                "unconfined": true
            }
        },
        "mcp": {"port": 7777},
        "storage": {"timelineMaxBytes": 1048576, "trashDays": 30},
        "limits": {"maxLiveAgents": 5, "maxDepth": 3, "createPerMinute": 7},
        "budget": {"treeTokens": 100000, "treeCostUsd": 5.0},
        "notifications": {
            "enabled": false, "permission": false, "error": false, "finished": false,
            "subagentFinished": true
        },
        "sandbox": {"enabled": false, "hide": ["~/.secret"], "network": false, "engine": "landlock"},
        "startTimeoutSecs": 5,
        "hosts": [{"name": "box", "ssh": "me@box", "command": ["/opt/paseo-headless"]}],
        // One of each `when` and each workspace kind: together they hold every key.
        "schedules": [
            {
                "name": "nightly", "cron": "0 7 * * *", "provider": "shell", "prompt": "make check",
                "workspace": {"kind": "directory", "path": "/"}, "model": "m", "mode": "ask",
                "budget": {"treeTokens": 1000, "treeCostUsd": 1.5}, "autoArchive": true,
                "overlap": "queue",
                "paused": true
            },
            {
                "name": "often", "every": "15m", "provider": "shell", "prompt": "triage",
                "workspace": {"kind": "worktree", "repo": "/", "base": "main"}
            },
            {
                "name": "once", "at": "2026-12-24T07:00:00+01:00", "provider": "shell",
                "prompt": "wrap up", "workspace": {"kind": "existing", "workspaceId": "w1"}
            }
        ]
    })
}

/// The fields the parser itself lists in its "unknown field `x`, expected one of `a`, `b`"
/// message for `text` (serde's words). `$comment`, a note for whoever edits the file, is no
/// setting.
fn listed_fields(text: &str) -> Vec<String> {
    let err = Config::parse(text, "config.json").unwrap_err().to_string();
    let (_, list) = err
        .split_once(", expected ")
        .unwrap_or_else(|| panic!("the message lists no fields: {err}"));
    let list = list.strip_prefix("one of ").unwrap_or(list);
    list.split(", ")
        .flat_map(|s| s.split(" or "))
        .map(|f| f.trim_matches('`').to_string())
        .filter(|f| f != "$comment")
        .collect()
}

/// The config fixture sets every field of the parsed configuration (so it names every key the
/// parser takes) and every key the parser's own messages list.
fn check_config_fixture(fixture: &Value) {
    let c = Config::parse(&fixture.to_string(), "config.json").unwrap();
    let d = Config::default();
    let Config {
        providers,
        mcp,
        storage,
        limits,
        budget,
        notifications,
        sandbox,
        start_timeout,
        hosts,
        schedules,
    } = &c;
    assert_eq!(
        schedules.len(),
        3,
        "the fixture's schedules were not all read"
    );
    let mut schedule_keys = BTreeSet::new();
    for s in fixture["schedules"].as_array().unwrap() {
        schedule_keys.extend(s.as_object().unwrap().keys().cloned());
    }
    for f in listed_fields(r#"{"schedules": [{"zzz": 1}]}"#) {
        assert!(
            schedule_keys.contains(&f),
            "schedules[].{f} is not in the fixture"
        );
    }
    let Some(Budget {
        tree_tokens,
        tree_cost_usd,
    }) = budget
    else {
        panic!("the fixture's budget was not read")
    };
    assert!(tree_tokens.is_some() && tree_cost_usd.is_some());
    let paseo_core::hosts::Host { name, ssh, command } = &hosts[0];
    assert!(!name.is_empty() && !ssh.is_empty() && command.is_some());
    let h = fixture["hosts"][0].as_object().unwrap();
    for f in listed_fields(r#"{"hosts": [{"zzz": 1}]}"#) {
        assert!(h.contains_key(&f), "hosts[].{f} is not in the fixture");
    }
    let SandboxConfig {
        enabled: sandbox_on,
        hide,
        network,
        engine,
    } = sandbox;
    let ds = SandboxConfig::default();
    assert!(sandbox_on != &ds.enabled && hide != &ds.hide && network != &ds.network);
    assert_ne!(engine, &ds.engine);
    let s = fixture["sandbox"].as_object().unwrap();
    for f in listed_fields(r#"{"sandbox": {"zzz": true}}"#) {
        assert!(s.contains_key(&f), "sandbox.{f} is not in the fixture");
    }
    let McpConfig { port } = mcp;
    assert!(port.is_some());
    let StorageConfig {
        timeline_max_bytes,
        trash_days,
    } = storage;
    assert_ne!(*timeline_max_bytes, d.storage.timeline_max_bytes);
    assert_ne!(*trash_days, d.storage.trash_days);
    let Limits {
        max_live_agents,
        max_depth,
        create_per_minute,
    } = limits;
    let dl = Limits::default();
    assert!(max_live_agents != &dl.max_live_agents && max_depth != &dl.max_depth);
    assert_ne!(create_per_minute, &dl.create_per_minute);
    let NotificationsConfig {
        enabled,
        permission,
        error,
        finished,
        subagent_finished,
    } = notifications;
    let dn = NotificationsConfig::default();
    assert!(enabled != &dn.enabled && permission != &dn.permission && error != &dn.error);
    assert!(finished != &dn.finished && subagent_finished != &dn.subagent_finished);
    assert_ne!(*start_timeout, DEFAULT_START_TIMEOUT);
    let ProviderConfig {
        kind,
        label,
        command,
        stdin,
        reads_prompts,
        env,
        models,
        unconfined,
    } = &providers["mybot"];
    assert!(unconfined);
    let dp = ProviderConfig::new(ProviderKind::Shell);
    assert!(kind != &dp.kind && label.is_some() && command.is_some() && stdin != &dp.stdin);
    assert_ne!(unconfined, &dp.unconfined);
    assert!(reads_prompts.is_some() && !env.is_empty() && !models.is_empty());

    let top = fixture.as_object().unwrap();
    for f in listed_fields(r#"{"zzz": 1}"#) {
        assert!(
            top.contains_key(&f),
            "config.json `{f}` is not in the fixture"
        );
    }
    let bot = fixture["providers"]["mybot"].as_object().unwrap();
    for f in listed_fields(r#"{"providers": {"shell": {"zzz": 1}}}"#) {
        assert!(
            bot.contains_key(&f),
            "providers.<id>.{f} is not in the fixture"
        );
    }
    let n = fixture["notifications"].as_object().unwrap();
    for f in listed_fields(r#"{"notifications": {"zzz": true}}"#) {
        assert!(
            n.contains_key(&f),
            "notifications.{f} is not in the fixture"
        );
    }
}

#[tokio::test]
async fn the_data_model_doc_names_every_key_the_app_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let layout = Layout::new(&home);
    let now = Timestamp::now();
    let doc = doc();
    let mut problems = Vec::new();

    // The agent record, through the store's encoder; it reads back as written.
    let rec = full_record(now);
    let bytes = store::encode_record(&rec).unwrap();
    let back: AgentRecord = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(back, rec);
    let mut v: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["labels"][PARENT_LABEL], &rec.labels[PARENT_LABEL]);
    // A turn held on a budget (SPEC 18) instead of on power: its `budget` part, as written.
    let mut on_budget = rec.clone();
    on_budget.held_turn = Some(Box::new(budget_held_turn(AgentId::new())));
    let b: Value = serde_json::from_slice(&store::encode_record(&on_budget).unwrap()).unwrap();
    v["heldTurn"]["budget"] = b["heldTurn"]["budget"].clone();
    assert!(
        doc.contains(&format!("`{PARENT_LABEL}`")),
        "the parent label is documented"
    );
    let agent_keys = keys(&v, &Shape::new(&[], &["labels"]));
    problems.extend(compare(&doc, "## Agent record", &agent_keys));

    // The registries: a worktree of a real repository with a remote, as the runtime records it.
    let repo = tmp.path().join("repo");
    init_repo(&repo);
    git(
        &repo,
        &["remote", "add", "origin", "https://example.com/app.git"],
    );
    let target = WorktreeTarget::branch_off("feature", Some("main"));
    let created = worktree::create(&layout, "", repo.to_str().unwrap(), &target).unwrap();
    let (mut ws, project) = paseo_core::workspaces::worktree_workspace(
        &created,
        &[],
        Some(AgentId::new()),
        Some("create_worktree".into()),
        now,
    );
    ws.archived_at = Some(now);
    // Named, as a workspace made for an agent or renamed by the user is.
    ws.name = Some("docs review".into());
    let project = project.expect("a new project");
    let ws_file: Value =
        serde_json::from_slice(&store::encode_workspaces(std::iter::once(&ws)).unwrap()).unwrap();
    problems.extend(compare(
        &doc,
        "## Workspace registry",
        &keys(&ws_file, &Shape::default()),
    ));
    let p_file: Value =
        serde_json::from_slice(&store::encode_projects(std::iter::once(&project)).unwrap())
            .unwrap();
    problems.extend(compare(
        &doc,
        "## Project registry",
        &keys(&p_file, &Shape::default()),
    ));

    // A notice inbox.
    let notice = Notice::new(
        "arm-1",
        AgentId::new(),
        "kid",
        paseo_core::model::NoticeOutcome::Failed,
        Some("boom".into()),
        Some("last words"),
        now,
    );
    let inbox: Value =
        serde_json::from_slice(&store::encode_inbox(std::slice::from_ref(&notice)).unwrap())
            .unwrap();
    problems.extend(compare(
        &doc,
        "## Notice inbox",
        &keys(&inbox, &Shape::default()),
    ));

    // A timeline line, appended by the timeline thread.
    let agent = AgentId::new();
    let item = TimelineItem {
        seq: 1,
        ts: now,
        kind: ItemKind::ToolResult,
        text: "out".into(),
        turn: 1,
        call_id: Some("call-1".into()),
        tool_name: Some("Bash".into()),
        input: Some(json!({"command": "ls"})),
        is_error: true,
        stream: Some("stdout".into()),
        runs: vec![StyledRun {
            len: 3,
            style: TermStyle {
                fg: Some(TermColor::Palette(1)),
                bg: Some(TermColor::Rgb([0, 0, 0])),
                bold: true,
                dim: true,
                italic: true,
                underline: true,
                inverse: true,
                strike: true,
            },
        }],
        notice: Some(Box::new(notice)),
    };
    let mut timelines = Timelines::start(layout.clone());
    timelines.append(agent, std::slice::from_ref(&item));
    timelines.stop();
    let text = std::fs::read_to_string(layout.timeline_path(agent)).unwrap();
    let mut line_keys = BTreeSet::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        line_keys.extend(keys(&v, &Shape::new(&[], &["input"])));
    }
    problems.extend(compare(&doc, "## Timeline", &line_keys));

    // A process group record.
    GroupRecorder::new(layout.run_dir()).record(agent, std::process::id() as i32);
    let run = layout
        .run_dir()
        .join(format!("{agent}.{}.json", std::process::id()));
    problems.extend(compare(
        &doc,
        "## Process groups",
        &keys(&read_json(&run), &Shape::default()),
    ));

    // A trash entry's manifest, restored (every optional key set).
    let left = tmp.path().join("left");
    std::fs::create_dir_all(&left).unwrap();
    let manifest = trash::Manifest {
        worktree: left.display().to_string(),
        repo: repo.display().to_string(),
        branch: Some("feature".into()),
        snapshot: Some("0123456789abcdef0123456789abcdef01234567".into()),
        trashed_at: Timestamp::now(),
        restored_at: None,
    };
    let entry = trash::put(&layout, &left, &manifest).unwrap();
    std::fs::create_dir_all(&left).unwrap();
    trash::restore_into(&entry, &left).unwrap();
    problems.extend(compare(
        &doc,
        "## Trash",
        &keys(
            &read_json(&entry.dir.join(trash::MANIFEST)),
            &Shape::default(),
        ),
    ));

    // schedules.json, as the scheduler writes it, with every optional field set: a due time
    // closed with what it gave, and a later fire recorded.
    let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap().to_utc();
    let mut entry = ledger::Entry::new(at("2026-12-01T00:00:00Z"));
    entry.fire(Fire {
        due: at("2026-12-08T07:00:00Z"),
        late: true,
    });
    entry.close(ledger::Outcome {
        due: at("2026-12-08T07:00:00Z"),
        at: at("2026-12-08T07:03:00Z"),
        what: ledger::OutcomeKind::Started,
        agent_id: Some(AgentId::new()),
        late: true,
        why: Some("paused".into()),
    });
    entry.fire(Fire {
        due: at("2026-12-09T07:00:00Z"),
        late: true,
    });
    let mut book = Ledger::default();
    book.schedules.insert("nightly".into(), entry);
    book.save(&layout).unwrap();
    assert_eq!(Ledger::load(&layout), book, "it reads back as written");
    problems.extend(compare(
        &doc,
        "## schedules.json",
        &keys(
            &read_json(&ledger::path(&layout)),
            &Shape::new(&[("schedules", "<name>")], &[]),
        ),
    ));

    // config.json: the fixture names every key the parser takes.
    let config = full_config();
    check_config_fixture(&config);
    let config_shape = Shape::new(
        &[("providers", "<id>")],
        &["providers.<id>.env", "providers.<id>.command"],
    );
    problems.extend(compare(
        &doc,
        "## config.json",
        &keys(&config, &config_shape),
    ));

    // mcp.json, as the MCP server writes it once it serves.
    let server = McpServer::bind(&layout, None).unwrap();
    let rt = Runtime::start(
        RuntimeOptions::new(&home, ProviderRegistry::new()),
        Some(server.access()),
    )
    .await
    .unwrap();
    let mcp = server.serve(rt.handle()).await.unwrap();
    let mcp_json = read_json(&layout.mcp_json_path());
    assert!(layout.mcp_token_path().is_file());
    mcp.shutdown().await;
    rt.shutdown().await;
    problems.extend(compare(
        &doc,
        "## mcp.json, mcp-token and secrets",
        &keys(&mcp_json, &Shape::default()),
    ));

    // A Claude session's MCP configuration file.
    let access = McpAccess {
        url: "http://127.0.0.1:1/mcp".into(),
        token: "t".into(),
        config_dir: layout.secrets_dir(),
        tools: paseo_core::mcp::PaseoTools::served().into(),
    };
    let claude: Value = serde_json::from_str(&mcp_config_json(&access)).unwrap();
    problems.extend(compare(
        &doc,
        "### A Claude session's file in `secrets/`",
        &keys(&claude, &Shape::default()),
    ));

    assert!(
        problems.is_empty(),
        "docs/data-model.md is out of date:\n  {}",
        problems.join("\n  ")
    );
}

/// The checker itself: a key without a row, and a row without a key, are both reported.
#[test]
fn the_check_reports_missing_and_stale_rows() {
    let doc = "## F\n\n| Field | Type |\n| --- | --- |\n| `a` | x |\n| `gone` | x |\n\n## G\n";
    let written: BTreeSet<String> = ["a", "b.c"].iter().map(|s| s.to_string()).collect();
    let p = compare(doc, "## F", &written);
    assert_eq!(
        p,
        [
            "## F: `b.c` is written but has no row",
            "## F: the row `gone` names a key that is not written",
        ]
    );
    assert_eq!(compare(doc, "## H", &written), ["no section \"## H\""]);
    let nested = json!({"w": {"main": {"g": {"ws1": {"tabs": []}}}}, "list": [{"k": 1}]});
    let shape = Shape::new(&[("w", "<label>"), ("w.<label>.g", "<ws>")], &[]);
    assert_eq!(
        keys(&nested, &shape).into_iter().collect::<Vec<_>>(),
        [
            "list",
            "list[].k",
            "w",
            "w.<label>",
            "w.<label>.g",
            "w.<label>.g.<ws>",
            "w.<label>.g.<ws>.tabs"
        ]
    );
}
