//! Timelines on disk: one JSONL file per agent (`timelines/{id}.jsonl`), appended by a writer
//! thread in batches and paged back on demand.
//!
//! Items are numbered densely from 1, so line `k` holds item `k + 1`. A sparse index (the byte
//! offset of every 128th line, built on the first page request and kept up to date by appends)
//! makes paging a seek plus a short read, however long the history. Timelines are history, not
//! state: appends are written within ~50 ms but not fsynced one by one.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::paths::Layout;
use crate::model::{AgentId, TimelineItem};

const INDEX_STRIDE: u64 = 128;
const FLUSH_EVERY: Duration = Duration::from_millis(50);
const FLUSH_BYTES: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    #[error("cannot read the timeline of {agent}: {message}")]
    Read { agent: AgentId, message: String },
    #[error("the timeline writer has stopped")]
    Stopped,
}

enum Cmd {
    Append(AgentId, Vec<u8>, u64),
    Page {
        agent: AgentId,
        before: u64,
        limit: usize,
        reply: oneshot::Sender<Result<Vec<TimelineItem>, TimelineError>>,
    },
    Flush(oneshot::Sender<()>),
    Stop,
}

/// Where a page read's answer arrives.
pub type PageReply = oneshot::Receiver<Result<Vec<TimelineItem>, TimelineError>>;

/// The handle the runtime holds.
pub struct Timelines {
    layout: Layout,
    tx: mpsc::Sender<Cmd>,
    thread: Option<JoinHandle<()>>,
}

impl Timelines {
    pub fn start(layout: Layout) -> Timelines {
        let (tx, rx) = mpsc::channel();
        let l = layout.clone();
        let thread = std::thread::Builder::new()
            .name("paseo-timelines".into())
            .spawn(move || run(l, rx))
            .ok();
        Timelines { layout, tx, thread }
    }

    /// The number of items already on disk for `agent` (so the next one is this + 1). Repairs a
    /// torn last line a crash left. Call before the first append of the agent in this process.
    pub fn recover(&self, agent: AgentId) -> u64 {
        recover_count(&self.layout.timeline_path(agent)).unwrap_or_else(|e| {
            tracing::warn!(%agent, error = %e, "timeline unreadable; starting after it");
            0
        })
    }

    /// Queues numbered items for appending (in seq order, following the ones already queued).
    pub fn append(&self, agent: AgentId, items: &[TimelineItem]) {
        if items.is_empty() {
            return;
        }
        let mut buf = Vec::with_capacity(items.len() * 128);
        for it in items {
            if serde_json::to_writer(&mut buf, it).is_ok() {
                buf.push(b'\n');
            }
        }
        let _ = self.tx.send(Cmd::Append(agent, buf, items.len() as u64));
    }

    /// Items with `seq < before` (all when `before` is 0), the newest `limit` of them, oldest
    /// first. Ordered after every append queued before it.
    pub async fn page(
        &self,
        agent: AgentId,
        before: u64,
        limit: usize,
    ) -> Result<Vec<TimelineItem>, TimelineError> {
        self.page_rx(agent, before, limit)?
            .await
            .map_err(|_| TimelineError::Stopped)?
    }

    /// The same without waiting: the answer arrives on the returned channel.
    pub fn page_rx(
        &self,
        agent: AgentId,
        before: u64,
        limit: usize,
    ) -> Result<PageReply, TimelineError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Page {
                agent,
                before,
                limit,
                reply,
            })
            .map_err(|_| TimelineError::Stopped)?;
        Ok(rx)
    }

    pub async fn flush(&self) {
        let (reply, rx) = oneshot::channel();
        if self.tx.send(Cmd::Flush(reply)).is_ok() {
            let _ = rx.await;
        }
    }

    pub fn stop(&mut self) {
        let _ = self.tx.send(Cmd::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Timelines {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Counts complete lines; truncates a torn final line.
fn recover_count(path: &Path) -> io::Result<u64> {
    let mut f = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    let mut count = 0u64;
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
    Ok(count)
}

#[derive(Default)]
struct AgentFile {
    pending: Vec<u8>,
    pending_lines: u64,
    /// Built on the first page request: (lines on disk, offset of every INDEX_STRIDE-th line).
    index: Option<(u64, Vec<u64>, u64)>,
}

fn run(layout: Layout, rx: mpsc::Receiver<Cmd>) {
    let mut files: HashMap<AgentId, AgentFile> = HashMap::new();
    let mut last_flush = Instant::now();
    let mut pending_bytes = 0usize;
    loop {
        let cmd = rx.recv_timeout(FLUSH_EVERY);
        match cmd {
            Ok(Cmd::Append(agent, bytes, lines)) => {
                pending_bytes += bytes.len();
                let f = files.entry(agent).or_default();
                f.pending.extend_from_slice(&bytes);
                f.pending_lines += lines;
            }
            Ok(Cmd::Page {
                agent,
                before,
                limit,
                reply,
            }) => {
                let f = files.entry(agent).or_default();
                let path = layout.timeline_path(agent);
                if let Err(e) = write_pending(&path, f) {
                    tracing::error!(%agent, error = %e, "timeline append failed");
                }
                let r = page(&path, f, before, limit).map_err(|e| TimelineError::Read {
                    agent,
                    message: e.to_string(),
                });
                let _ = reply.send(r);
            }
            Ok(Cmd::Flush(reply)) => {
                flush_all(&layout, &mut files);
                pending_bytes = 0;
                last_flush = Instant::now();
                let _ = reply.send(());
            }
            Ok(Cmd::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                flush_all(&layout, &mut files);
                return;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if pending_bytes >= FLUSH_BYTES || last_flush.elapsed() >= FLUSH_EVERY {
            flush_all(&layout, &mut files);
            pending_bytes = 0;
            last_flush = Instant::now();
        }
    }
}

fn flush_all(layout: &Layout, files: &mut HashMap<AgentId, AgentFile>) {
    for (agent, f) in files.iter_mut() {
        if let Err(e) = write_pending(&layout.timeline_path(*agent), f) {
            tracing::error!(%agent, error = %e, "timeline append failed");
        }
    }
    // Forget agents with nothing pending and no index: 10,000 idle agents cost nothing.
    files.retain(|_, f| !f.pending.is_empty() || f.index.is_some());
}

fn write_pending(path: &PathBuf, f: &mut AgentFile) -> io::Result<()> {
    if f.pending.is_empty() {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    let start = file.metadata()?.len();
    file.write_all(&f.pending)?;
    if let Some((lines, idx, end)) = &mut f.index {
        // Keep the sparse index current with the lines just written.
        let mut off = start;
        for line in f.pending.split_inclusive(|b| *b == b'\n') {
            if lines.is_multiple_of(INDEX_STRIDE) {
                idx.push(off);
            }
            *lines += 1;
            off += line.len() as u64;
        }
        *end = off;
    }
    f.pending.clear();
    f.pending_lines = 0;
    Ok(())
}

fn build_index(path: &Path) -> io::Result<(u64, Vec<u64>, u64)> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((0, Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let mut r = BufReader::with_capacity(1 << 16, file);
    let mut lines = 0u64;
    let mut idx = Vec::new();
    let mut off = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        if lines.is_multiple_of(INDEX_STRIDE) {
            idx.push(off);
        }
        lines += 1;
        off += n as u64;
    }
    Ok((lines, idx, off))
}

fn page(
    path: &Path,
    f: &mut AgentFile,
    before: u64,
    limit: usize,
) -> io::Result<Vec<TimelineItem>> {
    if f.index.is_none() {
        f.index = Some(build_index(path)?);
    }
    let empty = Vec::new();
    let (lines, idx) = match f.index.as_ref() {
        Some((lines, idx, _)) => (*lines, idx),
        None => (0, &empty),
    };
    let end = if before == 0 {
        lines
    } else {
        (before - 1).min(lines)
    }; // exclusive, in line numbers
    let start = end.saturating_sub(limit as u64);
    if start >= end {
        return Ok(Vec::new());
    }
    let block = (start / INDEX_STRIDE) as usize;
    let Some(off) = idx.get(block).copied() else {
        return Ok(Vec::new());
    };
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(off))?;
    let mut r = BufReader::new(file);
    let mut lineno = block as u64 * INDEX_STRIDE;
    let mut out = Vec::with_capacity((end - start) as usize);
    let mut line = String::new();
    while lineno < end {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            break;
        }
        if lineno >= start {
            match serde_json::from_str::<TimelineItem>(line.trim_end()) {
                Ok(it) => out.push(it),
                Err(e) => {
                    tracing::warn!(path = %path.display(), line = lineno + 1, error = %e, "skipping a damaged timeline line")
                }
            }
        }
        lineno += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
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
        assert_eq!(recover_count(&p).unwrap(), 2);
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}\n{\"a\":2}\n");
    }
}
