//! The durable writer: ordered, coalescing, parallel atomic writes.
//!
//! Each path has at most one write in flight, so writes to one file land in order. A burst of
//! updates to one path collapses into the latest content (latest state wins). Different paths
//! are written by a small pool of threads, so a cascade of a thousand archived records overlaps
//! its fsyncs. Submitting never blocks; [`Writer::wait`] resolves when the content of a ticket
//! (or a newer one) is durable.
//!
//! A path can be held behind gates ([`Writer::hold`]): other writes that must be durable, or
//! timeline appends that must be written, before any write of that path lands, the writes
//! submitted later included. This is how a finish notice keeps its order (SPEC 4): the child's
//! record that stops owing it lands only after the parent's side has it.
//!
//! A write that fails (a full disk) is reported once, when its file starts failing, and retried
//! every second with its latest content until it lands or newer content replaces it; memory holds
//! at most one content per file.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::atomic::{remove_durable, write_atomic};
use super::{FailureSender, StoreFailure};
use crate::model::AgentId;

/// How long a failed write waits before it is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// How often held paths check their gates when nothing wakes them (a mark not made by this
/// writer).
const GATE_POLL: Duration = Duration::from_millis(20);
/// How long a shutdown waits for held paths' gates before it gives up on them (what they
/// hold back is then rewritten from what the next load repairs).
const GATE_SHUTDOWN_WAIT: Duration = if cfg!(test) {
    Duration::from_millis(200)
} else {
    Duration::from_secs(3)
};

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum WriteError {
    #[error("could not write {path}: {message}")]
    Io { path: String, message: String },
    #[error("the writer has stopped")]
    Stopped,
}

/// Proof of a submitted write, to wait for its durability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ticket {
    path: PathBuf,
    seq: u64,
}

/// Set once something written elsewhere (a timeline append) is on disk. A mark made by
/// [`Writer::mark`] wakes that writer when set, so a path held behind it lands at once.
#[derive(Clone, Default)]
pub struct Mark(Arc<MarkState>);

#[derive(Default)]
struct MarkState {
    set: AtomicBool,
    wake: Option<std::sync::Weak<Inner>>,
}

impl std::fmt::Debug for Mark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mark({})", self.is_set())
    }
}

impl Mark {
    pub fn new() -> Mark {
        Mark::default()
    }
    pub fn set(&self) {
        self.0.set.store(true, Ordering::Release);
        if let Some(inner) = self.0.wake.as_ref().and_then(std::sync::Weak::upgrade) {
            // Under the lock: a worker between its check and its wait cannot miss this.
            let mut s = inner.lock();
            if s.release() {
                inner.work.notify_all();
            }
            drop(s);
            inner.done.send_modify(|n| *n += 1);
        }
    }
    pub fn is_set(&self) -> bool {
        self.0.set.load(Ordering::Acquire)
    }
}

/// What a held path waits for before any write of it lands.
#[derive(Clone, Debug)]
pub enum Gate {
    /// This ticket's content (or newer) is durable.
    Write(Ticket),
    /// This mark is set.
    Mark(Mark),
}

impl Gate {
    fn open(&self, durable: &HashMap<PathBuf, u64>) -> bool {
        match self {
            Gate::Write(t) => durable.get(&t.path).is_some_and(|d| *d >= t.seq),
            Gate::Mark(m) => m.is_set(),
        }
    }
}

struct Job {
    seq: u64,
    /// `None` removes the file.
    content: Option<Vec<u8>>,
}

#[derive(Default)]
struct State {
    pending: HashMap<PathBuf, Job>,
    ready: VecDeque<PathBuf>,
    inflight: HashSet<PathBuf>,
    durable: HashMap<PathBuf, u64>,
    failed: HashMap<PathBuf, (u64, String)>,
    /// Failed jobs with no newer content queued, and when to try them again.
    retry: HashMap<PathBuf, (Job, Instant)>,
    /// Paths held behind gates: no write of them starts before every gate is open.
    gates: HashMap<PathBuf, Vec<Gate>>,
    next_seq: u64,
    stop: bool,
    /// When the shutdown began (held paths get a bounded wait).
    stopped_at: Option<Instant>,
    /// Every worker has exited.
    exited: bool,
    writes: u64,
}

impl State {
    fn held(&self, path: &Path) -> bool {
        self.gates.contains_key(path)
    }

    /// Releases the paths whose gates are all open; true when one became ready.
    fn release(&mut self) -> bool {
        if self.gates.is_empty() {
            return false;
        }
        let durable = &self.durable;
        let mut opened = Vec::new();
        self.gates.retain(|p, gates| {
            gates.retain(|g| !g.open(durable));
            if gates.is_empty() {
                opened.push(p.clone());
            }
            !gates.is_empty()
        });
        let mut any = false;
        for p in opened {
            if self.pending.contains_key(&p) && !self.inflight.contains(&p) {
                self.ready.push_back(p);
                any = true;
            }
        }
        any
    }
}

struct Inner {
    state: Mutex<State>,
    work: Condvar,
    done: watch::Sender<u64>,
    failures: Option<FailureSender>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked mid-write leaves consistent state (it only holds the lock for
        // bookkeeping), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub struct Writer {
    inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Writer {
    pub fn new(workers: usize) -> Writer {
        Self::with_failures(workers, None)
    }

    /// The files whose last write failed and the first one's error, while any does (cleared
    /// file by file as their retries land).
    pub fn failing(&self) -> Option<(usize, String)> {
        let s = self.inner.lock();
        let first = s
            .failed
            .iter()
            .next()
            .map(|(p, (_, e))| format!("{}: {e}", p.display()))?;
        Some((s.failed.len(), first))
    }

    /// A writer that reports each file that starts failing to `failures`.
    pub fn with_failures(workers: usize, failures: Option<FailureSender>) -> Writer {
        let (done, _) = watch::channel(0);
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            done,
            failures,
        });
        let threads = (0..workers.max(1))
            .map(|i| {
                let inner = inner.clone();
                std::thread::Builder::new()
                    .name(format!("paseo-writer-{i}"))
                    .spawn(move || worker(&inner))
                    .expect("spawning a writer thread")
            })
            .collect();
        Writer {
            inner,
            threads: Mutex::new(threads),
        }
    }

    /// Queues `content` for `path`, replacing any queued content not yet being written.
    pub fn submit(&self, path: PathBuf, content: Vec<u8>) -> Ticket {
        self.enqueue(path, Some(content))
    }

    /// Queues the removal of `path`.
    pub fn remove(&self, path: PathBuf) -> Ticket {
        self.enqueue(path, None)
    }

    /// A mark that wakes this writer when set.
    pub fn mark(&self) -> Mark {
        Mark(Arc::new(MarkState {
            set: AtomicBool::new(false),
            wake: Some(Arc::downgrade(&self.inner)),
        }))
    }

    /// Holds `path`: no write of it (queued now or later) lands before every gate is open.
    pub fn hold(&self, path: PathBuf, gates: Vec<Gate>) {
        let mut s = self.inner.lock();
        let durable = &s.durable;
        let gates: Vec<Gate> = gates.into_iter().filter(|g| !g.open(durable)).collect();
        if gates.is_empty() {
            return;
        }
        s.gates.entry(path).or_default().extend(gates);
        self.inner.work.notify_one();
    }

    fn enqueue(&self, path: PathBuf, content: Option<Vec<u8>>) -> Ticket {
        let mut s = self.inner.lock();
        if s.release() {
            self.inner.work.notify_all();
        }
        s.next_seq += 1;
        let seq = s.next_seq;
        // Newer content replaces a failed write waiting for its retry.
        s.retry.remove(&path);
        let fresh = s
            .pending
            .insert(path.clone(), Job { seq, content })
            .is_none();
        if fresh && !s.inflight.contains(&path) && !s.held(&path) {
            s.ready.push_back(path.clone());
            self.inner.work.notify_one();
        }
        Ticket { path, seq }
    }

    fn check(&self, t: &Ticket) -> Option<Result<(), WriteError>> {
        let s = self.inner.lock();
        if let Some((seq, msg)) = s.failed.get(&t.path) {
            if *seq >= t.seq {
                return Some(Err(WriteError::Io {
                    path: t.path.display().to_string(),
                    message: msg.clone(),
                }));
            }
        }
        if s.durable.get(&t.path).is_some_and(|d| *d >= t.seq) {
            return Some(Ok(()));
        }
        if s.exited || (s.stop && s.pending.is_empty() && s.inflight.is_empty()) {
            return Some(Err(WriteError::Stopped));
        }
        None
    }

    /// Resolves once the ticket's content, or newer content for the same path, is durable.
    pub async fn wait(&self, t: &Ticket) -> Result<(), WriteError> {
        let mut rx = self.inner.done.subscribe();
        loop {
            if let Some(r) = self.check(t) {
                return r;
            }
            if rx.changed().await.is_err() {
                return Err(WriteError::Stopped);
            }
        }
    }

    /// Waits for several tickets; returns the first error.
    pub async fn wait_all(&self, tickets: &[Ticket]) -> Result<(), WriteError> {
        for t in tickets {
            self.wait(t).await?;
        }
        Ok(())
    }

    /// Blocking variant for threads outside the async runtime.
    pub fn wait_blocking(&self, t: &Ticket) -> Result<(), WriteError> {
        let mut rx = self.inner.done.subscribe();
        loop {
            if let Some(r) = self.check(t) {
                return r;
            }
            // A short timed poll: watch has no blocking receive, and this is only used by
            // tests and shutdown paths.
            if rx.has_changed().is_err() {
                return Err(WriteError::Stopped);
            }
            let _ = rx.borrow_and_update();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Resolves once nothing is queued or being written, or only held paths are left and
    /// their gates stayed shut for a while (what they hold back is safe to leave, see `hold`).
    pub async fn flush(&self) {
        let mut rx = self.inner.done.subscribe();
        let mut held_since: Option<Instant> = None;
        loop {
            {
                let s = self.inner.lock();
                if s.inflight.is_empty() {
                    if s.pending.is_empty() {
                        return;
                    }
                    if s.pending.keys().all(|p| s.held(p)) {
                        let since = *held_since.get_or_insert_with(Instant::now);
                        if since.elapsed() >= GATE_SHUTDOWN_WAIT {
                            return;
                        }
                    } else {
                        held_since = None;
                    }
                }
            }
            // A mark not made by this writer wakes nobody: polled.
            if let Ok(Err(_)) = tokio::time::timeout(GATE_POLL, rx.changed()).await {
                return;
            }
        }
    }

    /// How many files wait for their write (paces work that can wait, like load repairs).
    pub fn backlog(&self) -> usize {
        self.inner.lock().pending.len()
    }

    /// How many writes hit the disk (coalesced ones are not counted).
    pub fn writes(&self) -> u64 {
        self.inner.lock().writes
    }

    /// Writes what is queued, then stops the threads.
    pub fn shutdown(&self) {
        {
            let mut s = self.inner.lock();
            s.stop = true;
            s.stopped_at.get_or_insert_with(Instant::now);
        }
        self.inner.work.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
        self.inner.lock().exited = true;
        self.inner.done.send_modify(|n| *n += 1);
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn worker(inner: &Inner) {
    loop {
        let (path, job) = {
            let mut s = inner.lock();
            loop {
                if let Some(p) = s.ready.pop_front() {
                    if s.held(&p) {
                        continue; // queued again when its gates open
                    }
                    if let Some(job) = s.pending.remove(&p) {
                        s.inflight.insert(p.clone());
                        break (p, job);
                    }
                    continue;
                }
                if s.stop {
                    let waited = s.stopped_at.map_or(Duration::ZERO, |t| t.elapsed());
                    if s.gates.is_empty() || waited >= GATE_SHUTDOWN_WAIT {
                        return;
                    }
                }
                if !s.gates.is_empty() {
                    s = inner
                        .work
                        .wait_timeout(s, GATE_POLL)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|e| e.into_inner().0);
                    if s.release() {
                        inner.work.notify_all();
                    }
                    requeue_due(&mut s);
                } else if s.retry.is_empty() {
                    s = inner.work.wait(s).unwrap_or_else(|e| e.into_inner());
                } else {
                    s = inner
                        .work
                        .wait_timeout(s, RETRY_AFTER / 4)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|e| e.into_inner().0);
                    requeue_due(&mut s);
                }
            }
        };
        #[cfg(test)]
        let stopped = super::fault::allow(&path);
        #[cfg(not(test))]
        let stopped: std::io::Result<()> = Ok(());
        let result = stopped.and_then(|()| match &job.content {
            Some(bytes) => write_atomic(&path, bytes),
            None => remove_durable(&path),
        });
        let mut report = None;
        {
            let mut s = inner.lock();
            s.inflight.remove(&path);
            match result {
                Ok(()) => {
                    s.writes += 1;
                    let d = s.durable.entry(path.clone()).or_insert(0);
                    *d = (*d).max(job.seq);
                    if s.failed.remove(&path).is_some() {
                        tracing::info!(path = %path.display(), "writes work again");
                    }
                }
                Err(e) => {
                    if !s.failed.contains_key(&path) {
                        tracing::error!(path = %path.display(), error = %e, "durable write failed");
                        report = Some(failure(&path, &e));
                    }
                    s.failed.insert(path.clone(), (job.seq, e.to_string()));
                    if !s.pending.contains_key(&path) && job.content.is_some() {
                        s.retry
                            .insert(path.clone(), (job, Instant::now() + RETRY_AFTER));
                        inner.work.notify_one();
                    }
                }
            }
            if s.pending.contains_key(&path) && !s.held(&path) {
                s.ready.push_back(path.clone());
                inner.work.notify_one();
            }
            if s.release() {
                inner.work.notify_all();
            }
        }
        inner.done.send_modify(|n| *n += 1);
        if let (Some(f), Some(tx)) = (report, &inner.failures) {
            let _ = tx.send(f);
        }
    }
}

/// Queues the failed jobs whose retry is due (unless newer content is already on its way).
fn requeue_due(s: &mut State) {
    let now = Instant::now();
    let due: Vec<PathBuf> = s
        .retry
        .iter()
        .filter(|(p, (_, at))| *at <= now && !s.inflight.contains(*p))
        .map(|(p, _)| p.clone())
        .collect();
    for p in due {
        if let Some((job, _)) = s.retry.remove(&p) {
            if !s.pending.contains_key(&p) {
                s.pending.insert(p.clone(), job);
                s.ready.push_back(p);
            }
        }
    }
}

/// What a failed write reports: an agent record's failure names the agent.
fn failure(path: &Path, e: &std::io::Error) -> StoreFailure {
    let in_agents = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|n| n == "agents");
    let agent = path
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.parse::<AgentId>().ok())
        .filter(|_| in_agents);
    let message = match agent {
        Some(_) => format!("cannot write the agent's record {}: {e}", path.display()),
        None => format!("cannot write {}: {e}", path.display()),
    };
    StoreFailure { agent, message }
}

/// The path a ticket is for.
impl Ticket {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
