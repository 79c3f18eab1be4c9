//! How config.json's JSON becomes settings: serde's derives on the settings' own types, plus the
//! few rules serde has no words for, written here once. An error is the path of the field at
//! fault (from `serde_path_to_error`) and what was wrong.

use std::fmt::{self, Display};
use std::marker::PhantomData;
use std::ops::RangeBounds;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde_json::Value;

/// What `command` must be, in the file's own words.
pub(super) const ARGV: &str = "expected a non-empty array of strings";

/// Reads a `T` from `value`; an error is the path of the field at fault and what was wrong.
pub(super) fn read<'v, T: Deserialize<'v>>(value: &'v Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let m = crate::model::tagged::misread(e);
        // serde gives the value itself no path.
        (
            m.field.unwrap_or_else(|| "(top level)".to_string()),
            m.message,
        )
    })
}

/// A `T` read from a JSON object only. serde's derive would also take an array, its items as
/// the fields in order (`"limits": [5]`), which no version of the file meant.
#[derive(Default)]
pub(super) struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                // The same map handed on, so the paths of the fields stay known.
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Fields(PhantomData)).map(Object)
    }
}

/// An optional setting that is there: `null` is a mistake, as it always was in this file,
/// where serde's `Option` would take it for the setting left out.
pub(super) fn some<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A unit enum's variant, named by a string only: serde_json would also take an object of one
/// key (`{"shell": null}`), which no version of the file meant.
pub(super) fn name<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    T::deserialize(String::deserialize(d)?.into_deserializer())
}

/// A whole number in `range`, or else the error `what`, which says the range. Read as any
/// value, so that a string, a fraction or a negative number get the same words.
pub(super) fn whole<'de, D: Deserializer<'de>, T: TryFrom<u64>>(
    d: D,
    range: impl RangeBounds<u64>,
    what: impl Display,
) -> Result<T, D::Error> {
    Value::deserialize(d)?
        .as_u64()
        .filter(|n| range.contains(n))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| de::Error::custom(what))
}

/// A program and its arguments (`command`). Read as a whole, so that a word of the wrong type
/// is the array's mistake, said as for an empty one.
pub(super) fn argv<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    match serde_json::from_value::<Vec<String>>(Value::deserialize(d)?) {
        Ok(words) if !words.is_empty() => Ok(Some(words)),
        _ => Err(de::Error::custom(ARGV)),
    }
}

/// A `command`'s first word is the program it runs, so it must say something; the error is at
/// `<at>.command[0]`.
pub(super) fn check_program(argv: &[String], at: &str) -> Result<(), (String, String)> {
    if argv
        .first()
        .is_some_and(|program| program.trim().is_empty())
    {
        return Err((format!("{at}.command[0]"), "the program is empty".into()));
    }
    Ok(())
}
