//! Process handling shared by every provider: spawning an agent process in its own process
//! group with a clean environment, stopping a whole group (SIGTERM, grace, SIGKILL) and reaping
//! it, reading output without ever blocking the runtime, and coalescing output into bounded
//! batches that go through the session's sink (so a flood is slowed by backpressure instead of
//! growing memory).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::{EventSink, McpAccess, ProviderError, ProviderEvent};
use crate::model::{AgentId, ItemKind, NewItem};

/// How long a process group gets between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(3);
/// How long an interrupted turn gets after SIGINT before it is terminated.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(2);
/// Output is sent at the latest this long after it was read.
const BATCH_DELAY: Duration = Duration::from_millis(40);
/// A batch is sent as soon as it holds this much text.
const BATCH_BYTES: usize = 64 * 1024;
/// One output item holds at most this much text; longer output is split into several items.
const ITEM_BYTES: usize = 16 * 1024;
/// The tail of a turn's output that becomes its last message (SPEC 8: at most 4,000 chars).
pub const LAST_MESSAGE_CHARS: usize = 4000;
/// The tail of stderr kept for error messages.
const STDERR_TAIL_CHARS: usize = 1500;

/// Inherited variables that make a CLI believe it runs nested inside another agent session
/// (or that belong to the session that launched the app). Checked against the strings the
/// pinned Claude Code and Codex binaries read.
const SCRUBBED_VARS: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_CHILD_NOTES_DIR",
    "CLAUDE_AGENT_SDK_VERSION",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_THREAD_ID",
    "CODEX_SESSION_ID",
    "CODEX_CI",
    "CODEX_INTERNAL_ORIGINATOR_OVERRIDE",
    "PASEO_AGENT_ID",
    "PASEO_MCP_URL",
    "PASEO_MCP_TOKEN",
];
const SCRUBBED_PREFIXES: &[&str] = &["CLAUDE_CODE_SESSION_", "CODEX_NETWORK_PROXY_"];

fn scrubbed(name: &str) -> bool {
    SCRUBBED_VARS.contains(&name) || SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The environment changes for one agent process: scrub inherited session variables, then the
/// provider's configured `env`, then the session's own `env`, then the Paseo variables.
#[derive(Clone, Debug, Default)]
pub struct AgentEnv {
    pub set: BTreeMap<String, String>,
}

impl AgentEnv {
    pub fn new(
        agent_id: AgentId,
        provider_env: &BTreeMap<String, String>,
        session_env: &BTreeMap<String, String>,
        mcp: Option<&McpAccess>,
    ) -> Self {
        let mut set = provider_env.clone();
        set.extend(session_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        set.insert("PASEO_AGENT_ID".into(), agent_id.to_string());
        if let Some(mcp) = mcp {
            set.insert("PASEO_MCP_URL".into(), mcp.url.clone());
            set.insert("PASEO_MCP_TOKEN".into(), mcp.token.clone());
        }
        AgentEnv { set }
    }

    /// The value a variable will have in the agent's process.
    pub fn get(&self, name: &str) -> Option<String> {
        if let Some(v) = self.set.get(name) {
            return Some(v.clone());
        }
        if scrubbed(name) {
            return None;
        }
        std::env::var(name).ok()
    }

    fn apply(&self, cmd: &mut Command) {
        for (name, _) in std::env::vars_os() {
            if let Some(name) = name.to_str() {
                if scrubbed(name) {
                    cmd.env_remove(name);
                }
            }
        }
        cmd.envs(&self.set);
    }
}

/// What to launch.
pub struct Launch<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a AgentEnv,
    pub stdin: bool,
}

/// A spawned agent process: its pipes and a handle that tracks its exit.
pub struct Spawned {
    pub proc: Proc,
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Finds a program the way `execvp` will: a path with a slash must exist, a bare name must be
/// on PATH (the agent's PATH, which the provider's env may change).
pub fn find_program(program: &str, env: &AgentEnv) -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if program.is_empty() {
        return Err("the command is empty".into());
    }
    if program.contains('/') {
        let p = Path::new(program);
        return if executable(p) {
            Ok(p.to_path_buf())
        } else if p.exists() {
            Err(format!("{program} is not an executable file"))
        } else {
            Err(format!("{program} does not exist"))
        };
    }
    let path = env.get("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!("`{program}` was not found on PATH"))
}

/// Spawns a process in a new process group, so the whole tree it starts can be stopped at once.
pub fn spawn(launch: Launch<'_>) -> Result<Spawned, ProviderError> {
    let Some(program) = launch.argv.first() else {
        return Err(ProviderError::Invalid("the command is empty".into()));
    };
    let what = || format!("`{program}`");
    if !launch.cwd.is_dir() {
        return Err(ProviderError::Invalid(format!(
            "the working directory {} does not exist",
            launch.cwd.display()
        )));
    }
    let resolved = find_program(program, launch.env).map_err(|reason| ProviderError::Spawn {
        what: what(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, reason),
    })?;
    let mut cmd = Command::new(resolved);
    cmd.args(&launch.argv[1..])
        .current_dir(launch.cwd)
        .process_group(0)
        .stdin(if launch.stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    launch.env.apply(&mut cmd);
    let mut child = cmd.spawn().map_err(|source| ProviderError::Spawn {
        what: what(),
        source,
    })?;
    let (Some(pid), Some(stdout), Some(stderr)) =
        (child.id(), child.stdout.take(), child.stderr.take())
    else {
        return Err(ProviderError::Protocol(format!(
            "{} started without its pipes",
            what()
        )));
    };
    let stdin = child.stdin.take();
    let pgid = pid as i32;
    Ok(Spawned {
        proc: Proc::watch(child, pgid),
        stdin,
        stdout,
        stderr,
    })
}

/// A running process group whose leader we spawned. A task owns the `Child` and reaps it; the
/// exit status is published through a watch channel. Dropping a `Proc` without `terminate`
/// kills the group, so no agent outlives a lost session.
pub struct Proc {
    pgid: i32,
    exit: watch::Receiver<Option<ExitStatus>>,
    armed: bool,
}

impl Proc {
    fn watch(mut child: Child, pgid: i32) -> Proc {
        let (tx, rx) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await;
            match status {
                Ok(s) => {
                    let _ = tx.send(Some(s));
                }
                Err(e) => {
                    tracing::warn!(pgid, "waiting for agent process failed: {e}");
                    let _ = tx.send(Some(std::os::unix::process::ExitStatusExt::from_raw(
                        0x7f00,
                    )));
                }
            }
        });
        Proc {
            pgid,
            exit: rx,
            armed: true,
        }
    }

    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// A receiver that yields the exit status once the leader is reaped.
    pub fn exit_watch(&self) -> watch::Receiver<Option<ExitStatus>> {
        self.exit.clone()
    }

    /// Waits until the leader has exited and been reaped.
    pub async fn wait(&self) -> ExitStatus {
        let mut rx = self.exit.clone();
        let result = match rx.wait_for(|s| s.is_some()).await {
            Ok(s) => *s,
            Err(_) => None,
        };
        result.unwrap_or_else(|| std::os::unix::process::ExitStatusExt::from_raw(0x7f00))
    }

    pub fn signal(&self, sig: i32) {
        signal_group(self.pgid, sig);
    }

    /// Stops the whole group: SIGTERM, up to `grace` for everything in it to exit, SIGKILL,
    /// and resolves once the leader is reaped and nothing of the group is left alive.
    pub async fn terminate(mut self, grace: Duration) -> ExitStatus {
        self.armed = false;
        terminate_group(self.pgid, grace, Some(self.exit.clone())).await;
        self.wait().await
    }

    /// Gives up ownership without killing (the leader has been reaped; stray members of the
    /// group are the caller's business).
    pub fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.armed {
            signal_group(self.pgid, libc::SIGKILL);
        }
    }
}

pub fn signal_group(pgid: i32, sig: i32) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg only sends a signal; a group that no longer exists yields ESRCH.
    unsafe {
        libc::killpg(pgid, sig);
    }
}

/// One line of /proc/<pid>/stat, the fields we use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ProcStat {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    /// Start time since boot, in clock ticks: with the pid, it names one process for good.
    start: u64,
    live: bool,
}

fn read_stat(pid: &str) -> Option<ProcStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces and parentheses).
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcStat {
        pid: pid.parse().ok()?,
        live: !matches!(*f.first()?, "Z" | "X"),
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start: f.get(19)?.parse().ok()?,
    })
}

fn all_processes() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            read_stat(name)
        })
        .collect()
}

/// Whether any live (non-zombie) process is still in the group.
pub fn group_alive(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    if cfg!(target_os = "linux") && Path::new("/proc/self/stat").exists() {
        all_processes().iter().any(|p| p.pgrp == pgid && p.live)
    } else {
        // SAFETY: signal 0 only checks for existence.
        unsafe { libc::killpg(pgid, 0) == 0 }
    }
}

/// Live descendants of `root` that left its process group (a CLI may start tools in their
/// own session, e.g. behind a PTY): the group signal would miss them.
fn strays(root: i32, pgid: i32) -> Vec<ProcStat> {
    let procs = all_processes();
    let mut found: Vec<ProcStat> = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for p in procs.iter().filter(|p| p.ppid == parent && p.live) {
            if !found.iter().any(|f| f.pid == p.pid) {
                found.push(*p);
                frontier.push(p.pid);
            }
        }
    }
    found.retain(|p| p.pgrp != pgid);
    found
}

fn signal_strays(strays: &[ProcStat], sig: i32) {
    for p in strays {
        // Only the very process we saw: a recycled pid has another start time.
        if read_stat(&p.pid.to_string()).is_some_and(|now| now.start == p.start && now.live) {
            // SAFETY: kill only sends a signal.
            unsafe {
                libc::kill(p.pid, sig);
            }
        }
    }
}

fn strays_alive(strays: &[ProcStat]) -> bool {
    strays
        .iter()
        .any(|p| read_stat(&p.pid.to_string()).is_some_and(|now| now.start == p.start && now.live))
}

/// SIGTERM to the group, wait up to `grace` for the leader (if we have its exit watch) and every
/// other member to be gone, then SIGKILL whatever is left and wait (bounded) for it to go.
pub async fn terminate_group(
    pgid: i32,
    grace: Duration,
    leader: Option<watch::Receiver<Option<ExitStatus>>>,
) {
    let leader_gone = |l: &Option<watch::Receiver<Option<ExitStatus>>>| {
        l.as_ref().map(|rx| rx.borrow().is_some()).unwrap_or(true)
    };
    // Without an exit watch, the leader counts as ours only while it still leads the group.
    let leads = |p: &ProcStat| p.live && p.pgrp == pgid;
    let leader_ours = match &leader {
        Some(_) => !leader_gone(&leader),
        None => read_stat(&pgid.to_string()).is_some_and(|p| leads(&p)),
    };
    let strays = if leader_ours {
        strays(pgid, pgid)
    } else {
        Vec::new()
    };
    let gone = |leader: &Option<watch::Receiver<Option<ExitStatus>>>| {
        leader_gone(leader) && !group_alive(pgid) && !strays_alive(&strays)
    };
    if gone(&leader) {
        return;
    }
    signal_group(pgid, libc::SIGTERM);
    signal_strays(&strays, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if gone(&leader) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tracing::debug!(pgid, "process group outlived SIGTERM; sending SIGKILL");
    signal_group(pgid, libc::SIGKILL);
    signal_strays(&strays, libc::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if gone(&leader) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tracing::warn!(pgid, "process group still present after SIGKILL");
}

/// "exited with code 3" / "was killed by signal 9 (SIGKILL)".
pub fn describe_exit(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        format!("exited with code {code}")
    } else if let Some(sig) = status.signal() {
        format!("was killed by signal {sig} ({})", signal_name(sig))
    } else {
        "exited".to_string()
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => "signal",
    }
}

/// Keeps the last `cap` characters of a text stream.
#[derive(Debug)]
pub struct Tail {
    cap: usize,
    buf: String,
}

impl Tail {
    pub fn new(cap: usize) -> Self {
        Tail {
            cap,
            buf: String::new(),
        }
    }
    pub fn push(&mut self, s: &str) {
        self.buf.push_str(s);
        // Trim only when well past the cap, so pushing is amortised O(len).
        if self.buf.len() > self.cap * 8 + 4096 {
            self.trim();
        }
    }
    fn trim(&mut self) {
        let chars = self.buf.chars().count();
        if chars > self.cap {
            let cut = self
                .buf
                .char_indices()
                .nth(chars - self.cap)
                .map(|(i, _)| i)
                .unwrap_or(0);
            self.buf.drain(..cut);
        }
    }
    pub fn take(&mut self) -> String {
        self.trim();
        std::mem::take(&mut self.buf)
    }
}

/// Decodes a chunk of a byte stream as UTF-8, keeping an incomplete trailing sequence for the
/// next chunk and replacing invalid bytes.
fn decode_utf8(carry: &mut Vec<u8>, data: &[u8]) -> String {
    carry.extend_from_slice(data);
    let mut out = String::new();
    let mut rest: &[u8] = carry;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                rest = &[];
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                match e.error_len() {
                    Some(n) => {
                        out.push('\u{FFFD}');
                        rest = &bad[n..];
                    }
                    None => {
                        rest = bad;
                        break;
                    }
                }
            }
        }
    }
    let keep = rest.to_vec();
    *carry = keep;
    out
}

enum Emit {
    Output { stream: &'static str, data: Vec<u8> },
    Item(NewItem),
    Event(ProviderEvent),
    TakeTails(oneshot::Sender<(String, String)>),
}

/// The single path from a session's tasks to its sink. Output chunks and timeline items are
/// coalesced into `Items` batches (sent when a batch holds `BATCH_BYTES` or `BATCH_DELAY` after
/// its first content); any other event first flushes the pending batch, so order is kept.
/// The channel in is small and the sink is bounded, so a slow runtime slows the producers.
#[derive(Clone)]
pub struct Emitter {
    tx: mpsc::Sender<Emit>,
}

impl Emitter {
    pub fn spawn(sink: EventSink) -> Emitter {
        let (tx, rx) = mpsc::channel(8);
        tokio::spawn(coalesce(rx, sink));
        Emitter { tx }
    }
    /// Raw process output of `stream` ("stdout" / "stderr").
    pub async fn output(&self, stream: &'static str, data: Vec<u8>) -> bool {
        self.tx.send(Emit::Output { stream, data }).await.is_ok()
    }
    pub async fn item(&self, item: NewItem) -> bool {
        self.tx.send(Emit::Item(item)).await.is_ok()
    }
    pub async fn event(&self, event: ProviderEvent) -> bool {
        self.tx.send(Emit::Event(event)).await.is_ok()
    }
    /// Items go through the batcher; everything else as an event.
    pub async fn event_or_items(&self, event: ProviderEvent) -> bool {
        match event {
            ProviderEvent::Items(items) => {
                for item in items {
                    if !self.item(item).await {
                        return false;
                    }
                }
                true
            }
            other => self.event(other).await,
        }
    }
    /// The tail of all output since the last call (what a shell turn's last message is) and
    /// the tail of its stderr; resets both.
    pub async fn take_tails(&self) -> (String, String) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Emit::TakeTails(tx)).await.is_err() {
            return Default::default();
        }
        rx.await.unwrap_or_default()
    }
}

struct Batch {
    items: Vec<NewItem>,
    bytes: usize,
    deadline: Option<Instant>,
}

impl Batch {
    fn add_output(&mut self, stream: &'static str, mut text: &str) {
        while !text.is_empty() {
            let last = self.items.last_mut().filter(|it| {
                it.kind == ItemKind::Output
                    && it.stream.as_deref() == Some(stream)
                    && it.text.len() < ITEM_BYTES
            });
            let room = ITEM_BYTES - last.as_ref().map(|it| it.text.len()).unwrap_or(0);
            let mut cut = text.len().min(room);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            if cut == 0 {
                // A single character wider than the room left: start a new item.
                cut = text
                    .char_indices()
                    .nth(1)
                    .map(|(i, _)| i)
                    .unwrap_or(text.len());
                self.items.push(NewItem::output(stream, &text[..cut]));
            } else if let Some(item) = last {
                item.text.push_str(&text[..cut]);
            } else {
                self.items.push(NewItem::output(stream, &text[..cut]));
            }
            self.bytes += cut;
            text = &text[cut..];
        }
    }
}

async fn coalesce(mut rx: mpsc::Receiver<Emit>, sink: EventSink) {
    let mut batch = Batch {
        items: Vec::new(),
        bytes: 0,
        deadline: None,
    };
    let mut carries: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut all_tail = Tail::new(LAST_MESSAGE_CHARS);
    let mut err_tail = Tail::new(STDERR_TAIL_CHARS);

    async fn flush(batch: &mut Batch, sink: &EventSink) -> bool {
        batch.deadline = None;
        batch.bytes = 0;
        if batch.items.is_empty() {
            return true;
        }
        let items = std::mem::take(&mut batch.items);
        sink.send(ProviderEvent::Items(items)).await
    }

    loop {
        let msg = match batch.deadline {
            Some(deadline) => tokio::select! {
                m = rx.recv() => m,
                _ = tokio::time::sleep_until(deadline) => {
                    if !flush(&mut batch, &sink).await { return; }
                    continue;
                }
            },
            None => rx.recv().await,
        };
        let Some(msg) = msg else {
            flush(&mut batch, &sink).await;
            return;
        };
        match msg {
            Emit::Output { stream, data } => {
                let idx = usize::from(stream == "stderr");
                let text = decode_utf8(&mut carries[idx], &data);
                all_tail.push(&text);
                if idx == 1 {
                    err_tail.push(&text);
                }
                batch.add_output(stream, &text);
            }
            Emit::Item(item) => {
                batch.bytes += item.text.len() + 64;
                batch.items.push(item);
            }
            Emit::Event(event) => {
                if !flush(&mut batch, &sink).await || !sink.send(event).await {
                    return;
                }
                continue;
            }
            Emit::TakeTails(reply) => {
                for (idx, stream) in [(0, "stdout"), (1, "stderr")] {
                    if !carries[idx].is_empty() {
                        let rest = String::from_utf8_lossy(&std::mem::take(&mut carries[idx]))
                            .into_owned();
                        all_tail.push(&rest);
                        if idx == 1 {
                            err_tail.push(&rest);
                        }
                        batch.add_output(stream, &rest);
                    }
                }
                let _ = reply.send((all_tail.take(), err_tail.take()));
                continue;
            }
        }
        if batch.bytes >= BATCH_BYTES {
            if !flush(&mut batch, &sink).await {
                return;
            }
        } else if batch.deadline.is_none() && !batch.items.is_empty() {
            batch.deadline = Some(Instant::now() + BATCH_DELAY);
        }
    }
}

/// Reads a pipe to its end and hands every chunk to the emitter as output of `stream`.
/// `progress` counts bytes read, so a caller can tell a draining pipe from an idle one.
pub async fn pump_output<R: AsyncRead + Unpin>(
    mut reader: R,
    stream: &'static str,
    emitter: Emitter,
    progress: Arc<AtomicU64>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                progress.fetch_add(n as u64, Ordering::Relaxed);
                if !emitter.output(stream, buf[..n].to_vec()).await {
                    return;
                }
            }
        }
    }
}

/// After a process exited, waits for its output readers to reach the end of their pipes. A
/// grandchild that keeps a pipe open would hold them forever, so the wait ends once no bytes
/// have arrived for a short while.
/// Readers still running then are stopped, so nothing they read later leaks past the turn.
pub async fn drain_readers(handles: Vec<tokio::task::JoinHandle<()>>, progress: &AtomicU64) {
    let aborts: Vec<_> = handles.iter().map(|h| h.abort_handle()).collect();
    let all = futures::future::join_all(handles);
    tokio::pin!(all);
    let mut seen = progress.load(Ordering::Relaxed);
    loop {
        tokio::select! {
            _ = &mut all => return,
            _ = tokio::time::sleep(Duration::from_millis(300)) => {
                let now = progress.load(Ordering::Relaxed);
                if now == seen {
                    tracing::debug!("output pipes still open after exit (a background process holds them); not waiting");
                    aborts.iter().for_each(|a| a.abort());
                    return;
                }
                seen = now;
            }
        }
    }
}

/// Reads newline-delimited records (JSON lines). Lines longer than `max` are skipped with a
/// warning instead of being buffered without bound.
pub struct LineReader<R> {
    reader: R,
    max: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(reader: R, max: usize) -> Self {
        LineReader { reader, max }
    }

    /// The next line without its newline; `None` at the end of the stream.
    pub async fn next_line(&mut self) -> Option<String> {
        let mut line = Vec::new();
        let mut overlong = false;
        loop {
            let buf = match self.reader.fill_buf().await {
                Ok(b) => b,
                Err(_) => return None,
            };
            if buf.is_empty() {
                if line.is_empty() && !overlong {
                    return None;
                }
                break;
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if !overlong {
                if line.len() + chunk.len() > self.max {
                    overlong = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            let used = done.unwrap_or(buf.len());
            self.reader.consume(used);
            if done.is_some() {
                if overlong {
                    tracing::warn!(
                        max = self.max,
                        "skipped an overlong line from an agent process"
                    );
                    overlong = false;
                    continue;
                }
                break;
            }
        }
        Some(String::from_utf8_lossy(&line).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_split_across_chunks_is_kept_whole() {
        let s = "héllo→x";
        let bytes = s.as_bytes();
        let mut carry = Vec::new();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&decode_utf8(&mut carry, &[*b]));
        }
        assert_eq!(out, s);
        assert!(carry.is_empty());
        let mut carry = Vec::new();
        assert_eq!(decode_utf8(&mut carry, b"a\xffb"), "a\u{FFFD}b");
    }

    #[test]
    fn tail_keeps_the_last_characters() {
        let mut t = Tail::new(5);
        for _ in 0..10_000 {
            t.push("abc→");
        }
        assert_eq!(t.take(), "→abc→");
    }

    #[test]
    fn batches_split_output_into_bounded_items() {
        let mut b = Batch {
            items: Vec::new(),
            bytes: 0,
            deadline: None,
        };
        b.add_output("stdout", &"x".repeat(ITEM_BYTES * 2 + 10));
        b.add_output("stderr", "e");
        b.add_output("stdout", "y");
        let lens: Vec<_> = b.items.iter().map(|i| i.text.len()).collect();
        assert_eq!(lens, [ITEM_BYTES, ITEM_BYTES, 10, 1, 1]);
        assert_eq!(b.bytes, ITEM_BYTES * 2 + 12);
    }

    #[test]
    fn scrubbing_covers_nested_session_variables() {
        for v in [
            "CLAUDECODE",
            "CLAUDE_CODE_ENTRYPOINT",
            "CLAUDE_CODE_SSE_PORT",
            "CLAUDE_CODE_SESSION_ID",
            "CODEX_THREAD_ID",
            "CODEX_SANDBOX",
        ] {
            assert!(scrubbed(v), "{v}");
        }
        assert!(!scrubbed("PATH"));
        assert!(!scrubbed("ANTHROPIC_BASE_URL"));
    }

    #[tokio::test]
    async fn line_reader_skips_overlong_lines() {
        let data = format!("short\n{}\nafter\nlast", "z".repeat(100));
        let mut r = LineReader::new(tokio::io::BufReader::new(data.as_bytes()), 50);
        assert_eq!(r.next_line().await.as_deref(), Some("short"));
        assert_eq!(r.next_line().await.as_deref(), Some("after"));
        assert_eq!(r.next_line().await.as_deref(), Some("last"));
        assert_eq!(r.next_line().await, None);
    }
}
