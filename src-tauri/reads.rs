//! What the shell around the window (the tray, notifications, the quit confirm)
//! reads from the runtime and tells it: requests through the runtime's one door
//! ([`Server::call`]), as the window's own.

use paseo_core::api::{verbs, ApiError, Request, Response};
use paseo_core::engine::ListFilter;
use paseo_core::model::AgentId;
use paseo_core::providers::ProviderInfo;
use paseo_core::runtime::{AgentSnapshot, Alerts, Caller, RuntimeError};
use paseo_core::server::Server;

async fn ask(rt: &Server, request: Request) -> Result<Response, RuntimeError> {
    rt.call(Caller::User, request).await
}

/// An answer of another kind than the verb gives: a bug here, said as an error, not a panic.
fn other(kind: &str, answer: &Response) -> RuntimeError {
    let got = serde_json::to_value(answer)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
        .unwrap_or_default();
    RuntimeError::Api(ApiError::new(
        "internal",
        format!("`{kind}` answered with `{got}`"),
    ))
}

/// The counts and the agents that may need the user (the tray's and notifications' view).
pub async fn alerts(rt: &Server) -> Result<Alerts, RuntimeError> {
    match ask(rt, verbs::Alerts {}.into()).await? {
        Response::Alerts(a) => Ok(*a),
        r => Err(other("alerts", &r)),
    }
}

pub async fn providers(rt: &Server) -> Result<Vec<ProviderInfo>, RuntimeError> {
    match ask(rt, verbs::Providers {}.into()).await? {
        Response::Providers(p) => Ok(p),
        r => Err(other("providers", &r)),
    }
}

/// Every agent `filter` matches on this machine (no host is asked).
pub async fn agents(rt: &Server, filter: ListFilter) -> Result<Vec<AgentSnapshot>, RuntimeError> {
    let list = verbs::ListAgents::here(filter, usize::MAX);
    match ask(rt, list.into()).await? {
        Response::Agents { agents, .. } => Ok(agents),
        r => Err(other("listAgents", &r)),
    }
}

/// The window labelled `window` now shows `agent`'s pane, or none (also when it closes).
pub async fn shown(rt: &Server, window: &str, agent: Option<AgentId>) -> Result<(), RuntimeError> {
    let shown = verbs::Shown {
        window: window.to_string(),
        agent_id: agent,
    };
    ask(rt, shown.into()).await.map(|_| ())
}
