//! The actor: owns the engine and the parts that carry out what it decides — the provider
//! sessions ([`Sessions`]), what is written and when it is durable ([`Persistence`]), what
//! windows hear ([`Broadcast`]) and the timelines ([`Tails`]). Its loop takes one command,
//! provider event or internal message at a time, and settles each in one step
//! ([`Actor::apply`]). It is started by [`super::boot`].

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::broadcast::Broadcast;
use super::checkout::Holds;
use super::command::Command;
use super::durable::CLOSE_WAIT;
use super::gate::Gate;
use super::internal::Internal;
use super::limits::CreateRate;
use super::persist::Persistence;
use super::removal::Pending;
use super::sessions::Sessions;
use super::timeline::Tails;
use super::AgentAccess;
use crate::engine::Engine;
use crate::model::{ItemKind, NewItem};
use crate::providers::{ProviderEvent, ProviderRegistry, SinkMessage};
use crate::sandbox::Containment;
use crate::store::Layout;

pub(crate) struct Actor {
    pub(super) engine: Engine,
    pub(super) sessions: Sessions,
    pub(super) persist: Persistence,
    pub(super) out: Broadcast,
    pub(super) tails: Tails,
    pub(super) layout: Layout,
    pub(super) providers: ProviderRegistry,
    pub(super) access: Option<Arc<dyn AgentAccess>>,
    /// What boxes agents here (SPEC 16), found at start.
    pub(super) containment: Arc<Containment>,
    pub(super) internal_tx: mpsc::UnboundedSender<Internal>,
    /// Worktrees to remove once the effects of the current `apply` have run.
    pub(super) removals: Vec<Pending>,
    /// config.json `limits` (SPEC 14).
    pub(super) limits: crate::config::Limits,
    /// config.json `budget` (SPEC 18): a new root agent's.
    pub(super) budget: Option<crate::model::Budget>,
    pub(super) create_rate: CreateRate,
    /// Checkouts a Changes action works in: no agent starts a process there meanwhile.
    pub(super) checkouts: Holds,
    /// Bounds the git the app runs to read changes (shared with the handle).
    pub(super) changes_gate: Gate,
}

impl Actor {
    pub(super) async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<Command>,
        mut sink_rx: mpsc::Receiver<SinkMessage>,
        mut internal_rx: mpsc::UnboundedReceiver<Internal>,
    ) {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                Some(m) = internal_rx.recv() => {
                    self.on_internal(m);
                    self.apply();
                }
                msg = rx.recv() => match msg {
                    Some(Command::Shutdown(reply)) => {
                        self.shutdown().await;
                        let _ = reply.send(());
                        return;
                    }
                    Some(cmd) => {
                        self.dispatch(cmd);
                        self.apply();
                        self.persist.forget_tickets();
                    }
                    None => {
                        self.shutdown().await;
                        return;
                    }
                },
                Some(m) = sink_rx.recv() => {
                    self.on_provider(m);
                    self.apply();
                    self.persist.forget_tickets();
                }
                _ = tick.tick() => {
                    self.out.publish_counts(&self.engine);
                    self.write_deferred(false);
                }
            }
        }
    }

    async fn shutdown(&mut self) {
        tracing::info!("runtime shutting down");
        self.write_deferred(true);
        self.engine.shutdown();
        self.apply();
        let closes = self.sessions.all_closes();
        let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
        for mut rx in closes {
            let _ = tokio::time::timeout_at(deadline, rx.wait_for(|d| *d)).await;
        }
        self.persist.writer().flush().await;
        self.tails.written().await;
        self.out.publish_counts(&self.engine);
        tracing::info!("runtime stopped; every agent's state is persisted");
    }

    fn on_internal(&mut self, m: Internal) {
        match m {
            Internal::Counted { agent, counts } => self.engine.set_changes(agent, counts),
            Internal::ArchiveDurable { agent } => self.announce_archived(agent),
            Internal::StoreFailed(f) => {
                let mut message = f.message;
                if let Some(agent) = f.agent {
                    // The agent goes error with the reason and its process stops.
                    let _ = self.engine.storage_failed(agent, &message);
                    if let Some(a) = self.engine.agent(agent) {
                        message = format!("{}: {message}", a.record.title);
                    }
                }
                self.notice(message);
            }
            Internal::Started {
                agent,
                generation,
                result,
            } => self.session_started(agent, generation, result),
            Internal::StartTimeout { agent, generation } => self.start_timed_out(agent, generation),
            Internal::CancelTimeout { agent, turn } => {
                let still = self
                    .engine
                    .agent(agent)
                    .is_some_and(|a| a.cancel_requested && a.record.turn_count == turn);
                if still {
                    tracing::warn!(%agent, "interrupt not acknowledged in time; stopping the process");
                    if let Err(e) = self.engine.cancel_timed_out(agent, turn) {
                        tracing::warn!(%agent, error = %e, "cancel timeout");
                    }
                }
            }
            Internal::StillArchived { workspace, reply } => {
                let archived = self
                    .engine
                    .workspace(&workspace)
                    .is_some_and(|w| w.is_archived());
                let _ = reply.send(archived);
            }
            Internal::WorktreeKept {
                workspace,
                show_on,
                message,
            } => {
                if let Err(e) = self.engine.unarchive_workspace(&workspace) {
                    tracing::warn!(%workspace, error = %e, "kept worktree's workspace not unarchived");
                }
                for agent in show_on {
                    self.push_item(agent, NewItem::new(ItemKind::Error, message.clone()));
                }
                self.notice(message);
            }
        }
    }

    fn on_provider(&mut self, m: SinkMessage) {
        let agent = m.agent_id;
        let current = self.sessions.is_current(agent, m.generation);
        if !current {
            return; // a session we already closed or replaced
        }
        let r = match m.event {
            ProviderEvent::Ready => self.engine.session_ready(agent),
            ProviderEvent::SessionId(s) => self.engine.session_id(agent, s),
            ProviderEvent::Items(items) => {
                for it in items {
                    self.push_item(agent, it);
                }
                Ok(())
            }
            ProviderEvent::LastMessage(t) => self.engine.last_message(agent, t),
            ProviderEvent::Usage(u) => self.engine.turn_usage(agent, &u),
            ProviderEvent::Run(r) => self.engine.last_run(agent, r),
            ProviderEvent::TurnEnded(o) => {
                self.count_changes(agent);
                self.engine.turn_ended(agent, o)
            }
            ProviderEvent::Permission(p) => self.engine.permission_requested(agent, p),
            ProviderEvent::PermissionResolved { request_id } => {
                self.engine.permission_resolved(agent, &request_id)
            }
            ProviderEvent::McpStatus { server, status } => {
                if server == "paseo"
                    && matches!(status.as_str(), "failed" | "cancelled" | "needs-auth")
                {
                    tracing::warn!(%agent, %status, "the agent could not connect to the paseo MCP server");
                    self.push_item(
                        agent,
                        NewItem::new(
                            ItemKind::System,
                            format!("The paseo MCP server is {status} for this agent: it cannot create or manage agents."),
                        ),
                    );
                }
                if server == "paseo" {
                    self.engine.mcp_status(agent, status)
                } else {
                    Ok(())
                }
            }
            ProviderEvent::Exited { message } => {
                self.end_session(agent);
                self.engine.session_exited(agent, &message)
            }
        };
        if let Err(e) = r {
            tracing::warn!(%agent, error = %e, "provider event not applicable");
        }
    }
}
