//! Holding checkouts for a Changes action (SPEC 15): a hold stops every agent working in the
//! checkouts to act on, waits for their process trees to exit as an archive does, and until it
//! is released keeps any agent from starting a process there (a finish notice or a prompt would
//! otherwise resume one in the middle of a reset): such a start waits and runs once the hold
//! goes. A hold goes when the handle drops it, whatever happened.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::actor::Actor;
use super::checkout::{agents_in, CheckoutAgent, HoldRequest};
use super::command::Command;
use super::durable::Durable;
use super::{RuntimeError, RuntimeHandle};
use crate::engine::SessionState;
use crate::model::AgentId;
use crate::workspaces::changes::ChangesError;

/// Released (by a message to the actor) when dropped.
pub(super) struct Hold {
    token: u64,
    tx: mpsc::UnboundedSender<Command>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        // The actor may have stopped already: then nothing waits on the hold.
        let _ = self
            .tx
            .send(Command::ReleaseCheckouts { token: self.token });
    }
}

impl Actor {
    /// Agents not archived with a process (starting, idle or running) whose cwd is in `dir`.
    pub(super) fn agents_in(&self, dir: &std::path::Path) -> Vec<CheckoutAgent> {
        agents_in(&self.engine, dir)
    }

    /// Stops the agents in `req.stop` and holds both checkouts; answers who was stopped, what
    /// to wait for (their process trees) and the hold's token.
    pub(super) fn hold_checkouts(
        &mut self,
        req: HoldRequest,
    ) -> Result<(Vec<AgentId>, Durable, u64), RuntimeError> {
        if let Some((at, branch)) = &req.guard {
            // An agent at work there (a turn running or starting) is writing its files: the
            // merge waits for the user. Idle ones are stopped below like the branch's own
            // (resumable, nothing lost), so a lead sitting in the main checkout does not block
            // merging its subagents' work (SPEC 15).
            let busy: Vec<_> = self
                .agents_in(at)
                .into_iter()
                .filter(|a| a.working)
                .collect();
            if !busy.is_empty() {
                return Err(ChangesError::CheckoutInUse {
                    branch: branch.clone(),
                    at: at.display().to_string(),
                    agents: busy.iter().map(|a| format!("\"{}\"", a.name)).collect(),
                }
                .into());
            }
        }
        let mut dirs = req.stop.clone();
        dirs.extend(req.guard.map(|(at, _)| at));
        let stop = dirs.clone();
        // Held before anything stops: a stop can wake another agent here with a finish
        // notice, and that start must wait too.
        let token = self.checkouts.hold(dirs);
        let mut stopped = Vec::new();
        for dir in &stop {
            for a in self.agents_in(dir) {
                if self.engine.close(a.agent_id).is_ok() {
                    stopped.push(a.agent_id);
                }
            }
        }
        self.apply();
        if !stopped.is_empty() {
            tracing::info!(agents = ?stopped, checkouts = ?req.stop, "agents stopped for a Changes action");
        }
        let wait = self.durable(&stopped);
        Ok((stopped, wait, token))
    }

    /// Whether `agent`'s start must wait for a hold; if so it is kept for the release.
    pub(super) fn defer_start(&mut self, agent: AgentId, resume: &Option<String>) -> bool {
        let Some(a) = self.engine.agent(agent) else {
            return false;
        };
        if !self.checkouts.covers(a.record.cwd.as_str()) {
            return false;
        }
        tracing::info!(%agent, "start waits for a Changes action in its checkout");
        self.checkouts.defer(agent, resume);
        true
    }

    pub(super) fn release_checkouts(&mut self, token: u64) {
        let deferred = self.checkouts.release(token);
        for (agent, resume) in deferred {
            // Only an agent still waiting for its session: one archived or stopped meanwhile
            // has nothing to start.
            let wants = self
                .engine
                .agent(agent)
                .is_some_and(|a| a.session == SessionState::Starting && !a.record.is_archived());
            if wants {
                self.start_or_wait(agent, resume);
            }
        }
        self.apply();
    }
}

impl RuntimeHandle {
    /// The live agents working in the checkout at `dir`.
    pub(super) async fn agents_in(&self, dir: PathBuf) -> Result<Vec<CheckoutAgent>, RuntimeError> {
        self.ask(|reply| Command::AgentsIn { dir, reply }).await
    }

    /// Stops the agents working in `req.stop`, waits for their process trees to exit, and
    /// keeps agents from starting in the checkouts until the hold is dropped.
    pub(super) async fn hold_checkouts(&self, req: HoldRequest) -> Result<Hold, RuntimeError> {
        let (_, wait, token) = self
            .ask(|reply| Command::HoldCheckouts { req, reply })
            .await?;
        let hold = Hold {
            token,
            tx: self.tx.clone(),
        };
        // A process tree that outlives the wait refuses the action; the hold goes with it.
        wait.wait(&self.writer).await?;
        Ok(hold)
    }
}
