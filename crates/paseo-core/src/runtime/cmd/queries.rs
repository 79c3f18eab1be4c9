//! The named reads: snapshots of the fleet as it is at this actor step.

use std::collections::BTreeSet;

use super::super::actor::Actor;
use super::super::broadcast;
use super::super::command::Alerts;
use super::super::events::{
    AgentSnapshot, FleetCounts, FleetSnapshot, TrackSnapshot, WorkspaceSnapshot,
};
use super::super::timeline::Page;
use super::super::RuntimeError;
use crate::engine::{EngineError, ListFilter};
use crate::model::AgentId;

impl Actor {
    /// One agent's whole snapshot: its system prompt and last message read back from its record
    /// file if they were left there (loaded at rest). Lists and events carry them only while
    /// they are in memory.
    pub(crate) fn snap(&self, id: AgentId) -> Result<AgentSnapshot, RuntimeError> {
        let a = self.engine.agent(id).ok_or(EngineError::UnknownAgent(id))?;
        let mut s = AgentSnapshot::of(&self.engine, a);
        if s.record.has_parts_on_disk() {
            let path = self.persist.record_path(id, &a.record.cwd);
            crate::store::read_back(&mut s.record, &path)?;
            s.at_rest = false;
        }
        Ok(s)
    }

    pub(crate) fn workplace(
        &self,
        id: AgentId,
    ) -> Result<(String, Option<crate::model::WorkspaceRecord>), RuntimeError> {
        let a = self.engine.agent(id).ok_or(EngineError::UnknownAgent(id))?;
        let ws = a
            .record
            .workspace_id
            .as_ref()
            .and_then(|w| self.engine.workspace(w))
            .cloned();
        Ok((a.record.cwd.to_string(), ws))
    }

    pub(crate) fn track(&self, parent: AgentId) -> TrackSnapshot {
        broadcast::track(&self.engine, parent)
    }

    pub(super) fn snapshot(&self) -> FleetSnapshot {
        let e = &self.engine;
        let usage = e.usage_rollups();
        let mut agents: Vec<AgentSnapshot> = e
            .agents()
            .filter(|a| !a.record.is_archived())
            .map(|a| AgentSnapshot::with_rollups(e, a, &usage))
            .collect();
        agents.sort_by_key(|a| (a.record.created_at, a.record.id));
        let parents: BTreeSet<AgentId> = agents.iter().filter_map(|a| a.parent_agent_id).collect();
        let tracks = parents.into_iter().map(|p| self.track(p)).collect();
        self.fleet_snapshot(agents, tracks)
    }

    /// The fleet around `agents` and `tracks` (however they are given): workspaces, projects,
    /// providers, counts and what load found.
    pub(in super::super) fn fleet_snapshot<A, T>(
        &self,
        agents: A,
        tracks: T,
    ) -> FleetSnapshot<A, T> {
        let e = &self.engine;
        FleetSnapshot {
            home: self.layout.home.display().to_string(),
            workspaces: e
                .workspaces()
                .filter(|w| !w.is_archived())
                .map(|w| WorkspaceSnapshot::of(e, w))
                .collect(),
            projects: e.projects().cloned().collect(),
            tracks,
            providers: self.providers.infos(),
            counts: FleetCounts::of(e),
            notices: self.out.notices().to_vec(),
            quarantined: self.out.quarantined().to_vec(),
            mcp_url: self.access.as_ref().and_then(|a| a.url()),
            containment: self.containment.info(),
            agents,
        }
    }

    /// The agents that alert the user ([`crate::model::attention`]), with the counts.
    pub(super) fn alerts(&self) -> Alerts {
        let e = &self.engine;
        let agents = e
            .agents()
            .filter(|a| e.alert_of(a).is_some())
            .map(|a| AgentSnapshot::of(e, a))
            .collect();
        let timelines = self.tails.failing();
        let storage = match self.persist.writer().failing() {
            Some((n, first)) => Some(format!(
                "{} file(s) of the data root cannot be written: {first}",
                n + timelines
            )),
            None if timelines > 0 => Some(format!(
                "{timelines} agent timeline(s) cannot be written (is the data root's disk full?)"
            )),
            None => None,
        };
        Alerts {
            counts: FleetCounts::of(e),
            agents,
            storage,
        }
    }

    /// Unknown parent or workspace ids are refused rather than answered with an empty list
    /// (SPEC 11).
    pub(super) fn list(
        &self,
        filter: ListFilter,
        limit: usize,
    ) -> Result<(Vec<AgentSnapshot>, usize), RuntimeError> {
        let e = &self.engine;
        if let Some(p) = filter.parent.filter(|p| e.agent(*p).is_none()) {
            return Err(RuntimeError::invalid(
                "parentAgentId",
                format!("unknown agent {p}"),
            ));
        }
        if let Some(w) = filter
            .workspace
            .as_ref()
            .filter(|w| e.workspace(w).is_none())
        {
            return Err(RuntimeError::invalid(
                "workspaceId",
                format!("unknown workspace {w}"),
            ));
        }
        let (page, total) = e.list(&filter, limit);
        let v = page.into_iter().map(|a| AgentSnapshot::of(e, a)).collect();
        Ok((v, total))
    }

    /// Archived agents, most recently archived first.
    pub(super) fn archived(&self, offset: usize, limit: usize) -> (Vec<AgentSnapshot>, usize) {
        let e = &self.engine;
        let mut v: Vec<_> = e.agents().filter(|a| a.record.is_archived()).collect();
        let total = v.len();
        // The id breaks ties so pages never overlap or skip between two calls.
        v.sort_unstable_by_key(|a| {
            std::cmp::Reverse((a.record.archived_at, a.record.created_at, a.record.id))
        });
        let page = v
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|a| AgentSnapshot::of(e, a))
            .collect();
        (page, total)
    }

    pub(super) fn flush_timeline(
        &mut self,
        agent: AgentId,
    ) -> Result<tokio::sync::oneshot::Receiver<()>, RuntimeError> {
        if self.engine.agent(agent).is_none() {
            return Err(EngineError::UnknownAgent(agent).into());
        }
        self.tails.flush(&self.out);
        Ok(self.tails.written_rx())
    }

    pub(super) fn timeline_page(
        &mut self,
        agent: AgentId,
        before: u64,
        limit: usize,
    ) -> Result<Page, RuntimeError> {
        if self.engine.agent(agent).is_none() {
            return Err(EngineError::UnknownAgent(agent).into());
        }
        self.tails.flush(&self.out);
        self.tails.page(agent, before, limit)
    }
}
