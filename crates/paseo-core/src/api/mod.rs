//! The one public API every client speaks (the window, the MCP server, tests, and next a remote
//! host over ssh, SPEC 17): a [`Request`] from a [`Caller`] goes in through
//! the server's one door (`Server::call`, above the hosts it routes to), a [`Response`] or
//! an [`ApiError`] comes out, and [`Event`]s keep every subscriber current. All three are plain
//! serde values: a frame is one JSON object.

mod hosts;
mod request;
mod response;
#[cfg(test)]
mod response_tests;
mod schedules;
#[cfg(test)]
mod tests;
pub mod verbs;

pub use crate::runtime::events::Event;
pub use crate::runtime::policy::Caller;
pub use hosts::{HostState, HostStatus, Hosts};
pub use response::{ApiError, Response};
pub use schedules::{ScheduleView, Schedules};
pub use verbs::{Ctx, Request, Verb, DEFAULT_WAIT};
