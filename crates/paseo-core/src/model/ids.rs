//! The primitive values every record is made of (SPEC 1): validated ids, so no id read from the
//! network or a file can name a path outside the data root; instants that read back exactly as
//! written; and the map of fields a record does not know.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

/// The fields of a record this version does not know, kept as they were read so a rewrite
/// preserves them (forward compatibility, SPEC 1). Almost always empty, and every record has
/// several (its own, its config's, its usage's): boxed, an empty one is a null pointer instead
/// of a 72-byte map (issue 19: 100,000 records in memory). Reads and writes go through the map
/// it derefs to.
#[derive(Clone, Default)]
pub struct Extra(Option<Box<serde_json::Map<String, serde_json::Value>>>);

/// Equal when the fields are (a map emptied again equals one never filled).
impl PartialEq for Extra {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Extra {
    pub fn new() -> Self {
        Extra(None)
    }
}

static NO_EXTRA: std::sync::LazyLock<serde_json::Map<String, serde_json::Value>> =
    std::sync::LazyLock::new(serde_json::Map::new);

impl std::ops::Deref for Extra {
    type Target = serde_json::Map<String, serde_json::Value>;
    fn deref(&self) -> &Self::Target {
        self.0.as_deref().unwrap_or(&NO_EXTRA)
    }
}

impl std::ops::DerefMut for Extra {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.0.get_or_insert_with(Default::default)
    }
}

impl fmt::Debug for Extra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Extra {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::deserialize(d)?;
        Ok(Extra((!map.is_empty()).then(|| Box::new(map))))
    }
}

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
/// id or an instant only to be parsed and dropped (a record has five or more; issue 19 reads
/// 100,000 records at start).
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

        impl FromStr for $name {
            type Err = ModelError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                if valid_opaque(s) {
                    Ok($name(s.into()))
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

/// A UTC instant, serialized as ISO 8601 with millisecond precision and a `Z`
/// (`2026-12-02T18:18:31.123Z`). Kept at millisecond precision in memory too, so a record
/// read back from disk equals the one in memory.
///
/// Held as milliseconds with the sign bit flipped, never zero in any instant chrono covers: 8
/// bytes, and an absent one costs nothing more (a `DateTime` is 12 and its `Option` 12). A
/// record has seven (issue 19: 100,000 records in memory).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timestamp(std::num::NonZeroI64);

impl Timestamp {
    pub fn now() -> Self {
        Self::from_millis(Utc::now().timestamp_millis())
    }
    /// The instant; one chrono cannot hold reads as the epoch.
    pub fn from_millis(ms: i64) -> Self {
        let ms = DateTime::from_timestamp_millis(ms).map_or(0, |_| ms);
        // Only i64::MIN flips to zero, and chrono holds no such instant.
        Timestamp(std::num::NonZeroI64::new(ms ^ i64::MIN).unwrap_or(std::num::NonZeroI64::MIN))
    }
    pub fn millis(&self) -> i64 {
        self.0.get() ^ i64::MIN
    }
    pub fn as_datetime(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.millis()).unwrap_or_default()
    }
}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.millis().cmp(&other.millis())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written by hand for the years records have: a window's snapshot writes three per
        // agent (300,000 at 100,000 agents), and chrono's formatter is several times slower.
        let d = &self.as_datetime();
        let year = d.year();
        if !(0..=9999).contains(&year) {
            return f.write_str(&d.to_rfc3339_opts(SecondsFormat::Millis, true));
        }
        let mut b = *b"0000-00-00T00:00:00.000Z";
        let mut put = |at: usize, width: usize, mut v: u32| {
            for i in (at..at + width).rev() {
                b[i] = b'0' + (v % 10) as u8;
                v /= 10;
            }
        };
        put(0, 4, year as u32);
        put(5, 2, d.month());
        put(8, 2, d.day());
        put(11, 2, d.hour());
        put(14, 2, d.minute());
        put(17, 2, d.second());
        put(20, 3, d.timestamp_subsec_millis().min(999));
        f.write_str(std::str::from_utf8(&b).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl Timestamp {
    /// The form every instant is written in (`2026-12-02T18:18:31.123Z`, see `Display`), read
    /// without the general RFC 3339 parser: four instants per record, 100,000 records at start.
    /// None for any other form (offsets, other precisions, leap seconds), which the general
    /// parser then reads.
    fn parse_canonical(s: &str) -> Option<Timestamp> {
        let b = s.as_bytes();
        if b.len() != 24 {
            return None;
        }
        let shape_ok = b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
            && b[13] == b':'
            && b[16] == b':'
            && b[19] == b'.'
            && b[23] == b'Z';
        if !shape_ok {
            return None;
        }
        let num = |from: usize, to: usize| -> Option<u32> {
            b[from..to].iter().try_fold(0u32, |n, c| {
                c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
            })
        };
        let year = i32::try_from(num(0, 4)?).ok()?;
        let date = chrono::NaiveDate::from_ymd_opt(year, num(5, 7)?, num(8, 10)?)?;
        let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
        if second > 59 {
            return None;
        }
        let at = date.and_hms_milli_opt(hour, minute, second, num(20, 23)?)?;
        Some(Timestamp::from_millis(at.and_utc().timestamp_millis()))
    }
}

impl FromStr for Timestamp {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(t) = Self::parse_canonical(s) {
            return Ok(t);
        }
        DateTime::parse_from_rfc3339(s)
            .map(|d| Self::from_millis(d.with_timezone(&Utc).timestamp_millis()))
            .map_err(|_| ModelError::InvalidTimestamp(s.chars().take(100).collect()))
    }
}

serde_as_string!(Timestamp);

#[cfg(test)]
mod tests {
    use super::*;

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
    fn timestamps_order_by_instant_and_take_eight_bytes_present_or_not() {
        let ms = [i64::MIN, -8_000_000_000_000, -1, 0, 1, 1_767_225_599_999];
        let ts: Vec<Timestamp> = ms.iter().map(|m| Timestamp::from_millis(*m)).collect();
        // Out of chrono's range reads as the epoch, as it always did.
        assert_eq!(ts[0].millis(), 0);
        for w in ts[1..].windows(2) {
            assert!(w[0] < w[1], "{:?} !< {:?}", w[0], w[1]);
        }
        assert_eq!(ts[2].to_string(), "1969-12-31T23:59:59.999Z");
        assert_eq!(std::mem::size_of::<Option<Timestamp>>(), 8);
    }

    #[test]
    fn timestamps_round_trip_at_millisecond_precision() {
        let t: Timestamp = "2026-12-02T18:18:31.123456+02:00".parse().unwrap();
        assert_eq!(t.to_string(), "2026-12-02T16:18:31.123Z");
        let back: Timestamp = t.to_string().parse().unwrap();
        assert_eq!(t, back);
        assert!("yesterday".parse::<Timestamp>().is_err());
        // The hand-written format is chrono's, in and out of the years it covers.
        for ms in [
            0,
            1,
            999,
            1_767_225_599_999,
            4_102_444_800_123,
            253_402_300_799_999,
            -1,
            253_402_300_800_000,
        ] {
            let t = Timestamp::from_millis(ms);
            let chrono = t.as_datetime().to_rfc3339_opts(SecondsFormat::Millis, true);
            assert_eq!(t.to_string(), chrono, "{ms}");
            if t.as_datetime().year() <= 9999 {
                assert_eq!(chrono.parse::<Timestamp>().unwrap(), t);
            }
        }
    }

    #[test]
    fn the_canonical_fast_path_reads_what_chrono_reads_and_refuses_what_it_refuses() {
        let chrono = |s: &str| {
            DateTime::parse_from_rfc3339(s)
                .ok()
                .map(|d| Timestamp::from_millis(d.with_timezone(&Utc).timestamp_millis()))
        };
        for s in [
            "2026-12-02T18:18:31.123Z",
            "2024-02-29T23:59:59.999Z",
            "0000-01-01T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
            "1970-01-01T00:00:00.000Z",
        ] {
            assert_eq!(Timestamp::parse_canonical(s), chrono(s), "{s}");
            assert!(Timestamp::parse_canonical(s).is_some(), "{s}");
        }
        // Not a date, out of range, or not the canonical shape: the fast path declines, and
        // parsing gives chrono's answer.
        for s in [
            "2023-02-29T00:00:00.000Z",
            "2026-13-01T00:00:00.000Z",
            "2026-00-10T00:00:00.000Z",
            "2026-12-32T00:00:00.000Z",
            "2026-12-02T24:00:00.000Z",
            "2026-12-02T18:60:00.000Z",
            "2026-12-02T18:18:60.000Z",
            "2026-12-02t18:18:31.123Z",
            "2026-12-02T18:18:31.123z",
            "2026-12-02T18:18:31,123Z",
            "+026-12-02T18:18:31.123Z",
            "2026-12-02T18:18:31.12Z",
            "2026-12-02T18:18:31.123+00:00",
            "2026-1２-02T18:18:31.123Z",
        ] {
            assert_eq!(Timestamp::parse_canonical(s), None, "{s}");
            assert_eq!(s.parse::<Timestamp>().ok(), chrono(s), "{s}");
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
