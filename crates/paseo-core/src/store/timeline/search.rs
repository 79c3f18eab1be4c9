//! Find in an agent's timeline (the find bar, Ctrl+F): a case-insensitive search of every item's
//! text in the agent's file, which holds what the window and the runtime have long paged out.
//! Bounded (at most [`MAX_HITS`] items are listed, and the file itself is bounded) and
//! cancellable: the caller's flag is checked between lines, so a new query stops the old one.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::TimelineError;
use crate::model::{AgentId, TimelineItem};

/// Items listed at most; past them the search still counts matches, so the count is whole.
pub const MAX_HITS: usize = 5_000;
/// The longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 500;

/// One item with matches: its seq and how many times the query occurs in its text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub seq: u64,
    pub count: u32,
}

/// What a search found, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineSearch {
    pub hits: Vec<SearchHit>,
    /// Matches in all items, the unlisted ones too.
    pub total: u64,
    /// Whether items past [`MAX_HITS`] matched too.
    pub truncated: bool,
}

/// Non-overlapping, case-insensitive occurrences of `needle` (already lowercased) in `text`.
pub fn count_matches(text: &str, needle: &str) -> u32 {
    if needle.is_empty() {
        return 0;
    }
    let hay = text.to_lowercase();
    u32::try_from(hay.matches(needle).count()).unwrap_or(u32::MAX)
}

/// Searches `agent`'s timeline file at `path` for `query` (case-insensitive). A missing file is
/// an empty timeline. Stops with [`TimelineError::Canceled`] once `cancel` is set.
pub fn search_file(
    agent: AgentId,
    path: &Path,
    query: &str,
    cancel: &AtomicBool,
) -> Result<TimelineSearch, TimelineError> {
    let needle = query.to_lowercase();
    let mut out = TimelineSearch::default();
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => {
            return Err(TimelineError::Read {
                agent,
                message: e.to_string(),
            })
        }
    };
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let mut line = Vec::new();
    // A query with characters JSON escapes (quotes, backslashes, controls, non-ASCII written as
    // \u escapes by other writers) cannot be pre-filtered on the raw line.
    let raw_filter = needle
        .bytes()
        .all(|b| (b.is_ascii_graphic() && b != b'"' && b != b'\\') || b == b' ');
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(TimelineError::Canceled);
        }
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| TimelineError::Read {
                agent,
                message: e.to_string(),
            })?;
        if n == 0 {
            break;
        }
        if raw_filter && !contains_ascii_ci(&line, needle.as_bytes()) {
            continue;
        }
        // A torn last line (a crash mid-append) or a foreign line is skipped, as paging does.
        let Ok(item) = serde_json::from_slice::<TimelineItem>(&line) else {
            continue;
        };
        let count = count_matches(&item.text, &needle);
        if count == 0 {
            continue;
        }
        out.total += u64::from(count);
        if out.hits.len() < MAX_HITS {
            out.hits.push(SearchHit {
                seq: item.seq,
                count,
            });
        } else {
            out.truncated = true;
        }
    }
    Ok(out)
}

/// Whether `hay` contains the lowercase ASCII `needle`, ignoring ASCII case.
fn contains_ascii_ci(hay: &[u8], needle: &[u8]) -> bool {
    if needle.is_empty() {
        return true;
    }
    hay.windows(needle.len()).any(|w| {
        w.iter()
            .zip(needle)
            .all(|(a, b)| a.to_ascii_lowercase() == *b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ItemKind, NewItem, Timestamp};
    use std::io::Write;

    fn write(path: &Path, texts: &[&str]) {
        let mut f = File::create(path).unwrap();
        for (i, t) in texts.iter().enumerate() {
            let it = NewItem::new(ItemKind::Output, *t).numbered(i as u64 + 1, 1, Timestamp::now());
            serde_json::to_writer(&mut f, &it).unwrap();
            f.write_all(b"\n").unwrap();
        }
    }

    #[test]
    fn finds_every_match_case_insensitively_with_escapes_and_unicode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        write(
            &path,
            &[
                "nothing here",
                "Needle and NEEDLE",
                "say \"needle\"\n",
                "ÉCOLE école",
                "torn",
            ],
        );
        // A torn last line, as a crash leaves it.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"seq\":6,\"text\":\"needle").unwrap();
        let never = AtomicBool::new(false);
        let a = AgentId::new();
        let r = search_file(a, &path, "needle", &never).unwrap();
        assert_eq!(
            r.hits,
            [
                SearchHit { seq: 2, count: 2 },
                SearchHit { seq: 3, count: 1 }
            ]
        );
        assert_eq!((r.total, r.truncated), (3, false));
        let r = search_file(a, &path, "\"needle\"", &never).unwrap();
        assert_eq!(r.hits, [SearchHit { seq: 3, count: 1 }]);
        let r = search_file(a, &path, "École", &never).unwrap();
        assert_eq!(r.hits, [SearchHit { seq: 4, count: 2 }]);
        let missing = search_file(a, &dir.path().join("none"), "x", &never).unwrap();
        assert_eq!(missing, TimelineSearch::default());
    }

    #[test]
    fn a_canceled_search_stops() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        write(&path, &["needle"; 10]);
        let canceled = AtomicBool::new(true);
        let err = search_file(AgentId::new(), &path, "needle", &canceled).unwrap_err();
        assert!(matches!(err, TimelineError::Canceled), "{err}");
    }

    #[test]
    fn hits_are_bounded_but_the_count_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let texts = vec!["x"; MAX_HITS + 3];
        write(&path, &texts);
        let r = search_file(AgentId::new(), &path, "x", &AtomicBool::new(false)).unwrap();
        assert_eq!(r.hits.len(), MAX_HITS);
        assert_eq!(r.total, MAX_HITS as u64 + 3);
        assert!(r.truncated);
    }
}
