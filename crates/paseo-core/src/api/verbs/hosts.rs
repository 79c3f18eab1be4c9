//! Hosts (SPEC 17): the configured machines, added, removed and installed on.

use serde::{Deserialize, Serialize};

use super::{Ctx, Verb};
use crate::api::Response;
use crate::config::Host;
use crate::runtime::{Caller, RuntimeError};

/// config.json `hosts` with each one's connection state and numbers (SPEC 17).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListHosts {}

impl Verb for ListHosts {
    const KIND: &'static str = "listHosts";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        Ok(Response::Hosts(rt.hosts.list()))
    }
}

/// Adds a host to config.json `hosts` and connects to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddHost {
    pub host: Host,
}

impl Verb for AddHost {
    const KIND: &'static str = "addHost";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.hosts.add(self.host).map_err(RuntimeError::Api)?;
        Ok(Response::Hosts(rt.hosts.list()))
    }
}

/// Removes a host from config.json `hosts`; nothing on the host stops.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemoveHost {
    pub name: String,
}

impl Verb for RemoveHost {
    const KIND: &'static str = "removeHost";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.hosts.remove(&self.name).map_err(RuntimeError::Api)?;
        Ok(Response::Hosts(rt.hosts.list()))
    }
}

/// Copies this app's paseo-headless to the host's `~/.local/bin` (the window confirms first),
/// then connects.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstallHost {
    pub name: String,
}

impl Verb for InstallHost {
    const KIND: &'static str = "installHost";
    const USER_ONLY: bool = true;
    async fn run(self, rt: &Ctx<'_>, _: Caller) -> Result<Response, RuntimeError> {
        rt.hosts
            .install(&self.name)
            .await
            .map_err(RuntimeError::Api)?;
        Ok(Response::Hosts(rt.hosts.list()))
    }
}
