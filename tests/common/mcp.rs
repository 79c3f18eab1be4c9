//! The app's MCP server from outside the UI, as the user's own client reaches it: curl speaking
//! streamable HTTP with the user token from `$PASEO_HOME`, and the few agent gestures tests
//! make through it.

use super::harness::Harness;
use super::{poll, TIMEOUT};
use serde_json::{json, Value};
use std::path::Path;

/// Calls one MCP tool on the running app with the user token (curl speaking streamable HTTP),
/// returning the tool result's structured content.
pub fn mcp_call(home: &Path, tool: &str, args: Value) -> Value {
    let url: Value =
        serde_json::from_slice(&std::fs::read(home.join("mcp.json")).expect("mcp.json")).unwrap();
    let token = std::fs::read_to_string(home.join("mcp-token")).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args}});
    let out = std::process::Command::new("curl")
        .args([
            "-sS",
            "-N",
            "--fail-with-body",
            url["url"].as_str().unwrap(),
        ])
        .args(["-H", &format!("Authorization: Bearer {}", token.trim())])
        .args(["-H", "Content-Type: application/json"])
        .args(["-H", "Accept: application/json, text/event-stream"])
        .args(["-d", &body.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "curl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or_else(|| panic!("no SSE data in {text}"));
    let v: Value = serde_json::from_str(data).unwrap();
    assert_ne!(v["result"]["isError"], true, "{v}");
    v["result"]["structuredContent"].clone()
}

impl Harness {
    /// Waits until the app has published its MCP server (`$PASEO_HOME/mcp.json`).
    pub async fn wait_for_mcp(&self) {
        let file = self.home().join("mcp.json");
        poll("mcp.json", TIMEOUT, || {
            let there = file.exists();
            async move { there.then_some(()) }
        })
        .await
    }

    /// Creates a detached shell agent titled `title` running `prompt` in a fresh folder of its
    /// own, over MCP; returns its id.
    pub fn mcp_create_shell(&self, title: &str, prompt: &str) -> String {
        let work = self.work_dir(title);
        let created = mcp_call(
            self.home(),
            "create_agent",
            json!({"provider": "shell", "title": title, "initialPrompt": prompt,
                "relationship": {"kind": "detached"},
                "workspace": {"kind": "create", "source": {"kind": "directory", "path": work}}}),
        );
        created["agentId"].as_str().unwrap().to_string()
    }

    /// Waits until MCP's `get_agent` reports `status` for agent `id`.
    pub async fn mcp_wait_status(&self, id: &str, status: &str) {
        poll(&format!("agent {id} to be {status}"), TIMEOUT, || {
            let got = mcp_call(self.home(), "get_agent", json!({"agentId": id}));
            async move { (got["status"] == status).then_some(()) }
        })
        .await
    }
}
