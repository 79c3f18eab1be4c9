//! An agent's timeline: pages of it, and finding words in all of it.

use serde::{Deserialize, Serialize};

use super::{Ctx, Verb};
use crate::api::Response;
use crate::model::AgentId;
use crate::runtime::{Caller, RuntimeError};

/// Timeline items with `seq < before` (absent or 0: the newest), at most `limit` (default 200),
/// oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Timeline {
    pub agent_id: AgentId,
    #[serde(default)]
    pub before: Option<u64>,
    #[serde(default)]
    pub limit: Option<usize>,
}

impl Verb for Timeline {
    const KIND: &'static str = "timeline";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Timeline(
            rt.timeline(
                self.agent_id,
                self.before.unwrap_or(0),
                self.limit.unwrap_or(200),
            )
            .await?,
        ))
    }
}

/// Finds `query` in the agent's whole timeline. A later search with the same `scope` (a window)
/// cancels this one, which then fails with code `canceled`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchTimeline {
    pub agent_id: AgentId,
    pub query: String,
    #[serde(default)]
    pub scope: Option<String>,
}

impl Verb for SearchTimeline {
    const KIND: &'static str = "searchTimeline";
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        vec![("agentId", self.agent_id)]
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        let scope = self.scope.unwrap_or_default();
        let flag = rt.searches.start(&scope);
        let found = rt
            .search_timeline(self.agent_id, self.query, flag.clone())
            .await;
        rt.searches.finished(&scope, &flag);
        Ok(Response::Found(found?))
    }
}

/// Stops the running search of `scope`, if any.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelSearch {
    #[serde(default)]
    pub scope: Option<String>,
}

impl Verb for CancelSearch {
    const KIND: &'static str = "cancelSearch";
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.searches.cancel(&self.scope.unwrap_or_default());
        Ok(Response::Done)
    }
}
