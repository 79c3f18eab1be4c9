//! Timelines on disk: one JSONL file per agent (`timelines/{id}.jsonl`), appended by a writer
//! thread in batches and paged back on demand (see [`file`] for one file's rules).
//!
//! A sparse index (the seq and byte offset of every 128th line, built on the first page request
//! and kept up to date by appends) makes paging a seek plus a short read, however long the
//! history. Timelines are history, not state: appends are written within ~50 ms but not fsynced
//! one by one. Each file is bounded (`storage.timelineMaxBytes` in config.json, 64 MiB by
//! default): past it the oldest items are dropped behind a marker item. While writes fail (a
//! full disk) what waits in memory is bounded too, and the failure is reported once per agent
//! until writes work again.

mod file;
mod received;
pub mod search;

pub use received::received_notice_ids;

use std::collections::HashMap;
use std::fs;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use self::file::{AgentFile, Limits};
use super::paths::Layout;
use super::writer::Mark;
use super::{FailureSender, StoreFailure};
use crate::model::{AgentId, TimelineItem};

const FLUSH_EVERY: Duration = Duration::from_millis(50);
const FLUSH_BYTES: usize = 1 << 20;
/// The default bound of one agent's timeline on disk.
pub const DEFAULT_MAX_BYTES: u64 = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    #[error("cannot read the timeline of {agent}: {message}")]
    Read { agent: AgentId, message: String },
    #[error("the timeline writer has stopped")]
    Stopped,
    #[error("the search was canceled")]
    Canceled,
}

/// How the timelines run.
#[derive(Clone, Debug)]
pub struct TimelineOptions {
    /// The bound of one agent's file.
    pub max_bytes: u64,
    /// Where write failures are reported.
    pub failures: Option<FailureSender>,
}

impl Default for TimelineOptions {
    fn default() -> Self {
        TimelineOptions {
            max_bytes: DEFAULT_MAX_BYTES,
            failures: None,
        }
    }
}

enum Cmd {
    /// Encoded lines, the seq of the last one, and a mark to set once they are on disk.
    Append(AgentId, Vec<u8>, u64, Option<Mark>),
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
    /// How many agents' timeline files fail to be written now (a full disk).
    failing: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Timelines {
    pub fn start(layout: Layout) -> Timelines {
        Self::start_with(layout, TimelineOptions::default())
    }

    pub fn start_with(layout: Layout, opts: TimelineOptions) -> Timelines {
        remove_temp_leftovers(&layout);
        let (tx, rx) = mpsc::channel();
        let l = layout.clone();
        let failing = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let f = failing.clone();
        let thread = std::thread::Builder::new()
            .name("paseo-timelines".into())
            .spawn(move || run(l, rx, opts, f))
            .ok();
        Timelines {
            layout,
            tx,
            thread,
            failing,
        }
    }

    /// How many agents' timelines cannot be written right now.
    pub fn failing(&self) -> usize {
        self.failing.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The number of the last item on disk for `agent` (so the next one is this + 1). Repairs a
    /// torn last line a crash left. Call before the first append of the agent in this process.
    pub fn recover(&self, agent: AgentId) -> u64 {
        file::recover_last_seq(&self.layout.timeline_path(agent)).unwrap_or_else(|e| {
            tracing::warn!(%agent, error = %e, "timeline unreadable; starting after it");
            0
        })
    }

    /// Queues numbered items for appending (in seq order, following the ones already queued).
    pub fn append(&self, agent: AgentId, items: &[TimelineItem]) {
        self.append_marked(agent, items, None);
    }

    /// The same, and once these items (and every earlier one of `agent`) are written and
    /// synced, `mark` is set: a write held behind it may land (a finish notice's order, SPEC 4).
    /// Written at once, not with the next batch.
    pub fn append_marked(&self, agent: AgentId, items: &[TimelineItem], mark: Option<Mark>) {
        if items.is_empty() && mark.is_none() {
            return;
        }
        let mut buf = Vec::with_capacity(items.len() * 128);
        for it in items {
            if serde_json::to_writer(&mut buf, it).is_ok() {
                buf.push(b'\n');
            }
        }
        let last = items.iter().map(|i| i.seq).max().unwrap_or(0);
        let _ = self.tx.send(Cmd::Append(agent, buf, last, mark));
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

    /// Asks for everything queued so far to be written; the answer arrives once it is.
    pub fn flush_rx(&self) -> oneshot::Receiver<()> {
        let (reply, rx) = oneshot::channel();
        let _ = self.tx.send(Cmd::Flush(reply));
        rx
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

/// Temp files of a compaction a crash interrupted (the timeline itself is intact).
fn remove_temp_leftovers(layout: &Layout) {
    let Ok(rd) = fs::read_dir(layout.timelines_dir()) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with(super::atomic::TEMP_PREFIX)
        {
            let _ = fs::remove_file(e.path());
        }
    }
}

struct Thread {
    failing: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    layout: Layout,
    limits: Limits,
    failures: Option<FailureSender>,
    files: HashMap<AgentId, AgentFile>,
    /// Marks to set once an agent's waiting items are written.
    marks: HashMap<AgentId, Vec<Mark>>,
}

impl Thread {
    fn report(&self, agent: AgentId, message: String) {
        tracing::error!(%agent, "{message}");
        if let Some(tx) = &self.failures {
            let _ = tx.send(StoreFailure {
                agent: Some(agent),
                message,
            });
        }
    }

    fn append(&mut self, agent: AgentId, bytes: &[u8], last_seq: u64) {
        let f = self.files.entry(agent).or_default();
        let o = f.push(bytes, last_seq, &self.limits);
        self.report_drop(agent, o);
    }

    fn report_drop(&mut self, agent: AgentId, o: Option<file::Overflow>) {
        if let Some(o) = o {
            // Items a mark covers may be among the dropped: its marks are never set, so what
            // they hold back (a record that stops owing a notice) never lands on their word, and
            // the next load derives that notice again (SPEC 4).
            self.marks.remove(&agent);
            let m = format!(
                "the timeline could not be written; {} items of output ({} bytes) were dropped \
                 to keep memory bounded",
                o.items, o.bytes
            );
            self.report(agent, m);
        }
    }

    /// Writes what waits for one agent; a failure is reported when it starts, not on every retry.
    fn write(&mut self, agent: AgentId) {
        let path = self.layout.timeline_path(agent);
        let Some(f) = self.files.get_mut(&agent) else {
            return;
        };
        let was_failing = f.failing;
        #[cfg(test)]
        let stopped = match f.has_work() {
            true => super::fault::allow(&path),
            false => Ok(()),
        };
        #[cfg(not(test))]
        let stopped: std::io::Result<()> = Ok(());
        let result = stopped.and_then(|()| f.write(&path, &self.limits));
        if result.is_ok() {
            if let Some(marks) = self.marks.remove(&agent) {
                if let Err(marks) = sync_then_set(agent, &path, marks) {
                    self.marks.insert(agent, marks);
                }
            }
        }
        match result {
            Ok(()) if was_failing => {
                tracing::info!(%agent, "timeline writes work again");
            }
            Ok(()) => {}
            Err(e) => {
                f.set_failure(&e.to_string());
                let o = f.drop_if_over(&self.limits);
                if !was_failing {
                    self.report(agent, format!("cannot write the timeline: {e}"));
                }
                self.report_drop(agent, o);
            }
        }
    }

    fn flush_all(&mut self) {
        let ids: Vec<AgentId> = self
            .files
            .iter()
            .filter(|(_, f)| f.has_work())
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.write(id);
        }
        // Forget agents with nothing waiting and no index: 10,000 idle agents cost nothing.
        self.files.retain(|_, f| f.keep());
        let n = self.files.values().filter(|f| f.failing).count();
        self.failing.store(n, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Timelines are not synced item by item, but one that holds a write back (a received notice)
/// is, so the order holds across a power cut too. The marks come back when the sync failed (the
/// next successful write of this agent sets them).
fn sync_then_set(
    agent: AgentId,
    path: &std::path::Path,
    marks: Vec<Mark>,
) -> Result<(), Vec<Mark>> {
    match fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|f| f.sync_data())
    {
        Ok(()) => {
            marks.iter().for_each(Mark::set);
            Ok(())
        }
        Err(e) => {
            tracing::warn!(%agent, error = %e, "cannot sync a timeline");
            Err(marks)
        }
    }
}

fn run(
    layout: Layout,
    rx: mpsc::Receiver<Cmd>,
    opts: TimelineOptions,
    failing: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    let mut t = Thread {
        failing,
        layout,
        limits: Limits::new(opts.max_bytes),
        failures: opts.failures,
        files: HashMap::new(),
        marks: HashMap::new(),
    };
    let mut last_flush = Instant::now();
    let mut pending_bytes = 0usize;
    loop {
        match rx.recv_timeout(FLUSH_EVERY) {
            Ok(Cmd::Append(agent, bytes, last_seq, mark)) => {
                pending_bytes += bytes.len();
                t.append(agent, &bytes, last_seq);
                if let Some(m) = mark {
                    t.marks.entry(agent).or_default().push(m);
                    t.write(agent);
                }
            }
            Ok(Cmd::Page {
                agent,
                before,
                limit,
                reply,
            }) => {
                t.files.entry(agent).or_default();
                t.write(agent);
                let path = t.layout.timeline_path(agent);
                let f = t.files.entry(agent).or_default();
                let r = f
                    .page(&path, before, limit)
                    .map_err(|e| TimelineError::Read {
                        agent,
                        message: e.to_string(),
                    });
                let _ = reply.send(r);
            }
            Ok(Cmd::Flush(reply)) => {
                t.flush_all();
                pending_bytes = 0;
                last_flush = Instant::now();
                let _ = reply.send(());
            }
            Ok(Cmd::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                t.flush_all();
                return;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if pending_bytes >= FLUSH_BYTES || last_flush.elapsed() >= FLUSH_EVERY {
            t.flush_all();
            pending_bytes = 0;
            last_flush = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests;
