//! "The backend": what both modes (window and `--headless`) start before anything else and stop
//! last: the data-root lock, the log writer, and the core runtime (engine, store, providers) with
//! the MCP server, so both modes get them the same way.

use crate::cli::Mode;
use crate::data_root;
use crate::lock::{DataRootLock, LockError};
use crate::logging::{self, LogGuard, LoggingError};
use chrono::{DateTime, Utc};
use paseo_core::config::Config;
use paseo_core::mcp::{McpError, McpServer, RunningMcp};
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Runtime, RuntimeError, RuntimeHandle, RuntimeOptions};
use paseo_core::store::Layout;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The target this module's log lines always had (see the crate's documentation).
const LOG_TARGET: &str = "paseo_desktop::backend";

#[derive(Debug, Error)]
pub enum BackendError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Logging(#[from] LoggingError),
    #[error("cannot start the MCP server: {0}")]
    Mcp(#[from] McpError),
    #[error("cannot start the runtime: {0}")]
    Runtime(#[from] RuntimeError),
}

/// The core: the runtime and the MCP server agents talk to.
struct Core {
    runtime: Runtime,
    mcp: RunningMcp,
}

/// A started backend. Dropping it without [`Backend::shutdown`] still releases the lock, but
/// skips the orderly stop.
pub struct Backend {
    data_root: PathBuf,
    mode: Mode,
    started_at: DateTime<Utc>,
    core: Option<Core>,
    handle: RuntimeHandle,
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
    let layout = Layout::new(data_root);
    // A bad config.json must not lock the user out of their fleet: the defaults run, a copy of
    // the file is set aside in quarantine/, and the error (naming the file and the field) is
    // shown in the UI and the log.
    let (config, notice) = Config::load_or_default(data_root);
    let notices: Vec<String> = notice.into_iter().collect();
    // The MCP listener first: agents resumed by the runtime need its URL and their tokens.
    let mcp = McpServer::bind(&layout, config.mcp.port)?;
    let mut options = RuntimeOptions::new(data_root, ProviderRegistry::from_config(&config));
    options.notices = notices;
    options.timeline_max_bytes = config.storage.timeline_max_bytes;
    options.trash_days = config.storage.trash_days;
    options.limits = config.limits;
    options.start_timeout = config.start_timeout;
    options.sandbox = config.sandbox.clone();
    let runtime = Runtime::start(options, Some(mcp.access())).await?;
    let handle = runtime.handle();
    let mcp = match mcp.serve(handle.clone()).await {
        Ok(mcp) => mcp,
        Err(error) => {
            runtime.shutdown().await;
            return Err(error.into());
        }
    };
    // Only now may queued finish notices wake their parents: the server they talk to is up.
    handle.deliver_pending().await?;
    let backend = Backend {
        data_root: data_root.to_path_buf(),
        mode,
        started_at: Utc::now(),
        core: Some(Core { runtime, mcp }),
        handle,
        lock: Some(lock),
        log: Some(log),
    };
    tracing::info!(
        target: LOG_TARGET,
        data_root = %data_root.display(),
        mode = mode.as_str(),
        pid = std::process::id(),
        version = env!("CARGO_PKG_VERSION"),
        "backend started"
    );
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

    /// The runtime, for commands, the event forwarder and the tray.
    pub fn handle(&self) -> RuntimeHandle {
        self.handle.clone()
    }

    /// Stops in order: (runtime: stop agents, persist every record), then release the lock, then
    /// flush the logs. Async for the same reason as [`start`].
    pub async fn shutdown(mut self) {
        tracing::info!(target: LOG_TARGET, data_root = %self.data_root.display(), "backend stopping");
        // Before the lock is released: no new tool calls, then every agent stopped and every
        // record persisted.
        if let Some(core) = self.core.take() {
            core.mcp.shutdown().await;
            core.runtime.shutdown().await;
        }
        if let Some(lock) = self.lock.take() {
            lock.release();
        }
        tracing::info!(target: LOG_TARGET, "data root released; bye");
        self.log.take();
    }
}
