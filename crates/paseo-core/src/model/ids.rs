//! The primitive values every record is made of (SPEC 1): validated ids, so no id read from the
//! network or a file can name a path outside the data root; instants that read back exactly as
//! written; and the map of fields a record does not know (those two held compact, in
//! `compact.rs`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

// Instants and the unknown-fields map are compact representations (`compact.rs`); they are
// named from here as they always were.
pub use super::compact::{Extra, Timestamp};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    #[error("invalid agent id {0:?}: expected a UUID")]
    InvalidAgentId(String),
    #[error("invalid {kind} id {value:?}: expected 1 to 128 letters, digits, '-', '_' or '.'")]
    InvalidOpaqueId { kind: &'static str, value: String },
    #[error("invalid timestamp {0:?}: expected ISO 8601 / RFC 3339")]
    InvalidTimestamp(String),
}

/// Serializes a value as its `Display` string and reads it back through `FromStr`, so the
/// validation of `from_str` guards every value deserialized too.
macro_rules! serde_as_string {
    ($name:ident) => {
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_str(ParsedStr::<$name>(std::marker::PhantomData))
            }
        }
    };
}

/// A map key as the parser has it: borrowed from the input when it has no escapes, owned when
/// it had some. (`Cow<str>` itself always deserializes owned: a `String` per key per record.)
pub(crate) struct Key<'de>(pub std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> serde::de::Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(std::borrow::Cow::Borrowed(s)))
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Key<'de>, E> {
        Ok(Key(std::borrow::Cow::Owned(s.to_owned())))
    }

    fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Key<'de>, E> {
        Ok(Key(std::borrow::Cow::Owned(s)))
    }
}

/// Parses a value from the string the deserializer holds, borrowed: no `String` is made for an
/// id or an instant only to be parsed and dropped (a record has five or more, and every record
/// is read at start: docs/scale.md).
struct ParsedStr<T>(std::marker::PhantomData<T>);

impl<T: FromStr> serde::de::Visitor<'_> for ParsedStr<T>
where
    T::Err: fmt::Display,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<T, E> {
        s.parse().map_err(E::custom)
    }
}

/// An agent id: always a UUID (v4 when we create it; any UUID is accepted on load).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(Uuid);

impl AgentId {
    /// Stands in while a record is read, until its real id is known; never stored.
    pub(super) const PLACEHOLDER: AgentId = AgentId(Uuid::nil());

    pub fn new() -> Self {
        AgentId(Uuid::new_v4())
    }
    pub fn as_uuid(&self) -> Uuid {
        self.0
    }
    /// The id of `uuid` (any UUID: ids are read back as stored, as [`FromStr`] accepts them).
    pub fn from_uuid(uuid: Uuid) -> Self {
        AgentId(uuid)
    }
}

impl Default for AgentId {
    fn default() -> Self {
        Self::new()
    }
}

impl FromStr for AgentId {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // Only the canonical hyphenated form: `Uuid::parse_str` also takes braces and URNs,
        // which would give one agent several spellings (and several file names).
        if s.len() != 36 {
            return Err(ModelError::InvalidAgentId(s.to_string()));
        }
        Uuid::parse_str(s)
            .map(AgentId)
            .map_err(|_| ModelError::InvalidAgentId(s.to_string()))
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

impl fmt::Debug for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentId({})", self.0.hyphenated())
    }
}

serde_as_string!(AgentId);

fn valid_opaque(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && s != "."
        && s != ".."
}

macro_rules! opaque_id {
    ($name:ident, $kind:literal) => {
        /// An opaque id (we mint UUIDs; other tools' ids of a safe shape are accepted). Shared,
        /// so the engine's indexes clone it without allocating.
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(std::sync::Arc<str>);

        impl $name {
            pub fn new() -> Self {
                $name(Uuid::new_v4().hyphenated().to_string().into())
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        /// Looked up by its text (a set of ids asked with a `&str`): hashed and compared as
        /// that text is.
        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = ModelError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                // The records of one folder mostly name the same workspace: the last few ids
                // parsed on this thread are shared, not allocated again (docs/scale.md).
                thread_local! {
                    static RECENT: $crate::model::recent::Recent<$name, 4> =
                        const { $crate::model::recent::Recent::new() };
                }
                if let Some(seen) = RECENT.with(|r| r.find_map(|x| (&*x.0 == s).then(|| x.clone())))
                {
                    return Ok(seen);
                }
                if valid_opaque(s) {
                    let id = $name(s.into());
                    RECENT.with(|r| r.keep(id.clone()));
                    Ok(id)
                } else {
                    Err(ModelError::InvalidOpaqueId {
                        kind: $kind,
                        value: s.chars().take(200).collect(),
                    })
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        serde_as_string!($name);
    };
}

opaque_id!(WorkspaceId, "workspace");
opaque_id!(ProjectId, "project");
opaque_id!(BatchId, "archive batch");

serde_as_string!(Timestamp);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_parsed_again_on_a_thread_is_the_same_copy() {
        let a: WorkspaceId = "4d0c6f5e-1b2a-4c3d-8e9f-0a1b2c3d4e5f".parse().unwrap();
        let b: WorkspaceId = "4d0c6f5e-1b2a-4c3d-8e9f-0a1b2c3d4e5f".parse().unwrap();
        assert_eq!(a.as_str().as_ptr(), b.as_str().as_ptr());
        let other: WorkspaceId = "another".parse().unwrap();
        assert_ne!(other.as_str().as_ptr(), a.as_str().as_ptr());
        // A bad one is still refused, whatever was parsed before.
        assert!("../x".parse::<WorkspaceId>().is_err());
    }

    #[test]
    fn agent_id_accepts_only_canonical_uuids() {
        assert!("2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d"
            .parse::<AgentId>()
            .is_ok());
        for bad in [
            "",
            "..",
            "../../etc/passwd",
            "2f1c0d5e8f9a4a7b9c2d1e2f3a4b5c6d",
            "{2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d}",
            "2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6/",
        ] {
            assert!(bad.parse::<AgentId>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn opaque_ids_reject_path_like_values() {
        assert!("ws-1.main_2".parse::<WorkspaceId>().is_ok());
        for bad in ["", ".", "..", "a/b", "a\\b", "a b", &"x".repeat(129)] {
            assert!(bad.parse::<WorkspaceId>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn ids_and_instants_deserialize_from_borrowed_and_owned_strings() {
        let id = "2f1c0d5e-8f9a-4a7b-9c2d-1e2f3a4b5c6d";
        let json = format!("[\"{id}\", \"2026-12-02T18:18:31.123Z\", \"ws-1\"]");
        let (a, t, w): (AgentId, Timestamp, WorkspaceId) = serde_json::from_str(&json).unwrap();
        assert_eq!(a.to_string(), id);
        assert_eq!(t.to_string(), "2026-12-02T18:18:31.123Z");
        assert_eq!(w.to_string(), "ws-1");
        // Escaped (so not borrowable) and from a Value (owned strings) alike.
        let escaped: Timestamp =
            serde_json::from_str("\"2026-12-02T18:18:31.123\\u005a\"").unwrap();
        assert_eq!(escaped, t);
        let from_value: AgentId = serde_json::from_value(serde_json::json!(id)).unwrap();
        assert_eq!(from_value, a);
        let bad = serde_json::from_str::<AgentId>("\"../etc\"").unwrap_err();
        assert!(bad.to_string().contains("../etc"), "{bad}");
        assert!(serde_json::from_str::<Timestamp>("12").is_err());
    }
}
