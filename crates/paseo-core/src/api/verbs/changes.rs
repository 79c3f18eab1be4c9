//! What an agent changed on disk (the Changes view, `get_agent_changes`) and the user's actions
//! on it: commit, discard, merge, pull request, open in the editor.

use serde::{Deserialize, Serialize};

use super::{Ctx, Verb};
use crate::api::Response;
use crate::model::AgentId;
use crate::runtime::{Caller, RuntimeError};
use crate::workspaces::changes::Page;

/// What the agent changed on disk (the Changes view).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Changes {
    pub agent_id: AgentId,
}

impl Verb for Changes {
    const KIND: &'static str = "changes";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Changes(Box::new(
            rt.agent_changes(self.agent_id).await?,
        )))
    }
}

fn default_diff_limit() -> usize {
    1_000
}

/// A page of one changed file's diff, in diff lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Diff {
    pub agent_id: AgentId,
    pub path: String,
    #[serde(default)]
    pub offset: usize,
    #[serde(default = "default_diff_limit")]
    pub limit: usize,
}

impl Verb for Diff {
    const KIND: &'static str = "diff";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        let page = Page {
            offset: self.offset,
            limit: self.limit,
        };
        Ok(Response::Diff(Box::new(
            rt.agent_diff(self.agent_id, self.path, page).await?,
        )))
    }
}

/// Commits everything in the agent's working tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Commit {
    pub agent_id: AgentId,
    pub message: String,
}

impl Verb for Commit {
    const KIND: &'static str = "commit";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Text(
            rt.commit_agent_changes(self.agent_id, self.message).await?,
        ))
    }
}

/// Keeps the uncommitted work in a snapshot commit, then discards it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Discard {
    pub agent_id: AgentId,
}

impl Verb for Discard {
    const KIND: &'static str = "discard";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        let title = rt.get(self.agent_id).await?.record.title;
        Ok(Response::Discarded(
            rt.discard_agent_changes(self.agent_id, title).await?,
        ))
    }
}

/// Merges a worktree agent's branch into the base it was made from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Merge {
    pub agent_id: AgentId,
}

impl Verb for Merge {
    const KIND: &'static str = "merge";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Merged(
            rt.merge_agent_changes(self.agent_id).await?,
        ))
    }
}

/// Pushes the agent's branch and opens a pull request into its base with gh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreatePr {
    pub agent_id: AgentId,
    pub title: String,
    pub body: String,
}

impl Verb for CreatePr {
    const KIND: &'static str = "createPr";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Text(
            rt.create_pr(self.agent_id, self.title, self.body).await?,
        ))
    }
}

/// Whether a pull request can be opened for the agent's branch, or why not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PrStatus {
    pub agent_id: AgentId,
}

impl Verb for PrStatus {
    const KIND: &'static str = "prStatus";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::PrStatus(rt.pr_status(self.agent_id).await?))
    }
}

/// Opens the agent's folder, or one changed file, in the user's editor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenInEditor {
    pub agent_id: AgentId,
    #[serde(default)]
    pub path: Option<String>,
}

impl Verb for OpenInEditor {
    const KIND: &'static str = "openInEditor";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Text(
            rt.open_in_editor(self.agent_id, self.path).await?,
        ))
    }
}
