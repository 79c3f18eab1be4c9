//! What the shell around the window reads and tells (the tray, notifications, the quit confirm,
//! the window title): the user's only, as every window gesture.

use serde::{Deserialize, Serialize};

use super::{Ctx, Verb};
use crate::api::Response;
use crate::model::AgentId;
use crate::runtime::{Caller, RuntimeError};

/// The fleet's counts and the agents that may need the user, from one consistent view.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alerts {}

impl Verb for Alerts {
    const KIND: &'static str = "alerts";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Alerts(Box::new(rt.alerts().await?)))
    }
}

/// The fleet's counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {}

impl Verb for Counts {
    const KIND: &'static str = "counts";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Counts(rt.counts().await?))
    }
}

/// The providers agents can be made with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Providers {}

impl Verb for Providers {
    const KIND: &'static str = "providers";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Providers(rt.providers()))
    }
}

/// A window (by its label) now shows `agentId`'s pane, or none (also when it closes): the agent
/// a user looks at is never closed to make room (SPEC 14 `maxLiveAgents`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Shown {
    pub window: String,
    #[serde(default)]
    pub agent_id: Option<AgentId>,
}

impl Verb for Shown {
    const KIND: &'static str = "shown";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.set_shown(&self.window, self.agent_id)?;
        Ok(Response::Done)
    }
}

/// The fleet as records (every unarchived agent's whole snapshot, not its card), for a client
/// that renders no window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fleet {}

impl Verb for Fleet {
    const KIND: &'static str = "fleet";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Fleet(Box::new(rt.snapshot().await?)))
    }
}
