//! Archive, restore and the parent link: putting agents away and bringing them back.

use serde::{Deserialize, Serialize};

use super::{Ctx, Verb};
use crate::api::Response;
use crate::model::AgentId;
use crate::runtime::{Caller, RuntimeError};

/// Archives the agent and its subagents; answers once that is durable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Archive {
    pub agent_id: AgentId,
}

impl Verb for Archive {
    const KIND: &'static str = "archive";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, caller: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::AgentIds(rt.archive(caller, self.agent_id).await?))
    }
}

/// Every child of the parent that is not running, as one batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchiveFinished {
    pub parent_id: AgentId,
}

impl Verb for ArchiveFinished {
    const KIND: &'static str = "archiveFinished";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("parentId", self.parent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::AgentIds(
            rt.archive_finished(self.parent_id).await?,
        ))
    }
}

/// What archiving the agent would take along and stop, for the confirm dialog.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchivePlan {
    pub agent_id: AgentId,
}

impl Verb for ArchivePlan {
    const KIND: &'static str = "archivePlan";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::ArchivePlan(
            rt.archive_plan(self.agent_id, false).await?,
        ))
    }
}

/// What "Archive finished" on the parent would archive, and which children it would leave and
/// why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FinishedPlan {
    pub parent_id: AgentId,
}

impl Verb for FinishedPlan {
    const KIND: &'static str = "finishedPlan";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("parentId", self.parent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::ArchivePlan(
            rt.archive_plan(self.parent_id, true).await?,
        ))
    }
}

/// Restores the batch the agent was archived in (with `member`, only it and what was archived
/// below it), with the workspaces the batch lives in re-added first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Restore {
    pub agent_id: AgentId,
    #[serde(default)]
    pub as_root: bool,
    #[serde(default)]
    pub member: bool,
}

impl Verb for Restore {
    const KIND: &'static str = "restore";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::AgentIds(if self.member {
            rt.restore_member(self.agent_id, self.as_root).await?
        } else {
            rt.restore(self.agent_id, self.as_root).await?
        }))
    }
}

/// Makes a subagent a root agent, its work untouched (SPEC 3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Detach {
    pub agent_id: AgentId,
}

impl Verb for Detach {
    const KIND: &'static str = "detach";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Agent(Box::new(rt.detach(self.agent_id).await?)))
    }
}

/// The undo of a detach (SPEC 14); `check` only asks whether it may.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reattach {
    pub agent_id: AgentId,
    pub parent_id: AgentId,
    #[serde(default)]
    pub check: bool,
}

impl Verb for Reattach {
    const KIND: &'static str = "reattach";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id), ("parentId", self.parent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.reattach(self.agent_id, self.parent_id, self.check)
            .await?;
        Ok(Response::Done)
    }
}
