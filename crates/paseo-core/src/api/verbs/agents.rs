//! Agents: reading them, creating them, prompting, stopping, waiting, answering for them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Ctx, Verb};
use crate::api::Response;
use crate::engine::{EngineError, ListFilter};
use crate::model::{AgentId, Budget, Status, WorkspaceId};
use crate::runtime::{Caller, CreateAgent as NewAgent, RuntimeError, WorkspaceTarget};

/// The default and the bound of a `wait` (the `wait_for_agent` tool's, SPEC 8).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(600);
const MAX_WAIT_SECS: f64 = 3_600.0;

/// One agent's whole snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetAgent {
    pub agent_id: AgentId,
}

impl Verb for GetAgent {
    const KIND: &'static str = "getAgent";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Agent(Box::new(rt.get(self.agent_id).await?)))
    }
}

/// Agents matching the filter, oldest first, at most `limit` (default 100), and how many match
/// in all: the user's list spans every connected host unless `thisMachine` (the quit confirm
/// asks only what quitting stops, and waits on no host).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListAgents {
    #[serde(default)]
    pub include_archived: bool,
    #[serde(default)]
    pub parent_id: Option<AgentId>,
    #[serde(default)]
    pub workspace_id: Option<WorkspaceId>,
    #[serde(default)]
    pub statuses: Option<Vec<Status>>,
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only agents with every one of these labels (SPEC 20: a schedule's runs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Only the agents of this configured host (SPEC 17); absent: this machine's and, for the
    /// user, every connected host's.
    #[serde(default)]
    pub host: Option<String>,
    /// Only this machine's, asking no host (the quit confirm: what quitting stops).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub this_machine: bool,
}

impl ListAgents {
    /// At most `limit` of this machine's agents that `filter` matches (no host is asked).
    pub fn here(filter: ListFilter, limit: usize) -> ListAgents {
        ListAgents {
            include_archived: filter.include_archived,
            parent_id: filter.parent,
            workspace_id: filter.workspace,
            statuses: filter.statuses,
            limit: Some(limit),
            labels: filter.labels,
            host: None,
            this_machine: true,
        }
    }
}

impl Verb for ListAgents {
    const KIND: &'static str = "listAgents";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        self.parent_id
            .map(|p| ("parentId", p))
            .into_iter()
            .collect()
    }
    fn workspaces(&self) -> Vec<(&'static str, &WorkspaceId)> {
        self.workspace_id
            .as_ref()
            .map(|w| ("workspaceId", w))
            .into_iter()
            .collect()
    }
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        let filter = ListFilter {
            include_archived: self.include_archived,
            parent: self.parent_id,
            workspace: self.workspace_id,
            statuses: self.statuses,
            labels: self.labels,
        };
        let (agents, total) = rt.list(filter, self.limit.unwrap_or(100)).await?;
        Ok(Response::Agents { agents, total })
    }
}

/// Archived agents, most recently archived first, a page at a time (default 500, at most
/// 10,000).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchivedAgents {
    #[serde(default)]
    pub offset: Option<usize>,
    #[serde(default)]
    pub limit: Option<usize>,
    /// That configured host's archived agents (SPEC 17); absent: this machine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for ArchivedAgents {
    const KIND: &'static str = "archivedAgents";
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        let limit = self.limit.unwrap_or(500).min(10_000);
        let (agents, total) = rt.archived(self.offset.unwrap_or(0), limit).await?;
        Ok(Response::Agents { agents, total })
    }
}

/// A new agent with where it works, one gesture: an existing workspace, a directory, or a new
/// git worktree made for it (SPEC 8).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateAgent {
    pub provider: String,
    pub workspace: WorkspaceTarget,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    /// The first prompt (blank: none).
    #[serde(default)]
    pub prompt: Option<String>,
    /// A subagent of the calling agent (else a root agent).
    #[serde(default)]
    pub subagent: bool,
    #[serde(default)]
    pub notify_on_finish: Option<bool>,
    #[serde(default)]
    pub auto_archive: bool,
    /// Outside the sandbox (SPEC 16); an agent asking for it is held (SPEC 14).
    #[serde(default)]
    pub unconfined: bool,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Names the request for a worktree it makes (an MCP call id).
    #[serde(default)]
    pub request_id: Option<String>,
    /// Its own budget (SPEC 18); an agent's child gets at most what its tree has left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// The configured host it runs on (SPEC 17); absent: this machine. The user's only.
    #[serde(default)]
    pub host: Option<String>,
}

impl CreateAgent {
    /// A root agent of `provider` in `workspace`, with every option at its default.
    pub fn new(provider: impl Into<String>, workspace: WorkspaceTarget) -> CreateAgent {
        CreateAgent {
            provider: provider.into(),
            workspace,
            model: None,
            mode: None,
            title: None,
            prompt: None,
            subagent: false,
            notify_on_finish: None,
            auto_archive: false,
            unconfined: false,
            labels: BTreeMap::new(),
            request_id: None,
            budget: None,
            host: None,
        }
    }
}

impl Verb for CreateAgent {
    const KIND: &'static str = "createAgent";
    fn workspaces(&self) -> Vec<(&'static str, &WorkspaceId)> {
        match &self.workspace {
            WorkspaceTarget::Existing(e) => vec![("workspace.workspaceId", &e.id)],
            _ => Vec::new(),
        }
    }
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, caller: Caller) -> Result<Response, RuntimeError> {
        if let Some(b) = &self.budget {
            crate::runtime::budget::check(b, "budget")?;
        }
        let existing = matches!(self.workspace, WorkspaceTarget::Existing(_));
        let mut req = NewAgent::new(self.provider.trim(), self.workspace);
        req.caller = caller;
        req.model = self.model;
        req.mode = self.mode;
        req.title = self.title;
        req.initial_prompt = self.prompt;
        req.subagent = self.subagent;
        req.notify_on_finish = self.notify_on_finish;
        req.auto_archive = self.auto_archive;
        req.unconfined = self.unconfined;
        req.labels = self.labels;
        req.request = self.request_id;
        req.budget = self.budget;
        // A workspace the engine does not know (or no longer has) is the request's `workspace`
        // field at fault.
        let created = rt.create(req).await.map_err(|e| match e {
            RuntimeError::Engine(
                EngineError::UnknownWorkspace(_) | EngineError::WorkspaceArchived(_),
            ) if existing => e.at("workspace.workspaceId"),
            RuntimeError::Engine(
                EngineError::UnknownWorkspace(_) | EngineError::WorkspaceArchived(_),
            ) => e.at("workspace"),
            RuntimeError::Engine(EngineError::BudgetTooLarge { field, .. }) => e.at(field),
            e => e,
        })?;
        Ok(Response::Agent(Box::new(created)))
    }
}

/// Sends a prompt; background and notification default by the caller (SPEC 8).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Prompt {
    pub agent_id: AgentId,
    pub prompt: String,
    #[serde(default)]
    pub background: Option<bool>,
    #[serde(default)]
    pub notify_on_finish: Option<bool>,
}

impl Verb for Prompt {
    const KIND: &'static str = "prompt";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, caller: Caller) -> Result<Response, RuntimeError> {
        let sent = rt
            .prompt(
                caller,
                self.agent_id,
                self.prompt,
                self.background,
                self.notify_on_finish,
            )
            .await?;
        Ok(Response::Prompted {
            agent: Box::new(sent.agent),
            background: sent.background,
            notify: sent.notify,
        })
    }
}

/// Interrupts the current turn; answers the agent once the turn has ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cancel {
    pub agent_id: AgentId,
}

impl Verb for Cancel {
    const KIND: &'static str = "cancel";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, caller: Caller) -> Result<Response, RuntimeError> {
        rt.cancel(caller, self.agent_id).await?;
        Ok(Response::Agent(Box::new(rt.get(self.agent_id).await?)))
    }
}

/// Stops the agent's process (it stays resumable).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Stop {
    pub agent_id: AgentId,
}

impl Verb for Stop {
    const KIND: &'static str = "stop";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.stop(self.agent_id).await?;
        Ok(Response::Done)
    }
}

/// Waits until the agent is neither initializing nor running, or needs a permission; at most
/// `timeoutSecs` (default 600).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Wait {
    pub agent_id: AgentId,
    #[serde(default)]
    pub timeout_secs: Option<f64>,
}

impl Verb for Wait {
    const KIND: &'static str = "wait";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        let timeout = match self.timeout_secs {
            None => DEFAULT_WAIT,
            Some(s) if s.is_finite() && (0.0..=MAX_WAIT_SECS).contains(&s) => {
                Duration::from_secs_f64(s)
            }
            Some(_) => {
                return Err(RuntimeError::invalid(
                    "timeoutSecs",
                    format!("must be between 0 and {MAX_WAIT_SECS}"),
                ))
            }
        };
        let w = rt.wait(self.agent_id, timeout).await?;
        Ok(Response::Waited {
            agent: Box::new(w.agent),
            timed_out: w.timed_out,
        })
    }
}

/// Resumes a closed agent's session; answers whether one started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Wake {
    pub agent_id: AgentId,
}

impl Verb for Wake {
    const KIND: &'static str = "wake";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Flag(rt.wake(self.agent_id).await?))
    }
}

/// Allows or denies what the agent asks (a provider's permission, a held start, a budget).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnswerPermission {
    pub agent_id: AgentId,
    pub request_id: String,
    pub allow: bool,
}

impl Verb for AnswerPermission {
    const KIND: &'static str = "answerPermission";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.answer_permission(self.agent_id, self.request_id, self.allow)
            .await?;
        Ok(Response::Done)
    }
}

/// The user opened the agent: its attention is seen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MarkSeen {
    pub agent_id: AgentId,
}

impl Verb for MarkSeen {
    const KIND: &'static str = "markSeen";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.mark_seen(self.agent_id).await?;
        Ok(Response::Done)
    }
}

/// Sets, raises or (with no `budget`) clears an agent's budget (SPEC 18); turns that waited on
/// it run. The user's alone: an agent may never widen its own tree's budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetBudget {
    pub agent_id: AgentId,
    #[serde(default)]
    pub budget: Option<Budget>,
}

impl Verb for SetBudget {
    const KIND: &'static str = "setBudget";
    const USER_ONLY: bool = true;
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        if let Some(b) = &self.budget {
            crate::runtime::budget::check(b, "budget")?;
        }
        Ok(Response::Agent(Box::new(
            rt.set_budget(self.agent_id, self.budget).await?,
        )))
    }
}
