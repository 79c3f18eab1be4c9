//! What the actor writes: an agent's record (its system prompt read back from its file when it
//! was left there), the registries, and the load repairs held back until the app answers.

use std::path::PathBuf;

use super::actor::Actor;
use crate::model::AgentId;
use crate::store::{self, Ticket};

/// Load repairs (normalized statuses, finished cascades, workspaces given to records that had
/// none) are written after the MCP server is up, not before: after a crash they can be tens of
/// thousands of writes. Once released they go out a batch per tick, only while the writer's
/// backlog is short, so commands never wait behind them and memory stays bounded; a flush or
/// the shutdown writes the rest at once. Each write encodes the record as it is when it is
/// submitted, through the same writer as every later change, so it can never undo or reorder
/// with one. A crash before they are written only means the next load repairs them again.
pub(super) struct Deferred {
    pub(super) agents: Vec<AgentId>,
    pub(super) registries: bool,
    /// Set once the app answers (`deliver_pending`): from then on ticks write batches.
    pub(super) released: bool,
    pub(super) total: usize,
}

/// At most this many load repairs per tick, and only while fewer writes than this wait.
const DEFERRED_BATCH: usize = 512;

impl Actor {
    /// The file agent `id` (whose cwd is `cwd`) lives in.
    pub(super) fn record_path(&self, id: AgentId, cwd: &str) -> PathBuf {
        match self.record_paths.get(&id) {
            Some(p) => p.clone(),
            None => self.layout.record_path(cwd, id),
        }
    }

    pub(super) fn persist_agent(&mut self, id: AgentId) -> Option<Ticket> {
        let a = self.engine.agent(id)?;
        let path = self.record_path(id, &a.record.cwd);
        // A prompt left in the file is read back from it (≈ 20 µs): the writer writes this
        // record's versions in order, each with the prompt, so the file always has it.
        match store::encode_record_at(&a.record, &path) {
            Ok(b) => {
                let t = self.writer.submit(path, b);
                self.tickets.push(t.clone());
                Some(t)
            }
            Err(e) => {
                self.notice(format!("agent {id}'s record could not be written: {e}"));
                None
            }
        }
    }

    pub(super) fn persist_registries(&mut self, workspaces: bool, projects: bool) {
        if workspaces {
            match store::encode_workspaces_keeping(
                self.engine.workspaces(),
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
            match store::encode_projects_keeping(
                self.engine.projects(),
                &self.registry_extra.projects,
            ) {
                Ok(b) => {
                    let t = self.writer.submit(self.layout.projects_path(), b);
                    self.tickets.push(t);
                }
                Err(e) => tracing::error!(error = %e, "cannot encode projects"),
            }
        }
    }

    /// Submits held-back load repairs: all of them (`all`), or the next batch the writer has
    /// room for once they are released.
    pub(super) fn write_deferred(&mut self, all: bool) {
        let backlog = self.writer.backlog();
        let Some(d) = self.deferred.as_mut() else {
            return;
        };
        if !all && !d.released {
            return;
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
        if registries {
            self.persist_registries(true, true);
        }
        for id in batch {
            let _ = self.persist_agent(id);
        }
    }
}
