//! The hosts as the API's verbs see them (SPEC 17): what `listHosts` answers, and the
//! operations the host verbs run on whatever holds the connections ([`crate::hosts`], above
//! the API: it carries its frames).

use std::future::Future;
use std::pin::Pin;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ApiError;
use crate::config::Host;
use crate::model::FleetCounts;

/// A host's connection, as the window's row and `listHosts` say it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "state",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum HostState {
    /// The first attempt is under way.
    Connecting,
    Connected,
    /// Was connected; the client reconnects with backoff. `lastSeen`: when it dropped.
    Disconnected {
        last_seen: DateTime<Utc>,
        error: String,
    },
    /// Never connected since the start (or the last change): the error says what to do, and
    /// whether installing this app's paseo-headless on the host would fix it.
    Failed {
        code: String,
        error: String,
        install_helps: bool,
    },
}

/// One host in `listHosts`: its config.json entry, its state, and its fleet in numbers.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostStatus {
    #[serde(flatten)]
    pub host: Host,
    #[serde(flatten)]
    pub state: HostState,
    /// Its unarchived agents as last mirrored (kept while disconnected: nothing stopped).
    pub agents: usize,
    pub counts: FleetCounts,
}

/// The configured hosts as the host verbs ([`super::verbs::ListHosts`] and the rest) change them.
pub trait Hosts: Send + Sync {
    /// config.json `hosts`, each with its state and numbers.
    fn list(&self) -> Vec<HostStatus>;
    /// Adds a host to config.json and connects to it.
    fn add(&self, host: Host) -> Result<(), ApiError>;
    /// Removes a host from config.json; nothing on the host stops.
    fn remove(&self, name: &str) -> Result<(), ApiError>;
    /// Copies this app's paseo-headless to the host, then connects.
    fn install<'a>(
        &'a self,
        name: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send + 'a>>;
}
