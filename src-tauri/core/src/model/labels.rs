//! An agent's labels (SPEC 1 `labels`): a few string pairs, read and written as a JSON object
//! with its keys in order.
//!
//! Held as a sorted vector rather than a `BTreeMap`: most agents have one label (the parent
//! link), and a B-tree's first node holds room for eleven pairs — over 500 bytes per subagent,
//! 40 MB at 100,000 agents (issue 19). Lookups scan a handful of entries.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Default, PartialEq, Eq)]
pub struct Labels(Vec<(String, String)>);

impl Labels {
    pub fn new() -> Labels {
        Labels(Vec::new())
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&String> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key`; returns the value it replaced.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                self.0.shrink_to_fit();
                None
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<String> {
        let i = self.find(key).ok()?;
        let (_, value) = self.0.remove(i);
        self.0.shrink_to_fit();
        Some(value)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The pairs, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl FromIterator<(String, String)> for Labels {
    /// A key given twice keeps its last value, as a map does.
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Labels {
        let map: BTreeMap<String, String> = pairs.into_iter().collect();
        Labels::from(map)
    }
}

impl From<BTreeMap<String, String>> for Labels {
    fn from(map: BTreeMap<String, String>) -> Labels {
        let mut pairs: Vec<_> = map.into_iter().collect();
        pairs.shrink_to_fit();
        Labels(pairs)
    }
}

impl<'a> IntoIterator for &'a Labels {
    type Item = (&'a String, &'a String);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, String)>,
        fn(&'a (String, String)) -> (&'a String, &'a String),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

/// `labels["key"]`, as on a map: panics when the key is absent.
impl std::ops::Index<&str> for Labels {
    type Output = String;
    fn index(&self, key: &str) -> &String {
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

/// Read straight into the sorted vector (no map in between: a tree node of ≈ 500 bytes made
/// and dropped per record at start); a key given twice keeps its last value, as a map would.
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
        let mut v: Vec<(String, String)> = Vec::with_capacity(map.size_hint().unwrap_or(1));
        while let Some(entry) = map.next_entry::<String, String>()? {
            v.push(entry);
        }
        // Stable: of two equal keys the later stays later, and takes the earlier's place.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(later, kept);
            }
            same
        });
        Ok(Labels(v))
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
        assert_eq!(l.get("a").map(String::as_str), Some("0"));
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
}
