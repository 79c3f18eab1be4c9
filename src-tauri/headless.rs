//! `--headless`: the backend with no window at all, until SIGINT or SIGTERM.

use crate::backend;
use crate::cli::Mode;
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs the backend until a stop signal; exits 0 after releasing the data root.
pub fn run(data_root: PathBuf) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("paseo-desktop: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let started = match backend::start(&data_root, Mode::Headless) {
            Ok(started) => started,
            Err(error) => {
                eprintln!("paseo-desktop: {error}");
                return ExitCode::FAILURE;
            }
        };
        tracing::info!("running headless; stop with SIGINT or SIGTERM");
        match wait_for_stop_signal().await {
            Ok(signal) => tracing::info!(signal, "stop signal"),
            Err(error) => tracing::error!(%error, "cannot listen for stop signals; stopping"),
        }
        started.shutdown();
        ExitCode::SUCCESS
    })
}

/// Resolves with the name of the first SIGINT or SIGTERM received.
pub async fn wait_for_stop_signal() -> std::io::Result<&'static str> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        tokio::select! {
            _ = interrupt.recv() => Ok("SIGINT"),
            _ = terminate.recv() => Ok("SIGTERM"),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await?;
        Ok("Ctrl-C")
    }
}
