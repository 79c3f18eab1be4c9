//! What a request answers: `{"kind": "agent", "value": {…}}` on the wire, one kind per shape of
//! answer, and `{code, message, field?}` ([`ApiError`]) when it fails.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::config::NotificationsConfig;
use crate::model::{AgentId, ArchivePlan, TimelineItem};
use crate::runtime::{AgentChanges, AgentDiff, AgentSnapshot, WorkspaceSnapshot};
use crate::store::timeline::search::TimelineSearch;
use crate::workspaces::changes::{Discarded, GhStatus, Merged};

/// One answer. Reads back from the JSON it is sent as (a host's client, SPEC 17), `kind` first
/// as every writer here puts it: a window snapshot is kept as the text it came as, and a text
/// kept raw cannot be read once buffered behind a later `kind`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "camelCase")]
pub enum Response {
    /// A window's snapshot, as the JSON text the runtime wrote (runtime/window.rs): sent as is,
    /// never parsed and encoded again on the window's path ([`Response::to_json`]). Read back
    /// as the same text, unparsed: a client hands it on to its window as the runtime does.
    Window(#[serde(serialize_with = "raw_json", deserialize_with = "raw_text")] String),
    /// One agent, as it is right after the request.
    Agent(Box<AgentSnapshot>),
    /// A page of agents and how many there are in all.
    #[serde(rename_all = "camelCase")]
    Agents {
        agents: Vec<AgentSnapshot>,
        total: usize,
    },
    /// A prompt was accepted: the agent right after, whether the caller waits for the turn,
    /// and who hears when it ends.
    #[serde(rename_all = "camelCase")]
    Prompted {
        agent: Box<AgentSnapshot>,
        background: bool,
        notify: Option<AgentId>,
    },
    /// What a wait ended with.
    #[serde(rename_all = "camelCase")]
    Waited {
        agent: Box<AgentSnapshot>,
        timed_out: bool,
    },
    /// The agents the request archived or restored.
    AgentIds(Vec<AgentId>),
    /// What an archive gesture would touch.
    ArchivePlan(ArchivePlan),
    /// Whether something happened (a session started on wake).
    Flag(bool),
    /// Done; nothing to tell.
    Done,
    Timeline(Vec<TimelineItem>),
    Found(TimelineSearch),
    Workspace(Box<WorkspaceSnapshot>),
    Changes(Box<AgentChanges>),
    Diff(Box<AgentDiff>),
    /// The new commit, or the pull request's URL, or the path opened: one line of text.
    Text(String),
    Merged(Merged),
    Discarded(Option<Discarded>),
    PrStatus(GhStatus),
    NotificationSettings(NotificationsConfig),
    /// A window's snapshot (as [`Response::Window`]) and the number of the last event it
    /// reflects.
    #[serde(rename_all = "camelCase")]
    Synced {
        seq: u64,
        #[serde(serialize_with = "raw_json", deserialize_with = "raw_text")]
        window: String,
    },
    /// The configured hosts with their states (SPEC 17).
    Hosts(Vec<super::HostStatus>),
    /// config.json's schedules with their next due times and last outcomes (SPEC 20).
    Schedules(Vec<super::ScheduleView>),
    /// A `when` in words and its next due times, as the user types it.
    Preview {
        words: String,
        next: Vec<chrono::DateTime<chrono::Utc>>,
    },
    /// The fleet's counts and what may need the user (the tray's and notifications' view).
    Alerts(Box<crate::runtime::Alerts>),
    /// The fleet's counts alone (the status bar's and the window title's).
    Counts(crate::model::FleetCounts),
    /// The providers agents can be made with, and whether each is available.
    Providers(Vec<crate::providers::ProviderInfo>),
    /// The fleet as records, for a client that renders no window (scripts, tests): every
    /// unarchived agent's whole snapshot, the workspaces, projects, tracks, load notices,
    /// quarantined files and containment. This machine's only: it is never read back from a
    /// host's answer (`fleet` names no host), so it is written, not read.
    #[serde(skip_deserializing)]
    Fleet(Box<crate::runtime::FleetSnapshot>),
}

fn raw_json<S: Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(serde::ser::Error::custom)?;
    value.serialize(s)
}

fn raw_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
    Ok(raw.get().to_string())
}

impl Response {
    /// The answer as JSON text; a window snapshot's text goes in as it is (it can be tens of
    /// megabytes at 100,000 agents).
    pub fn to_json(&self) -> Result<String, ApiError> {
        match self {
            Response::Window(text) => Ok(format!("{{\"kind\":\"window\",\"value\":{text}}}")),
            Response::Synced { seq, window } => Ok(format!(
                "{{\"kind\":\"synced\",\"value\":{{\"seq\":{seq},\"window\":{window}}}}}"
            )),
            other => serde_json::to_string(other).map_err(|e| ApiError {
                code: "error".to_string(),
                message: format!("cannot encode the answer: {e}"),
                field: None,
            }),
        }
    }
}

pub use crate::runtime::ApiError;
