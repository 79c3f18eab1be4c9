//! An agent's labels (SPEC 1 `labels`): a few string pairs, read and written as a JSON object
//! with its keys in order.
//!
//! Held packed in one string ([`Packed`], `compact.rs`): most agents have one label, the parent
//! link, and packed it is one allocation.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::compact::Packed;
pub use super::compact::Pairs;
use super::ids::Key;

#[derive(Clone, Default, PartialEq, Eq)]
pub struct Labels(Packed);

impl Labels {
    pub fn new() -> Labels {
        Labels::default()
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key`; returns the value it replaced.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        let old = self.get(&key).map(str::to_string);
        let others = self.iter().filter(|(k, _)| *k != key);
        let mut pairs: Vec<(&str, &str)> = others.collect();
        pairs.push((&key, &value));
        *self = Labels(Packed::pack_unsorted(pairs));
        old
    }

    pub fn remove(&mut self, key: &str) -> Option<String> {
        let old = self.get(key)?.to_string();
        *self = Labels(Packed::pack(self.iter().filter(|(k, _)| *k != key)));
        Some(old)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// The pairs, in key order.
    pub fn iter(&self) -> Pairs<'_> {
        self.0.iter()
    }

    /// Labels from `pairs` as [`Labels::iter`] gave them (in key order, each key once), with
    /// no copy of each pair on the way; pairs in any other order are put in order first.
    pub fn from_ordered<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Labels {
        let mut keys = pairs.clone().map(|(k, _)| k);
        let mut prev = keys.next();
        let ordered = keys.all(|k| {
            let ok = prev.is_some_and(|p| p < k);
            prev = Some(k);
            ok
        });
        if ordered {
            Labels(Packed::pack(pairs))
        } else {
            Labels(Packed::pack_unsorted(pairs.collect()))
        }
    }
}

impl FromIterator<(String, String)> for Labels {
    /// A key given twice keeps its last value, as a map does.
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Labels {
        let owned: Vec<(String, String)> = pairs.into_iter().collect();
        Labels(Packed::pack_unsorted(
            owned
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect(),
        ))
    }
}

impl From<BTreeMap<String, String>> for Labels {
    fn from(map: BTreeMap<String, String>) -> Labels {
        Labels(Packed::pack(
            map.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ))
    }
}

impl<'a> IntoIterator for &'a Labels {
    type Item = (&'a str, &'a str);
    type IntoIter = Pairs<'a>;
    fn into_iter(self) -> Pairs<'a> {
        self.iter()
    }
}

/// `labels["key"]`, as on a map: panics when the key is absent.
impl std::ops::Index<&str> for Labels {
    type Output = str;
    fn index(&self, key: &str) -> &str {
        self.get(key).unwrap_or_else(|| panic!("no label {key:?}"))
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Labels {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// Read straight into the packed text: keys and values are borrowed from the input when they
/// have no escapes, so a record's labels cost one allocation at load.
impl<'de> Deserialize<'de> for Labels {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(LabelsVisitor)
    }
}

struct LabelsVisitor;

impl<'de> serde::de::Visitor<'de> for LabelsVisitor {
    type Value = Labels;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("labels (an object of strings)")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Labels, A::Error> {
        let mut v: Vec<(Key<'de>, Key<'de>)> = Vec::with_capacity(map.size_hint().unwrap_or(1));
        while let Some(entry) = map.next_entry::<Key<'de>, Key<'de>>()? {
            v.push(entry);
        }
        Ok(Labels(Packed::pack_unsorted(
            v.iter()
                .map(|(k, v)| (k.0.as_ref(), v.0.as_ref()))
                .collect(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_and_write_as_an_ordered_object() {
        let mut l: Labels = serde_json::from_str(r#"{"b": "2", "a": "1", "b": "3"}"#).unwrap();
        assert_eq!(serde_json::to_string(&l).unwrap(), r#"{"a":"1","b":"3"}"#);
        assert_eq!(l.insert("c".into(), "4".into()), None);
        assert_eq!(l.insert("a".into(), "0".into()), Some("1".into()));
        assert_eq!(l.get("a"), Some("0"));
        assert_eq!(l.remove("b"), Some("3".into()));
        assert!(!l.contains_key("b"));
        assert_eq!(l.len(), 2);
        assert_eq!(serde_json::to_string(&l).unwrap(), r#"{"a":"0","c":"4"}"#);
        assert!(serde_json::from_str::<Labels>(r#"{"a": 1}"#).is_err());
        let thrice: Labels =
            serde_json::from_str(r#"{"b": "1", "c": "x", "b": "2", "a": "y", "b": "3"}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&thrice).unwrap(),
            r#"{"a":"y","b":"3","c":"x"}"#
        );
    }

    #[test]
    fn packed_labels_keep_any_text_and_compare_as_maps() {
        // Texts that look like the packing itself, escapes, other scripts, empty ones.
        let json = r#"{"3:ab": "12:x", "": "", "ü\"k": "v\n:9", "paseo.parent-agent-id": "d09004e4-0d39-4086-99d9-e49e91701b99"}"#;
        let l: Labels = serde_json::from_str(json).unwrap();
        assert_eq!(l.len(), 4);
        assert_eq!(l.get("3:ab"), Some("12:x"));
        assert_eq!(l.get(""), Some(""));
        assert_eq!(l.get("ü\"k"), Some("v\n:9"));
        assert_eq!(l.get("3"), None);
        let back: Labels = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        assert_eq!(back, l);
        let keys: Vec<&str> = l.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["", "3:ab", "paseo.parent-agent-id", "ü\"k"]);
        // Built in another order, equal; emptied, equal to none.
        let mut pairs: Vec<(String, String)> = l
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        pairs.reverse();
        let mut other: Labels = pairs.into_iter().collect();
        assert_eq!(other, l);
        for k in keys {
            assert!(other.remove(k).is_some());
        }
        assert_eq!(other, Labels::new());
        assert!(other.is_empty());
        // Lengths of one, two and three digits.
        let long = "x".repeat(150);
        other.insert("k".into(), long.clone());
        other.insert("key-of-twelve".into(), String::new());
        assert_eq!(other.get("k"), Some(long.as_str()));
        assert_eq!(other.get("key-of-twelve"), Some(""));
        assert_eq!(other.len(), 2);
    }
}
