//! "The backend": what both modes (window and `--headless`) start before anything else and stop
//! last. Today it owns the data-root lock and the log writer; the core runtime (engine, store,
//! providers, MCP server) starts and flushes here too, so both modes get it the same way.

use crate::cli::Mode;
use crate::data_root;
use crate::lock::{DataRootLock, LockError};
use crate::logging::{self, LogGuard, LoggingError};
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum BackendError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Logging(#[from] LoggingError),
}

/// A started backend. Dropping it without [`Backend::shutdown`] still releases the lock, but
/// skips the orderly stop.
pub struct Backend {
    data_root: PathBuf,
    mode: Mode,
    started_at: DateTime<Utc>,
    // Field order matters on drop: the lock goes before the log writer is flushed.
    lock: Option<DataRootLock>,
    log: Option<LogGuard>,
}

/// Starts the backend on `data_root` (an existing, canonical folder: see [`data_root::resolve`]).
/// Takes the lock first, so a refused process writes nothing into the root, not even a log line.
/// Async because the core runtime's start (loading records, binding the MCP server) will be;
/// window mode runs it with `tauri::async_runtime::block_on`, headless mode awaits it.
pub async fn start(data_root: &Path, mode: Mode) -> Result<Backend, BackendError> {
    let lock = DataRootLock::acquire(data_root)?;
    let log = logging::init(&data_root::log_dir(data_root))?;
    let backend = Backend {
        data_root: data_root.to_path_buf(),
        mode,
        started_at: Utc::now(),
        lock: Some(lock),
        log: Some(log),
    };
    tracing::info!(
        data_root = %data_root.display(),
        mode = mode.as_str(),
        pid = std::process::id(),
        version = env!("CARGO_PKG_VERSION"),
        "backend started"
    );
    // Runtime start goes here (paseo-core): load records, start the MCP server, and hand the
    // runtime handle to `Backend` so commands and the tray can reach it.
    Ok(backend)
}

impl Backend {
    pub fn data_root(&self) -> &Path {
        &self.data_root
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn started_at(&self) -> DateTime<Utc> {
        self.started_at
    }

    /// Stops in order: (runtime: stop agents, persist every record), then release the lock, then
    /// flush the logs. Async for the same reason as [`start`].
    pub async fn shutdown(mut self) {
        tracing::info!(data_root = %self.data_root.display(), "backend stopping");
        // Runtime shutdown goes here, before the lock is released: stop agents, flush records.
        if let Some(lock) = self.lock.take() {
            lock.release();
        }
        tracing::info!("data root released; bye");
        self.log.take();
    }
}
