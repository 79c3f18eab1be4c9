//! Schedules (SPEC 20): listed, previewed as the user types, saved, paused, removed and run now.
//! The user's only: a schedule outlives whoever made it, so no agent may make or change one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Ctx, Verb};
use crate::api::{ApiError, Response, Schedules};
use crate::model::schedule::{upcoming, When};
use crate::runtime::{Caller, RuntimeError};

/// Makes one change to the schedules and answers the list as it is after it.
fn changed(
    rt: &Ctx<'_>,
    change: impl FnOnce(&dyn Schedules) -> Result<(), ApiError>,
) -> Result<Response, RuntimeError> {
    let s = schedules(rt)?;
    change(s).map_err(RuntimeError::Api)?;
    Ok(Response::Schedules(s.list()))
}

fn schedules<'a>(rt: &'a Ctx<'_>) -> Result<&'a dyn Schedules, RuntimeError> {
    rt.schedules.ok_or_else(|| {
        RuntimeError::Api(ApiError::new(
            "unavailable",
            "schedules run only in the app or paseo-headless",
        ))
    })
}

/// config.json `schedules`, each with its next due times and what its last one gave.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListSchedules {
    /// The configured host whose schedules these are (they run there, from its config.json);
    /// absent: this machine's. The user's only, as every request naming a host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for ListSchedules {
    const KIND: &'static str = "listSchedules";
    const USER_ONLY: bool = true;
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Schedules(schedules(rt)?.list()))
    }
}

/// The next three due times of a `cron`, `every` or `at` as the user types it (the form says
/// them), or the error naming the field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreviewSchedule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The configured host whose schedules these are (they run there, from its config.json);
    /// absent: this machine's. The user's only, as every request naming a host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for PreviewSchedule {
    const KIND: &'static str = "previewSchedule";
    const USER_ONLY: bool = true;
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, _: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        let when = When::one_of(
            self.cron.as_deref(),
            self.every.as_deref(),
            self.at.as_deref(),
        )
        .map_err(|(field, why)| RuntimeError::invalid(field, why))?;
        let now = Utc::now();
        let next: Vec<DateTime<Utc>> = upcoming(&when, now, now, &chrono::Local, 3);
        Ok(Response::Preview {
            words: crate::model::schedule::words(&when, &chrono::Local),
            next,
        })
    }
}

/// Adds a schedule to config.json, or puts it in place of the one named `replaces`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveSchedule {
    /// The entry as config.json takes it (`{"name", "cron" | "every" | "at", …}`).
    pub schedule: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// The configured host whose schedules these are (they run there, from its config.json);
    /// absent: this machine's. The user's only, as every request naming a host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for SaveSchedule {
    const KIND: &'static str = "saveSchedule";
    const USER_ONLY: bool = true;
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        changed(rt, |s| s.save(self.schedule, self.replaces.as_deref()))
    }
}

/// Removes a schedule from config.json; its runs stay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteSchedule {
    pub name: String,
    /// The configured host whose schedules these are (they run there, from its config.json);
    /// absent: this machine's. The user's only, as every request naming a host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for DeleteSchedule {
    const KIND: &'static str = "deleteSchedule";
    const USER_ONLY: bool = true;
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        changed(rt, |s| s.remove(&self.name))
    }
}

/// Pauses a schedule (its due times pass without a run) or resumes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PauseSchedule {
    pub name: String,
    pub paused: bool,
    /// The configured host whose schedules these are (they run there, from its config.json);
    /// absent: this machine's. The user's only, as every request naming a host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for PauseSchedule {
    const KIND: &'static str = "pauseSchedule";
    const USER_ONLY: bool = true;
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        changed(rt, |s| s.pause(&self.name, self.paused))
    }
}

/// Starts a run of a schedule now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSchedule {
    pub name: String,
    /// The configured host whose schedules these are (they run there, from its config.json);
    /// absent: this machine's. The user's only, as every request naming a host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl Verb for RunSchedule {
    const KIND: &'static str = "runSchedule";
    const USER_ONLY: bool = true;
    fn take_host(&mut self) -> Option<String> {
        self.host.take()
    }
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        schedules(rt)?
            .run_now(&self.name)
            .map_err(RuntimeError::Api)?;
        Ok(Response::Done)
    }
}
