//! `paseo-headless attach` (SPEC 17): joins this user's backend on this machine, starting it
//! first if none runs, and bridges stdin/stdout to its Unix socket. What a host's client runs
//! over ssh; the frames are the backend's ([`paseo_core::hosts::protocol`]): attach only
//! carries them, and reads the backend's first answer to say a refusal (a version mismatch) on
//! stderr as well.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use paseo_core::hosts::protocol::Incoming;
use thiserror::Error;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::lock::{DataRootLock, LockError};
use crate::{cli, data_root, socket};

/// How long a backend started here may take until its socket answers.
const START_WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, Error)]
pub enum AttachError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
    #[error("cannot find this program to start the backend: {0}")]
    Exe(io::Error),
    #[error("cannot start the backend: {0}")]
    Spawn(io::Error),
    #[error("the backend did not start: {0}")]
    DidNotStart(String),
    #[error("the backend's socket {path} did not answer within {secs} s (the backend's log in {logs} says why)")]
    NoAnswer {
        path: PathBuf,
        secs: u64,
        logs: PathBuf,
    },
    #[error("{0}")]
    Refused(String),
    #[error("the connection to the backend failed: {0}")]
    Io(#[from] io::Error),
}

/// Runs `attach` on `data_root`; errors are one line on stderr and a non-zero exit.
pub fn run(data_root: PathBuf) -> ExitCode {
    let name = cli::program().name();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("{name} attach: {}", AttachError::Runtime(error));
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(attach(&data_root));
    // stdin is read on a blocking thread that may still wait for input: not waited for.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{name} attach: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn attach(data_root: &Path) -> Result<(), AttachError> {
    let path = socket::socket_path(data_root);
    let stream = match socket::connect(data_root) {
        Ok(stream) => stream,
        Err(_) => start_backend(data_root, &path).await?,
    };
    bridge(stream).await
}

/// Starts the backend detached (its own session: it outlives the ssh session that asked for
/// it) and waits until its socket answers. Another attach may be starting one at the same time:
/// the data root's lock lets one win, and both join it.
async fn start_backend(data_root: &Path, path: &Path) -> Result<UnixStream, AttachError> {
    let exe = std::env::current_exe().map_err(AttachError::Exe)?;
    let logs = data_root::log_dir(data_root);
    std::fs::create_dir_all(&logs)?;
    let err_path = logs.join("backend-start.err");
    let err_file = private_file(&err_path)?;
    let mut command = std::process::Command::new(exe);
    command
        .env("PASEO_HOME", data_root)
        // The backend outlives this ssh session: nothing of the session goes with it, above
        // all not a forwarded ssh agent its agents could sign with.
        .env_remove("SSH_AUTH_SOCK")
        .env_remove("SSH_CONNECTION")
        .env_remove("SSH_CLIENT")
        .env_remove("SSH_TTY")
        .env_remove("SSH_ORIGINAL_COMMAND")
        .env_remove("DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err_file);
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = command.spawn().map_err(AttachError::Spawn)?;
    let deadline = Instant::now() + START_WAIT;
    let mut exited = None;
    loop {
        if let Ok(stream) = socket::connect(data_root) {
            return Ok(stream);
        }
        if exited.is_none() {
            if let Ok(Some(status)) = child.try_wait() {
                exited = Some(status);
            }
        }
        // Ours ended: worth waiting on only if another process holds the root (a backend
        // another attach started, still loading).
        if exited.is_some() && !held_by_another(data_root) {
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    match exited {
        Some(status) => {
            let said = std::fs::read_to_string(&err_path).unwrap_or_default();
            let line = said.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
            Err(AttachError::DidNotStart(if line.is_empty() {
                format!("it exited with {status}")
            } else {
                line.to_string()
            }))
        }
        None => Err(AttachError::NoAnswer {
            path: path.to_path_buf(),
            secs: START_WAIT.as_secs(),
            logs,
        }),
    }
}

fn held_by_another(data_root: &Path) -> bool {
    match DataRootLock::acquire(data_root) {
        Ok(lock) => {
            lock.release();
            false
        }
        Err(LockError::Held { .. }) => true,
        Err(_) => false,
    }
}

fn private_file(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// stdin → socket as bytes; socket → stdout a line at a time, flushed (a client waits on each
/// frame). The backend's first line is read: a refusal is said on stderr too.
async fn bridge(stream: UnixStream) -> Result<(), AttachError> {
    let (read, mut write) = stream.into_split();
    let up = tokio::spawn(async move {
        let mut stdin = tokio::io::stdin();
        let _ = tokio::io::copy(&mut stdin, &mut write).await;
        let _ = write.shutdown().await;
    });
    let mut from = BufReader::new(read);
    let mut stdout = tokio::io::stdout();
    let mut line = Vec::new();
    let mut first = true;
    let mut refused = None;
    loop {
        line.clear();
        if from.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        if first {
            first = false;
            if let Ok(Incoming::Refused(error)) =
                Incoming::parse(String::from_utf8_lossy(&line).trim_end())
            {
                refused = Some(error.message);
            }
        }
        stdout.write_all(&line).await?;
        stdout.flush().await?;
    }
    up.abort();
    match refused {
        Some(message) => Err(AttachError::Refused(message)),
        None => Ok(()),
    }
}
