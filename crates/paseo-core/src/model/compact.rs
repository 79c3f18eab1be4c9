//! The compact representations of record values, gathered here so the records themselves
//! (`agent.rs`, `config.rs`, `labels.rs`, …) read as the data model. Every agent's record stays
//! in memory, and the app is built for 100,000 of them (docs/scale.md has the targets and what
//! each representation saves); each type below keeps its plain meaning behind a few bits:
//!
//! - [`Timestamp`]: an instant as milliseconds in a `NonZeroI64` with the sign bit flipped (8
//!   bytes, an absent one free), written and read by hand in its one RFC 3339 form;
//! - [`Extra`]: the unknown fields of a record (SPEC 1), boxed, so the usual empty one is a null
//!   pointer;
//! - [`Packed`]: string pairs (an agent's [`super::Labels`]) packed in one string, so the one
//!   label most agents have is one allocation.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::ids::ModelError;

/// The fields of a record this version does not know, kept as they were read so a rewrite
/// preserves them (forward compatibility, SPEC 1). Almost always empty, and every record has
/// several (its own, its config's, its usage's): boxed, an empty one is a null pointer instead
/// of a 72-byte map. Reads and writes go through the map it derefs to.
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

/// A UTC instant, serialized as ISO 8601 with millisecond precision and a `Z`
/// (`2026-12-02T18:18:31.123Z`). Kept at millisecond precision in memory too, so a record
/// read back from disk equals the one in memory.
///
/// Held as milliseconds with the sign bit flipped, never zero in any instant chrono covers: 8
/// bytes, and an absent one costs nothing more (a `DateTime` is 12 and its `Option` 12). A
/// record has seven. Serialized as its string (`serde_as_string!` in `ids.rs`).
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

/// String pairs packed in one string — each pair in key order as `{key length}:{key}{value
/// length}:{value}` — rather than as a map or a vector of string pairs: most agents have one
/// label (the parent link), which as a vector of two `String`s took three allocations, ≈ 144
/// bytes, and as a B-tree's node over 500. Packed it is one allocation of ≈ 64. Lookups scan a
/// handful of entries; a change repacks them, and labels change only when an agent is created,
/// detached or restored.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Packed(Box<str>);

impl Packed {
    /// Packs pairs already in key order, each key once.
    pub(super) fn pack<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Packed {
        use std::fmt::Write;
        // Exactly sized, so the text is not copied again when boxed (this runs per record at load).
        let digits = |n: usize| n.checked_ilog10().map_or(1, |d| d as usize + 1);
        let size = |part: &str| digits(part.len()) + 1 + part.len();
        let size = pairs
            .clone()
            .map(|(k, v)| if k == PARENT_KEY { 1 } else { size(k) } + size(v))
            .sum();
        let mut text = String::with_capacity(size);
        for (k, v) in pairs {
            if k == PARENT_KEY {
                text.push(PARENT_MARK);
            } else {
                // Writing to a String cannot fail.
                let _ = write!(text, "{}:", k.len());
                text.push_str(k);
            }
            let _ = write!(text, "{}:", v.len());
            text.push_str(v);
        }
        Packed(text.into_boxed_str())
    }

    /// Packs pairs in any order; a key given twice keeps its last value, as a map does.
    pub(super) fn pack_unsorted(mut pairs: Vec<(&str, &str)>) -> Packed {
        // Stable: of two equal keys the later stays later, and takes the earlier's place.
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        pairs.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(later, kept);
            }
            same
        });
        Packed::pack(pairs.into_iter())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pairs, in key order.
    pub fn iter(&self) -> Pairs<'_> {
        Pairs(&self.0)
    }
}

/// The parent link's key, which most agents have, is packed as one mark instead of its 24
/// characters (a part otherwise starts with its length's digits): the label of 80,000 subagents
/// then fits 48 bytes of the heap instead of 80 (docs/scale.md).
/// (The record's `PARENT_LABEL`, which is defined from this one.)
pub(super) const PARENT_KEY: &str = "paseo.parent-agent-id";
const PARENT_MARK: char = '@';

/// The pairs of a [`Packed`] (and so of a [`super::Labels`]), in key order.
#[derive(Clone)]
pub struct Pairs<'a>(&'a str);

impl<'a> Pairs<'a> {
    /// The next length-prefixed part; none at the end (`pack` wrote every part whole).
    fn part(&mut self) -> Option<&'a str> {
        let (len, rest) = self.0.split_once(':')?;
        let len: usize = len.parse().ok()?;
        let part = rest.get(..len)?;
        self.0 = rest.get(len..)?;
        Some(part)
    }
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (&'a str, &'a str);
    fn next(&mut self) -> Option<(&'a str, &'a str)> {
        let key = match self.0.strip_prefix(PARENT_MARK) {
            Some(rest) => {
                self.0 = rest;
                PARENT_KEY
            }
            None => self.part()?,
        };
        let value = self.part()?;
        Some((key, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_key_packs_as_one_mark_and_any_other_key_as_itself() {
        let id = "0b6c2a3e-1111-4222-8333-444455556666";
        let p = Packed::pack([(PARENT_KEY, id)].into_iter());
        assert_eq!(p.0.len(), 40, "{}", p.0);
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![(PARENT_KEY, id)]);
        // Keys that look like the mark, or are empty, and values that hold it.
        let pairs = vec![
            ("", "@"),
            ("@", "x"),
            ("@paseo", ""),
            (PARENT_KEY, "@1:"),
            ("zz", "9:@"),
        ];
        let p = Packed::pack_unsorted(pairs.clone());
        let mut sorted = pairs;
        sorted.sort();
        assert_eq!(p.iter().collect::<Vec<_>>(), sorted);
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
}
