//! What the actor writes and when it is durable: an agent's record (its system prompt read back
//! from its file when it was left there), the registries, the load repairs held back until the
//! app answers, the write order of finish notices ([`notice_order`]) and the archives waiting
//! for their records to be durable before windows hear of them.

pub(super) mod notice_order;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::internal::Internal;
use crate::engine::Engine;
use crate::model::AgentId;
use crate::store::{self, Layout, RegistryExtra, Ticket, Writer};

/// Load repairs (normalized statuses, finished cascades, workspaces given to records that had
/// none) are written after the MCP server is up, not before: after a crash they can be tens of
/// thousands of writes. Once released they go out a batch per tick, only while the writer's
/// backlog is short, so commands never wait behind them and memory stays bounded; a flush or
/// the shutdown writes the rest at once. Each write encodes the record as it is when it is
/// submitted, through the same writer as every later change, so it can never undo or reorder
/// with one. A crash before they are written only means the next load repairs them again.
struct Deferred {
    agents: Vec<AgentId>,
    registries: bool,
    /// Set once the app answers (`deliver_pending`): from then on ticks write batches.
    released: bool,
    total: usize,
}

/// At most this many load repairs per tick, and only while fewer writes than this wait.
const DEFERRED_BATCH: usize = 512;

/// How often an archive whose record write failed checks again whether it has landed (the
/// writer retries it every second).
const ANNOUNCE_RETRY: Duration = Duration::from_millis(500);

pub(super) struct Persistence {
    layout: Layout,
    writer: Arc<Writer>,
    /// The writes of the current actor step, for its caller to wait on.
    tickets: Vec<Ticket>,
    /// What load repaired or registered, written once the app answers (see [`Deferred`]).
    deferred: Option<Deferred>,
    /// Records loaded from another file than `Layout::record_path` names (rewritten there).
    record_paths: HashMap<AgentId, PathBuf>,
    /// Top-level keys of the registries this version does not know: written back unchanged.
    registry_extra: RegistryExtra,
    /// Archives waiting for their record to be durable before they are announced; the flag
    /// turns true once the event went out.
    announcing: HashMap<AgentId, (watch::Sender<bool>, watch::Receiver<bool>)>,
}

impl Persistence {
    pub(super) fn new(
        layout: Layout,
        writer: Arc<Writer>,
        record_paths: HashMap<AgentId, PathBuf>,
        registry_extra: RegistryExtra,
    ) -> Persistence {
        Persistence {
            layout,
            writer,
            tickets: Vec::new(),
            deferred: None,
            record_paths,
            registry_extra,
            announcing: HashMap::new(),
        }
    }

    pub(super) fn writer(&self) -> &Arc<Writer> {
        &self.writer
    }

    /// The file agent `id` (whose cwd is `cwd`) lives in.
    pub(super) fn record_path(&self, id: AgentId, cwd: &str) -> PathBuf {
        match self.record_paths.get(&id) {
            Some(p) => p.clone(),
            None => self.layout.record_path(cwd, id),
        }
    }

    /// Submits agent `id`'s record; `Err` says why it could not be written.
    pub(super) fn write_agent(
        &mut self,
        engine: &Engine,
        id: AgentId,
    ) -> Result<Option<Ticket>, String> {
        let Some(a) = engine.agent(id) else {
            return Ok(None);
        };
        let path = self.record_path(id, &a.record.cwd);
        // A prompt left in the file is read back from it (≈ 20 µs): the writer writes this
        // record's versions in order, each with the prompt, so the file always has it.
        match store::encode_record_at(&a.record, &path) {
            Ok(b) => {
                let t = self.writer.submit(path, b);
                self.tickets.push(t.clone());
                Ok(Some(t))
            }
            Err(e) => Err(format!("agent {id}'s record could not be written: {e}")),
        }
    }

    pub(super) fn write_registries(&mut self, engine: &Engine, workspaces: bool, projects: bool) {
        if workspaces {
            match store::encode_workspaces_keeping(
                engine.workspaces(),
                &self.registry_extra.workspaces,
            ) {
                Ok(b) => {
                    let t = self.writer.submit(self.layout.workspaces_path(), b);
                    self.tickets.push(t);
                }
                Err(e) => tracing::error!(error = %e, "cannot encode workspaces"),
            }
        }
        if projects {
            match store::encode_projects_keeping(engine.projects(), &self.registry_extra.projects) {
                Ok(b) => {
                    let t = self.writer.submit(self.layout.projects_path(), b);
                    self.tickets.push(t);
                }
                Err(e) => tracing::error!(error = %e, "cannot encode projects"),
            }
        }
    }

    /// The writes of this step, handed to its caller.
    pub(super) fn take_tickets(&mut self) -> Vec<Ticket> {
        std::mem::take(&mut self.tickets)
    }

    /// Nobody waits on this step's writes.
    pub(super) fn forget_tickets(&mut self) {
        self.tickets.clear();
    }

    // ------------------------------------------------------------ load repairs

    /// Holds back what load repaired (`agents`) or registered (`registries`).
    pub(super) fn defer(&mut self, agents: Vec<AgentId>, registries: bool) {
        self.deferred = Some(Deferred {
            total: agents.len(),
            agents,
            registries,
            released: false,
        });
    }

    /// The app answers: ticks may write the held-back repairs from now on.
    pub(super) fn release_deferred(&mut self) {
        if let Some(d) = self.deferred.as_mut() {
            d.released = true;
        }
    }

    /// The held-back load repairs to submit now: all of them (`all`), or the next batch the
    /// writer has room for once they are released. Answers whether the registries are due and
    /// which records.
    pub(super) fn next_deferred(&mut self, all: bool) -> Option<(bool, Vec<AgentId>)> {
        let backlog = self.writer.backlog();
        let d = self.deferred.as_mut()?;
        if !all && !d.released {
            return None;
        }
        let registries = std::mem::take(&mut d.registries);
        let room = if all {
            d.agents.len()
        } else {
            DEFERRED_BATCH.saturating_sub(backlog)
        };
        let batch = d.agents.split_off(d.agents.len().saturating_sub(room));
        let total = d.total;
        if d.agents.is_empty() {
            self.deferred = None;
            if total > 0 {
                tracing::info!(records = total, "load repairs submitted for writing");
            }
        }
        Some((registries, batch))
    }

    // ------------------------------------------------------------ archive announcements

    /// Windows close an archived agent's tabs on `AgentArchived`, so it goes out only once
    /// the archived record is durable (SPEC 1, 5): the writer's ack comes back as
    /// [`Internal::ArchiveDurable`]. Answers `true` when there is nothing to wait for (announce
    /// it now).
    pub(super) fn announce_when_durable(
        &mut self,
        id: AgentId,
        ticket: Option<Ticket>,
        internal: &mpsc::UnboundedSender<Internal>,
    ) -> bool {
        let (tx, rx) = watch::channel(false);
        if let Some(old) = self.announcing.insert(id, (tx, rx)) {
            // An earlier archive of the same agent still pending: this one supersedes it.
            let _ = old.0.send(true);
        }
        let Some(ticket) = ticket else {
            return true;
        };
        let writer = self.writer.clone();
        let internal = internal.clone();
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
        false
    }

    /// `id`'s archive is no longer waiting: what to tell once it went out (none if it was not
    /// waiting).
    pub(super) fn take_announcement(&mut self, id: AgentId) -> Option<watch::Sender<bool>> {
        self.announcing.remove(&id).map(|(tx, _)| tx)
    }

    /// The pending announcement of each of `ids` that has one.
    pub(super) fn announcements(&self, ids: &[AgentId]) -> Vec<watch::Receiver<bool>> {
        ids.iter()
            .filter_map(|id| self.announcing.get(id).map(|(_, rx)| rx.clone()))
            .collect()
    }
}
