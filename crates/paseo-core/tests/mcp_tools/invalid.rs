//! Bad input across the tools: each a tool error naming the field, and nothing created (no
//! agent, workspace, worktree or branch).

use super::*;
use crate::support::Door;

#[tokio::test]
async fn invalid_input_names_the_field_and_changes_nothing() {
    let h = Harness::start().await;
    let lead = h.root("ok lead").await;
    let c = h.as_agent(lead.id()).await;
    let r = repo(&h);
    git(&r, &["branch", "taken"]);
    let outside = tempfile::tempdir().unwrap();
    let file = h.env.work.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let base = json!({"provider": "script", "initialPrompt": "ok",
                      "relationship": {"kind": "subagent"}, "workspace": {"kind": "current"}});
    let with = |patch: Value| {
        let mut v = base.clone();
        for (k, x) in patch.as_object().unwrap() {
            if x.is_null() {
                v.as_object_mut().unwrap().remove(k);
            } else {
                v[k] = x.clone();
            }
        }
        v
    };
    let wt = |target: Value| {
        with(
            json!({"workspace": {"kind": "create", "source": {"kind": "worktree",
            "repo": r.display().to_string(), "target": target}}}),
        )
    };
    let before_agents = h.count(true).await;
    let before_ws = h.h().snapshot().await.unwrap().workspaces.len();
    let missing = AgentId::new().to_string();
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "create_agent",
            with(json!({"provider": null})),
            "provider: is required",
        ),
        (
            "create_agent",
            with(json!({"provider": 3})),
            "provider: invalid type: integer `3`, expected a string",
        ),
        (
            "create_agent",
            with(json!({"provider": "nope"})),
            "provider: unknown provider",
        ),
        (
            "create_agent",
            with(json!({"initialPrompt": null})),
            "initialPrompt: is required",
        ),
        (
            "create_agent",
            with(json!({"initialPrompt": " "})),
            "initialPrompt: must not be empty",
        ),
        (
            "create_agent",
            with(json!({"initialPrompt": "x".repeat(paseo_core::runtime::MAX_PROMPT_BYTES + 1)})),
            "initialPrompt: the prompt is",
        ),
        (
            "create_agent",
            with(json!({"title": "t".repeat(300)})),
            "title: longer than",
        ),
        (
            "create_agent",
            with(json!({"relationship": null})),
            "relationship: is required",
        ),
        (
            "create_agent",
            with(json!({"relationship": "subagent"})),
            "relationship: invalid type: string \"subagent\", expected internally tagged enum Relationship",
        ),
        (
            "create_agent",
            with(json!({"relationship": {}})),
            "relationship.kind: is required",
        ),
        (
            "create_agent",
            with(json!({"relationship": {"kind": "child"}})),
            "relationship.kind: unknown variant `child`, expected `subagent` or `detached`",
        ),
        (
            "create_agent",
            with(json!({"workspace": null})),
            "workspace: is required",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "here"}})),
            "workspace.kind: unknown variant `here`",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "current", "cwd": "relative"}})),
            "workspace.cwd: the path must be absolute",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "current", "cwd": outside.path().display().to_string()}}),
            ),
            "workspace.cwd:",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "current", "path": "/tmp"}})),
            "workspace.path: unknown field",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "create"}})),
            "workspace.source: is required",
        ),
        (
            "create_agent",
            with(json!({"workspace": {"kind": "create", "source": {"kind": "directory"}}})),
            "workspace.source.path: is required",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "create", "source": {"kind": "directory", "path": "rel/dir"}}}),
            ),
            "workspace.source.path: the path must be absolute",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "create", "source": {"kind": "directory", "path": "/no/such/dir"}}}),
            ),
            "workspace.source.path: /no/such/dir does not exist",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "create", "source": {"kind": "directory", "path": file.display().to_string()}}}),
            ),
            "workspace.source.path:",
        ),
        (
            "create_agent",
            with(
                json!({"workspace": {"kind": "create", "source": {"kind": "worktree", "repo": outside.path().display().to_string(), "target": {"kind": "branch-off", "newBranch": "x"}}}}),
            ),
            "workspace.source.repo:",
        ),
        (
            "create_agent",
            wt(json!({"kind": "branch-off"})),
            "workspace.source.target.newBranch: is required",
        ),
        (
            "create_agent",
            wt(json!({"kind": "branch-off", "newBranch": "taken"})),
            "workspace.source.target.newBranch: branch \"taken\" already exists",
        ),
        (
            "create_agent",
            wt(json!({"kind": "branch-off", "newBranch": "bad..name"})),
            "workspace.source.target.newBranch:",
        ),
        (
            "create_agent",
            wt(json!({"kind": "branch-off", "newBranch": "ok-1", "base": "nope"})),
            "workspace.source.target.base:",
        ),
        (
            "create_agent",
            wt(json!({"kind": "checkout-branch", "branch": "main"})),
            "workspace.source.target.branch: branch \"main\" is already checked out",
        ),
        (
            "create_agent",
            wt(json!({"kind": "checkout-branch", "branch": "ghost"})),
            "workspace.source.target.branch: branch \"ghost\" does not exist",
        ),
        (
            "create_agent",
            wt(json!({"kind": "merge"})),
            "workspace.source.target.kind: unknown variant `merge`",
        ),
        (
            "create_agent",
            with(json!({"notifyOnFinish": "yes"})),
            "notifyOnFinish: invalid type: string \"yes\", expected a boolean",
        ),
        (
            "create_agent",
            with(json!({"autoArchive": 1})),
            "autoArchive: invalid type: integer `1`, expected a boolean",
        ),
        (
            "create_agent",
            with(json!({"labels": ["a"]})),
            "labels: invalid type: sequence, expected a map",
        ),
        (
            "create_agent",
            with(json!({"labels": {"k": 1}})),
            "labels.k: invalid type: integer `1`, expected a string",
        ),
        (
            "create_agent",
            with(json!({"labels": {PARENT_LABEL: lead.id().to_string()}})),
            "labels.paseo.parent-agent-id:",
        ),
        (
            "create_agent",
            with(json!({"cwd": "/tmp"})),
            // docs/mcp.md shows this one whole.
            "cwd: unknown field `cwd`, expected one of `provider`, `model`, `title`, \
             `initialPrompt`, `relationship`, `workspace`, `notifyOnFinish`, `autoArchive`, \
             `unconfined`, `labels`, `budget`, `host`",
        ),
        (
            "send_agent_prompt",
            json!({"prompt": "ok"}),
            "agentId: is required",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": "not-a-uuid", "prompt": "ok"}),
            "agentId: \"not-a-uuid\" is not an agent id",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": missing, "prompt": "ok"}),
            "agentId: unknown agent",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": lead.id().to_string()}),
            "prompt: is required",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": lead.id().to_string(), "prompt": ""}),
            "prompt: must not be empty",
        ),
        (
            "send_agent_prompt",
            json!({"agentId": lead.id().to_string(), "prompt": "ok", "background": "no"}),
            "background: invalid type: string \"no\", expected a boolean",
        ),
        ("wait_for_agent", json!({}), "agentId: is required"),
        (
            "wait_for_agent",
            json!({"agentId": missing}),
            "agentId: unknown agent",
        ),
        (
            "wait_for_agent",
            json!({"agentId": lead.id().to_string(), "timeoutSeconds": 601}),
            "timeoutSeconds: must be between 0 and 600",
        ),
        (
            "wait_for_agent",
            json!({"agentId": lead.id().to_string(), "timeoutSeconds": -1}),
            "timeoutSeconds: must be between 0 and 600",
        ),
        (
            "wait_for_agent",
            json!({"agentId": lead.id().to_string(), "timeoutSeconds": "30"}),
            "timeoutSeconds: invalid type: string \"30\", expected f64",
        ),
        (
            "get_agent",
            json!({"agentId": 5}),
            "agentId: invalid type: integer `5`, expected a string",
        ),
        (
            "get_agent",
            json!({"agentId": missing}),
            "agentId: unknown agent",
        ),
        (
            "get_agent",
            json!({"id": lead.id().to_string()}),
            "id: unknown field",
        ),
        (
            "list_agents",
            json!({"limit": 10_001}),
            "limit: must be a whole number from 0 to 10000",
        ),
        (
            "list_agents",
            json!({"limit": -1}),
            "limit: must be a whole number",
        ),
        (
            "list_agents",
            json!({"statuses": "idle"}),
            "statuses: invalid type: string \"idle\", expected a sequence",
        ),
        (
            "list_agents",
            json!({"statuses": ["idle", "sleeping"]}),
            "statuses[1]: unknown variant `sleeping`, expected one of `initializing`, `idle`, `running`, `error`, `closed`",
        ),
        (
            "list_agents",
            json!({"parentAgentId": "x"}),
            "parentAgentId: \"x\" is not an agent id",
        ),
        (
            "list_agents",
            json!({"workspaceId": "../x"}),
            "workspaceId: invalid workspace id",
        ),
        (
            "list_agents",
            json!({"workspaceId": "no-such-ws"}),
            "workspaceId: unknown workspace no-such-ws",
        ),
        (
            "list_agents",
            json!({"parentAgentId": missing}),
            "parentAgentId: unknown agent",
        ),
        (
            "list_agents",
            json!({"includeArchived": "true"}),
            "includeArchived: invalid type: string \"true\", expected a boolean",
        ),
        (
            "cancel_agent",
            json!({"agentId": missing}),
            "agentId: unknown agent",
        ),
        (
            "archive_agent",
            json!({"agentId": "../../etc"}),
            "agentId: \"../../etc\" is not an agent id",
        ),
        (
            "archive_agent",
            json!({"agentId": missing}),
            "agentId: unknown agent",
        ),
        ("create_worktree", json!({}), "target: is required"),
        (
            "create_worktree",
            json!({"repo": r.display().to_string(), "target": {"kind": "branch-off", "newBranch": "taken"}}),
            "target.newBranch: branch \"taken\" already exists",
        ),
        (
            "create_worktree",
            json!({"repo": "relative", "target": {"kind": "branch-off", "newBranch": "n"}}),
            "repo: the path must be absolute",
        ),
        (
            "create_worktree",
            json!({"repo": r.display().to_string(), "target": {"kind": "checkout-branch", "newBranch": "n"}}),
            "target.newBranch: unknown field `newBranch`, expected `branch`",
        ),
    ];
    for (tool, args, want) in cases {
        let e = err(&c, tool, args.clone()).await;
        assert!(
            e.starts_with(want),
            "{tool} {args}:\n  got  {e}\n  want {want}…"
        );
    }
    // Nothing changed: no agent, no workspace, no worktree, no branch.
    assert_eq!(h.count(true).await, before_agents);
    assert_eq!(h.h().snapshot().await.unwrap().workspaces.len(), before_ws);
    assert!(
        !h.env.home().join("worktrees").exists()
            || std::fs::read_dir(h.env.home().join("worktrees"))
                .unwrap()
                .all(|e| std::fs::read_dir(e.unwrap().path())
                    .unwrap()
                    .next()
                    .is_none())
    );
    let branches = std::process::Command::new("git")
        .arg("-C")
        .arg(&r)
        .args(["branch", "--list"])
        .output()
        .unwrap();
    let branches = String::from_utf8_lossy(&branches.stdout);
    assert_eq!(branches.lines().count(), 2, "{branches}");
    assert_eq!(h.h().get(lead.id()).await.unwrap().record.turn_count, 1);
    h.stop().await;
}
