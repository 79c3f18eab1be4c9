//! Carrying out what the engine decided: durable writes, sessions started, fed and closed,
//! worktrees removed, and the events every window renders from.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::watch;

use super::actor::{Actor, Buffered, Internal, Slot};
use super::events::{AgentSnapshot, Event, FleetCounts, WorkspaceSnapshot};
use crate::engine::Effect;
use crate::model::{AgentId, WorkspaceId, WorkspaceKind};
use crate::providers::{EventSink, Session, SessionSpec};
use crate::store::{self, Ticket, WriteError, Writer};
use crate::workspaces;

/// How long a closing process tree may take before archive stops waiting for it.
pub(super) const CLOSE_WAIT: Duration = Duration::from_secs(15);

/// What a caller waits for before reporting a change done: durable writes and dead processes.
#[derive(Default)]
pub(crate) struct Durable {
    tickets: Vec<Ticket>,
    closes: Vec<watch::Receiver<bool>>,
}

impl Durable {
    pub(crate) async fn wait(mut self, writer: &Writer) -> Result<(), WriteError> {
        writer.wait_all(&self.tickets).await?;
        let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
        for rx in self.closes.iter_mut() {
            let _ = tokio::time::timeout_at(deadline, rx.wait_for(|done| *done)).await;
        }
        Ok(())
    }
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
            for id in &out.agents {
                self.persist_agent(*id);
            }
            for id in &out.inboxes {
                let path = self.layout.inbox_path(*id);
                let t = match self.engine.inbox(*id) {
                    Some(q) if !q.is_empty() => {
                        let v: Vec<_> = q.iter().cloned().collect();
                        match store::encode_inbox(&v) {
                            Ok(b) => self.writer.submit(path, b),
                            Err(e) => {
                                tracing::error!(error = %e, "cannot encode inbox");
                                continue;
                            }
                        }
                    }
                    _ => self.writer.remove(path),
                };
                self.tickets.push(t);
            }
            self.persist_registries(out.workspaces_registry, out.projects_registry);
            for id in &out.agents {
                if let Some(a) = self.engine.agent(*id) {
                    let snap = Box::new(AgentSnapshot::of(&self.engine, a));
                    let ev = if a.record.is_archived() {
                        Event::AgentArchived { agent: snap }
                    } else {
                        Event::AgentUpdated { agent: snap }
                    };
                    let _ = self.events.send(ev);
                }
            }
            if !out.agents.is_empty() {
                self.counts_dirty = true;
            }
            for w in &out.workspaces {
                if let Some(rec) = self.engine.workspace(w) {
                    let snap = WorkspaceSnapshot::of(&self.engine, rec);
                    let _ = self.events.send(Event::WorkspaceUpdated {
                        workspace: Box::new(snap),
                    });
                }
            }
            for p in &out.tracks {
                let _ = self.events.send(Event::TrackChanged {
                    track: self.track(*p),
                });
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

    pub(super) fn persist_agent(&mut self, id: AgentId) {
        let Some(a) = self.engine.agent(id) else {
            return;
        };
        let path = self
            .record_paths
            .entry(id)
            .or_insert_with(|| self.layout.record_path(&a.record.cwd, id))
            .clone();
        match store::encode_record(&a.record) {
            Ok(b) => {
                let t = self.writer.submit(path, b);
                self.tickets.push(t);
            }
            Err(e) => tracing::error!(%id, error = %e, "cannot encode record"),
        }
    }

    pub(super) fn persist_registries(&mut self, workspaces: bool, projects: bool) {
        if workspaces {
            match store::encode_workspaces(self.engine.workspaces()) {
                Ok(b) => {
                    let t = self.writer.submit(self.layout.workspaces_path(), b);
                    self.tickets.push(t);
                }
                Err(e) => tracing::error!(error = %e, "cannot encode workspaces"),
            }
        }
        if projects {
            match store::encode_projects(self.engine.projects()) {
                Ok(b) => {
                    let t = self.writer.submit(self.layout.projects_path(), b);
                    self.tickets.push(t);
                }
                Err(e) => tracing::error!(error = %e, "cannot encode projects"),
            }
        }
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
                        self.remove_worktree_later(&workspace, &archived, &cause, show_on)
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
        let provider_id = a.record.provider.clone();
        let cwd = PathBuf::from(&a.record.cwd);
        let config = a.record.config.clone();
        let provider = match self.providers.resolve(&provider_id) {
            Ok(p) => p,
            Err(e) => {
                let _ = self.engine.session_failed(agent, &e.to_string());
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
        };
        self.slots.insert(
            agent,
            Slot {
                generation,
                session: None,
                buffered: Vec::new(),
            },
        );
        let sink = EventSink::new(agent, generation, self.sink_tx.clone());
        let tx = self.internal_tx.clone();
        let fut = provider.start(spec, sink);
        tokio::spawn(async move {
            let result = fut.await;
            let _ = tx.send(Internal::Started {
                agent,
                generation,
                result,
            });
        });
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

    /// Removes an archived worktree workspace's directory once its agents' processes are gone,
    /// snapshotting what is left in it first (SPEC 15). `cause` names what was archived (for
    /// the snapshot commit's message); `show_on` are the agents whose timelines show a failure.
    /// A worktree that cannot be snapshotted or removed is kept, its workspace comes back
    /// unarchived (so it stays visible and archiving it again retries), and the failure shows
    /// on those timelines and as a notice.
    pub(super) fn remove_worktree_later(
        &mut self,
        ws: &WorkspaceId,
        archived: &[AgentId],
        cause: &str,
        show_on: Vec<AgentId>,
    ) {
        let Some(rec) = self.engine.workspace(ws).cloned() else {
            return;
        };
        if rec.kind != WorkspaceKind::Worktree {
            return;
        }
        let closes: Vec<_> = archived
            .iter()
            .filter_map(|id| self.closing.get(id).cloned())
            .collect();
        let layout = self.layout.clone();
        let tx = self.internal_tx.clone();
        let message = workspaces::worktree::snapshot_message(Path::new(&rec.cwd), cause);
        tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
            for mut rx in closes {
                let _ = tokio::time::timeout_at(deadline, rx.wait_for(|d| *d)).await;
            }
            let repo = rec.repo.clone().unwrap_or_default();
            let cwd = rec.cwd.clone();
            let branch = rec.branch.clone();
            let r = tokio::task::spawn_blocking(move || {
                workspaces::worktree::snapshot_and_remove(
                    &layout,
                    &repo,
                    &cwd,
                    branch.as_deref(),
                    &message,
                )
            })
            .await;
            let failure = match r {
                Ok(Ok(snapshot)) => {
                    tracing::info!(workspace = %rec.workspace_id, path = %rec.cwd, ?snapshot, "worktree removed");
                    return;
                }
                Ok(Err(e)) => e.to_string(),
                Err(e) => format!("the removal stopped: {e}"),
            };
            let _ = tx.send(Internal::WorktreeKept {
                workspace: rec.workspace_id.clone(),
                show_on,
                message: format!(
                    "The worktree {} was kept with everything in it: {failure}. Its workspace \
                     stays open; archive it again to retry.",
                    rec.cwd
                ),
            });
        });
    }

    pub(super) fn durable(&mut self, ids: &[AgentId]) -> Durable {
        Durable {
            tickets: std::mem::take(&mut self.tickets),
            closes: ids
                .iter()
                .filter_map(|id| self.closing.get(id).cloned())
                .collect(),
        }
    }
}
