//! Logging: `tracing` to daily files in `$PASEO_HOME/logs/` and to stderr, filtered by `RUST_LOG`
//! (default `info`).

use std::path::Path;
use thiserror::Error;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::filter::{EnvFilter, LevelFilter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

#[derive(Debug, Error)]
pub enum LoggingError {
    #[error("cannot create the log folder {path}: {source}")]
    Dir {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open a log file in {path}: {source}")]
    File {
        path: std::path::PathBuf,
        source: tracing_appender::rolling::InitError,
    },
}

/// Keeps the background log writer alive; dropping it flushes what is buffered.
pub struct LogGuard {
    _worker: Option<WorkerGuard>,
}

/// Builds the filter from `RUST_LOG`. A value that does not parse is reported on stderr and
/// replaced by the default rather than silently ignored.
fn filter() -> EnvFilter {
    let builder = EnvFilter::builder().with_default_directive(LevelFilter::INFO.into());
    match std::env::var("RUST_LOG") {
        Ok(value) if !value.trim().is_empty() => match builder.parse(&value) {
            Ok(filter) => filter,
            Err(error) => {
                eprintln!("paseo-desktop: RUST_LOG='{value}' is not a valid filter ({error}); using 'info'");
                EnvFilter::new("info")
            }
        },
        _ => builder.parse_lossy(""),
    }
}

/// Installs the global subscriber writing to `log_dir`. When a subscriber is already installed
/// (a second backend in one test process), the existing one keeps receiving events.
pub fn init(log_dir: &Path) -> Result<LogGuard, LoggingError> {
    std::fs::create_dir_all(log_dir).map_err(|source| LoggingError::Dir {
        path: log_dir.to_path_buf(),
        source,
    })?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("paseo")
        .filename_suffix("log")
        .max_log_files(14)
        .build(log_dir)
        .map_err(|source| LoggingError::File {
            path: log_dir.to_path_buf(),
            source,
        })?;
    let (writer, worker) = tracing_appender::non_blocking(appender);
    let file_layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(writer)
        .with_filter(filter());
    let stderr_layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(filter());
    let installed = tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .try_init()
        .is_ok();
    Ok(LogGuard {
        _worker: installed.then_some(worker),
    })
}
