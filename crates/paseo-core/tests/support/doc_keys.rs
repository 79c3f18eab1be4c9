//! Checks a document's field tables against the keys a file really has: used by
//! `core/tests/data_model_doc.rs`, `src-tauri/windows.rs` and `tests/ui/layouts.rs` to keep
//! docs/data-model.md true. A field table starts with the header `| Field |`; its rows name one
//! key each in the first cell (`` `usage.inputTokens` ``).
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// How to name the keys of one file: objects whose keys are data (a label, an id) and values not
/// described key by key.
#[derive(Default)]
pub struct Shape {
    /// path → the placeholder its keys are named by in the doc (`windows` → `<label>`).
    pub maps: BTreeMap<&'static str, &'static str>,
    /// Paths whose value is documented as a whole.
    pub opaque: BTreeSet<&'static str>,
}

impl Shape {
    pub fn new(maps: &[(&'static str, &'static str)], opaque: &[&'static str]) -> Shape {
        Shape {
            maps: maps.iter().copied().collect(),
            opaque: opaque.iter().copied().collect(),
        }
    }
}

/// Every key of `v` by path: `a.b` inside objects, `a[].b` inside arrays.
fn collect(v: &Value, prefix: &str, shape: &Shape, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let name = shape.maps.get(prefix).copied().unwrap_or(k);
                let path = if prefix.is_empty() {
                    name.to_string()
                } else {
                    format!("{prefix}.{name}")
                };
                out.insert(path.clone());
                if !shape.opaque.contains(path.as_str()) {
                    collect(child, &path, shape, out);
                }
            }
        }
        Value::Array(a) => {
            for el in a {
                collect(el, &format!("{prefix}[]"), shape, out);
            }
        }
        _ => {}
    }
}

pub fn keys(v: &Value, shape: &Shape) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    collect(v, "", shape, &mut out);
    out
}

/// The keys the field tables under `heading` (up to the next heading) have rows for.
pub fn documented(doc: &str, heading: &str) -> Result<BTreeSet<String>, String> {
    let mut lines = doc.lines().skip_while(|l| l.trim_end() != heading);
    if lines.next().is_none() {
        return Err(format!("no section {heading:?}"));
    }
    let mut out = BTreeSet::new();
    let mut in_table = false;
    for line in lines.take_while(|l| !l.starts_with('#')) {
        if line.starts_with("| Field |") {
            in_table = true;
            continue;
        }
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        if !in_table || line.starts_with("| ---") {
            continue;
        }
        let cell = line.split('|').nth(1).unwrap_or_default().trim();
        match cell.strip_prefix('`').and_then(|c| c.strip_suffix('`')) {
            Some(key) => {
                out.insert(key.to_string());
            }
            None => {
                return Err(format!(
                    "{heading}: a row whose first cell is not a `key`: {line}"
                ))
            }
        }
    }
    Ok(out)
}

/// What is wrong between the keys a file has and the rows under `heading`.
pub fn compare(doc: &str, heading: &str, written: &BTreeSet<String>) -> Vec<String> {
    let rows = match documented(doc, heading) {
        Ok(r) => r,
        Err(e) => return vec![e],
    };
    let mut problems: Vec<String> = written
        .difference(&rows)
        .map(|k| format!("{heading}: `{k}` is written but has no row"))
        .collect();
    problems.extend(
        rows.difference(written)
            .map(|k| format!("{heading}: the row `{k}` names a key that is not written")),
    );
    problems
}
