//! The backend's Unix socket (SPEC 17): the one way in for `paseo-headless attach` (and so for
//! a host's client over ssh). It carries the API's frames ([`paseo_core::hosts::protocol`]) as
//! the user: only the user can open it (a 0600 socket in the 0700 data root), and never a TCP
//! port.
//!
//! Contained agents must not reach it: it would give them the user's power (SPEC 16). Under
//! bubblewrap the data root is hidden, so the path does not exist for them; Landlock does not
//! govern `connect` on a socket, so a peer running with `no_new_privs` (which both engines set
//! and no login session has) is refused too.

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use paseo_core::api::{ApiError, Caller, Event, Request};
use paseo_core::hosts::protocol::{ClientFrame, Hello, ServerFrame, MAX_LINE};
use paseo_core::server::Server;
use thiserror::Error;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;

const LOG_TARGET: &str = "paseo_desktop::socket";

/// The socket's name in the data root.
pub const SOCKET_NAME: &str = "backend.sock";

/// Overrides the product version the backend says in its hello: only for the version-mismatch
/// tests, which need two versions of one build.
pub const TEST_VERSION_ENV: &str = "PASEO_TEST_BACKEND_VERSION";

/// Frames waiting for a slow client; past that its events lag and it syncs again.
const OUTBOX: usize = 1024;

pub fn socket_path(data_root: &Path) -> PathBuf {
    data_root.join(SOCKET_NAME)
}

/// A socket's address holds at most 107 bytes of path; a data root deeper than that is reached
/// through its open folder (`/proc/self/fd/N/name`), which the kernel resolves the same way.
/// `with` gets the path to use while the folder is held open.
fn at_short_path<T>(
    dir: &Path,
    name: &str,
    with: impl FnOnce(&Path) -> io::Result<T>,
) -> io::Result<T> {
    let full = dir.join(name);
    if full.as_os_str().len() < 100 {
        return with(&full);
    }
    use std::os::fd::AsRawFd;
    let folder = std::fs::File::open(dir)?;
    let short = PathBuf::from(format!("/proc/self/fd/{}/{name}", folder.as_raw_fd()));
    let result = with(&short);
    drop(folder);
    result
}

/// Connects to the backend's socket in `data_root` (whatever the root's depth).
pub fn connect(data_root: &Path) -> io::Result<UnixStream> {
    let stream = at_short_path(data_root, SOCKET_NAME, |path| {
        std::os::unix::net::UnixStream::connect(path)
    })?;
    stream.set_nonblocking(true)?;
    UnixStream::from_std(stream)
}

#[derive(Debug, Error)]
pub enum SocketError {
    #[error("cannot check the data root {path}: {source}")]
    Inspect { path: PathBuf, source: io::Error },
    #[error("the data root {path} is reachable by other users (mode {mode:o}); make it private (chmod 700) before the backend listens in it")]
    NotPrivate { path: PathBuf, mode: u32 },
    #[error("the data root {path} belongs to uid {owner}, not to this user (uid {uid})")]
    NotOwned { path: PathBuf, owner: u32, uid: u32 },
    #[error("cannot listen on {path}: {source}")]
    Bind { path: PathBuf, source: io::Error },
}

/// The listening socket and its connections.
pub struct SocketServer {
    path: PathBuf,
    accept: JoinHandle<()>,
}

impl SocketServer {
    /// Listens on `<data_root>/backend.sock`. The caller holds the data root's lock, so a socket
    /// already there is a stale one left by a killed backend: replaced. The new one is made
    /// under a temporary name, made 0600, then renamed into place, so it is never reachable
    /// with looser permissions.
    pub fn start(data_root: &Path, handle: Server) -> Result<SocketServer, SocketError> {
        check_private(data_root)?;
        let path = socket_path(data_root);
        let staging_name = format!(".{SOCKET_NAME}.{}", std::process::id());
        let staging = data_root.join(&staging_name);
        let bind_error = |source| SocketError::Bind {
            path: path.clone(),
            source,
        };
        let _ = std::fs::remove_file(&staging);
        let listener = at_short_path(data_root, &staging_name, |p| UnixListener::bind(p))
            .map_err(bind_error)?;
        let placed = std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))
            .and_then(|()| std::fs::rename(&staging, &path));
        if let Err(error) = placed {
            let _ = std::fs::remove_file(&staging);
            return Err(bind_error(error));
        }
        tracing::info!(target: LOG_TARGET, path = %path.display(), "listening");
        let hello = Arc::new(backend_hello());
        let accept = tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        tokio::spawn(serve(stream, handle.clone(), hello.clone()));
                    }
                    Err(error) => {
                        tracing::warn!(target: LOG_TARGET, %error, "cannot accept a connection");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                }
            }
        });
        Ok(SocketServer { path, accept })
    }

    /// Stops listening and removes the socket (connections end with the runtime).
    pub fn shutdown(self) {
        self.accept.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

fn backend_hello() -> Hello {
    let mut hello = Hello::ours();
    if let Ok(version) = std::env::var(TEST_VERSION_ENV) {
        hello.product = version;
    }
    hello
}

/// The data root must be this user's and closed to everyone else: the socket in it gives
/// whoever opens it the user's power.
fn check_private(data_root: &Path) -> Result<(), SocketError> {
    let meta = std::fs::metadata(data_root).map_err(|source| SocketError::Inspect {
        path: data_root.to_path_buf(),
        source,
    })?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    if meta.uid() != uid {
        return Err(SocketError::NotOwned {
            path: data_root.to_path_buf(),
            owner: meta.uid(),
            uid,
        });
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(SocketError::NotPrivate {
            path: data_root.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

/// Why a peer may not speak to the backend, if it may not.
fn refuse_peer(stream: &UnixStream) -> Option<String> {
    let cred = match stream.peer_cred() {
        Ok(cred) => cred,
        Err(error) => return Some(format!("cannot identify the connecting process: {error}")),
    };
    // SAFETY: as above.
    let uid = unsafe { libc::geteuid() };
    if cred.uid() != uid {
        return Some(format!("uid {} is not this backend's user", cred.uid()));
    }
    // Fails closed: a peer that cannot be looked at (it exited at once, its pid already gone,
    // as an agent that connects, hands the socket to a child and exits would arrange) is
    // refused like one that is boxed.
    let Some(pid) = cred.pid() else {
        return Some("the connecting process cannot be identified (no pid)".into());
    };
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return Some(format!(
            "process {pid} is gone or cannot be read; only a live process of this user that \
             runs in no sandbox may reach the backend"
        ));
    };
    let nnp = status
        .lines()
        .find_map(|l| l.strip_prefix("NoNewPrivs:"))
        .map(str::trim);
    match nnp {
        Some("0") => None,
        Some(_) => Some(format!(
            "process {pid} runs with no_new_privs, as a contained agent does; agents may not \
             reach the backend"
        )),
        None => Some(format!(
            "process {pid}: its no_new_privs flag cannot be read"
        )),
    }
}

/// One connection: the hello, then requests (each on its own task: a `wait` may take minutes)
/// and the numbered events, until the client goes.
async fn serve(stream: UnixStream, handle: Server, hello: Arc<Hello>) {
    let refused = refuse_peer(&stream);
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    let mut first = String::new();
    match read_line(&mut lines, &mut first).await {
        Ok(true) => {}
        _ => return,
    }
    // Refused in answer to its hello (a refusal written before it would meet a closed socket).
    if let Some(reason) = refused {
        tracing::warn!(target: LOG_TARGET, %reason, "connection refused");
        let error = ApiError::new("forbidden", format!("refused: {reason}"));
        if let Ok(line) = (ServerFrame::Refused(&error)).to_line() {
            let _ = write.write_all(line.as_bytes()).await;
        }
        return;
    }
    let theirs = match ClientFrame::parse(&first) {
        Ok(ClientFrame::Hello(theirs)) => theirs,
        Ok(_) | Err(_) => {
            let error = ApiError::new("invalid", "the first frame must be a hello");
            if let Ok(line) = ServerFrame::Refused(&error).to_line() {
                let _ = write.write_all(line.as_bytes()).await;
            }
            return;
        }
    };
    if let Some(error) = hello.mismatch(&theirs, "the backend", "the client") {
        tracing::warn!(target: LOG_TARGET, message = %error.message, "client refused");
        if let Ok(line) = ServerFrame::Refused(&error).to_line() {
            let _ = write.write_all(line.as_bytes()).await;
        }
        return;
    }
    // Subscribed before the hello goes out: every event after its number reaches this client.
    let (events, seq) = match handle.subscribe_numbered().await {
        Ok(subscribed) => subscribed,
        Err(error) => {
            let error = ApiError::from(error);
            if let Ok(line) = ServerFrame::Refused(&error).to_line() {
                let _ = write.write_all(line.as_bytes()).await;
            }
            return;
        }
    };
    let (out, mut outbox) = mpsc::channel::<String>(OUTBOX);
    let writer = tokio::spawn(async move {
        while let Some(line) = outbox.recv().await {
            if write.write_all(line.as_bytes()).await.is_err() {
                return;
            }
        }
    });
    let pid = std::process::id();
    if let Ok(line) = (ServerFrame::Hello { hello: &hello, pid }).to_line() {
        let _ = out.send(line).await;
    }
    let forward = tokio::spawn(forward_events(events, seq, out.clone()));
    let mut line = String::new();
    loop {
        line.clear();
        match read_line(&mut lines, &mut line).await {
            Ok(true) => {}
            Ok(false) => break,
            Err(error) => {
                tracing::warn!(target: LOG_TARGET, %error, "connection dropped");
                break;
            }
        }
        match ClientFrame::parse(&line) {
            Ok(ClientFrame::Request { id, request }) => {
                tokio::spawn(answer(handle.clone(), id, *request, out.clone()));
            }
            Ok(ClientFrame::Hello(_)) => {
                let error = ApiError::new("invalid", "hello was already said");
                send(
                    &out,
                    ServerFrame::Error {
                        id: None,
                        error: &error,
                    },
                )
                .await;
            }
            Err((id, error)) => send(&out, ServerFrame::Error { id, error: &error }).await,
        }
    }
    forward.abort();
    drop(out);
    let _ = writer.await;
}

/// Reads one line of at most [`MAX_LINE`] bytes; `Ok(false)` at the end.
async fn read_line<R: AsyncRead + Unpin>(
    lines: &mut BufReader<R>,
    into: &mut String,
) -> io::Result<bool> {
    use tokio::io::AsyncReadExt;
    let mut bytes = Vec::new();
    let n = (&mut *lines)
        .take(MAX_LINE as u64)
        .read_until(b'\n', &mut bytes)
        .await?;
    if n == 0 {
        return Ok(false);
    }
    if !bytes.ends_with(b"\n") && n >= MAX_LINE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a frame longer than the limit",
        ));
    }
    *into = String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a frame that is not UTF-8"))?;
    Ok(true)
}

async fn send(out: &mpsc::Sender<String>, frame: ServerFrame<'_>) {
    match frame.to_line() {
        Ok(line) => {
            let _ = out.send(line).await;
        }
        Err(error) => tracing::warn!(target: LOG_TARGET, %error, "cannot encode a frame"),
    }
}

async fn answer(handle: Server, id: u64, request: Request, out: mpsc::Sender<String>) {
    // Over the socket the caller is the user: only the user can open it (see the module).
    match handle.call(Caller::User, request).await {
        Ok(response) => {
            send(
                &out,
                ServerFrame::Response {
                    id,
                    response: &response,
                },
            )
            .await
        }
        Err(error) => {
            let error = ApiError::from(error);
            send(
                &out,
                ServerFrame::Error {
                    id: Some(id),
                    error: &error,
                },
            )
            .await
        }
    }
}

/// The events, numbered: the receiver's `n`th is `seq + n`; a lag skips the numbers missed,
/// which the client sees as a gap and answers with a new sync.
async fn forward_events(
    mut events: broadcast::Receiver<Event>,
    mut seq: u64,
    out: mpsc::Sender<String>,
) {
    loop {
        match events.recv().await {
            Ok(event) => {
                seq += 1;
                match (ServerFrame::Event { seq, event: &event }).to_line() {
                    Ok(line) => {
                        if out.send(line).await.is_err() {
                            return;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(target: LOG_TARGET, %error, "cannot encode an event")
                    }
                }
            }
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(target: LOG_TARGET, missed, "a client fell behind");
                seq += missed;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
