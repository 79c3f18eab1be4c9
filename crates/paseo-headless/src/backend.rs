//! "The backend": what both modes (window and `--headless`) start before anything else and stop
//! last: the data-root lock, the log writer, and the core runtime (engine, store, providers) with
//! the MCP server, so both modes get them the same way.

use crate::cli::Mode;
use crate::data_root;
use crate::lock::{DataRootLock, LockError};
use crate::logging::{self, LogGuard, LoggingError};
use crate::socket::SocketServer;
use chrono::{DateTime, Utc};
use paseo_core::config::Config;
use paseo_core::hosts::HostManager;
use paseo_core::mcp::{McpError, McpServer, RunningMcp};
use paseo_core::providers::ProviderRegistry;
use paseo_core::runtime::{Preload, RuntimeError, RuntimeOptions};
use paseo_core::schedules::Scheduler;
use paseo_core::server::{Runtime, Server};
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
    /// The Unix socket `paseo-headless attach` joins (SPEC 17).
    socket: Option<SocketServer>,
    /// config.json's schedules at work (SPEC 20).
    scheduler: Scheduler,
}

/// A started backend. Dropping it without [`Backend::shutdown`] still releases the lock, but
/// skips the orderly stop.
pub struct Backend {
    data_root: PathBuf,
    mode: Mode,
    started_at: DateTime<Utc>,
    core: Option<Core>,
    handle: Server,
    // Field order matters on drop: the lock goes before the log writer is flushed.
    lock: Option<DataRootLock>,
    log: Option<LogGuard>,
}

/// Starts the backend on `data_root` (an existing, canonical folder: see [`data_root::resolve`]).
/// [`prepare`], then [`Prepared::load`]: headless mode awaits both; window mode prepares before
/// anything is shown and loads while its window opens.
pub async fn start(data_root: &Path, mode: Mode) -> Result<Backend, BackendError> {
    prepare(data_root, mode)?.load().await
}

/// A backend that owns its data root (lock, log, config, the MCP listener bound) and has not
/// loaded the records yet: what may fail at once, for a caller that shows something while
/// [`Prepared::load`] runs (window mode opens its window meanwhile).
pub struct Prepared {
    data_root: PathBuf,
    mode: Mode,
    // Field order matters on drop: the options hold the records' reading, which ends before
    // the lock goes.
    options: RuntimeOptions,
    lock: DataRootLock,
    log: LogGuard,
    mcp: McpServer,
    hosts: Vec<paseo_core::hosts::Host>,
    schedules: Vec<paseo_core::model::schedule::Schedule>,
}

/// A data root owned (its lock taken, the log open, its modes made private) with its records
/// being read on a thread of their own: the first step of [`prepare`]. The desktop app takes it
/// before Tauri and GTK start, so the reading has the core their start leaves idle
/// (docs/benchmarks.md, "Where a window's launch goes").
pub struct Claim {
    data_root: PathBuf,
    // Field order matters on drop: the reading ends before the lock goes.
    preload: Option<Preload>,
    notices: Vec<String>,
    lock: DataRootLock,
    log: LogGuard,
}

/// Takes the lock first, so a refused process writes nothing into the root, not even a log
/// line; then starts reading the records.
pub fn claim(data_root: &Path) -> Result<Claim, BackendError> {
    claim_with(data_root, false)
}

/// [`claim`] for the desktop app, whose window starts while the records are read: the reading
/// gives way to it ([`Preload::start_beside_window`]).
pub fn claim_beside_window(data_root: &Path) -> Result<Claim, BackendError> {
    claim_with(data_root, true)
}

fn claim_with(data_root: &Path, beside_window: bool) -> Result<Claim, BackendError> {
    let lock = DataRootLock::acquire(data_root)?;
    let log = logging::init(&data_root::log_dir(data_root))?;
    let layout = Layout::new(data_root);
    // Private at every start, not only when created (SPEC 16): what was loosened is fixed
    // before anything reads or writes a secret, and the windows show what was fixed.
    let notices = paseo_core::store::private::secure_root(&layout);
    // Without a thread of its own the runtime's start reads the records, as it always could.
    let preload = if beside_window {
        Preload::start_beside_window(data_root)
    } else {
        Preload::start(data_root)
    };
    let preload = preload
        .map_err(|error| {
            tracing::warn!(target: LOG_TARGET, %error, "the records are read at the runtime's start")
        })
        .ok();
    Ok(Claim {
        data_root: data_root.to_path_buf(),
        preload,
        notices,
        lock,
        log,
    })
}

/// The quick part of [`start`]: [`claim`], then [`Claim::prepare`].
pub fn prepare(data_root: &Path, mode: Mode) -> Result<Prepared, BackendError> {
    claim(data_root)?.prepare(mode)
}

impl Claim {
    /// The config read and the MCP listener bound, the records still being read.
    pub fn prepare(self, mode: Mode) -> Result<Prepared, BackendError> {
        let Claim {
            data_root,
            preload,
            mut notices,
            lock,
            log,
        } = self;
        let layout = Layout::new(&data_root);
        // A bad config.json must not lock the user out of their fleet: the defaults run, a copy
        // of the file is set aside in quarantine/, and the error (naming the file and the field)
        // is shown in the UI and the log.
        let (config, notice) = Config::load_or_default(&data_root);
        notices.extend(notice);
        // The MCP listener first: agents resumed by the runtime need its URL and their tokens.
        let mcp = McpServer::bind(&layout, config.mcp.port)?;
        let mut options = RuntimeOptions::new(&data_root, ProviderRegistry::from_config(&config));
        options.notices = notices;
        options.timeline_max_bytes = config.storage.timeline_max_bytes;
        options.trash_days = config.storage.trash_days;
        options.limits = config.limits;
        options.budget = config.budget;
        options.start_timeout = config.start_timeout;
        options.sandbox = config.sandbox.clone();
        options.preload = preload;
        Ok(Prepared {
            data_root,
            mode,
            options,
            lock,
            log,
            mcp,
            hosts: config.hosts,
            schedules: config.schedules,
        })
    }
}

impl Prepared {
    /// Loads the records and starts the runtime and the MCP server: the slow part of [`start`].
    pub async fn load(self) -> Result<Backend, BackendError> {
        let Prepared {
            data_root,
            mode,
            lock,
            log,
            mcp,
            options,
            hosts,
            schedules,
        } = self;
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
        // A backend that cannot listen still runs this machine's fleet; only hosts cannot attach.
        let socket = SocketServer::start(&data_root, handle.clone())
            .map_err(|error| tracing::warn!(target: LOG_TARGET, %error, "hosts cannot attach"))
            .ok();
        // The configured hosts connect now and keep connecting (SPEC 17).
        handle
            .hosts()
            .start(&hosts, HostManager::ssh_options_from_env());
        // Schedules fire once the fleet they add to is up (SPEC 20).
        let scheduler = Scheduler::start(handle.clone(), data_root.clone(), schedules);
        let backend = Backend {
            data_root,
            mode,
            started_at: Utc::now(),
            core: Some(Core {
                runtime,
                mcp,
                socket,
                scheduler,
            }),
            handle,
            lock: Some(lock),
            log: Some(log),
        };
        tracing::info!(
            target: LOG_TARGET,
            data_root = %backend.data_root.display(),
            mode = mode.as_str(),
            pid = std::process::id(),
            version = env!("CARGO_PKG_VERSION"),
            "backend started"
        );
        Ok(backend)
    }
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
    pub fn handle(&self) -> Server {
        self.handle.clone()
    }

    /// Stops in order: (runtime: stop agents, persist every record), then release the lock, then
    /// flush the logs. Async for the same reason as [`start`].
    pub async fn shutdown(mut self) {
        tracing::info!(target: LOG_TARGET, data_root = %self.data_root.display(), "backend stopping");
        // Before the lock is released: no new tool calls, then every agent stopped and every
        // record persisted.
        if let Some(core) = self.core.take() {
            // No new run starts while the fleet stops; a fire in flight is finished by the
            // next start, from schedules.json.
            core.scheduler.stop();
            if let Some(socket) = core.socket {
                socket.shutdown();
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    fn set(p: &Path, m: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    }

    /// SPEC 16: an existing data root someone loosened (an upstream `~/.paseo`, a `chmod`) is
    /// private again after a start, and the window is told (the start's notices, which every
    /// window shows like quarantined files).
    #[tokio::test]
    async fn a_loosened_data_root_is_made_private_at_start_and_said_so() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("home");
        let layout = Layout::new(&root);
        std::fs::create_dir_all(layout.secrets_dir()).unwrap();
        std::fs::write(layout.mcp_token_path(), format!("{}\n", "ab".repeat(32))).unwrap();
        set(&root, 0o755);
        set(&layout.secrets_dir(), 0o755);
        set(&layout.mcp_token_path(), 0o644);
        let backend = start(&root, Mode::Headless).await.unwrap();
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&layout.secrets_dir()), 0o700);
        assert_eq!(mode(&layout.mcp_token_path()), 0o600);
        // What the app made on this start is private too.
        assert_eq!(mode(&root.join("lock")), 0o600);
        assert_eq!(mode(&layout.mcp_json_path()), 0o600);
        assert_eq!(mode(&layout.logs_dir()), 0o700);
        for log in std::fs::read_dir(layout.logs_dir()).unwrap() {
            assert_eq!(mode(&log.unwrap().path()), 0o600);
        }
        let fleet = paseo_core::api::verbs::Fleet {};
        let caller = paseo_core::runtime::Caller::User;
        let notices = match backend.handle().call(caller, fleet.into()).await {
            Ok(paseo_core::api::Response::Fleet(f)) => f.notices,
            other => panic!("fleet: {other:?}"),
        };
        let said = |p: &Path| {
            notices
                .iter()
                .any(|n| n.contains(&p.display().to_string()) && n.contains("private again"))
        };
        assert!(said(&root), "{notices:#?}");
        assert!(said(&layout.mcp_token_path()), "{notices:#?}");
        assert!(said(&layout.secrets_dir()), "{notices:#?}");
        backend.shutdown().await;
    }
}
