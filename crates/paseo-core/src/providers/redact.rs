//! Tokens kept out of timelines (SPEC 16: timelines never store an agent's token; SPEC 14: no
//! token in a file others could read). Every agent has its MCP token in its environment, so
//! `env`, `printenv` or a debug dump prints it. Whatever a session reports passes its
//! [`EventSink`](super::EventSink), which replaces every live token the app issued (and the user
//! token) with [`REDACTED`] before the runtime stores, shows or broadcasts it.
//!
//! Output arrives in pipe-sized chunks and is cut into items; the [`Emitter`](super::output)
//! redacts each chunk before cutting and holds back a trailing run of token characters until
//! the next chunk, so a token split across two reads is still found whole.

use serde_json::Value;

use super::ProviderEvent;

/// What a token is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Finds the secrets in a text and replaces them.
pub trait Redact: Send + Sync {
    /// `text` with every secret replaced by [`REDACTED`], or `None` when it holds none.
    fn redact(&self, text: &str) -> Option<String>;
}

impl std::fmt::Debug for dyn Redact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redact")
    }
}

/// Whether `b` can be part of a token the app issues (hex, see `mcp::tokens::new_token`).
pub fn token_byte(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// Where a text ends in a run of token characters that more output could continue: the byte
/// index the held-back tail (its last `max` bytes at most) starts at, or `None`.
pub fn open_tail(text: &str, max: usize) -> Option<usize> {
    let run = text
        .bytes()
        .rev()
        .take_while(|b| token_byte(*b))
        .take(max)
        .count();
    (run > 0).then(|| text.len() - run)
}

fn redact_string(r: &dyn Redact, s: &mut String) {
    if let Some(clean) = r.redact(s) {
        *s = clean;
    }
}

fn redact_value(r: &dyn Redact, v: &mut Value) {
    match v {
        Value::String(s) => redact_string(r, s),
        Value::Array(a) => a.iter_mut().for_each(|v| redact_value(r, v)),
        Value::Object(o) => o.values_mut().for_each(|v| redact_value(r, v)),
        _ => {}
    }
}

impl ProviderEvent {
    /// Replaces the secrets in every text the event carries: items (their text and tool
    /// input), last messages, failures, permission requests and exit messages.
    pub fn redact(&mut self, r: &dyn Redact) {
        match self {
            ProviderEvent::Items(items) => {
                for it in items {
                    // A secret the styles cut in pieces shows up whole in the plain text: the
                    // item is shown plain rather than with runs that no longer fit its text.
                    if let Some(clean) = r.redact(&it.text) {
                        it.text = clean;
                        it.runs.clear();
                    }
                    if let Some(input) = &mut it.input {
                        redact_value(r, input);
                    }
                }
            }
            ProviderEvent::LastMessage(t) => redact_string(r, t),
            ProviderEvent::TurnEnded(crate::model::TurnOutcome::Failed { message, detail }) => {
                redact_string(r, message);
                if let Some(d) = detail {
                    redact_string(r, d);
                }
            }
            ProviderEvent::Exited { message } => redact_string(r, message),
            ProviderEvent::Permission(p) => {
                redact_value(r, &mut p.input);
                if let Some(d) = &mut p.description {
                    redact_string(r, d);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_tail_is_a_short_trailing_run_of_token_characters() {
        assert_eq!(open_tail("x=ab12", 64), Some(2));
        assert_eq!(open_tail("line\n", 64), None);
        assert_eq!(open_tail("", 64), None);
        // At most `max` bytes are held back.
        assert_eq!(open_tail(&"a".repeat(70), 64), Some(6));
    }
}
