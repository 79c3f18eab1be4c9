//! Reading an object tagged by its `kind` (`{"kind": "directory", "path": …}`: a request, a
//! workspace target, a worktree target) kind first, so the fields after the kind are read
//! straight from the input.
//!
//! serde's own `#[serde(tag = "kind")]` copies every field into a buffer before it looks at the
//! kind, and reads the variant from that copy: an error inside it no longer knows where it was,
//! so `serde_path_to_error` can say no more than "somewhere in `workspace`". Here the kind is
//! read as the object's first field and the rest of the same object is handed to the kind's
//! own fields, so every path stays known (`workspace.target.newBranch`). An object whose kind
//! is not first is still read (its fields are copied, as serde would), only without the paths
//! inside it; [`from_value`], the reader of the API's requests and the MCP tools' inputs, puts
//! every `kind` first and names the field at fault by its path.
//!
//! The messages are serde's own for an internally tagged enum: `missing field `kind``,
//! `unknown variant `x`, expected …`, and the variant's fields' own.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, MapDeserializer};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;

/// The tag every tagged object here carries.
pub const TAG: &str = "kind";

/// A type read as `{"kind": <one of KINDS>, …its fields}`: its `Deserialize` is
/// [`deserialize`]`(d)`, and [`Tagged::read_fields`] reads one kind's fields.
pub trait Tagged: Sized {
    /// The type's name in serde's messages ("expected internally tagged enum …").
    const NAME: &'static str;
    /// Every kind, as written on the wire.
    const KINDS: &'static [&'static str];
    /// Reads the fields of `kind` (one of [`Tagged::KINDS`]) from `fields`, the object without
    /// its kind.
    fn read_fields<'de, D: Deserializer<'de>>(kind: &str, fields: D) -> Result<Self, D::Error>;
}

/// What [`from_value`] could not read: the field at fault by its path
/// (`workspace.target.newBranch`, `after[1]`; `None` for the value itself) and serde's message.
#[derive(Debug)]
pub struct Misread {
    pub field: Option<String>,
    pub message: String,
    /// The field is missing (the message is serde's "missing field `x`").
    pub missing: bool,
}

/// Reads `T` from `value`, every object's kind first, naming the field at fault by its path.
pub fn from_value<T: DeserializeOwned>(mut value: Value) -> Result<T, Misread> {
    kind_first(&mut value);
    serde_path_to_error::deserialize(value).map_err(misread)
}

/// What `serde_path_to_error` said, with the field at fault by its path (also config.json's
/// reader, which reads from a borrowed value).
pub fn misread(e: serde_path_to_error::Error<serde_json::Error>) -> Misread {
    let at = (e.path().iter().len() > 0).then(|| e.path().to_string());
    let message = e.into_inner().to_string();
    // serde reports a missing field at the object lacking it: the field is one further.
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next());
    let field = match (at, missing) {
        (Some(at), Some(name)) => Some(format!("{at}.{name}")),
        (None, Some(name)) => Some(name.to_string()),
        (at, None) => at,
    };
    Misread {
        field,
        missing: missing.is_some(),
        message,
    }
}

/// Moves every object's `kind` to the front: a tagged object whose kind comes later is read
/// from a copy of its fields, and an error in that copy has lost its path.
fn kind_first(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            if fields.keys().next().is_some_and(|k| k != TAG) {
                if let Some(kind) = fields.shift_remove(TAG) {
                    fields.shift_insert(0, TAG.to_string(), kind);
                }
            }
            fields.values_mut().for_each(kind_first);
        }
        Value::Array(items) => items.iter_mut().for_each(kind_first),
        _ => {}
    }
}

/// Reads a [`Tagged`] `T` from `d`.
pub fn deserialize<'de, T: Tagged, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(TaggedVisitor(PhantomData))
}

/// Implements `Deserialize` (kind first, [`deserialize`]) and [`Tagged`] for an enum whose
/// every variant holds the struct of its kind's fields, or nothing:
/// `tagged!(Target { "branch-off" => BranchOff(BranchOff), "none" => Nothing })`. The kinds are
/// the ones the enum's `#[serde(tag = "kind", rename_all = …)]` writes (and its schema says).
macro_rules! tagged {
    ($name:ident { $($kind:literal => $variant:ident $(($fields:ty))?),* $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::model::tagged::deserialize(d)
            }
        }

        impl $crate::model::tagged::Tagged for $name {
            const NAME: &'static str = stringify!($name);
            const KINDS: &'static [&'static str] = &[$($kind),*];

            fn read_fields<'de, D: serde::Deserializer<'de>>(
                kind: &str,
                fields: D,
            ) -> Result<Self, D::Error> {
                match kind {
                    $($kind => $crate::model::tagged::read_fields!(
                        fields, Self::$variant $(, $fields)?
                    ),)*
                    other => Err(serde::de::Error::unknown_variant(other, Self::KINDS)),
                }
            }
        }
    };
}
pub(crate) use tagged;

/// One kind's fields: its struct's, or none at all (any field is unknown).
macro_rules! read_fields {
    ($fields:ident, $variant:path, $ty:ty) => {
        <$ty as serde::Deserialize>::deserialize($fields).map($variant)
    };
    ($fields:ident, $variant:path) => {
        <$crate::model::tagged::NoFields as serde::Deserialize>::deserialize($fields)
            .map(|_| $variant)
    };
}
pub(crate) use read_fields;

/// The fields of a kind that has none.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoFields {}

struct TaggedVisitor<T>(PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "internally tagged enum {}", T::NAME)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Err(de::Error::missing_field(TAG));
        };
        if first == TAG {
            let kind = map.next_value_seed(Kind(T::KINDS))?;
            return T::read_fields(kind, MapAccessDeserializer::new(map));
        }
        // The kind comes later: the fields before it are copied (as serde's derive copies them
        // all), and read from the copy once the kind is known.
        let mut fields = vec![(first, map.next_value::<Value>()?)];
        let mut kind = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == TAG {
                if kind.is_some() {
                    return Err(de::Error::duplicate_field(TAG));
                }
                kind = Some(map.next_value_seed(Kind(T::KINDS))?);
            } else {
                fields.push((key, map.next_value()?));
            }
        }
        let kind = kind.ok_or_else(|| de::Error::missing_field(TAG))?;
        let copy = MapDeserializer::<_, serde_json::Error>::new(fields.into_iter());
        T::read_fields(kind, copy).map_err(de::Error::custom)
    }
}

/// The kind's value, which must be one of the kinds (its error is at `kind`).
struct Kind(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Kind {
    type Value = &'static str;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<&'static str, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Kind {
    type Value = &'static str;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("variant identifier")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<&'static str, E> {
        self.0
            .iter()
            .find(|k| **k == v)
            .copied()
            .ok_or_else(|| E::unknown_variant(v, self.0))
    }
}

/// `v` with every object's fields in the opposite order (its `kind` last): what the tests of
/// every tagged reader (requests, targets, MCP inputs) read back to show the order is free.
#[cfg(test)]
pub(crate) fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::{json, Value};

    use super::*;

    /// serde's own reading of a tagged shape, which ours must match.
    #[derive(Debug, Serialize, Deserialize)]
    #[serde(
        tag = "kind",
        rename_all = "kebab-case",
        rename_all_fields = "camelCase",
        deny_unknown_fields
    )]
    enum Derived {
        Point {
            x: u32,
            #[serde(default)]
            y_off: Option<u32>,
        },
        Nested {
            inner: Box<Derived>,
        },
    }

    /// The same shape, read kind first.
    #[derive(Debug, Serialize)]
    #[serde(
        tag = "kind",
        rename_all = "kebab-case",
        rename_all_fields = "camelCase",
        deny_unknown_fields
    )]
    enum Ours {
        Point { x: u32, y_off: Option<u32> },
        Nested { inner: Box<Ours> },
    }

    impl<'de> Deserialize<'de> for Ours {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize(d)
        }
    }

    impl Tagged for Ours {
        // serde's name for the shape, so the messages can be compared whole.
        const NAME: &'static str = "Derived";
        const KINDS: &'static [&'static str] = &["point", "nested"];

        fn read_fields<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Result<Self, D::Error> {
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase", deny_unknown_fields)]
            struct Point {
                x: u32,
                #[serde(default)]
                y_off: Option<u32>,
            }
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Nested {
                inner: Box<Ours>,
            }
            Ok(match kind {
                "point" => {
                    let p = Point::deserialize(d)?;
                    Ours::Point {
                        x: p.x,
                        y_off: p.y_off,
                    }
                }
                "nested" => Ours::Nested {
                    inner: Nested::deserialize(d)?.inner,
                },
                other => return Err(de::Error::unknown_variant(other, Self::KINDS)),
            })
        }
    }

    /// What `T` makes of `text`, read from the text and from its value: the value written back,
    /// or the message (the text's without its position, which differs: serde's derive reports
    /// an error once it has read the whole object).
    fn read<T: serde::de::DeserializeOwned + Serialize>(text: &str) -> [Result<Value, String>; 2] {
        let written = |t: T| serde_json::to_value(t).map_err(|e| e.to_string());
        let from_text = serde_json::from_str::<T>(text).map_err(|e| {
            let e = e.to_string();
            e.rsplit_once(" at line ")
                .map_or(e.clone(), |(m, _)| m.to_string())
        });
        let from_value = serde_json::from_str::<Value>(text)
            .map_err(|e| e.to_string())
            .and_then(|v| serde_json::from_value::<T>(v).map_err(|e| e.to_string()));
        [from_text.and_then(written), from_value.and_then(written)]
    }

    #[test]
    fn reads_and_refuses_as_serde_does_whatever_the_order_of_the_fields() {
        for text in [
            r#"{"kind": "point", "x": 1}"#,
            r#"{"kind": "point", "x": 1, "yOff": 2}"#,
            r#"{"x": 1, "kind": "point", "yOff": 2}"#,
            r#"{"x": 1, "yOff": 2, "kind": "point"}"#,
            r#"{"kind": "nested", "inner": {"kind": "point", "x": 3}}"#,
            r#"{"inner": {"x": 3, "kind": "point"}, "kind": "nested"}"#,
            r#"{"kind": "point"}"#,
            r#"{"x": 1}"#,
            r#"{}"#,
            r#"{"kind": "line", "x": 1}"#,
            r#"{"x": 1, "kind": "line"}"#,
            r#"{"kind": 5, "x": 1}"#,
            r#"{"kind": null}"#,
            r#"{"kind": "point", "x": 1, "z": 0}"#,
            r#"{"z": 0, "kind": "point", "x": 1}"#,
            r#"{"kind": "point", "x": "a"}"#,
            r#"{"x": -1, "kind": "point"}"#,
            r#"{"x": 1, "kind": "point", "kind": "point"}"#,
            r#"{"kind": "nested", "inner": {"kind": "point"}}"#,
            r#"{"kind": "nested", "inner": 5}"#,
            r#"5"#,
            r#""point""#,
            r#"null"#,
        ] {
            assert_eq!(read::<Ours>(text), read::<Derived>(text), "{text}");
        }
    }

    #[test]
    fn an_error_inside_keeps_its_path_when_the_kind_comes_first() {
        let path = |v: Value| match serde_path_to_error::deserialize::<_, Ours>(v) {
            Ok(o) => panic!("{o:?}"),
            Err(e) => (e.path().to_string(), e.into_inner().to_string()),
        };
        let deep = json!({"kind": "nested", "inner": {"kind": "nested",
                          "inner": {"kind": "point", "x": "a"}}});
        assert_eq!(
            path(deep),
            (
                "inner.inner.x".to_string(),
                "invalid type: string \"a\", expected u32".to_string()
            )
        );
        let unknown = json!({"kind": "nested", "inner": {"kind": "point", "x": 1, "z": 0}});
        assert_eq!(path(unknown).0, "inner.z");
        // serde names a missing field where the object that lacks it is.
        let missing = json!({"kind": "nested", "inner": {"kind": "point"}});
        assert_eq!(path(missing).0, "inner");
        let kind = json!({"kind": "nested", "inner": {"kind": "line"}});
        assert_eq!(path(kind).0, "inner.kind");
        // Kind last: the fields were copied before it was known, so the path stops at them.
        let late = json!({"kind": "nested", "inner": {"x": "a", "kind": "point"}});
        assert_eq!(path(late).0, "inner");
    }
}
