//! Carrying out what the engine decided: durable writes, sessions started, fed and closed,
//! worktrees removed, and the events every window renders from.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;

use super::actor::{Actor, Buffered, Internal, Slot};
use super::events::{AgentSnapshot, Event, FleetCounts};
use super::RuntimeError;
use crate::engine::{Effect, SessionState};
use crate::model::AgentId;
use crate::providers::groups::GroupRecorder;
use crate::providers::{EventSink, ProviderError, Session, SessionSpec};
use crate::store::{self, Ticket, Writer};

/// How long a closing process tree may take before archive stops waiting for it.
pub(super) const CLOSE_WAIT: Duration = Duration::from_secs(15);

/// How often an archive whose record write failed checks again whether it has landed (the
/// writer retries it every second).
const ANNOUNCE_RETRY: Duration = Duration::from_millis(500);

/// What a caller waits for before reporting a change done: durable writes, archives announced
/// (their events go out only once their records are durable) and dead processes.
pub(crate) struct Durable {
    tickets: Vec<Ticket>,
    announced: Vec<watch::Receiver<bool>>,
    closes: Vec<(AgentId, watch::Receiver<bool>)>,
    close_wait: Duration,
}

impl Durable {
    pub(crate) async fn wait(mut self, writer: &Writer) -> Result<(), RuntimeError> {
        writer.wait_all(&self.tickets).await?;
        for rx in self.announced.iter_mut() {
            if rx.wait_for(|done| *done).await.is_err() {
                return Err(RuntimeError::Stopped);
            }
        }
        let deadline = tokio::time::Instant::now() + self.close_wait;
        let mut alive = Vec::new();
        for (id, rx) in self.closes.iter_mut() {
            if tokio::time::timeout_at(deadline, rx.wait_for(|done| *done))
                .await
                .is_err()
            {
                alive.push(id.to_string());
            }
        }
        if !alive.is_empty() {
            // The record says archived/closed, but a process tree may still run: the caller
            // must not report the change done as if nothing were left behind.
            return Err(RuntimeError::CloseTimeout(format!(
                "the processes of {} did not exit within {} s of being stopped; they may still \
                 be running",
                alive.join(", "),
                self.close_wait.as_secs()
            )));
        }
        Ok(())
    }
}

fn start_timeout_message(bound: Duration) -> String {
    format!(
        "the agent's session did not become ready within {} s; its process was stopped \
         (config.json startTimeoutSecs)",
        bound.as_secs()
    )
}

impl Actor {
    /// Carries out everything the engine's last operations asked for, persists what changed and
    /// tells every window.
    pub(crate) fn apply(&mut self) {
        loop {
            let out = self.engine.take_outcome();
            if out.is_empty() {
                // Slots freed by what was just carried out go to the oldest waiting starts.
                if self.fill_slots() {
                    continue;
                }
                break;
            }
            for e in out.effects {
                self.execute(e);
            }
            // A notice's new place is written before its old place forgets it (SPEC 4).
            let inboxes = self.persist_inboxes(&out.inboxes, &out.notice_order);
            self.hold_notice_owers(&out.notice_order, &inboxes);
            let mut archived = Vec::new();
            for id in &out.agents {
                let t = self.persist_agent(*id);
                if self
                    .engine
                    .agent(*id)
                    .is_some_and(|a| a.record.is_archived())
                {
                    archived.push((*id, t));
                }
            }
            self.persist_registries(out.workspaces_registry, out.projects_registry);
            // Nobody to tell (at start, before any window or client subscribed): the events
            // are not built at all; a start after a big load would build one per parent.
            let listening = self.events.receiver_count() > 0;
            for id in out.agents.iter().filter(|_| listening) {
                if let Some(a) = self.engine.agent(*id) {
                    if a.record.is_archived() {
                        continue;
                    }
                    let snap = Box::new(AgentSnapshot::of(&self.engine, a));
                    let _ = self.events.send(Event::AgentUpdated { agent: snap });
                }
            }
            // A track or bucket that drops an archived agent is news of the archive: it goes
            // out with the archive, once the record is durable (SPEC 5).
            let held = !archived.is_empty();
            if held {
                self.held_news.push(super::news::HeldNews {
                    waiting: archived.iter().map(|(id, _)| *id).collect(),
                    workspaces: out.workspaces.iter().cloned().collect(),
                    tracks: out.tracks.iter().copied().collect(),
                });
            }
            for (id, t) in archived {
                self.announce_when_durable(id, t);
            }
            // Ancestors whose tree usage changed; archived ones are read when listed.
            let rerender = self.engine.take_rerender();
            for id in rerender.difference(&out.agents).filter(|_| listening) {
                if let Some(a) = self.engine.agent(*id).filter(|a| !a.record.is_archived()) {
                    let agent = Box::new(AgentSnapshot::of(&self.engine, a));
                    let _ = self.events.send(Event::AgentUpdated { agent });
                }
            }
            if !out.agents.is_empty() {
                self.counts_dirty = true;
            }
            if !held && listening {
                // Later news of what a pending archive touched would show it too early: it
                // goes out with that archive's (current then).
                let pending = |n: &super::news::HeldNews| !n.waiting.is_empty();
                let ws: Vec<_> = out
                    .workspaces
                    .iter()
                    .filter(|w| {
                        !self
                            .held_news
                            .iter()
                            .any(|n| pending(n) && n.workspaces.contains(w))
                    })
                    .collect();
                let tracks: Vec<_> = out
                    .tracks
                    .iter()
                    .filter(|p| {
                        !self
                            .held_news
                            .iter()
                            .any(|n| pending(n) && n.tracks.contains(p))
                    })
                    .collect();
                self.tell_news(ws.into_iter(), tracks.into_iter());
            }
            for n in out.notices {
                tracing::warn!("{n}");
                let _ = self.events.send(Event::Notice {
                    level: "warning".into(),
                    message: n.clone(),
                });
                self.notices.push(n);
            }
        }
        self.start_removals();
        self.flush_timeline_events();
    }

    pub(super) fn publish_counts(&mut self) {
        if !self.counts_dirty {
            return;
        }
        self.counts_dirty = false;
        let c = FleetCounts::of(&self.engine);
        if c != self.counts {
            self.counts = c;
            let _ = self.events.send(Event::CountsChanged { counts: c });
        }
    }

    /// Windows close an archived agent's tabs on `AgentArchived`, so it goes out only once
    /// the archived record is durable (SPEC 1, 5): the writer's ack comes back as an internal
    /// message and [`Self::announce_archived`] sends it then.
    fn announce_when_durable(&mut self, id: AgentId, ticket: Option<Ticket>) {
        let (tx, rx) = watch::channel(false);
        if let Some(old) = self.announcing.insert(id, (tx, rx)) {
            // An earlier archive of the same agent still pending: this one supersedes it.
            let _ = old.0.send(true);
        }
        let Some(ticket) = ticket else {
            self.announce_archived(id);
            return;
        };
        let writer = self.writer.clone();
        let internal = self.internal_tx.clone();
        tokio::spawn(async move {
            loop {
                match writer.wait(&ticket).await {
                    Ok(()) => break,
                    Err(store::WriteError::Stopped) => return,
                    // Reported once as a store failure; the writer retries until it lands.
                    Err(store::WriteError::Io { .. }) => tokio::time::sleep(ANNOUNCE_RETRY).await,
                }
            }
            let _ = internal.send(Internal::ArchiveDurable { agent: id });
        });
    }

    /// The archived record of `id` is durable: every window hears of the archive now (unless
    /// it was restored in between).
    pub(super) fn announce_archived(&mut self, id: AgentId) {
        let Some((tx, _)) = self.announcing.remove(&id) else {
            self.release_news(id);
            return;
        };
        if let Some(a) = self.engine.agent(id) {
            if a.record.is_archived() {
                let snap = Box::new(AgentSnapshot::of(&self.engine, a));
                let _ = self.events.send(Event::AgentArchived { agent: snap });
                self.counts_dirty = true;
            }
        }
        self.release_news(id);
        let _ = tx.send(true);
    }

    pub(super) fn execute(&mut self, e: Effect) {
        match e {
            Effect::StartSession { agent, resume } => self.start_or_wait(agent, resume),
            Effect::SendTurn { agent, input } => self.with_session(agent, Buffered::Send(input)),
            Effect::Interrupt { agent, turn } => {
                self.with_session(agent, Buffered::Interrupt);
                let tx = self.internal_tx.clone();
                let d = self.cancel_timeout;
                tokio::spawn(async move {
                    tokio::time::sleep(d).await;
                    let _ = tx.send(Internal::CancelTimeout { agent, turn });
                });
            }
            Effect::CloseSession { agent } => self.close_session(agent),
            Effect::AnswerPermission {
                agent,
                request_id,
                allow,
            } => self.with_session(agent, Buffered::Permission(request_id, allow)),
            Effect::Timeline { agent, item } => self.push_item(agent, *item),
            Effect::ArchiveWorktree {
                workspace,
                requested_by,
            } => {
                tracing::info!(%workspace, %requested_by, "autoArchive: archiving the worktree it created");
                let cause = match self.engine.agent(requested_by) {
                    Some(a) if !a.record.title.trim().is_empty() => a.record.title.clone(),
                    _ => format!("agent {requested_by}"),
                };
                match self.engine.archive_workspace(&workspace, true) {
                    Ok(archived) => {
                        let mut show_on = vec![requested_by];
                        show_on.extend(archived.iter().filter(|a| **a != requested_by));
                        // The sessions of the agents just archived close in the effects still
                        // to run: the removal is decided once they all have (SPEC 15).
                        self.removals.push(super::removal::Pending {
                            workspace,
                            wait_for: show_on.clone(),
                            cause,
                            show_on,
                        });
                    }
                    Err(e) => self.notice(format!("could not archive worktree {workspace}: {e}")),
                }
            }
            Effect::RevokeAccess { agent } => self.revoke(agent),
        }
    }

    pub(super) fn notice(&mut self, message: String) {
        tracing::warn!("{message}");
        let _ = self.events.send(Event::Notice {
            level: "warning".into(),
            message: message.clone(),
        });
        self.notices.push(message);
    }

    pub(super) fn start_session(&mut self, agent: AgentId, resume: Option<String>) {
        let Some(a) = self.engine.agent(agent) else {
            return;
        };
        let provider_id = a.record.provider.to_string();
        let cwd = PathBuf::from(&a.record.cwd);
        let mut config = crate::model::AgentConfig::clone(&a.record.config);
        if config.system_prompt_on_disk {
            // Read back for this session only: the record in memory stays at rest.
            let path = self.record_path(agent, &a.record.cwd);
            let mut whole = (*a.record).clone();
            match store::read_back(&mut whole, &path) {
                Ok(()) => config = std::sync::Arc::unwrap_or_clone(whole.config),
                Err(e) => {
                    let _ = self.engine.session_failed(agent, &e.to_string());
                    return;
                }
            }
        }
        let provider = match self.providers.resolve(&provider_id) {
            Ok(p) => p,
            Err(e) => {
                let _ = self.engine.session_failed(agent, &e.to_string());
                return;
            }
        };
        // The one rule of who is contained (`Engine::contained`): the same the power rule and
        // every snapshot read.
        let contained = self
            .engine
            .agent(agent)
            .is_some_and(|a| self.engine.contained(a));
        let sandbox = match self.sandbox_plan(agent, &cwd, contained) {
            Ok(plan) => plan,
            Err(reason) => {
                let _ = self.engine.session_failed(agent, &reason);
                return;
            }
        };
        if let Some(old) = self.slots.remove(&agent) {
            if let Some(s) = old.session {
                self.spawn_close(agent, s);
            }
        }
        self.next_generation += 1;
        let generation = self.next_generation;
        let spec = SessionSpec {
            agent_id: agent,
            provider: provider_id,
            cwd,
            config,
            resume,
            env: self.opts_env.clone(),
            mcp: self.access.as_ref().and_then(|x| x.issue(agent)),
            groups: Some(GroupRecorder::new(self.layout.run_dir())),
            sandbox,
        };
        self.slots.insert(
            agent,
            Slot {
                generation,
                session: None,
                buffered: Vec::new(),
            },
        );
        let mut sink = EventSink::new(agent, generation, self.sink_tx.clone());
        if let Some(access) = &self.access {
            sink = sink.with_redactor(access.clone());
        }
        let tx = self.internal_tx.clone();
        let fut = provider.start(spec, sink);
        let bound = self.start_timeout;
        tokio::spawn(async move {
            // A start that never returns is dropped, and with it its process group (SIGKILL).
            let result = match tokio::time::timeout(bound, fut).await {
                Ok(r) => r,
                Err(_) => Err(ProviderError::Protocol(start_timeout_message(bound))),
            };
            let _ = tx.send(Internal::Started {
                agent,
                generation,
                result,
            });
        });
        // A session that started but never becomes ready (a CLI that never answers its
        // handshake) is bounded too (SPEC 11).
        let tx = self.internal_tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(bound).await;
            let _ = tx.send(Internal::StartTimeout { agent, generation });
        });
    }

    /// The box of an agent's session (SPEC 16), with its private temp folder made; `Err` says
    /// why a contained agent cannot start.
    fn sandbox_plan(
        &self,
        agent: AgentId,
        cwd: &std::path::Path,
        contained: bool,
    ) -> Result<Option<crate::sandbox::Plan>, String> {
        if !contained {
            return Ok(None);
        }
        let tmp = self.layout.agent_tmp(agent);
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&tmp)
            .map_err(|e| format!("cannot make its private temp folder {}: {e}", tmp.display()))?;
        self.containment.agent_plan(cwd, &tmp, false)
    }

    /// The start of `generation` passed its bound: unless it became ready meanwhile, the agent
    /// goes `error` with the reason and the session's process tree is stopped.
    pub(super) fn start_timed_out(&mut self, agent: AgentId, generation: u64) {
        let current = self
            .slots
            .get(&agent)
            .is_some_and(|s| s.generation == generation);
        let starting = self
            .engine
            .agent(agent)
            .is_some_and(|a| a.session == SessionState::Starting);
        if !current || !starting {
            return;
        }
        let message = start_timeout_message(self.start_timeout);
        tracing::warn!(%agent, "{message}");
        // Closes the session, or dooms the start still under way (closed when it returns).
        self.close_session(agent);
        if let Err(e) = self.engine.session_failed(agent, &message) {
            tracing::warn!(%agent, error = %e, "start timeout");
        }
    }

    pub(super) fn with_session(&mut self, agent: AgentId, b: Buffered) {
        let Some(slot) = self.slots.get_mut(&agent) else {
            tracing::warn!(%agent, "no session for a turn effect; ignored");
            return;
        };
        let Some(s) = slot.session.as_mut() else {
            slot.buffered.push(b);
            return;
        };
        let r = match b {
            Buffered::Send(input) => s.send(input),
            Buffered::Interrupt => s.interrupt(),
            Buffered::Permission(id, allow) => s.respond_permission(&id, allow),
        };
        if let Err(e) = r {
            tracing::warn!(%agent, error = %e, "session refused input");
            if let Some(slot) = self.slots.remove(&agent) {
                if let Some(s) = slot.session {
                    self.spawn_close(agent, s);
                }
            }
            let _ = self.engine.session_exited(agent, &e.to_string());
        }
    }

    pub(super) fn close_session(&mut self, agent: AgentId) {
        self.stop_waiting(agent);
        let Some(slot) = self.slots.remove(&agent) else {
            return;
        };
        self.revoke(agent);
        match slot.session {
            Some(s) => self.spawn_close(agent, s),
            None => {
                let (tx, rx) = watch::channel(false);
                self.doomed.insert((agent, slot.generation), tx);
                self.closing.insert(agent, rx);
            }
        }
    }

    /// An agent's MCP token works only while it has a runtime (SPEC 14): closing or losing the
    /// session ends it; the next start issues a new one.
    pub(super) fn revoke(&self, agent: AgentId) {
        if let Some(a) = &self.access {
            a.revoke(agent);
        }
    }

    pub(super) fn spawn_close(&mut self, agent: AgentId, s: Box<dyn Session>) {
        self.revoke(agent);
        let (tx, rx) = watch::channel(false);
        self.closing.insert(agent, rx);
        tokio::spawn(async move {
            s.close().await;
            let _ = tx.send(true);
        });
    }

    pub(super) fn durable(&mut self, ids: &[AgentId]) -> Durable {
        Durable {
            tickets: std::mem::take(&mut self.tickets),
            announced: ids
                .iter()
                .filter_map(|id| self.announcing.get(id).map(|(_, rx)| rx.clone()))
                .collect(),
            closes: ids
                .iter()
                .filter_map(|id| self.closing.get(id).map(|rx| (*id, rx.clone())))
                .collect(),
            close_wait: CLOSE_WAIT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process tree that outlives the close wait is an error the caller sees, not Ok.
    #[tokio::test]
    async fn a_close_that_times_out_is_an_error() {
        let writer = Writer::new(1);
        let (_tx, rx) = watch::channel(false);
        let id = AgentId::new();
        let d = Durable {
            tickets: Vec::new(),
            announced: Vec::new(),
            closes: vec![(id, rx)],
            close_wait: Duration::from_millis(50),
        };
        let e = d
            .wait(&writer)
            .await
            .expect_err("a timed-out close is an error");
        assert_eq!(e.code(), "timeout");
        assert!(e.to_string().contains(&id.to_string()), "{e}");
        assert!(e.to_string().contains("did not exit"), "{e}");

        let (tx, rx) = watch::channel(false);
        let _ = tx.send(true);
        let d = Durable {
            tickets: Vec::new(),
            announced: Vec::new(),
            closes: vec![(id, rx)],
            close_wait: Duration::from_millis(50),
        };
        d.wait(&writer).await.expect("a close that ended is fine");
        writer.shutdown();
    }
}
