//! Which finish notices an agent's timeline shows as received (SPEC 4): read at load for the
//! few agents a crash may have left owed a notice they already have, so it is not delivered
//! twice. Only the end of the file is read: a notice's hand-over lands within moments of its
//! timeline item, so an item a crash left unconfirmed is among the last ones written.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::model::TimelineItem;

/// How much of the end of a timeline is read for received notices.
pub const SCAN_BYTES: u64 = 1 << 20;

/// The ids of the notices in the last [`SCAN_BYTES`] of the timeline at `path` (none when it
/// does not exist). Lines that do not parse (a torn last line, a line cut by the window's
/// start) are skipped.
pub fn received_notice_ids(path: &Path) -> io::Result<Vec<String>> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    let start = len.saturating_sub(SCAN_BYTES);
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::with_capacity((len - start) as usize);
    f.take(SCAN_BYTES).read_to_end(&mut buf)?;
    let mut ids = Vec::new();
    for line in buf.split(|b| *b == b'\n') {
        // Most lines are output: only a line with a notice is parsed.
        if !contains(line, b"\"notice\":{") {
            continue;
        }
        if let Ok(item) = serde_json::from_slice::<TimelineItem>(line) {
            if let Some(n) = item.notice {
                ids.push(n.id);
            }
        }
    }
    Ok(ids)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AgentId, NewItem, Notice, Timestamp};

    /// Timelines written before notices were structured still load: their notice items (text
    /// only) are no received ids, a torn last line is skipped, and output quoting a notice's
    /// JSON is not taken for one.
    #[test]
    fn received_ids_come_only_from_structured_notice_items() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        assert!(received_notice_ids(&p).unwrap().is_empty());
        let n = Notice::new(
            "arm-new",
            AgentId::new(),
            "kid",
            crate::model::NoticeOutcome::Completed,
            None,
            None,
            Timestamp::from_millis(1),
        );
        let old = r#"{"seq":1,"ts":"2026-01-01T00:00:00Z","kind":"system","text":"<paseo-notice id=\"arm-old\" agent-id=\"x\" title=\"kid\" outcome=\"completed\">\nAgent \"kid\" (x) completed.\n</paseo-notice>","turn":1}"#;
        let new = NewItem::notice(&n, "kid completed").numbered(2, 1, Timestamp::from_millis(2));
        let fake = NewItem::output("stdout", r#"{"notice":{"id":"arm-fake"}}"#).numbered(
            3,
            1,
            Timestamp::from_millis(3),
        );
        let mut text = format!("{old}\n");
        text.push_str(&serde_json::to_string(&new).unwrap());
        text.push('\n');
        text.push_str(&serde_json::to_string(&fake).unwrap());
        text.push_str("\n{\"seq\":4,\"notice\":{\"id\":\"torn");
        std::fs::write(&p, text).unwrap();
        assert_eq!(
            received_notice_ids(&p).unwrap(),
            vec!["arm-new".to_string()]
        );
        // The old item still reads as an item.
        let first: TimelineItem = serde_json::from_str(old).unwrap();
        assert!(first.notice.is_none());
    }
}
