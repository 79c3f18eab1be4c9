//! One host's connection (SPEC 17): `ssh … attach` as a child process, the hello, requests
//! matched to answers by id, and the backend's numbered events. A dropped connection (ssh
//! killed, network, sleep) stops nothing on the host: the client says so, reconnects with
//! backoff, and resynchronises from a snapshot that names the last event it reflects, so the
//! updates it hands on never miss an event and never repeat one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdout};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::protocol::{ClientFrame, Hello, Incoming, MAX_LINE};
use super::ssh::{self, Host, SshOptions};
use super::HostError;
use crate::api::{verbs, ApiError, Event, Request, Response};

/// Reconnect waits: the first, doubled after each failure, at most the last. Short: a host that
/// comes back is found again within seconds (an attempt is one ssh process; ssh's own
/// ConnectTimeout bounds one against a host that does not answer).
const BACKOFF_FIRST: Duration = Duration::from_millis(200);
const BACKOFF_MAX: Duration = Duration::from_secs(2);

/// What the client hands on, in order.
#[derive(Debug)]
pub enum Update {
    /// Connected (again) and in sync: the window's snapshot as the backend wrote it, reflecting
    /// every event up to `seq`; the events that follow are the ones after it.
    Synced { seq: u64, window: String },
    /// An event of the backend, each exactly once, numbers rising.
    Event { seq: u64, event: Box<Event> },
    /// The connection dropped, or a reconnect failed (again `since` the drop, with its own
    /// error: a host key that changed meanwhile is said as such): nothing on the host stopped.
    Disconnected { error: String, since: DateTime<Utc> },
}

type Pending = HashMap<u64, oneshot::Sender<Result<Response, ApiError>>>;

struct Shared {
    host: Host,
    opts: SshOptions,
    hello: Hello,
    next_id: AtomicU64,
    pending: Mutex<Pending>,
    /// Frames to the current ssh's stdin; `None` while disconnected.
    outbox: Mutex<Option<mpsc::UnboundedSender<String>>>,
    /// The current ssh process and the backend's pid, for status and tests.
    ssh_pid: Mutex<Option<u32>>,
    backend_pid: Mutex<Option<u32>>,
}

/// A host's connection; dropping it ends the ssh process (nothing on the host stops).
pub struct HostClient {
    shared: Arc<Shared>,
    supervisor: JoinHandle<()>,
}

impl Drop for HostClient {
    fn drop(&mut self) {
        self.supervisor.abort();
    }
}

/// A live ssh with the hello done.
struct Link {
    child: Child,
    stdout: BufReader<ChildStdout>,
    stderr: JoinHandle<String>,
}

impl HostClient {
    /// Connects to `host` and waits until it is in sync; the first failure is returned as is
    /// (a host key to accept, a version to install, …). Afterwards the client keeps the
    /// connection up by itself; `updates` receives a `Synced` first, then events.
    pub async fn connect(
        host: Host,
        opts: SshOptions,
    ) -> Result<(HostClient, mpsc::UnboundedReceiver<Update>), HostError> {
        Self::connect_as(host, opts, Hello::ours()).await
    }

    /// As [`Self::connect`], saying `hello` (the version tests speak as another version).
    pub async fn connect_as(
        host: Host,
        opts: SshOptions,
        hello: Hello,
    ) -> Result<(HostClient, mpsc::UnboundedReceiver<Update>), HostError> {
        let shared = Arc::new(Shared {
            host,
            opts,
            hello,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            outbox: Mutex::new(None),
            ssh_pid: Mutex::new(None),
            backend_pid: Mutex::new(None),
        });
        let link = open(&shared).await?;
        let (updates, rx) = mpsc::unbounded_channel();
        let supervisor = tokio::spawn(supervise(shared.clone(), link, updates));
        Ok((HostClient { shared, supervisor }, rx))
    }

    pub fn host(&self) -> &Host {
        &self.shared.host
    }

    /// Runs one request on the host's backend as the user. While disconnected it fails at once
    /// with code `disconnected`; a request in flight when the connection drops fails so too.
    pub async fn call(&self, request: Request) -> Result<Response, ApiError> {
        let (id, rx) = self.shared.register_call();
        let line = ClientFrame::Request {
            id,
            request: Box::new(request),
        }
        .to_line()?;
        let sent = match lock(&self.shared.outbox).as_ref() {
            Some(outbox) => outbox.send(line).is_ok(),
            None => false,
        };
        if !sent {
            lock(&self.shared.pending).remove(&id);
            return Err(disconnected(&self.shared.host));
        }
        rx.await
            .unwrap_or_else(|_| Err(disconnected(&self.shared.host)))
    }

    /// The pid of the ssh process carrying the connection now, if connected.
    pub fn ssh_pid(&self) -> Option<u32> {
        *lock(&self.shared.ssh_pid)
    }

    /// The pid of the host's backend (as its hello said), once connected.
    pub fn backend_pid(&self) -> Option<u32> {
        *lock(&self.shared.backend_pid)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn disconnected(host: &Host) -> ApiError {
    ApiError::new(
        "disconnected",
        format!("the host {} is not connected", host.name),
    )
}

impl Shared {
    fn register_call(&self) -> (u64, oneshot::Receiver<Result<Response, ApiError>>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        (id, rx)
    }

    fn fail_pending(&self) {
        let error = disconnected(&self.host);
        for (_, tx) in lock(&self.pending).drain() {
            let _ = tx.send(Err(error.clone()));
        }
    }
}

/// Starts ssh and says hello; any failure is read from what ssh and the host said.
async fn open(shared: &Shared) -> Result<Link, HostError> {
    let host = &shared.host;
    let dest = host.destination()?.to_string();
    let mut child = ssh::command(host, &shared.opts, &host.attach_command())?
        .spawn()
        .map_err(|e| ssh::spawn_error(&shared.opts, e))?;
    let (Some(mut stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(HostError::Closed {
            dest,
            detail: "ssh started without its pipes".into(),
        });
    };
    // ssh's stderr is kept (bounded) to explain a failure.
    let stderr = tokio::spawn(async move {
        let mut text = Vec::new();
        let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut text).await;
        String::from_utf8_lossy(&text).into_owned()
    });
    let mut stdout = BufReader::new(stdout);
    let hello = ClientFrame::Hello(shared.hello.clone())
        .to_line()
        .map_err(|e| HostError::Protocol {
            dest: dest.clone(),
            detail: e.message,
        })?;
    let _ = stdin.write_all(hello.as_bytes()).await;
    let _ = stdin.flush().await;
    let first = read_frame(&mut stdout).await;
    let ended = |mut child: Child, stderr: JoinHandle<String>| async move {
        let status = child.wait().await.ok();
        let said = stderr.await.unwrap_or_default();
        (status.and_then(|s| s.code()), said)
    };
    let frame = match first {
        Ok(Some(line)) => Incoming::parse(&line),
        Ok(None) | Err(_) => {
            drop(stdin);
            let (code, said) = ended(child, stderr).await;
            return Err(ssh::classify(&dest, code, &said));
        }
    };
    match frame {
        Ok(Incoming::Hello { hello, pid }) => {
            if let Some(e) =
                shared
                    .hello
                    .mismatch(&hello, "this app", &format!("the backend on {dest}"))
            {
                return Err(HostError::Version {
                    dest,
                    message: e.message,
                });
            }
            *lock(&shared.backend_pid) = Some(pid);
        }
        Ok(Incoming::Refused(e)) if e.code == "version" => {
            return Err(HostError::Version {
                dest,
                message: e.message,
            })
        }
        Ok(Incoming::Refused(e)) => {
            return Err(HostError::Refused {
                dest,
                message: e.message,
            })
        }
        Ok(_) => {
            return Err(HostError::Protocol {
                dest,
                detail: "the first frame was not a hello".into(),
            })
        }
        Err(detail) => {
            // Not a frame: something on the host printed to stdout (a login banner from a
            // shell rc file, an old paseo-headless without `attach`).
            drop(stdin);
            let (code, said) = ended(child, stderr).await;
            return Err(match code {
                Some(255 | 127) => ssh::classify(&dest, code, &said),
                _ => HostError::Protocol { dest, detail },
            });
        }
    }
    *lock(&shared.ssh_pid) = child.id();
    let (outbox, mut frames) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        while let Some(line) = frames.recv().await {
            if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                return;
            }
        }
    });
    *lock(&shared.outbox) = Some(outbox);
    Ok(Link {
        child,
        stdout,
        stderr,
    })
}

/// One line, without its newline; `None` at the end.
async fn read_frame(from: &mut BufReader<ChildStdout>) -> std::io::Result<Option<String>> {
    let mut bytes = Vec::new();
    let n = (&mut *from)
        .take(MAX_LINE as u64)
        .read_until(b'\n', &mut bytes)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    Ok(Some(String::from_utf8_lossy(&bytes).trim_end().to_string()))
}

/// Keeps the host connected: runs a session until it drops, then reconnects with backoff.
async fn supervise(shared: Arc<Shared>, first: Link, updates: mpsc::UnboundedSender<Update>) {
    let mut link = first;
    let mut last_seq = None;
    loop {
        let why = session(&shared, &mut link, &updates, &mut last_seq).await;
        *lock(&shared.outbox) = None;
        *lock(&shared.ssh_pid) = None;
        shared.fail_pending();
        let _ = link.child.start_kill();
        let _ = link.child.wait().await;
        tracing::warn!(host = %shared.host.name, %why, "host disconnected");
        let since = Utc::now();
        if updates
            .send(Update::Disconnected { error: why, since })
            .is_err()
        {
            return;
        }
        let mut wait = BACKOFF_FIRST;
        link = loop {
            tokio::time::sleep(wait).await;
            match open(&shared).await {
                Ok(link) => break link,
                Err(error) => {
                    tracing::warn!(host = %shared.host.name, %error, "reconnect failed");
                    wait = (wait * 2).min(BACKOFF_MAX);
                    let update = Update::Disconnected {
                        error: error.to_string(),
                        since,
                    };
                    if updates.send(update).is_err() {
                        return;
                    }
                }
            }
        };
    }
}

/// One connection's life: sync, then answers and events until the stream ends; returns why it
/// ended. `last_seq` is the number of the last event handed on.
async fn session(
    shared: &Shared,
    link: &mut Link,
    updates: &mpsc::UnboundedSender<Update>,
    last_seq: &mut Option<u64>,
) -> String {
    let mut sync = match request_sync(shared) {
        Some(id) => Some(id),
        None => return "cannot ask for a snapshot".into(),
    };
    // Events that arrive before the snapshot's answer: kept until it says which it reflects.
    let mut held: Vec<(u64, Box<Event>)> = Vec::new();
    loop {
        let line = match read_frame(&mut link.stdout).await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(error) => return format!("reading from ssh failed: {error}"),
        };
        let frame = match Incoming::parse(&line) {
            Ok(frame) => frame,
            Err(detail) => {
                tracing::warn!(host = %shared.host.name, %detail, "bad frame from the host");
                continue;
            }
        };
        match frame {
            Incoming::Event { seq, event } => {
                if sync.is_some() {
                    held.push((seq, event));
                    continue;
                }
                let last = last_seq.unwrap_or(0);
                if seq <= last {
                    continue;
                }
                if seq > last + 1 {
                    // Fell behind on the host: what was skipped is in a new snapshot.
                    tracing::warn!(host = %shared.host.name, from = last, to = seq, "events skipped; syncing again");
                    sync = request_sync(shared);
                    held.push((seq, event));
                    continue;
                }
                *last_seq = Some(seq);
                if updates.send(Update::Event { seq, event }).is_err() {
                    return "nobody listens".into();
                }
            }
            Incoming::Response { id, response } if Some(id) == sync => {
                let Response::Synced { seq, window } = response else {
                    return "the snapshot's answer was not a snapshot".into();
                };
                sync = None;
                *last_seq = Some(seq);
                if updates.send(Update::Synced { seq, window }).is_err() {
                    return "nobody listens".into();
                }
                for (n, event) in std::mem::take(&mut held) {
                    if n <= last_seq.unwrap_or(0) {
                        continue;
                    }
                    *last_seq = Some(n);
                    let _ = updates.send(Update::Event { seq: n, event });
                }
            }
            Incoming::Error {
                id: Some(id),
                error,
            } if Some(id) == sync => {
                return format!("the host could not give a snapshot: {}", error.message);
            }
            Incoming::Response { id, response } => {
                if let Some(tx) = lock(&shared.pending).remove(&id) {
                    let _ = tx.send(Ok(response));
                }
            }
            Incoming::Error {
                id: Some(id),
                error,
            } => {
                if let Some(tx) = lock(&shared.pending).remove(&id) {
                    let _ = tx.send(Err(error));
                }
            }
            Incoming::Error { id: None, error } => {
                tracing::warn!(host = %shared.host.name, message = %error.message, "the host refused a frame");
            }
            Incoming::Hello { .. } | Incoming::Refused(_) => {}
        }
    }
    let status = link.child.wait().await.ok().and_then(|s| s.code());
    let said = std::mem::replace(&mut link.stderr, tokio::spawn(async { String::new() }))
        .await
        .unwrap_or_default();
    ssh::classify(&shared.host.ssh, status, &said).to_string()
}

/// Asks for the snapshot with its event number; the id its answer comes with.
fn request_sync(shared: &Shared) -> Option<u64> {
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let line = ClientFrame::Request {
        id,
        request: Box::new(Request::SyncSnapshot(verbs::SyncSnapshot { host: None })),
    }
    .to_line()
    .ok()?;
    lock(&shared.outbox).as_ref()?.send(line).ok()?;
    Some(id)
}
