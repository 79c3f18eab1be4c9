//! `--headless` (and `paseo-headless`): the backend with no window at all, until SIGINT or
//! SIGTERM.

use crate::backend;
use crate::cli::{self, Mode};
use std::path::PathBuf;
use std::process::ExitCode;

/// The target this module's log lines always had (see the crate's documentation).
const LOG_TARGET: &str = "paseo_desktop::headless";

/// Runs the backend until a stop signal; exits 0 after releasing the data root.
pub fn run(data_root: PathBuf) -> ExitCode {
    let name = cli::program().name();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("{name}: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        // Listen before taking the root: a stop signal that arrives once the lock file names us
        // must still mean a clean stop, not the default "killed by signal".
        let mut signals = match StopSignals::install() {
            Ok(signals) => signals,
            Err(error) => {
                eprintln!("{name}: cannot listen for stop signals: {error}");
                return ExitCode::FAILURE;
            }
        };
        let started = match backend::start(&data_root, Mode::Headless).await {
            Ok(started) => started,
            Err(error) => {
                eprintln!("{name}: {error}");
                return ExitCode::FAILURE;
            }
        };
        tracing::info!(target: LOG_TARGET, "running headless; stop with SIGINT or SIGTERM");
        let signal = signals.recv().await;
        tracing::info!(target: LOG_TARGET, signal, "stop signal");
        started.shutdown().await;
        ExitCode::SUCCESS
    })
}

/// SIGINT and SIGTERM, listened to from creation on (must be created inside a tokio runtime).
pub struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    pub fn install() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Self {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// Resolves with the name of the next SIGINT or SIGTERM.
    pub async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => "SIGINT",
                _ = self.terminate.recv() => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
