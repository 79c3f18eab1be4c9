use super::*;
use crate::model::AgentId;
use serde_json::json;

fn err<T: Input + fmt::Debug>(v: Value) -> String {
    T::parse(&v).unwrap_err().to_string()
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

/// The hand parser and serde (which the schema describes) agree on valid inputs.
#[test]
fn parser_agrees_with_the_schema_types() {
    let cases = [
        valid_create(),
        json!({"provider": "shell", "initialPrompt": "ls", "relationship": {"kind": "detached"},
               "workspace": {"kind": "current", "cwd": "/tmp"}, "autoArchive": true}),
        json!({"provider": "shell", "initialPrompt": "ls", "relationship": {"kind": "detached"},
               "workspace": {"kind": "create", "source": {"kind": "directory", "path": "/tmp"}},
               "title": "t", "model": "m"}),
    ];
    for c in cases {
        let a = CreateAgentInput::parse(&c).unwrap();
        let b: CreateAgentInput = serde_json::from_value(c).unwrap();
        assert_eq!(a, b);
    }
    let w = json!({"target": {"kind": "checkout-branch", "branch": "b"}});
    assert_eq!(
        CreateWorktreeInput::parse(&w).unwrap(),
        serde_json::from_value::<CreateWorktreeInput>(w).unwrap()
    );
    let l = json!({"statuses": ["idle", "running"], "limit": 5, "includeArchived": true,
                   "workspaceId": "ws-1"});
    assert_eq!(
        ListInput::parse(&l).unwrap(),
        serde_json::from_value::<ListInput>(l).unwrap()
    );
}

#[test]
fn errors_name_the_field_by_path() {
    let mut v = valid_create();
    v["workspace"]["source"]["target"]
        .as_object_mut()
        .unwrap()
        .remove("newBranch");
    assert_eq!(
        err::<CreateAgentInput>(v),
        "workspace.source.target.newBranch: is required"
    );
    let mut v = valid_create();
    v["relationship"]["kind"] = json!("sibling");
    assert!(err::<CreateAgentInput>(v).starts_with("relationship.kind: unknown kind \"sibling\""));
    let mut v = valid_create();
    v["workspace"] = json!({"kind": "current", "source": {}});
    assert!(err::<CreateAgentInput>(v)
        .starts_with("workspace.source: is not a field of kind \"current\""));
    let mut v = valid_create();
    v["workspace"]["source"]["target"]["newBranch"] = json!(5);
    assert_eq!(
        err::<CreateAgentInput>(v),
        "workspace.source.target.newBranch: must be a string, got a number"
    );
    let mut v = valid_create();
    v["labels"]["x"] = json!(1);
    assert_eq!(
        err::<CreateAgentInput>(v),
        "labels.x: must be a string, got a number"
    );
    let mut v = valid_create();
    v["initialPrompt"] = json!("   ");
    assert_eq!(
        err::<CreateAgentInput>(v),
        "initialPrompt: must not be empty"
    );
    let mut v = valid_create();
    v["bogus"] = json!(1);
    assert!(err::<CreateAgentInput>(v).starts_with("bogus: unknown field"));
    let mut v = valid_create();
    v.as_object_mut().unwrap().remove("relationship");
    assert_eq!(err::<CreateAgentInput>(v), "relationship: is required");
    assert!(err::<CreateAgentInput>(json!([1])).contains("must be an object"));
    assert!(err::<AgentInput>(json!({"agentId": "../etc"}))
        .starts_with("agentId: \"../etc\" is not an agent id"));
    assert_eq!(
        err::<WaitInput>(json!({"agentId": AgentId::new(), "timeoutSeconds": 601})),
        "timeoutSeconds: must be between 0 and 600, got 601"
    );
    assert!(err::<ListInput>(json!({"limit": 10001}))
        .starts_with("limit: must be a whole number from 0 to 10000"));
    assert!(err::<ListInput>(json!({"statuses": ["idle", "busy"]}))
        .starts_with("statuses[1]: unknown status \"busy\""));
    assert!(err::<ListInput>(json!({"workspaceId": "a/b"}))
        .starts_with("workspaceId: invalid workspace id"));
    assert!(
        err::<CreateWorktreeInput>(json!({"target": {"kind": "checkout-branch"}}))
            .starts_with("target.branch: is required")
    );
    assert!(ListInput::parse(&Value::Null).is_ok());
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
