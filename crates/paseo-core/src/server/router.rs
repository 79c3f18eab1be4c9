//! Where a request runs (SPEC 17): on this machine, or on the configured host that holds its
//! agent or its workspace, or that it names. Every client's request passes here first
//! ([`Server::call`]), so the window and the MCP server reach hosts the same way.
//!
//! Only the user reaches hosts. An agent's token naming a host, or an agent or workspace id a
//! host holds, is refused (`forbidden`): an agent is contained on its machine (SPEC 14/16) and
//! must not act on another through the user's connection.

use super::Server;
use crate::api::verbs::ListAgents;
use crate::api::{ApiError, Caller, Request, Response};
use crate::hosts::HostManager;
use crate::model::AgentId;
use crate::runtime::RuntimeError;

/// What the router did with a request.
pub(crate) enum Routed {
    /// Answered here (forwarded to a host, or refused).
    Answered(Result<Response, RuntimeError>),
    /// This machine's to run.
    Local(Box<Request>),
}

/// The host holding what the request acts on (an agent or a workspace), with the field
/// naming it and what it is.
fn holder_of(hosts: &HostManager, request: &Request) -> Option<(String, &'static str, String)> {
    let by_agent = request.agents().into_iter().find_map(|(field, id)| {
        hosts
            .holder(id)
            .map(|name| (name, field, format!("agent {id}")))
    });
    by_agent.or_else(|| {
        request.workspaces().into_iter().find_map(|(field, id)| {
            hosts
                .workspace_holder(id)
                .map(|name| (name, field, format!("workspace {id}")))
        })
    })
}

fn forbidden(agent: AgentId, field: &str, what: String) -> RuntimeError {
    RuntimeError::Forbidden {
        field: field.to_string(),
        message: format!("agent {agent} may not reach another machine: {what}"),
    }
}

impl Server {
    pub(super) async fn route(&self, caller: Caller, mut request: Request) -> Routed {
        if let Some(name) = request.take_host() {
            if let Caller::Agent(agent) = caller {
                return Routed::Answered(Err(forbidden(
                    agent,
                    "host",
                    format!("the host {name:?} is the user's only"),
                )));
            }
            if !self.hosts.is_configured(&name) {
                return Routed::Answered(Err(RuntimeError::invalid(
                    "host",
                    format!("no host is named {name:?} in config.json"),
                )));
            }
            return Routed::Answered(self.on_host(&name, request).await);
        }
        if let Some((name, field, what)) = holder_of(&self.hosts, &request) {
            if let Caller::Agent(agent) = caller {
                return Routed::Answered(Err(forbidden(
                    agent,
                    field,
                    format!("{what} is on the host {name:?}"),
                )));
            }
            return Routed::Answered(self.on_host(&name, request).await);
        }
        match request {
            Request::ListAgents(list)
                if caller == Caller::User
                    && !list.this_machine
                    && !self.hosts.names().is_empty() =>
            {
                Routed::Answered(self.list_everywhere(list).await)
            }
            request => Routed::Local(Box::new(request)),
        }
    }

    /// Runs `request` on the named host as the user there.
    async fn on_host(&self, name: &str, request: Request) -> Result<Response, RuntimeError> {
        let client = self.hosts.client(name).map_err(RuntimeError::Api)?;
        let answer = client.call(request).await.map_err(|e| {
            RuntimeError::Api(ApiError {
                message: format!("on the host {name}: {}", e.message),
                ..e
            })
        })?;
        match &answer {
            Response::Agent(agent) => self.hosts.note(name, agent),
            Response::Workspace(ws) => self.hosts.note_workspace(name, &ws.record.workspace_id),
            // `listAgents`, and `archivedAgents`: an agent archived on the host before this
            // app started is in no snapshot or event, and only its listing tells the mirror
            // where its `timeline` and `restore` must go.
            Response::Agents { agents, .. } => {
                for agent in agents {
                    self.hosts.note(name, agent);
                }
            }
            _ => {}
        }
        Ok(answer)
    }

    /// This machine's agents, then each connected host's, one list: `total` counts them all,
    /// `limit` bounds the whole. A host that is not connected is left out (its agents are
    /// counted in `listHosts`).
    async fn list_everywhere(&self, list: ListAgents) -> Result<Response, RuntimeError> {
        let limit = list.limit.unwrap_or(100);
        let request = Request::ListAgents(list);
        let Response::Agents {
            mut agents,
            mut total,
        } = request.clone().run(&self.ctx(), Caller::User).await?
        else {
            return Err(RuntimeError::invalid(
                "",
                "an unexpected answer to listAgents",
            ));
        };
        for name in self.hosts.names() {
            let Ok(client) = self.hosts.client(&name) else {
                continue;
            };
            match client.call(request.clone()).await {
                Ok(Response::Agents {
                    agents: theirs,
                    total: their_total,
                }) => {
                    total += their_total;
                    for agent in &theirs {
                        self.hosts.note(&name, agent);
                    }
                    let room = limit.saturating_sub(agents.len());
                    agents.extend(theirs.into_iter().take(room));
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(host = %name, %error, "cannot list the host's agents"),
            }
        }
        Ok(Response::Agents { agents, total })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::WorkspaceId;
    use serde_json::json;

    fn request(frame: serde_json::Value) -> Request {
        Request::from_value(frame).unwrap()
    }

    #[test]
    fn every_request_naming_a_host_gives_it_up_to_the_host() {
        for kind in ["syncSnapshot", "archivedAgents", "listAgents"] {
            let mut r = request(json!({"kind": kind, "host": "box"}));
            assert_eq!(r.take_host().as_deref(), Some("box"), "{kind}");
            let left = serde_json::to_value(&r).unwrap();
            assert!(left.get("host").is_none_or(|h| h.is_null()), "{kind}");
        }
        let mut r = request(json!({"kind": "addWorkspace", "path": "/w", "host": "box"}));
        assert_eq!(r.take_host().as_deref(), Some("box"));
        let mut r = request(json!({"kind": "createWorktree", "host": "box",
            "target": {"kind": "checkout-branch", "branch": "b"}}));
        assert_eq!(r.take_host().as_deref(), Some("box"));
        assert_eq!(request(json!({"kind": "syncSnapshot"})).take_host(), None);
    }

    #[test]
    fn agent_and_workspace_ids_are_found_by_their_fields() {
        let a = AgentId::new();
        let w = WorkspaceId::new();
        let budget = request(json!({"kind": "setBudget", "agentId": a, "budget": null}));
        assert_eq!(budget.agents(), vec![("agentId", a)]);
        for (frame, field) in [
            (
                json!({"kind": "renameWorkspace", "workspaceId": w, "name": "n"}),
                "workspaceId",
            ),
            (
                json!({"kind": "archiveWorkspace", "workspaceId": w}),
                "workspaceId",
            ),
            (
                json!({"kind": "listAgents", "workspaceId": w}),
                "workspaceId",
            ),
            (
                json!({"kind": "createAgent", "provider": "shell",
                    "workspace": {"kind": "existing", "workspaceId": w}}),
                "workspace.workspaceId",
            ),
        ] {
            let r = request(frame.clone());
            assert_eq!(r.workspaces(), vec![(field, &w)], "{frame}");
        }
        let r = request(json!({"kind": "createAgent", "provider": "shell",
            "workspace": {"kind": "directory", "path": "/w"}}));
        assert!(r.workspaces().is_empty());
    }
}
