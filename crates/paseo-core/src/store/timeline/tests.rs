//! The timeline store's own tests: appends, pages, privacy, recovery.

use super::*;
use crate::model::{ItemKind, NewItem, Timestamp};

fn items(from: u64, n: u64) -> Vec<TimelineItem> {
    (from..from + n)
        .map(|s| {
            NewItem::new(ItemKind::Output, format!("line {s}")).numbered(
                s,
                1,
                Timestamp::from_millis(s as i64),
            )
        })
        .collect()
}

/// SPEC 16: a timeline holds everything an agent printed; the file is 0600 and its folder
/// 0700, whatever the umask.
#[tokio::test]
async fn timeline_files_and_their_folder_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    let t = Timelines::start(layout.clone());
    let a = AgentId::new();
    t.append(a, &items(1, 3));
    t.flush().await;
    let mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&layout.timeline_path(a)), 0o600);
    assert_eq!(mode(&layout.timelines_dir()), 0o700);
}

/// A finish notice written as text, before notices were structured, pages back with its
/// fields: the window renders notices from fields only, never parsing text.
#[tokio::test]
async fn an_old_text_notice_pages_back_with_its_fields() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    let a = AgentId::new();
    let kid = AgentId::new();
    fs::create_dir_all(layout.timelines_dir()).unwrap();
    let old = serde_json::json!({"seq": 1, "ts": "2026-01-01T00:00:00Z", "kind": "system",
        "text": format!("<paseo-notice id=\"arm-old\" agent-id=\"{kid}\" title=\"k &lt;1&gt;\" outcome=\"completed\">\nAgent {kid} completed.\n</paseo-notice>"),
        "turn": 1});
    let plain = serde_json::json!({"seq": 2, "ts": "2026-01-01T00:00:01Z", "kind": "system",
        "text": "Closed to make room", "turn": 0});
    fs::write(layout.timeline_path(a), format!("{old}\n{plain}\n")).unwrap();
    let t = Timelines::start(layout.clone());
    assert_eq!(t.recover(a), 2);
    let page = t.page(a, 0, 10).await.unwrap();
    let n = page[0].notice.as_deref().expect("the old notice's fields");
    assert_eq!((n.child_id, n.child_title.as_str()), (kid, "k <1>"));
    assert_eq!(
        (n.id.as_str(), n.outcome.as_str()),
        ("arm-old", "completed")
    );
    assert!(page[1].notice.is_none());
}

#[tokio::test]
async fn appends_then_pages_back_from_any_point() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    let t = Timelines::start(layout.clone());
    let a = AgentId::new();
    assert_eq!(t.recover(a), 0);
    t.append(a, &items(1, 1000));
    let last = t.page(a, 0, 10).await.unwrap();
    assert_eq!(last.first().unwrap().seq, 991);
    assert_eq!(last.last().unwrap().seq, 1000);
    let mid = t.page(a, 300, 50).await.unwrap();
    assert_eq!(mid.len(), 50);
    assert_eq!(mid[0].seq, 250);
    assert_eq!(mid[49].seq, 299);
    // Appends after the index exists keep it current.
    t.append(a, &items(1001, 300));
    let p = t.page(a, 1200, 3).await.unwrap();
    assert_eq!(
        p.iter().map(|i| i.seq).collect::<Vec<_>>(),
        vec![1197, 1198, 1199]
    );
    let first = t.page(a, 3, 100).await.unwrap();
    assert_eq!(first.iter().map(|i| i.seq).collect::<Vec<_>>(), vec![1, 2]);
    assert!(t.page(a, 1, 10).await.unwrap().is_empty());
    t.flush().await;
    assert_eq!(t.recover(a), 1300);
}

#[test]
fn recover_truncates_a_torn_line() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.jsonl");
    fs::write(&p, b"{\"a\":1}\n{\"a\":2}\n{\"a\":").unwrap();
    assert_eq!(file::recover_last_seq(&p).unwrap(), 2);
    assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}\n{\"a\":2}\n");
    fs::write(&p, b"{\"seq\":7,\"x\":1}\n{\"seq\":9,\"x\":1}\n{\"se").unwrap();
    assert_eq!(file::recover_last_seq(&p).unwrap(), 9);
}

fn seqs(items: &[TimelineItem]) -> Vec<u64> {
    items.iter().map(|i| i.seq).collect()
}

#[tokio::test]
async fn a_timeline_past_its_bound_drops_the_oldest_behind_a_marker() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    let max = 64 << 10;
    let opts = TimelineOptions {
        max_bytes: max,
        failures: None,
    };
    let a = AgentId::new();
    let mut t = Timelines::start_with(layout.clone(), opts.clone());
    for chunk in 0..40 {
        t.append(a, &items(chunk * 100 + 1, 100));
        t.flush().await;
    }
    let len = fs::metadata(layout.timeline_path(a)).unwrap().len();
    assert!(len <= max, "{len} bytes on disk, bound {max}");
    // The newest items are all there, numbered as they were.
    let last = t.page(a, 0, 50).await.unwrap();
    assert_eq!(seqs(&last), (3951..=4000).collect::<Vec<_>>());
    // Paging back to the start ends at the marker, numbered like the last dropped item.
    let all = t.page(a, 0, 100_000).await.unwrap();
    let marker = &all[0];
    assert_eq!(marker.kind, ItemKind::System);
    assert!(
        marker.text.starts_with("older output dropped"),
        "{}",
        marker.text
    );
    assert_eq!(seqs(&all[1..]), (marker.seq + 1..=4000).collect::<Vec<_>>());
    let mut before = 0;
    let mut paged = Vec::new();
    loop {
        let p = t.page(a, before, 37).await.unwrap();
        if p.is_empty() {
            break;
        }
        before = p[0].seq;
        paged.splice(0..0, p);
    }
    assert_eq!(seqs(&paged), seqs(&all), "paging walks the same items");
    assert!(t.page(a, marker.seq, 10).await.unwrap().is_empty());
    // Numbers carry on after a restart.
    t.stop();
    let t = Timelines::start_with(layout.clone(), opts);
    assert_eq!(t.recover(a), 4000);
    t.append(a, &items(4001, 1));
    assert_eq!(seqs(&t.page(a, 0, 2).await.unwrap()), vec![4000, 4001]);
}

#[tokio::test]
async fn while_writes_fail_memory_stays_bounded_and_a_marker_says_what_was_dropped() {
    let d = tempfile::tempdir().unwrap();
    let layout = Layout::new(d.path());
    // A file where the timelines folder goes: every write fails.
    fs::write(layout.timelines_dir(), b"in the way").unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let opts = TimelineOptions {
        max_bytes: 64 << 20,
        failures: Some(tx),
    };
    let a = AgentId::new();
    let t = Timelines::start_with(layout.clone(), opts);
    t.append(a, &items(1, 10));
    t.flush().await;
    let first = rx.recv().await.unwrap();
    assert_eq!(first.agent, Some(a));
    assert!(
        first.message.starts_with("cannot write the timeline"),
        "{}",
        first.message
    );
    // A flood while failing: beyond the cap the waiting items are dropped (reported once).
    let big = |from: u64| -> Vec<TimelineItem> {
        (from..from + 100)
            .map(|s| {
                NewItem::new(ItemKind::Output, "x".repeat(10_000)).numbered(
                    s,
                    1,
                    Timestamp::from_millis(0),
                )
            })
            .collect()
    };
    for k in 0..20 {
        t.append(a, &big(11 + k * 100));
    }
    t.flush().await;
    let dropped = rx.recv().await.unwrap();
    assert!(dropped.message.contains("dropped"), "{}", dropped.message);
    assert!(rx.try_recv().is_err(), "one report per failing spell");
    // Space is back: the marker and what came after land, numbered in order.
    fs::remove_file(layout.timelines_dir()).unwrap();
    t.append(a, &items(2011, 3));
    t.flush().await;
    let all = t.page(a, 0, 1000).await.unwrap();
    let marker = all.iter().find(|i| i.kind == ItemKind::Error).unwrap();
    assert!(
        marker.text.contains("could not be written"),
        "{}",
        marker.text
    );
    let s = seqs(&all);
    assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
    assert_eq!(s.last(), Some(&2013));
    assert_eq!(t.recover(a), 2013);
}
