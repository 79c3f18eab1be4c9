//! Who works in a checkout, and keeping agents out of one while the user's Changes actions
//! (discard, merge) run git in it (SPEC 15: "Discard and merge stop the agents working in that
//! checkout first, and never touch another agent's checkout").
//!
//! An agent works in a checkout when its cwd is inside the checkout's work tree (lexically:
//! recorded cwds are canonical, and so is the top git reports). A hold stops every agent
//! working in the checkouts to act on, waits for their process trees to exit as an archive
//! does, and until it is released keeps any agent from starting a process there (a finish
//! notice or a prompt would otherwise resume one in the middle of a reset): such a start waits
//! and runs once the hold goes. A hold goes when the handle drops it, whatever happened.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tokio::sync::mpsc;

use super::actor::Actor;
use super::apply::Durable;
use super::cmd::Command;
use super::{RuntimeError, RuntimeHandle};
use crate::engine::SessionState;
use crate::model::AgentId;
use crate::workspaces::changes::ChangesError;

/// An agent working in a checkout, as the Changes view shows it before an action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutAgent {
    pub agent_id: AgentId,
    pub title: String,
}

/// The actor's holds: checkouts no agent may start a process in, and the starts that wait.
#[derive(Default)]
pub(super) struct Holds {
    next: u64,
    held: Vec<(u64, Vec<PathBuf>)>,
    deferred: Vec<(AgentId, Option<String>)>,
}

impl Holds {
    fn covers(&self, cwd: &str) -> bool {
        self.held
            .iter()
            .any(|(_, dirs)| dirs.iter().any(|d| Path::new(cwd).starts_with(d)))
    }
}

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

/// A checkout to hold: the agents in `stop` are stopped; a live agent in `guard` refuses the
/// whole hold (another agent's checkout is never touched).
pub(crate) struct HoldRequest {
    pub stop: Vec<PathBuf>,
    /// The checkout a merge would write into, with the branch checked out there.
    pub guard: Option<(PathBuf, String)>,
}

impl Actor {
    /// Agents not archived with a process (starting, idle or running) whose cwd is in `dir`.
    pub(super) fn agents_in(&self, dir: &Path) -> Vec<CheckoutAgent> {
        let mut found: Vec<CheckoutAgent> = self
            .engine
            .agents()
            .filter(|a| !a.record.is_archived() && a.session != SessionState::None)
            .filter(|a| Path::new(a.record.cwd.as_str()).starts_with(dir))
            .map(|a| CheckoutAgent {
                agent_id: a.record.id,
                title: a.record.title.clone(),
            })
            .collect();
        found.sort_by_key(|a| a.agent_id);
        found
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
                .filter(|a| {
                    self.engine
                        .agent(a.agent_id)
                        .is_some_and(|s| s.record.last_status.is_active())
                })
                .collect();
            if !busy.is_empty() {
                return Err(ChangesError::CheckoutInUse {
                    branch: branch.clone(),
                    at: at.display().to_string(),
                    agents: busy
                        .iter()
                        .map(|a| format!("{:?} ({})", a.title, a.agent_id))
                        .collect(),
                }
                .into());
            }
        }
        self.checkouts.next += 1;
        let token = self.checkouts.next;
        let mut dirs = req.stop.clone();
        dirs.extend(req.guard.map(|(at, _)| at));
        let stop = dirs.clone();
        // Held before anything stops: a stop can wake another agent here with a finish
        // notice, and that start must wait too.
        self.checkouts.held.push((token, dirs));
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
        match self
            .checkouts
            .deferred
            .iter_mut()
            .find(|(a, _)| *a == agent)
        {
            Some(d) => d.1 = resume.clone(),
            None => self.checkouts.deferred.push((agent, resume.clone())),
        }
        true
    }

    pub(super) fn release_checkouts(&mut self, token: u64) {
        self.checkouts.held.retain(|(t, _)| *t != token);
        let deferred = std::mem::take(&mut self.checkouts.deferred);
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
