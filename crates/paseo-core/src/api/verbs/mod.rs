//! Every verb of the API, each written once (the mini-redis way): one struct per verb, in one
//! module per family, with what it asks (its fields, the wire's `{"kind": …, …}`), who may ask
//! it ([`Verb::USER_ONLY`]), where it runs when hosts hold what it names ([`Verb::agents`],
//! [`Verb::workspaces`], [`Verb::take_host`]) and how it runs ([`Verb::run`]). [`Request`] is
//! the list of them; adding a verb is one struct, its `impl Verb`, and one line below.

use std::future::Future;

use serde::{Deserialize, Deserializer, Serialize};

use super::{Hosts, Response, Schedules};
use crate::model::tagged::{self, Tagged};
use crate::model::{AgentId, WorkspaceId};
use crate::runtime::{Caller, RuntimeError, RuntimeHandle};

mod agents;
mod archive;
mod changes;
mod hosts;
mod schedules;
mod shell;
mod timeline;
mod window;
mod workspaces;

pub use agents::*;
pub use archive::*;
pub use changes::*;
pub use hosts::*;
pub use schedules::*;
pub use shell::*;
pub use timeline::*;
pub use window::*;
pub use workspaces::*;

/// What a verb runs with: this machine's runtime (what most verbs act on, reached through
/// `Deref`), and the configured hosts (what the host verbs change).
pub struct Ctx<'a> {
    pub(crate) runtime: &'a RuntimeHandle,
    pub(crate) hosts: &'a dyn Hosts,
    /// The schedules, where a scheduler runs (the app and paseo-headless).
    pub(crate) schedules: Option<&'a dyn Schedules>,
}

impl std::ops::Deref for Ctx<'_> {
    type Target = RuntimeHandle;

    fn deref(&self) -> &RuntimeHandle {
        self.runtime
    }
}

/// One verb: what it asks, who may ask it, where it runs, and how.
pub trait Verb: Sized {
    /// Its `kind` on the wire.
    const KIND: &'static str;
    /// A gesture only the user makes (the window's): an agent's token reaches the tools of
    /// SPEC 8, which map onto the other verbs, and no further.
    const USER_ONLY: bool = false;
    /// The agents it acts on, with the field naming each: a host holding one runs it there.
    fn agents(&self) -> Vec<(&'static str, AgentId)> {
        Vec::new()
    }
    /// The workspaces it acts on, with the field naming each (the same).
    fn workspaces(&self) -> Vec<(&'static str, &WorkspaceId)> {
        Vec::new()
    }
    /// The host it names, taken out (the host runs it as its own); `None`: this machine.
    fn take_host(&mut self) -> Option<String> {
        None
    }
    /// Runs it on this machine for `caller`, who may ask it.
    fn run(
        self,
        rt: &Ctx<'_>,
        caller: Caller,
    ) -> impl Future<Output = Result<Response, RuntimeError>> + Send;
}

macro_rules! requests {
    ($($verb:ident),* $(,)?) => {
        /// One request: one of the verbs, `{"kind": "<verb>", …its fields}` on the wire.
        /// Optional fields may be left out; unknown fields are refused, so a misspelt option
        /// is an error naming it instead of a silent default.
        // One request lives for one call and is moved, never stored in bulk: a big
        // `createAgent` costs nothing worth boxing its fields for.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(tag = "kind", rename_all = "camelCase")]
        pub enum Request {
            $($verb($verb),)*
        }

        // Read kind first (`tagged`), so a bad field is named by its whole path: the verb's
        // own struct reads the rest of the frame.
        impl<'de> Deserialize<'de> for Request {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                tagged::deserialize(d)
            }
        }

        impl Tagged for Request {
            const NAME: &'static str = "Request";
            const KINDS: &'static [&'static str] = &[$(<$verb as Verb>::KIND,)*];

            fn read_fields<'de, D: Deserializer<'de>>(
                kind: &str,
                fields: D,
            ) -> Result<Self, D::Error> {
                $(
                    if kind == <$verb as Verb>::KIND {
                        return $verb::deserialize(fields).map(Request::$verb);
                    }
                )*
                Err(serde::de::Error::unknown_variant(kind, Self::KINDS))
            }
        }

        $(
            impl From<$verb> for Request {
                fn from(v: $verb) -> Request {
                    Request::$verb(v)
                }
            }
        )*

        impl Request {
            /// Its `kind` on the wire.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Request::$verb(_) => <$verb as Verb>::KIND,)*
                }
            }

            /// Whether only the user may make it ([`Verb::USER_ONLY`]).
            pub(crate) fn user_only(&self) -> bool {
                match self {
                    $(Request::$verb(_) => <$verb as Verb>::USER_ONLY,)*
                }
            }

            pub(crate) fn agents(&self) -> Vec<(&'static str, AgentId)> {
                match self {
                    $(Request::$verb(v) => v.agents(),)*
                }
            }

            pub(crate) fn workspaces(&self) -> Vec<(&'static str, &WorkspaceId)> {
                match self {
                    $(Request::$verb(v) => v.workspaces(),)*
                }
            }

            pub(crate) fn take_host(&mut self) -> Option<String> {
                match self {
                    $(Request::$verb(v) => v.take_host(),)*
                }
            }

            /// Runs it on this machine for `caller`.
            pub(crate) async fn run(
                self,
                rt: &Ctx<'_>,
                caller: Caller,
            ) -> Result<Response, RuntimeError> {
                match self {
                    $(Request::$verb(v) => v.run(rt, caller).await,)*
                }
            }

            /// Every verb's `kind`, in the list's order (tests and docs).
            pub fn kinds() -> &'static [&'static str] {
                <Request as Tagged>::KINDS
            }
        }
    };
}

requests! {
    FleetSnapshot,
    GetAgent,
    ListAgents,
    ArchivedAgents,
    CreateAgent,
    CreateWorktree,
    Prompt,
    Cancel,
    Stop,
    Wait,
    Archive,
    ArchiveFinished,
    ArchivePlan,
    FinishedPlan,
    Restore,
    Detach,
    Reattach,
    Wake,
    AnswerPermission,
    MarkSeen,
    Timeline,
    SearchTimeline,
    CancelSearch,
    Changes,
    Diff,
    Commit,
    Discard,
    Merge,
    CreatePr,
    PrStatus,
    OpenInEditor,
    AddWorkspace,
    RenameWorkspace,
    ArchiveWorkspace,
    NotificationSettings,
    SetNotificationSettings,
    FleetFirstScreen,
    FleetCards,
    SyncSnapshot,
    SetBudget,
    ListHosts,
    AddHost,
    RemoveHost,
    InstallHost,
    ListSchedules,
    PreviewSchedule,
    SaveSchedule,
    DeleteSchedule,
    PauseSchedule,
    RunSchedule,
    Alerts,
    Counts,
    Providers,
    Shown,
    Fleet,
}
