//! Reading the data root (records at rest, registries, inboxes) before the runtime starts: on
//! the runtime's blocking pool as part of its start, or ahead of it on a thread of its own
//! ([`Preload`]), which the desktop app starts first thing so the reading uses the core its
//! window's start leaves idle (docs/benchmarks.md, "Where a window's launch goes").

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::oneshot;

use super::RuntimeError;
use crate::model::AgentId;
use crate::store::records_cache::{self, NextCache};
use crate::store::{self, Layout, Quarantined};
use rustc_hash::FxHashSet;

/// What [`read_root`] answers: the records, the registries, the inboxes with what could not be
/// read of them, and the inboxes set aside with the problems setting them aside met.
pub(super) type RootLoad = (
    store::LoadedAgents,
    store::LoadedRegistry,
    (
        (store::Inboxes, Vec<Quarantined>),
        (Vec<Quarantined>, Vec<String>),
    ),
);

/// Everything of the data root but the timelines: the records (at rest), the registries and
/// the inboxes, with the inboxes of agents that are not there set aside.
fn read_root(l: &Layout) -> Result<RootLoad, store::StoreError> {
    store::atomic::ensure_dir(&l.home).map_err(|e| store::StoreError::Read {
        path: l.home.display().to_string(),
        source: e,
    })?;
    let agents = store::load_agents_at_rest(l)?;
    let registry = store::load_registry(l);
    let (inboxes, q) = store::load_inboxes(l);
    // Which inboxes' agents were loaded: only those few ids are looked for.
    let owners: FxHashSet<AgentId> = inboxes.iter().map(|(id, _)| *id).collect();
    let ids = agents.records.iter().map(|r| r.record.id);
    let loaded: std::collections::HashSet<AgentId> = ids.filter(|id| owners.contains(id)).collect();
    let orphans = store::set_aside_orphan_inboxes(l, inboxes, &loaded);
    Ok((agents, registry, ((orphans.0, q), (orphans.1, orphans.2))))
}

/// [`read_root`] on the runtime's blocking pool.
pub(super) async fn load_root(l: Layout) -> Result<RootLoad, RuntimeError> {
    let loaded = tokio::task::spawn_blocking(move || read_root(&l))
        .await
        .map_err(|_| RuntimeError::Stopped)??;
    Ok(loaded)
}

/// A data root being read ahead of the runtime's start, handed to it through
/// [`super::RuntimeOptions::preload`]. Start one only while holding the data root's lock: the
/// reading removes the temp files a crash left and moves unreadable files aside, as the
/// runtime's own start does. Dropped unused, it waits for the reading to end, so nothing of it
/// outlives the lock its owner releases next.
pub struct Preload {
    home: PathBuf,
    answer: Option<oneshot::Receiver<Result<RootLoad, store::StoreError>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Preload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Preload").field("home", &self.home).finish()
    }
}

impl Preload {
    /// Starts reading the data root `home` on a thread of its own.
    pub fn start(home: &Path) -> std::io::Result<Preload> {
        Self::start_with(home, false)
    }

    /// [`Preload::start`] for a window that starts meanwhile: the reading gives way to the
    /// window's start (its threads and reading threads at nice [`BESIDE_WINDOW`]) and takes
    /// what CPU that leaves. The window asks for its first screen when its page has started,
    /// and a reading that took the cores from that start delayed it by as long as it took
    /// (docs/benchmarks.md, "The records cache's second format").
    pub fn start_beside_window(home: &Path) -> std::io::Result<Preload> {
        Self::start_with(home, true)
    }

    fn start_with(home: &Path, beside_window: bool) -> std::io::Result<Preload> {
        let (tx, rx) = oneshot::channel();
        let layout = Layout::new(home);
        let thread = std::thread::Builder::new()
            .name("paseo-preload".into())
            .spawn(move || {
                if beside_window {
                    // The loading threads it starts inherit it.
                    lower_priority(BESIDE_WINDOW);
                }
                // The runtime may have stopped waiting (a start that failed): nothing to tell.
                let _ = tx.send(read_root(&layout));
            })?;
        Ok(Preload {
            home: home.to_path_buf(),
            answer: Some(rx),
            thread: Some(thread),
        })
    }

    /// The data root this reads.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Whether the reading has ended.
    pub fn is_read(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// What was read, once the reading ends.
    pub(super) async fn take(mut self) -> Result<RootLoad, RuntimeError> {
        let answer = self.answer.take().ok_or(RuntimeError::Stopped)?;
        // The thread ended without answering only if the reading panicked.
        let loaded = answer.await.map_err(|_| {
            RuntimeError::Store(store::StoreError::LoadThread(
                "the data root's reading stopped".into(),
            ))
        })??;
        Ok(loaded)
    }
}

impl Drop for Preload {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            // Taken: the answer was sent, the thread is at its end. Not taken: the reading
            // ends before the owner goes on to release the lock.
            let _ = thread.join();
        }
    }
}

/// Does what `next` says on a thread of its own, `after` from now (off the start's path), at
/// idle priority: the cache is only worth the cores nothing else wants.
pub(super) fn tend_cache_later(layout: Layout, next: NextCache, after: Duration) {
    if next == NextCache::Keep {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("paseo-records-cache".into())
        .spawn(move || {
            std::thread::sleep(after);
            idle_priority();
            if next == NextCache::Remove {
                if let Err(e) = store::atomic::remove_durable(&layout.records_cache_path()) {
                    tracing::warn!("cannot remove the records cache: {e}");
                }
                return;
            }
            match records_cache::rebuild(&layout) {
                Ok(r) => tracing::info!(
                    cached = r.cached,
                    unsettled = r.unsettled,
                    bytes = r.bytes,
                    "records cache written"
                ),
                Err(e) => tracing::warn!("cannot write the records cache: {e}"),
            }
            // The index and buffers of the build, freed in the middle of the heap.
            super::release_freed_memory();
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start writing the records cache: {e}");
    }
}

/// How much nicer a reading beside a window's start is than the window: a third of a normal
/// thread's share of a busy core (the kernel's weights, 335 against 1,024), all of an idle one.
const BESIDE_WINDOW: libc::c_int = 5;

/// Makes the calling thread `by` nicer than it is (Linux: a thread's own nice value, which the
/// threads it starts inherit; at most 19).
fn lower_priority(by: libc::c_int) {
    // SAFETY: the calling thread's id, its nice value read and set; a failure changes nothing.
    let rc = unsafe {
        let tid = libc::gettid() as libc::id_t;
        *libc::__errno_location() = 0;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        if now == -1 && *libc::__errno_location() != 0 {
            -1
        } else {
            libc::setpriority(libc::PRIO_PROCESS, tid, (now + by).min(19))
        }
    };
    if rc != 0 {
        tracing::debug!(
            "the records are read at normal priority: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Puts the calling thread in the idle scheduling class (Linux: a thread's own policy).
fn idle_priority() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sets the calling thread's policy from a valid parameter; a failure changes nothing.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if rc != 0 {
        tracing::debug!(
            "the records cache is written at normal priority: {}",
            std::io::Error::last_os_error()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nice() -> libc::c_int {
        // SAFETY: reads the calling thread's nice value.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    #[test]
    fn a_reading_beside_a_window_is_nicer_and_so_are_the_threads_it_starts() {
        let before = nice();
        let (mine, its) = std::thread::spawn(move || {
            lower_priority(BESIDE_WINDOW);
            (nice(), std::thread::spawn(nice).join().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(mine, (before + BESIDE_WINDOW).min(19));
        assert_eq!(its, mine, "a reading thread inherits it");
        assert_eq!(nice(), before, "the other threads keep theirs");
    }

    #[test]
    fn tending_the_cache_writes_or_removes_it_off_the_caller() {
        let d = tempfile::tempdir().unwrap();
        let layout = Layout::new(d.path());
        let id = AgentId::new();
        let r = crate::model::AgentRecord::new(
            id,
            "shell".into(),
            "/src".into(),
            crate::model::Status::Idle,
            crate::model::Timestamp::from_millis(0),
        );
        let file = layout.record_path("/src", id);
        store::atomic::write_atomic(&file, &store::encode_record(&r).unwrap()).unwrap();
        let path = layout.records_cache_path();
        let wait = |exists: bool| {
            for _ in 0..500 {
                if path.exists() == exists {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            panic!(
                "the cache still {}",
                if exists { "missing" } else { "there" }
            );
        };
        tend_cache_later(layout.clone(), NextCache::Rebuild, Duration::from_millis(1));
        wait(true);
        tend_cache_later(layout.clone(), NextCache::Remove, Duration::from_millis(1));
        wait(false);
        tend_cache_later(layout.clone(), NextCache::Keep, Duration::ZERO);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!path.exists());
    }
}
