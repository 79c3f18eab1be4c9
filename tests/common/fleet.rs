//! The fleet through the UI's one backend seam (`ui/backend.js`), called inside the page: add
//! workspaces and create agents the way the UI's forms do, read the snapshot every window draws
//! from, and wait for an agent's status.

use super::app::App;
use super::{poll, TIMEOUT};
use serde_json::{json, Value};
use std::path::Path;

impl App {
    /// Calls `function` of `ui/backend.js` with `args` and returns its result; a rejection fails
    /// the test, naming the call and the error.
    pub async fn call_backend(&self, function: &str, args: Vec<Value>) -> Value {
        let result = self.call_ui("/backend.js", function, args.clone()).await;
        assert!(
            result.get("error").is_none(),
            "{function}({}): {result}",
            json!(args)
        );
        result
    }

    /// The fleet as the backend reports it to the windows (agents as cards, workspaces, …): the
    /// page's `fleetSnapshot` of every card (`agents`, oldest first) and track (`tracks`:
    /// `{parentAgentId, members, counts?}`).
    pub async fn fleet_snapshot(&self) -> Value {
        let script = r#"
            const done = arguments[0];
            import('/backend.js')
              .then((m) => m.fleetSnapshot())
              .then((s) => done(s),
                (error) => done({ error: String(error && error.message || error) }));
        "#;
        let snap = self.execute_async(script, vec![]).await;
        assert!(snap.get("error").is_none(), "fleetSnapshot(): {snap}");
        snap
    }

    /// Agent `id`'s whole snapshot (config, last message, …), as a pane fetches it.
    pub async fn agent_detail(&self, id: &str) -> Value {
        self.call_backend("getAgent", vec![json!(id)]).await
    }

    /// The live agent `id`'s card as the backend reports it to the windows (None once archived).
    pub async fn agent(&self, id: &str) -> Option<Value> {
        self.fleet_snapshot().await["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .cloned()
    }

    /// Waits until the backend reports agent `id` with `status`; returns the agent.
    pub async fn wait_for_status(&self, id: &str, status: &str) -> Value {
        poll(&format!("agent {id} to be {status}"), TIMEOUT, || async {
            self.agent(id).await.filter(|a| a["status"] == status)
        })
        .await
    }

    /// Registers (or reuses) the workspace for `dir`, as the folder picker does.
    pub async fn add_workspace(&self, dir: &Path) -> Value {
        self.call_backend("addWorkspace", vec![json!(dir.display().to_string())])
            .await
    }

    /// Creates an agent from `form` (the fields the new-agent form sends).
    pub async fn create_agent(&self, form: Value) -> Value {
        self.call_backend("createAgent", vec![form]).await
    }

    /// A shell agent in the workspace for `dir`, as the new-agent form makes it (the directory's
    /// workspace is registered, or reused, first).
    pub async fn create_shell(&self, dir: &Path, title: &str, prompt: &str) -> Value {
        let ws = self.add_workspace(dir).await;
        self.create_agent(
            json!({"provider": "shell", "title": title, "prompt": prompt,
            "workspaceId": ws["workspaceId"], "autoArchive": false}),
        )
        .await
    }
}
