//! The one door every client goes through (the window, the MCP server, headless mode's socket,
//! a remote host over ssh, tests): a [`Server`] is this machine's runtime and the hosts it
//! reaches (SPEC 17), and [`Server::call`] runs a request where it belongs ([`router`]). It
//! sits above both: the runtime knows nothing of hosts, and the hosts carry the API's frames.
//! A gesture that takes several steps (create with its worktree, restore with its workspaces,
//! cancel and the agent after it, discard under the agent's title) is run as one request, never
//! by the client.

mod router;

use std::sync::Arc;

use tokio::sync::broadcast;

use crate::api::{Ctx, Event, Request, Response};
use crate::hosts::HostManager;
use crate::runtime::{AgentAccess, Caller, RuntimeError, RuntimeHandle, RuntimeOptions};
use crate::store::Layout;
use router::Routed;

/// This machine's runtime and the configured hosts, behind one door. Clonable; every clone
/// reaches the same runtime and the same host connections.
#[derive(Clone)]
pub struct Server {
    pub(crate) runtime: RuntimeHandle,
    pub(crate) hosts: Arc<HostManager>,
    /// The scheduler's side of the schedule verbs, once the backend started it (SPEC 20).
    schedules: Arc<std::sync::OnceLock<Arc<dyn crate::api::Schedules>>>,
}

impl Server {
    fn new(runtime: RuntimeHandle) -> Server {
        let hosts = Arc::new(HostManager::new(&runtime.layout().home));
        Server {
            runtime,
            hosts,
            schedules: Default::default(),
        }
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            runtime: &self.runtime,
            hosts: &self.hosts,
            schedules: self.schedules.get().map(|s| &**s),
        }
    }

    /// Gives the schedule verbs the scheduler that runs them (once; the backend, at start).
    pub fn set_schedules(&self, schedules: Arc<dyn crate::api::Schedules>) {
        let _ = self.schedules.set(schedules);
    }

    /// Runs one request for `caller`, here or on the host that holds its agent or that it
    /// names ([`crate::hosts`]: the user's only). Bad input is an `invalid` error naming the
    /// field, with nothing changed; who may ask what is each verb's ([`crate::api::Verb`])
    /// and the runtime's ([`crate::runtime::policy`]).
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
        request.run(&self.ctx(), caller).await
    }

    /// This machine's events, as they happen.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.runtime.subscribe()
    }

    /// A receiver of this machine's events and the number of the last event before it: the
    /// `n`th event it receives is number `seq + n` (a lag of `k` skips `k` numbers). With the
    /// `syncSnapshot` request a client resynchronises with nothing missed or doubled (SPEC 17).
    pub async fn subscribe_numbered(
        &self,
    ) -> Result<(broadcast::Receiver<Event>, u64), RuntimeError> {
        self.runtime.subscribe_numbered().await
    }

    /// The configured hosts: their states, mirrors and events (SPEC 17).
    pub fn hosts(&self) -> &Arc<HostManager> {
        &self.hosts
    }

    /// Where the data root is.
    pub fn layout(&self) -> &Layout {
        self.runtime.layout()
    }

    /// Lets queued finish notices run (call once the MCP server is up).
    pub async fn deliver_pending(&self) -> Result<(), RuntimeError> {
        self.runtime.deliver_pending().await
    }

    /// Closes every session (statuses persisted), flushes everything, stops the actor.
    pub async fn shutdown(&self) {
        self.runtime.shutdown().await
    }

    /// Waits until everything submitted so far is durable, the held-back load repairs included.
    pub async fn flush(&self) {
        self.runtime.flush().await
    }
}

/// A started runtime: its door plus the actor's task.
pub struct Runtime {
    pub handle: Server,
    task: tokio::task::JoinHandle<()>,
}

impl Runtime {
    /// Loads the data root (quarantining what cannot be read, normalizing what a crash left),
    /// then starts the actor. Notices wait until [`Server::deliver_pending`]. No host is
    /// connected until the caller starts them ([`HostManager::start`]).
    pub async fn start(
        opts: RuntimeOptions,
        access: Option<Arc<dyn AgentAccess>>,
    ) -> Result<Runtime, RuntimeError> {
        let (runtime, task) = crate::runtime::start(opts, access).await?;
        Ok(Runtime {
            handle: Server::new(runtime),
            task,
        })
    }

    pub fn handle(&self) -> Server {
        self.handle.clone()
    }

    /// Stops every agent cleanly (statuses persisted) and waits for the actor to finish.
    pub async fn shutdown(self) {
        self.handle.shutdown().await;
        let _ = self.task.await;
    }
}
