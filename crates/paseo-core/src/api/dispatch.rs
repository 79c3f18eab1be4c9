//! `RuntimeHandle::call`: every request of every client (the window, the MCP server, tests, a
//! remote host) enters the runtime here. A gesture that takes several steps (create with its
//! worktree, restore with its workspaces, cancel and the agent after it, discard under the
//! agent's title) is run here as one request, never by the client.

use super::{Request, Response};
use crate::hosts::router::Routed;
use crate::runtime::{Caller, RuntimeError, RuntimeHandle};

impl RuntimeHandle {
    /// Runs one request for `caller`, here or on the host that holds its agent or that it
    /// names ([`crate::hosts`]: the user's only). Bad input is an `invalid` error naming the
    /// field, with nothing changed; who may ask what is each verb's ([`super::Verb`]) and the
    /// runtime's ([`crate::runtime::policy`]).
    pub async fn call(&self, caller: Caller, request: Request) -> Result<Response, RuntimeError> {
        // Routing goes first: an agent naming a host is told the host is the user's only,
        // which says more than "the user's request"; the router never forwards an agent's.
        let request = match self.route(caller, request).await {
            Routed::Answered(answer) => return answer,
            Routed::Local(request) => request,
        };
        if let (Caller::Agent(a), true) = (caller, request.user_only()) {
            return Err(RuntimeError::Forbidden {
                field: "kind".to_string(),
                message: format!(
                    "agent {a} may not make the user's request `{}`",
                    request.kind()
                ),
            });
        }
        request.run(self, caller).await
    }
}
