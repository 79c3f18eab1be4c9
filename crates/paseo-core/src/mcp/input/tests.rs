use super::*;
use crate::model::tagged::reversed;
use crate::model::{AgentId, WorkspaceId};
use crate::workspaces::worktree::WorktreeTarget;
use serde_json::json;

fn err<T: Input + fmt::Debug>(v: Value) -> String {
    parse::<T>(v).unwrap_err().to_string()
}

fn valid_create() -> Value {
    json!({
        "provider": "claude",
        "initialPrompt": "write tests",
        "relationship": {"kind": "subagent"},
        "workspace": {"kind": "create", "source": {"kind": "worktree", "repo": "/r",
            "target": {"kind": "branch-off", "newBranch": "feat/x", "base": "main"}}},
        "labels": {"team": "a"},
        "notifyOnFinish": false
    })
}

#[test]
fn inputs_read_whatever_the_order_and_blank_optional_strings_are_not_given() {
    let mut v = valid_create();
    v["model"] = json!("  ");
    v["title"] = json!(" t ");
    v["workspace"]["source"]["target"]["base"] = json!(" ");
    let input: CreateAgentInput = parse(v.clone()).unwrap();
    assert_eq!(input.model, None);
    assert_eq!(input.title.as_deref(), Some("t"));
    assert_eq!(input.relationship, Relationship::Subagent);
    assert_eq!(
        input.workspace,
        WorkspaceInput::Create(CreateInput {
            source: SourceInput::Worktree(WorktreeInput {
                repo: Some("/r".into()),
                target: WorktreeTarget::branch_off("feat/x", None),
            })
        })
    );
    assert_eq!(parse::<CreateAgentInput>(reversed(&v)).unwrap(), input);
    let existing = json!({"provider": "shell", "initialPrompt": "ls",
        "relationship": {"kind": "detached"},
        "workspace": {"kind": "existing", "workspaceId": "ws-1"}});
    assert_eq!(
        parse::<CreateAgentInput>(existing).unwrap().workspace,
        WorkspaceInput::Existing(ExistingInput {
            workspace_id: "ws-1".parse::<WorkspaceId>().unwrap()
        })
    );
    let l: ListInput = parse(json!({"statuses": ["idle", "running"], "limit": 5,
        "includeArchived": true, "workspaceId": "ws-1", "host": " "}))
    .unwrap();
    assert_eq!(
        l.statuses,
        Some(vec![
            crate::model::Status::Idle,
            crate::model::Status::Running
        ])
    );
    assert_eq!((l.limit, l.host), (Some(5), None));
    // No arguments at all is a call without any.
    assert_eq!(parse::<ListInput>(Value::Null).unwrap().limit, None);
}

#[test]
fn errors_name_the_field_by_path() {
    let mut v = valid_create();
    v["workspace"]["source"]["target"]
        .as_object_mut()
        .unwrap()
        .remove("newBranch");
    assert_eq!(
        err::<CreateAgentInput>(v.clone()),
        "workspace.source.target.newBranch: is required"
    );
    // The same with every kind written last.
    assert_eq!(
        err::<CreateAgentInput>(reversed(&v)),
        "workspace.source.target.newBranch: is required"
    );
    let mut v = valid_create();
    v["relationship"]["kind"] = json!("sibling");
    assert_eq!(
        err::<CreateAgentInput>(v),
        "relationship.kind: unknown variant `sibling`, expected `subagent` or `detached`"
    );
    let mut v = valid_create();
    v["relationship"]["x"] = json!(1);
    assert!(err::<CreateAgentInput>(v).starts_with("relationship.x: unknown field `x`"));
    let mut v = valid_create();
    v["workspace"] = json!({"kind": "current", "source": {}});
    assert_eq!(
        err::<CreateAgentInput>(v),
        "workspace.source: unknown field `source`, expected `cwd`"
    );
    let mut v = valid_create();
    v["workspace"]["source"]["target"]["newBranch"] = json!(5);
    assert_eq!(
        err::<CreateAgentInput>(v),
        "workspace.source.target.newBranch: invalid type: integer `5`, expected a string"
    );
    let mut v = valid_create();
    v["workspace"] = json!({"kind": "existing", "workspaceId": "a/b"});
    assert!(err::<CreateAgentInput>(v).starts_with("workspace.workspaceId: invalid workspace id"));
    let mut v = valid_create();
    v["labels"]["x"] = json!(1);
    assert_eq!(
        err::<CreateAgentInput>(v),
        "labels.x: invalid type: integer `1`, expected a string"
    );
    let mut v = valid_create();
    v["initialPrompt"] = json!("   ");
    assert_eq!(
        err::<CreateAgentInput>(v),
        "initialPrompt: must not be empty"
    );
    let mut v = valid_create();
    v["bogus"] = json!(1);
    assert!(err::<CreateAgentInput>(v).starts_with("bogus: unknown field `bogus`"));
    let mut v = valid_create();
    v.as_object_mut().unwrap().remove("relationship");
    assert_eq!(err::<CreateAgentInput>(v), "relationship: is required");
    assert_eq!(
        err::<CreateAgentInput>(json!("x")),
        "invalid type: string \"x\", expected struct CreateAgentInput"
    );
    assert!(err::<AgentInput>(json!({"agentId": "../etc"}))
        .starts_with("agentId: \"../etc\" is not an agent id"));
    assert_eq!(
        err::<WaitInput>(json!({"agentId": AgentId::new(), "timeoutSeconds": 601})),
        "timeoutSeconds: must be between 0 and 600, got 601"
    );
    assert_eq!(
        err::<ListInput>(json!({"limit": 10001})),
        "limit: must be a whole number from 0 to 10000, got 10001"
    );
    assert!(err::<ListInput>(json!({"statuses": ["idle", "busy"]}))
        .starts_with("statuses[1]: unknown variant `busy`"));
    assert!(err::<ListInput>(json!({"workspaceId": "a/b"}))
        .starts_with("workspaceId: invalid workspace id"));
    assert!(
        err::<CreateWorktreeInput>(json!({"target": {"kind": "checkout-branch"}}))
            .starts_with("target.branch: is required")
    );
    let a = AgentId::new();
    assert_eq!(
        err::<ChangesInput>(json!({"agentId": a, "limit": 5})),
        "limit: goes with path (a page of one file's diff)"
    );
    assert_eq!(
        err::<ChangesInput>(json!({"agentId": a, "path": "f", "limit": 0})),
        "limit: must be a whole number from 1 to 5000, got 0"
    );
}

#[test]
fn schemas_are_objects_with_the_required_fields() {
    let s = serde_json::to_value(schemars::schema_for!(CreateAgentInput)).unwrap();
    assert_eq!(s["type"], "object");
    let req: Vec<&str> = s["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for f in ["provider", "initialPrompt", "relationship", "workspace"] {
        assert!(req.contains(&f), "{f} not required in {s}");
    }
    assert!(!req.contains(&"model"));
}
