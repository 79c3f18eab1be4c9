//! The frames a host carries (SPEC 17): one JSON value per line, both ways, over the backend's
//! Unix socket and, bridged by `paseo-headless attach`, over ssh's stdin/stdout. Nothing here
//! is a second vocabulary: a request is an [`api::Request`](crate::api::Request), an answer an
//! [`api::Response`](crate::api::Response) or [`ApiError`], an event an [`Event`]; the frame
//! only adds the request's id, the event's number, and the hello that compares versions.
//!
//! ```text
//! client → backend   {"type":"hello","product":"0.1.0","protocol":1}
//! backend → client   {"type":"hello","product":"0.1.0","protocol":1,"pid":4242}
//!                    or {"type":"refused","error":{"code":"version","message":"…"}} and the end
//! client → backend   {"type":"request","id":7,"request":{"kind":"getAgent","agentId":"…"}}
//! backend → client   {"type":"response","id":7,"response":{"kind":"agent","value":{…}}}
//!                    or {"type":"error","id":7,"error":{"code":"not_found","message":"…"}}
//! backend → client   {"type":"event","seq":42,"event":{"type":"agentUpdated",…}}
//! ```
//!
//! Events are numbered by the backend (one number per event it ever sent). The request
//! `syncSnapshot` answers the window's snapshot with the number of the last event it reflects:
//! a client applies only events after it, so a reconnecting client misses nothing and applies
//! nothing twice; a gap in the numbers (the client fell behind) means: sync again.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::api::{ApiError, Event, Request, Response};

/// The frames' own version: raised when a frame changes shape. Both sides must also run the
/// same product version (the same binary's API types).
pub const PROTOCOL_VERSION: u32 = 1;

/// The product version this build reports in its hello.
pub fn product_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The longest line either side accepts (a window snapshot of 100,000 agents is tens of MB).
pub const MAX_LINE: usize = 256 * 1024 * 1024;

/// What each side says first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub product: String,
    pub protocol: u32,
}

impl Hello {
    /// This build's hello.
    pub fn ours() -> Hello {
        Hello {
            product: product_version().to_string(),
            protocol: PROTOCOL_VERSION,
        }
    }

    /// `None` when both sides speak the same; else the error naming both versions, worded from
    /// the side of `self` (`ours_is` says who that is: "this app", "the backend").
    pub fn mismatch(&self, theirs: &Hello, ours_is: &str, theirs_is: &str) -> Option<ApiError> {
        if self == theirs {
            return None;
        }
        Some(ApiError::new(
            "version",
            format!(
                "version mismatch: {ours_is} is paseo {} (protocol {}), {theirs_is} is paseo {} \
                 (protocol {}); install the same version on both sides",
                self.product, self.protocol, theirs.product, theirs.protocol
            ),
        ))
    }
}

/// A frame from a client to the backend.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum ClientFrame {
    Hello(Hello),
    Request { id: u64, request: Box<Request> },
}

impl ClientFrame {
    pub fn to_line(&self) -> Result<String, ApiError> {
        let mut text = serde_json::to_string(self)
            .map_err(|e| ApiError::new("error", format!("cannot encode a frame: {e}")))?;
        text.push('\n');
        Ok(text)
    }

    /// Reads a line; a bad frame is an `invalid` error naming what is wrong, and the id when
    /// the frame had one (so the client's request fails instead of hanging).
    pub fn parse(line: &str) -> Result<ClientFrame, (Option<u64>, ApiError)> {
        let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
            (
                None,
                ApiError::new("invalid", format!("not a JSON frame: {e}")),
            )
        })?;
        let id = value.get("id").and_then(|v| v.as_u64());
        if value.get("type").and_then(|t| t.as_str()) == Some("request") {
            // The request's own reader names its field at fault.
            let request = value.get("request").cloned().ok_or_else(|| {
                (
                    id,
                    ApiError::new("invalid", "a request frame needs `request`"),
                )
            })?;
            let id =
                id.ok_or_else(|| (None, ApiError::new("invalid", "a request frame needs `id`")))?;
            let request = Request::from_value(request).map_err(|e| (Some(id), e))?;
            return Ok(ClientFrame::Request {
                id,
                request: Box::new(request),
            });
        }
        serde_json::from_value(value)
            .map_err(|e| (id, ApiError::new("invalid", format!("bad frame: {e}"))))
    }
}

/// A frame from the backend, as written (answers go out as the runtime wrote them: a window
/// snapshot's text is never parsed on the way).
pub enum ServerFrame<'a> {
    Hello {
        hello: &'a Hello,
        pid: u32,
    },
    Refused(&'a ApiError),
    Response {
        id: u64,
        response: &'a Response,
    },
    Error {
        id: Option<u64>,
        error: &'a ApiError,
    },
    Event {
        seq: u64,
        event: &'a Event,
    },
}

impl ServerFrame<'_> {
    pub fn to_line(&self) -> Result<String, ApiError> {
        fn json<T: Serialize + ?Sized>(value: &T) -> Result<String, ApiError> {
            serde_json::to_string(value)
                .map_err(|e| ApiError::new("error", format!("cannot encode a frame: {e}")))
        }
        let mut text = match self {
            ServerFrame::Hello { hello, pid } => format!(
                "{{\"type\":\"hello\",\"product\":{},\"protocol\":{},\"pid\":{pid}}}",
                json(&hello.product)?,
                hello.protocol
            ),
            ServerFrame::Refused(error) => {
                format!("{{\"type\":\"refused\",\"error\":{}}}", json(*error)?)
            }
            ServerFrame::Response { id, response } => format!(
                "{{\"type\":\"response\",\"id\":{id},\"response\":{}}}",
                response.to_json()?
            ),
            ServerFrame::Error { id, error } => match id {
                Some(id) => format!(
                    "{{\"type\":\"error\",\"id\":{id},\"error\":{}}}",
                    json(*error)?
                ),
                None => format!("{{\"type\":\"error\",\"error\":{}}}", json(*error)?),
            },
            ServerFrame::Event { seq, event } => {
                format!(
                    "{{\"type\":\"event\",\"seq\":{seq},\"event\":{}}}",
                    json(*event)?
                )
            }
        };
        text.push('\n');
        Ok(text)
    }
}

/// A frame from the backend, as a client reads it.
#[derive(Debug)]
pub enum Incoming {
    Hello { hello: Hello, pid: u32 },
    Refused(ApiError),
    Response { id: u64, response: Response },
    Error { id: Option<u64>, error: ApiError },
    Event { seq: u64, event: Box<Event> },
}

#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(default)]
    product: Option<String>,
    #[serde(default)]
    protocol: Option<u32>,
    #[serde(default)]
    error: Option<ApiError>,
    #[serde(default, borrow)]
    response: Option<&'a RawValue>,
    #[serde(default, borrow)]
    event: Option<&'a RawValue>,
}

impl Incoming {
    /// Reads one line from the backend; `Err` says what is wrong with it.
    pub fn parse(line: &str) -> Result<Incoming, String> {
        let raw: Raw = serde_json::from_str(line).map_err(|e| format!("not a frame: {e}"))?;
        let need = |what: &str| format!("a `{}` frame without `{what}`", raw.kind);
        Ok(match raw.kind {
            "hello" => Incoming::Hello {
                hello: Hello {
                    product: raw.product.clone().ok_or_else(|| need("product"))?,
                    protocol: raw.protocol.ok_or_else(|| need("protocol"))?,
                },
                pid: raw.pid.unwrap_or(0),
            },
            "refused" => Incoming::Refused(raw.error.clone().ok_or_else(|| need("error"))?),
            "response" => {
                let text = raw.response.ok_or_else(|| need("response"))?.get();
                Incoming::Response {
                    id: raw.id.ok_or_else(|| need("id"))?,
                    response: serde_json::from_str(text).map_err(|e| format!("bad answer: {e}"))?,
                }
            }
            "error" => Incoming::Error {
                id: raw.id,
                error: raw.error.clone().ok_or_else(|| need("error"))?,
            },
            "event" => {
                let text = raw.event.ok_or_else(|| need("event"))?.get();
                Incoming::Event {
                    seq: raw.seq.ok_or_else(|| need("seq"))?,
                    event: Box::new(
                        serde_json::from_str(text).map_err(|e| format!("bad event: {e}"))?,
                    ),
                }
            }
            other => return Err(format!("unknown frame type `{other}`")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::verbs;

    #[test]
    fn every_frame_reads_back_as_it_was_written() {
        let hello = Hello::ours();
        let line = ServerFrame::Hello {
            hello: &hello,
            pid: 7,
        }
        .to_line()
        .unwrap();
        assert!(line.ends_with('\n') && !line.trim_end().contains('\n'));
        assert!(
            matches!(Incoming::parse(&line).unwrap(), Incoming::Hello { hello: h, pid: 7 } if h == hello)
        );

        let window = r#"{"home":"/h","z":[1]}"#.to_string();
        let response = Response::Synced {
            seq: 9,
            window: window.clone(),
        };
        let line = ServerFrame::Response {
            id: 3,
            response: &response,
        }
        .to_line()
        .unwrap();
        match Incoming::parse(&line).unwrap() {
            Incoming::Response {
                id: 3,
                response: Response::Synced { seq: 9, window: w },
            } => {
                assert_eq!(w, window)
            }
            other => panic!("{other:?}"),
        }

        let event = Event::Notice {
            level: "warning".into(),
            message: "m".into(),
        };
        let line = ServerFrame::Event {
            seq: 12,
            event: &event,
        }
        .to_line()
        .unwrap();
        assert!(matches!(
            Incoming::parse(&line).unwrap(),
            Incoming::Event { seq: 12, .. }
        ));

        let error = ApiError::new("not_found", "no agent x");
        let line = ServerFrame::Error {
            id: Some(4),
            error: &error,
        }
        .to_line()
        .unwrap();
        assert!(
            matches!(Incoming::parse(&line).unwrap(), Incoming::Error { id: Some(4), error: e } if e == error)
        );

        let frame = ClientFrame::Request {
            id: 5,
            request: Box::new(Request::SyncSnapshot(verbs::SyncSnapshot { host: None })),
        };
        match ClientFrame::parse(&frame.to_line().unwrap()).unwrap() {
            ClientFrame::Request { id: 5, request }
                if *request == Request::SyncSnapshot(verbs::SyncSnapshot { host: None }) => {}
            other => panic!("{other:?}"),
        }
        let frame = ClientFrame::Hello(Hello::ours());
        assert!(
            matches!(ClientFrame::parse(&frame.to_line().unwrap()).unwrap(), ClientFrame::Hello(h) if h == Hello::ours())
        );
    }

    #[test]
    fn a_bad_request_frame_fails_its_own_id_naming_the_field() {
        let (id, e) =
            ClientFrame::parse(r#"{"type":"request","id":8,"request":{"kind":"getAgent"}}"#)
                .unwrap_err();
        assert_eq!(id, Some(8));
        assert_eq!(
            (e.code.as_str(), e.field.as_deref()),
            ("invalid", Some("agentId"))
        );
        let (id, e) = ClientFrame::parse("{nope").unwrap_err();
        assert_eq!(id, None);
        assert!(e.message.contains("not a JSON frame"), "{e}");
    }

    #[test]
    fn a_version_mismatch_names_both_versions() {
        let ours = Hello::ours();
        assert_eq!(ours.mismatch(&Hello::ours(), "a", "b"), None);
        let theirs = Hello {
            product: "9.9.9".into(),
            protocol: PROTOCOL_VERSION,
        };
        let e = ours.mismatch(&theirs, "this app", "the host").unwrap();
        assert_eq!(e.code, "version");
        assert!(
            e.message.contains(product_version()) && e.message.contains("9.9.9"),
            "{e}"
        );
    }
}
