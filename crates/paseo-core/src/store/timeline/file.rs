//! One agent's timeline file: appends that never leave or repeat a partial write, a bound on its
//! size (the oldest items dropped behind a marker item), a bound on what waits in memory while
//! writes fail, and paging by item number.
//!
//! Item numbers (`seq`) only grow. They are dense, except that a marker stands in for the items
//! it reports dropped, so readers search by `seq` (a sparse index of every `INDEX_STRIDE`-th
//! line's seq and offset) rather than count lines.

use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::model::{ItemKind, NewItem, TimelineItem, Timestamp};
use crate::store::{atomic, private};

pub(super) const INDEX_STRIDE: u64 = 128;

/// The bounds of one agent's timeline.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// The file is compacted to about half of this when it grows past it.
    pub max_bytes: u64,
    /// What may wait in memory while writes fail; beyond it the waiting items are dropped.
    pub pending_cap: usize,
}

impl Limits {
    pub(super) fn new(max_bytes: u64) -> Limits {
        // Small: what waits while the disk is full is written first when space comes back,
        // and must not fill it again at once.
        let cap = (max_bytes / 64).clamp(64 << 10, 1 << 20);
        Limits {
            max_bytes,
            pending_cap: usize::try_from(cap).unwrap_or(1 << 20),
        }
    }
}

/// Items dropped from memory while writes failed; written as one marker item once writes work.
#[derive(Debug, Default)]
struct Dropped {
    items: u64,
    bytes: u64,
    last_seq: u64,
    reason: String,
}

/// The sparse index: `(seq, offset)` of every `INDEX_STRIDE`-th line, the line count, the end.
#[derive(Debug, Default)]
struct Index {
    lines: u64,
    marks: Vec<(u64, u64)>,
    end: u64,
}

impl Index {
    fn add_lines(&mut self, start: u64, bytes: &[u8]) {
        let mut off = start;
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            if self.lines.is_multiple_of(INDEX_STRIDE) {
                let prev = self.marks.last().map(|m| m.0 + INDEX_STRIDE).unwrap_or(1);
                self.marks.push((seq_of(line).unwrap_or(prev), off));
            }
            self.lines += 1;
            off += line.len() as u64;
        }
        self.end = off;
    }
}

#[derive(Debug, Default)]
pub(super) struct AgentFile {
    pending: Vec<u8>,
    pending_last_seq: u64,
    dropped: Option<Dropped>,
    /// The length the file had before a write that failed and could not be cut back: bytes past
    /// it are a partial write, cut before the next append so that nothing is written twice.
    truncate_to: Option<u64>,
    /// The last write failed (failures are reported when this changes, not on every retry).
    pub(super) failing: bool,
    /// Why the last write failed.
    reason: String,
    index: Option<Index>,
}

/// What a drop of the waiting items reports, once per failing spell.
pub(super) struct Overflow {
    pub items: u64,
    pub bytes: u64,
}

impl AgentFile {
    pub(super) fn has_work(&self) -> bool {
        !self.pending.is_empty() || self.dropped.is_some()
    }

    pub(super) fn keep(&self) -> bool {
        self.has_work() || self.index.is_some()
    }

    /// Queues encoded lines. While writes fail, what waits stays under the cap: past it, the
    /// waiting items are dropped and a marker will say so (the first drop is returned).
    pub(super) fn push(
        &mut self,
        bytes: &[u8],
        last_seq: u64,
        limits: &Limits,
    ) -> Option<Overflow> {
        self.pending.extend_from_slice(bytes);
        self.pending_last_seq = self.pending_last_seq.max(last_seq);
        self.drop_if_over(limits)
    }

    /// While writes fail, drops what waits past the cap (the first drop of a spell is returned).
    pub(super) fn drop_if_over(&mut self, limits: &Limits) -> Option<Overflow> {
        if !self.failing || self.pending.len() <= limits.pending_cap {
            return None;
        }
        let lines = self.pending.iter().filter(|b| **b == b'\n').count() as u64;
        let first = self.dropped.is_none();
        let d = self.dropped.get_or_insert_with(Dropped::default);
        d.items += lines;
        d.bytes += self.pending.len() as u64;
        d.last_seq = self.pending_last_seq;
        d.reason = self.reason.clone();
        let report = Overflow {
            items: d.items,
            bytes: d.bytes,
        };
        // Shrink too: a flood must not keep the peak allocation.
        self.pending = Vec::new();
        first.then_some(report)
    }

    /// The reason writes fail, for the marker of what gets dropped.
    pub(super) fn set_failure(&mut self, reason: &str) {
        self.failing = true;
        self.reason = reason.to_string();
        if let Some(d) = &mut self.dropped {
            d.reason = reason.to_string();
        }
    }

    /// Appends what waits. A failed append is cut back off the file (or marked to be cut before
    /// the next one), so a retry never repeats part of it. Past the size bound the file is
    /// compacted.
    pub(super) fn write(&mut self, path: &Path, limits: &Limits) -> io::Result<()> {
        if !self.has_work() {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            atomic::ensure_dir(dir)?;
        }
        // Private (SPEC 16): a timeline holds everything the agent printed.
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(private::FILE_MODE)
            .open(path)?;
        if let Some(t) = self.truncate_to {
            file.set_len(t)?;
            self.truncate_to = None;
        }
        let start = file.metadata()?.len();
        let marker = self.dropped.as_ref().map(drop_marker);
        let result = (|| {
            if let Some(m) = &marker {
                file.write_all(m)?;
            }
            file.write_all(&self.pending)
        })();
        if let Err(e) = result {
            if file.set_len(start).is_err() {
                self.truncate_to = Some(start);
            }
            return Err(e);
        }
        let marker_len = marker.as_ref().map_or(0, |m| m.len() as u64);
        match &mut self.index {
            Some(index) if index.end == start => {
                if let Some(m) = &marker {
                    index.add_lines(start, m);
                }
                index.add_lines(start + marker_len, &self.pending);
            }
            // The file is not what the index describes: rebuilt on the next page.
            Some(_) => self.index = None,
            None => {}
        }
        let end = start + marker_len + self.pending.len() as u64;
        self.pending.clear();
        if self.pending.capacity() > limits.pending_cap {
            self.pending = Vec::new();
        }
        self.dropped = None;
        self.failing = false;
        if end > limits.max_bytes {
            compact(path, limits.max_bytes)?;
            self.index = None;
        }
        Ok(())
    }

    /// Items with `seq < before` (all when `before` is 0), the newest `limit`, oldest first.
    pub(super) fn page(
        &mut self,
        path: &Path,
        before: u64,
        limit: usize,
    ) -> io::Result<Vec<TimelineItem>> {
        if self.index.is_none() {
            self.index = Some(build_index(path)?);
        }
        let Some(index) = &self.index else {
            return Ok(Vec::new());
        };
        if index.marks.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let before = if before == 0 { u64::MAX } else { before };
        let target = before.saturating_sub(limit as u64);
        let mut block = index
            .marks
            .partition_point(|(s, _)| *s <= target)
            .saturating_sub(1);
        loop {
            let got = read_from(path, index.marks[block].1, before, limit)?;
            if got.len() >= limit || block == 0 {
                return Ok(got);
            }
            // Fewer than asked: numbers were skipped (a marker), look further back.
            let missing = (limit - got.len()) as u64;
            block = block.saturating_sub(1 + (missing / INDEX_STRIDE) as usize);
        }
    }
}

/// The `seq` of an encoded item: items are written with `seq` first, so the prefix is enough;
/// anything else is parsed in full.
pub(super) fn seq_of(line: &[u8]) -> Option<u64> {
    if let Some(rest) = line.strip_prefix(b"{\"seq\":") {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && rest.get(digits) == Some(&b',') {
            return std::str::from_utf8(&rest[..digits]).ok()?.parse().ok();
        }
    }
    #[derive(serde::Deserialize)]
    struct Seq {
        seq: u64,
    }
    serde_json::from_slice::<Seq>(line).ok().map(|s| s.seq)
}

fn encode(item: &TimelineItem) -> Vec<u8> {
    let mut b = serde_json::to_vec(item).unwrap_or_default();
    b.push(b'\n');
    b
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

fn drop_marker(d: &Dropped) -> Vec<u8> {
    let text = format!(
        "{} items of output ({}) could not be written to disk and were dropped: {}",
        d.items,
        mib(d.bytes),
        d.reason
    );
    let mut it = NewItem::new(ItemKind::Error, text).numbered(d.last_seq, 0, Timestamp::now());
    it.is_error = true;
    encode(&it)
}

/// Drops the oldest lines so that about half of `max_bytes` is left, behind one marker item
/// numbered like the last dropped item. Replaced atomically: a crash leaves the old or the new
/// file.
fn compact(path: &Path, max_bytes: u64) -> io::Result<()> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    if len <= max_bytes {
        return Ok(());
    }
    let keep = max_bytes / 2;
    let mut r = BufReader::with_capacity(1 << 16, file);
    let mut off = 0u64;
    let mut last_dropped = 0u64;
    let mut line = Vec::new();
    while off < len - keep {
        line.clear();
        let n = r.read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        if let Some(s) = seq_of(&line) {
            last_dropped = s;
        }
        off += n as u64;
    }
    let text = format!(
        "older output dropped: items up to #{last_dropped} ({}) were removed to keep this \
         timeline under {}",
        mib(off),
        mib(max_bytes)
    );
    let marker = NewItem::new(ItemKind::System, text).numbered(last_dropped, 0, Timestamp::now());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!("{}compact-{name}", atomic::TEMP_PREFIX));
    let result = (|| {
        let mut out = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(private::FILE_MODE)
            .open(&tmp)?;
        out.write_all(&encode(&marker))?;
        io::copy(&mut r, &mut out)?;
        out.sync_all()?;
        drop(out);
        fs::rename(&tmp, path)?;
        match path.parent() {
            Some(dir) => atomic::sync_dir(dir),
            None => Ok(()),
        }
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    tracing::info!(path = %path.display(), dropped = off, "timeline compacted");
    result
}

fn build_index(path: &Path) -> io::Result<Index> {
    let mut index = Index::default();
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(index),
        Err(e) => return Err(e),
    };
    let mut r = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let mut off = 0;
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        index.add_lines(off, &line);
        off += n as u64;
    }
    Ok(index)
}

/// Reads from `off`: the newest `limit` items with `seq < before`.
fn read_from(path: &Path, off: u64, before: u64, limit: usize) -> io::Result<Vec<TimelineItem>> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(off))?;
    let mut r = BufReader::new(file);
    let mut out: VecDeque<TimelineItem> = VecDeque::with_capacity(limit.min(4096));
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if seq_of(&line).is_some_and(|s| s >= before) {
            break;
        }
        match serde_json::from_slice::<TimelineItem>(line.trim_ascii_end()) {
            Ok(it) => {
                let it = it.with_legacy_notice();
                if out.len() == limit {
                    out.pop_front();
                }
                out.push_back(it);
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "skipping a damaged timeline line")
            }
        }
    }
    Ok(out.into())
}

/// The number of the last item on disk (0 for none), so the next one is this + 1. Truncates a
/// torn last line a crash left.
pub(super) fn recover_last_seq(path: &Path) -> io::Result<u64> {
    let mut f = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    let mut count = 0u64;
    // Where the last two complete lines start (the last may be damaged).
    let mut starts = [0u64; 2];
    let mut last_nl_end = 0u64;
    let mut pos = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        for (i, b) in buf[..n].iter().enumerate() {
            if *b == b'\n' {
                count += 1;
                starts = [starts[1], last_nl_end];
                last_nl_end = pos + i as u64 + 1;
            }
        }
        pos += n as u64;
    }
    if last_nl_end < len {
        f.set_len(last_nl_end)?;
        f.sync_all()?;
        tracing::warn!(path = %path.display(), "timeline had a torn last line; truncated");
    }
    if count == 0 {
        return Ok(0);
    }
    for (k, start) in starts.iter().rev().enumerate().take(count.min(2) as usize) {
        f.seek(SeekFrom::Start(*start))?;
        let mut line = Vec::new();
        BufReader::new(&mut f).read_until(b'\n', &mut line)?;
        if let Some(s) = seq_of(&line) {
            return Ok(s + k as u64);
        }
    }
    // Both damaged: count lines, as dense numbering would.
    Ok(count)
}
