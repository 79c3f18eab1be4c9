//! The state the Tauri shell manages: the data root, the running backend, and the fleet counts
//! the tray and the UI show.

use chrono::{DateTime, Utc};
use paseo_core::server::Server;
use paseo_headless::backend::Backend;
use paseo_headless::cli::Mode;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Managed by the Tauri app (`app.manage`); commands get it as `State<'_, AppState>`.
pub struct AppState {
    data_root: PathBuf,
    mode: Mode,
    created_at: DateTime<Utc>,
    backend: Mutex<Option<Backend>>,
    /// The runtime, once the backend runs: cheap to clone, so commands never hold a lock.
    runtime: OnceLock<Server>,
    /// Whether the backend's start ended (`Some(true)`: it runs; `Some(false)`: it failed or
    /// never began) or is under way (`None`, from [`AppState::backend_starting`]): the window
    /// opens while the records load, and its first ask waits on this.
    started: tokio::sync::watch::Sender<Option<bool>>,
}

impl AppState {
    pub fn new(data_root: PathBuf, mode: Mode) -> Self {
        Self {
            data_root,
            mode,
            created_at: Utc::now(),
            backend: Mutex::new(None),
            runtime: OnceLock::new(),
            started: tokio::sync::watch::Sender::new(Some(false)),
        }
    }

    pub fn data_root(&self) -> &Path {
        &self.data_root
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Hands the started backend to the app; it lives until [`AppState::take_backend`] at exit.
    pub fn attach_backend(&self, backend: Backend) {
        let _ = self.runtime.set(backend.handle());
        *lock(&self.backend) = Some(backend);
        self.started.send_replace(Some(true));
    }

    /// The backend's records are loading: asks wait for them from now on.
    pub fn backend_starting(&self) {
        self.started.send_replace(None);
    }

    /// The backend's start failed: nobody waits for it any longer.
    pub fn backend_failed(&self) {
        self.started.send_replace(Some(false));
    }

    /// The runtime once the backend's start ended, or `None` when it failed.
    pub async fn runtime_started(&self) -> Option<Server> {
        let mut rx = self.started.subscribe();
        let _ = rx.wait_for(Option::is_some).await;
        self.runtime()
    }

    /// The runtime, or `None` before the backend started.
    pub fn runtime(&self) -> Option<Server> {
        self.runtime.get().cloned()
    }

    pub fn take_backend(&self) -> Option<Backend> {
        lock(&self.backend).take()
    }

    /// When the backend started, or `None` when it is not running.
    pub fn backend_started_at(&self) -> Option<DateTime<Utc>> {
        lock(&self.backend).as_ref().map(Backend::started_at)
    }

    pub fn created_at(&self) -> DateTime<Utc> {
        self.created_at
    }
}

/// A panic while holding one of these locks leaves plain data behind, still valid: keep going.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
