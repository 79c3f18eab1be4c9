//! Logging: `tracing` to daily files in `$PASEO_HOME/logs/` and to stderr, filtered by `RUST_LOG`
//! (default `info`).

use std::os::unix::fs::DirBuilderExt;
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
        source: std::io::Error,
    },
}

/// Keeps the background log writer alive; dropping it flushes what is buffered.
pub struct LogGuard {
    _worker: Option<WorkerGuard>,
}

/// The filter directives: `RUST_LOG` when it parses, else `info`. A value that does not parse is
/// reported on stderr rather than silently ignored.
fn directives() -> String {
    match std::env::var("RUST_LOG") {
        Ok(value) if !value.trim().is_empty() => match EnvFilter::builder().parse(&value) {
            Ok(_) => value,
            Err(error) => {
                eprintln!(
                    "{}: RUST_LOG='{value}' is not a valid filter ({error}); using 'info'",
                    crate::cli::program().name()
                );
                "info".to_string()
            }
        },
        _ => "info".to_string(),
    }
}

fn filter(directives: &str) -> EnvFilter {
    EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .parse_lossy(directives)
}

/// Installs the global subscriber writing to `log_dir`. When a subscriber is already installed
/// (a second backend in one test process), the existing one keeps receiving events.
pub fn init(log_dir: &Path) -> Result<LogGuard, LoggingError> {
    // Private like the rest of the data root (SPEC 16): log lines name agents, paths and
    // errors, so the folder is 0700 and its files 0600 (see `logfile`).
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(paseo_core::store::private::DIR_MODE)
        .create(log_dir)
        .map_err(|source| LoggingError::Dir {
            path: log_dir.to_path_buf(),
            source,
        })?;
    let appender =
        crate::logfile::DailyFile::open(log_dir, 14).map_err(|source| LoggingError::File {
            path: log_dir.to_path_buf(),
            source,
        })?;
    let (writer, worker) = tracing_appender::non_blocking(appender);
    let directives = directives();
    let file_layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(writer)
        .with_filter(filter(&directives));
    let stderr_layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(filter(&directives));
    let installed = tracing_subscriber::registry()
        .with(file_layer)
        .with(stderr_layer)
        .try_init()
        .is_ok();
    Ok(LogGuard {
        _worker: installed.then_some(worker),
    })
}
