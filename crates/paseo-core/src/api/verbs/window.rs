//! What a window renders from (the fleet, a page of cards, the numbered snapshot) and the
//! settings it edits.

use serde::{Deserialize, Serialize};

use super::{Ctx, Verb};
use crate::api::Response;
use crate::config::NotificationsConfig;
use crate::model::AgentId;
use crate::runtime::window::WindowQuery;
use crate::runtime::{Caller, RuntimeError};

/// What a window renders from, with every agent's card (runtime/window.rs `AgentCard`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetSnapshot {}

impl Verb for FleetSnapshot {
    const KIND: &'static str = "fleetSnapshot";
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Window(
            rt.window_snapshot(WindowQuery::Whole).await?,
        ))
    }
}

/// What a window's first screen renders from: the fleet as `fleetSnapshot` has it but with only
/// the cards that screen shows (the agents of `workspaceId`, else of the workspace active last,
/// and `agentIds`, its tabs, with their families); `fleetCards` has the rest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FleetFirstScreen {
    #[serde(default)]
    pub workspace_id: Option<String>,
    #[serde(default)]
    pub agent_ids: Vec<String>,
}

impl Verb for FleetFirstScreen {
    const KIND: &'static str = "fleetFirstScreen";
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Window(
            rt.window_snapshot(WindowQuery::First {
                workspace_id: self.workspace_id,
                agent_ids: self.agent_ids,
            })
            .await?,
        ))
    }
}

/// Up to `limit` (default 5,000, at most 20,000) unarchived agents' cards created after `after`
/// (the previous page's `next`, [created ms, id]; none: from the oldest), oldest first, with
/// their tracks and the key to ask after next (null at the end).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FleetCards {
    #[serde(default)]
    pub after: Option<(i64, AgentId)>,
    #[serde(default)]
    pub limit: Option<usize>,
}

impl Verb for FleetCards {
    const KIND: &'static str = "fleetCards";
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Window(
            rt.window_snapshot(WindowQuery::After {
                after: self.after,
                limit: self.limit.unwrap_or(5_000),
            })
            .await?,
        ))
    }
}

/// The window's snapshot with the number of the last event it reflects: a client that numbers
/// its events (a host's, SPEC 17) applies only those after it. With `host`, that host's,
/// numbered as its events are (`paseo://host-event`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncSnapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for SyncSnapshot {
    const KIND: &'static str = "syncSnapshot";
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        let (seq, window) = rt.sync_snapshot().await?;
        Ok(Response::Synced { seq, window })
    }
}

/// config.json `notifications`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotificationSettings {}

impl Verb for NotificationSettings {
    const KIND: &'static str = "notificationSettings";
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::NotificationSettings(
            rt.notification_settings().await?,
        ))
    }
}

/// Writes config.json `notifications` (the rest of the file kept).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetNotificationSettings {
    pub settings: NotificationsConfig,
}

impl Verb for SetNotificationSettings {
    const KIND: &'static str = "setNotificationSettings";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.set_notification_settings(self.settings).await?;
        Ok(Response::NotificationSettings(self.settings))
    }
}
