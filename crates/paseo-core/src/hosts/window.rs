//! What the windows hear of the hosts (SPEC 17): each connected host's events on the channel
//! this machine's come on, tagged with the host and numbered as the host numbers them, and each
//! host's state. The desktop shell only emits what [`HostEvent::for_window`] says, so the shapes
//! are the core's and tested here with a real host (tests/hosts_app.rs).
//!
//! ```text
//! paseo://event       {"host":"box","seq":42,"event":{"type":"agentUpdated","agent":{…card…}}}
//! paseo://host-state  {"host":"box","state":"disconnected","lastSeen":"…","error":"…"}
//! ```
//!
//! `event` is exactly what this machine's message carries for the same event (an agent as its
//! card, [`Numbered`]); the state is `listHosts`'s (`connecting`, `connected`, `disconnected`
//! with `lastSeen` and `error`, `failed` with `code`, `error` and `installHelps`). A state
//! comes whenever it changes and each time the host's mirror is rebuilt from a new snapshot:
//! the window then asks `syncSnapshot {host}` and applies only the host's events with a
//! `seq` above the answer's, as it does this machine's above its snapshot's.

use serde::Serialize;

use super::{HostEvent, HostState};
use crate::runtime::window::Numbered;
pub use crate::runtime::window::EVENT;

/// The Tauri event carrying a host's state.
pub const HOST_STATE: &str = "paseo://host-state";

/// One host event's payload for the windows.
#[derive(Clone, Copy, Serialize)]
#[serde(untagged)]
pub enum ForWindow<'a> {
    Event(Numbered<'a>),
    State {
        host: &'a str,
        #[serde(flatten)]
        state: &'a HostState,
    },
}

impl HostEvent {
    /// The window event's name and payload.
    pub fn for_window(&self) -> (&'static str, ForWindow<'_>) {
        match self {
            HostEvent::Event { host, seq, event } => (
                EVENT,
                ForWindow::Event(Numbered::event(Some(host), *seq, event)),
            ),
            HostEvent::State { host, state } => (HOST_STATE, ForWindow::State { host, state }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Event;
    use crate::runtime::window::WindowEvent;
    use serde_json::json;

    #[test]
    fn states_and_plain_events_have_the_contracts_shape() {
        let since = chrono::DateTime::parse_from_rfc3339("2026-01-02T14:02:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let cases = [
            (
                HostState::Connecting,
                json!({"host": "box", "state": "connecting"}),
            ),
            (
                HostState::Connected,
                json!({"host": "box", "state": "connected"}),
            ),
            (
                HostState::Disconnected {
                    last_seen: since,
                    error: "gone".into(),
                },
                json!({"host": "box", "state": "disconnected",
                       "lastSeen": "2026-01-02T14:02:00Z", "error": "gone"}),
            ),
            (
                HostState::Failed {
                    code: "version".into(),
                    error: "old".into(),
                    install_helps: true,
                },
                json!({"host": "box", "state": "failed", "code": "version", "error": "old",
                       "installHelps": true}),
            ),
        ];
        for (state, want) in cases {
            let e = HostEvent::State {
                host: "box".into(),
                state,
            };
            let (name, payload) = e.for_window();
            assert_eq!(name, HOST_STATE);
            assert_eq!(serde_json::to_value(payload).unwrap(), want);
        }
        let notice = Event::Notice {
            level: "info".into(),
            message: "hi".into(),
        };
        let e = HostEvent::Event {
            host: "box".into(),
            seq: 42,
            event: Box::new(notice.clone()),
        };
        let (name, payload) = e.for_window();
        assert_eq!(name, EVENT);
        assert_eq!(
            serde_json::to_value(payload).unwrap(),
            json!({"host": "box", "seq": 42,
                   "event": serde_json::to_value(WindowEvent(&notice)).unwrap()})
        );
        // This machine's: the same message without a host, and the news of a lag.
        assert_eq!(
            serde_json::to_value(Numbered::event(None, 7, &notice)).unwrap(),
            json!({"seq": 7, "event": serde_json::to_value(WindowEvent(&notice)).unwrap()})
        );
        assert_eq!(
            serde_json::to_value(Numbered::missed(90, 12)).unwrap(),
            json!({"seq": 90, "missed": 12})
        );
    }
}
