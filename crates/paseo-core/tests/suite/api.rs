//! The one API driven the way a remote host will (SPEC 17): each request is written as JSON,
//! read back, run with `Server::call`, and its response written as JSON again and read
//! back into a `Response` as the host's client will. Real shell agents, a real git repository,
//! the real runtime.

use std::path::Path;

use paseo_core::api::{ApiError, Caller, Request, Response};
use paseo_core::server::Server;
use serde_json::{json, Value};

use crate::support;
use support::git::{git, init_repo, shell_runtime};

/// One frame through the wire: JSON in, JSON out (`Err` is the `{code, message, field}` frame).
/// The answer's frame is read back into a [`Response`] that writes the very same frame again.
async fn frame(h: &Server, caller: Caller, request: Value) -> Result<Value, Value> {
    let text = serde_json::to_string(&request).unwrap();
    let request = match Request::from_json(&text) {
        Ok(r) => r,
        Err(e) => return Err(serde_json::to_value(e).unwrap()),
    };
    match h.call(caller, request).await {
        Ok(response) => {
            let sent = response.to_json().unwrap();
            let read: Response =
                serde_json::from_str(&sent).unwrap_or_else(|e| panic!("{e}: {sent}"));
            assert_eq!(read.to_json().unwrap(), sent, "read back as it was sent");
            Ok(serde_json::from_str(&sent).unwrap())
        }
        Err(e) => Err(serde_json::to_value(ApiError::from(e)).unwrap()),
    }
}

async fn user(h: &Server, request: Value) -> Value {
    frame(h, Caller::User, request.clone())
        .await
        .unwrap_or_else(|e| panic!("{request}: {e}"))
}

fn count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

#[tokio::test]
async fn a_host_drives_create_prompt_wait_archive_restore_through_frames() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let repo = root.join("app");
    init_repo(&repo);
    let home = root.join("home");
    let rt = shell_runtime(&home).await;
    let h = rt.handle();
    h.deliver_pending().await.unwrap();

    // Create with its worktree in one request.
    let created = user(
        &h,
        json!({"kind": "createAgent", "provider": "shell", "title": "lister",
               "prompt": "echo first-turn",
               "workspace": {"kind": "worktree", "repo": repo.display().to_string(),
                             "target": {"kind": "branch-off", "newBranch": "feature"}}}),
    )
    .await;
    assert_eq!(created["kind"], "agent", "{created}");
    let id = created["value"]["id"].as_str().unwrap().to_string();
    let cwd = created["value"]["cwd"].as_str().unwrap().to_string();
    assert!(cwd.contains("worktrees"), "{cwd}");
    assert_eq!(
        git(Path::new(&cwd), &["branch", "--show-current"]),
        "feature"
    );

    let waited = user(
        &h,
        json!({"kind": "wait", "agentId": id, "timeoutSecs": 30}),
    )
    .await;
    assert_eq!(waited["kind"], "waited");
    assert_eq!(waited["value"]["timedOut"], false);
    assert_eq!(waited["value"]["agent"]["status"], "idle", "{waited}");

    let sent = user(
        &h,
        json!({"kind": "prompt", "agentId": id, "prompt": "echo second"}),
    )
    .await;
    assert_eq!(sent["kind"], "prompted");
    assert_eq!(
        sent["value"]["background"], false,
        "the user waits by default"
    );
    user(&h, json!({"kind": "wait", "agentId": id})).await;
    let page = user(&h, json!({"kind": "timeline", "agentId": id, "limit": 50})).await;
    let text = page["value"].to_string();
    assert!(
        text.contains("first-turn") && text.contains("second"),
        "{text}"
    );

    // The window's snapshot and the agent's changes come back as frames too.
    let window = user(&h, json!({"kind": "fleetSnapshot"})).await;
    assert_eq!(window["kind"], "window");
    assert!(
        window["value"]["agents"].to_string().contains(&id),
        "{window}"
    );
    let changes = user(&h, json!({"kind": "changes", "agentId": id})).await;
    assert_eq!(changes["kind"], "changes", "{changes}");
    assert_eq!(changes["value"]["agentId"], id.as_str());

    // Archive: the worktree goes (its branch stays); restore brings it back in one request.
    let archived = user(&h, json!({"kind": "archive", "agentId": id})).await;
    assert_eq!(archived, json!({"kind": "agentIds", "value": [id]}));
    let ws_id = created["value"]["workspaceId"].clone();
    let removed_ws = user(
        &h,
        json!({"kind": "archiveWorkspace", "workspaceId": ws_id}),
    )
    .await;
    assert_eq!(removed_ws["kind"], "agentIds");
    // The worktree goes once its agents' processes are gone (SPEC 15), off the request.
    let gone = std::time::Instant::now();
    while Path::new(&cwd).exists() {
        assert!(
            gone.elapsed().as_secs() < 30,
            "the worktree is removed with its workspace"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let restored = user(&h, json!({"kind": "restore", "agentId": id})).await;
    assert_eq!(restored, json!({"kind": "agentIds", "value": [id]}));
    assert!(Path::new(&cwd).exists(), "the worktree is back");
    let agent = user(&h, json!({"kind": "getAgent", "agentId": id})).await;
    assert_eq!(agent["value"]["status"], "closed", "{agent}");

    // Cancel answers the agent after the cancel, in one request.
    user(
        &h,
        json!({"kind": "prompt", "agentId": id, "prompt": "sleep 30", "background": true}),
    )
    .await;
    let canceled = user(&h, json!({"kind": "cancel", "agentId": id})).await;
    assert_eq!(canceled["kind"], "agent");
    assert_ne!(canceled["value"]["status"], "running", "{canceled}");

    rt.shutdown().await;
}

#[tokio::test]
async fn a_bad_frame_names_its_field_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let rt = shell_runtime(&home).await;
    let h = rt.handle();
    let agents_dir = home.join("agents");
    let before = count(&agents_dir);

    let cases = [
        (json!({"kind": "launchRocket"}), "kind"),
        (
            json!({"kind": "createAgent", "provider": "shell"}),
            "workspace",
        ),
        (
            json!({"kind": "createAgent", "provider": "shell", "workspace":
                   {"kind": "directory", "path": work.display().to_string()}, "colour": "red"}),
            "colour",
        ),
        (
            json!({"kind": "createAgent", "provider": "shell", "prompt": " ",
                   "workspace": {"kind": "directory", "path": work.display().to_string()}}),
            "initialPrompt",
        ),
        (
            json!({"kind": "createAgent", "provider": "shell",
                   "workspace": {"kind": "existing",
                                 "workspaceId": "00000000-0000-4000-8000-000000000000"}}),
            "workspace.workspaceId",
        ),
    ];
    for (request, field) in cases {
        let e = frame(&h, Caller::User, request.clone()).await.unwrap_err();
        assert_eq!(e["field"], field, "{request}: {e}");
        assert!(e["message"].as_str().unwrap().contains(field), "{e}");
    }
    assert_eq!(count(&agents_dir), before, "nothing created");
    let list = user(&h, json!({"kind": "listAgents", "includeArchived": true})).await;
    assert_eq!(list["value"]["total"], 0);

    // The user's own gestures are not an agent's.
    let ws = user(
        &h,
        json!({"kind": "addWorkspace", "path": work.display().to_string()}),
    )
    .await;
    let made = user(
        &h,
        json!({"kind": "createAgent", "provider": "shell", "prompt": "echo hi",
               "workspace": {"kind": "existing", "workspaceId": ws["value"]["workspaceId"]}}),
    )
    .await;
    let id: paseo_core::model::AgentId = made["value"]["id"].as_str().unwrap().parse().unwrap();
    let e = frame(
        &h,
        Caller::Agent(id),
        json!({"kind": "restore", "agentId": id.to_string()}),
    )
    .await
    .unwrap_err();
    assert_eq!(e["code"], "forbidden", "{e}");
    // What an archive would touch is the user's dialog's, not an agent's view of the fleet.
    for kind in ["archivePlan", "finishedPlan"] {
        let key = if kind == "archivePlan" {
            "agentId"
        } else {
            "parentId"
        };
        let e = frame(
            &h,
            Caller::Agent(id),
            json!({"kind": kind, key: id.to_string()}),
        )
        .await
        .unwrap_err();
        assert_eq!(e["code"], "forbidden", "{kind}: {e}");
    }
    let plan = user(
        &h,
        json!({"kind": "archivePlan", "agentId": id.to_string()}),
    )
    .await;
    assert_eq!(plan["kind"], "archivePlan", "{plan}");
    assert_eq!(plan["value"]["heads"][0]["id"], id.to_string(), "{plan}");
    assert_eq!(plan["value"]["heads"][0]["subagents"], 0, "{plan}");
    rt.shutdown().await;
}

/// "One workspace per directory" is the core's rule for every client that asks for it: a
/// create with `{"kind": "directory", "reuse": true}` puts the agent in the directory's open
/// workspace (one request, as the window's form sends it, here or on a host), and makes one only
/// when there is none, or when the only one is archived. Without `reuse` (SPEC 3's `create`
/// with a `directory` source, what an agent's tool sends) a new workspace is registered.
#[tokio::test]
async fn a_directory_create_with_reuse_joins_the_directorys_open_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let home = root.join("home");
    let rt = shell_runtime(&home).await;
    let h = rt.handle();
    let path = work.display().to_string();
    let create = |title: &str, reuse: Option<bool>| {
        let mut workspace = json!({"kind": "directory", "path": path});
        if let Some(reuse) = reuse {
            workspace["reuse"] = json!(reuse);
        }
        json!({"kind": "createAgent", "provider": "shell", "title": title, "workspace": workspace})
    };
    let workspace_of = |agent: &Value| agent["value"]["workspaceId"].as_str().unwrap().to_string();

    let first = workspace_of(&user(&h, create("first", Some(true))).await);
    let second = workspace_of(&user(&h, create("second", Some(true))).await);
    assert_eq!(first, second, "the open workspace takes the agent");
    let apart = workspace_of(&user(&h, create("apart", None)).await);
    assert_ne!(apart, first, "without reuse, a new workspace (SPEC 3)");
    let apart_too = workspace_of(&user(&h, create("apart too", Some(false))).await);
    assert_ne!(apart_too, first);

    // An archived workspace is never reused: the next create with reuse makes a new one.
    for ws in [&first, &apart, &apart_too] {
        user(
            &h,
            json!({"kind": "archiveWorkspace", "workspaceId": ws, "evenIfRunning": true}),
        )
        .await;
    }
    let after = workspace_of(&user(&h, create("after", Some(true))).await);
    assert!(![&first, &apart, &apart_too].contains(&&after), "{after}");
    let snapshot = user(&h, json!({"kind": "fleetSnapshot"})).await;
    let open: Vec<&Value> = snapshot["value"]["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["cwd"] == json!(path))
        .collect();
    assert_eq!(open.len(), 1, "{open:?}");
    rt.shutdown().await;
}
