//! Waiting for an agent to reach a state, on the events every window gets (no polling).

use std::time::Duration;

use tokio::sync::broadcast;

use super::events::{AgentSnapshot, Event};
use super::{RuntimeError, RuntimeHandle};
use crate::model::AgentId;

/// What `wait` returns.
#[derive(Clone, Debug)]
pub struct WaitResult {
    pub agent: AgentSnapshot,
    pub timed_out: bool,
}

impl RuntimeHandle {
    /// Waits until the agent is neither initializing nor running, or needs a permission; at most
    /// `timeout`.
    pub(crate) async fn wait(
        &self,
        id: AgentId,
        timeout: Duration,
    ) -> Result<WaitResult, RuntimeError> {
        let mut rx = self.events.subscribe();
        self.wait_on(id, timeout, &mut rx, |s| {
            !s.status.is_active() || s.pending_permission.is_some()
        })
        .await
    }

    pub(super) async fn wait_on(
        &self,
        id: AgentId,
        timeout: Duration,
        rx: &mut broadcast::Receiver<Event>,
        done: impl Fn(&AgentSnapshot) -> bool,
    ) -> Result<WaitResult, RuntimeError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut snap = self.get(id).await?;
        loop {
            if done(&snap) || snap.record.is_archived() {
                if snap.at_rest {
                    // An event's snapshot of an agent loaded at rest: its last message, which
                    // the caller is told, is read back.
                    snap = self.get(id).await?;
                }
                return Ok(WaitResult {
                    agent: snap,
                    timed_out: false,
                });
            }
            tokio::select! {
                ev = rx.recv() => match ev {
                    Ok(Event::AgentUpdated { agent } | Event::AgentArchived { agent }) if agent.id() == id => {
                        snap = *agent;
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => snap = self.get(id).await?,
                    Err(broadcast::error::RecvError::Closed) => return Err(RuntimeError::Stopped),
                },
                _ = tokio::time::sleep_until(deadline) => {
                    let snap = self.get(id).await?;
                    let finished = done(&snap);
                    return Ok(WaitResult { agent: snap, timed_out: !finished });
                }
            }
        }
    }
}
