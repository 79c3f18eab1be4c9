//! Shared helpers for the provider tests: an event sink the test reads from, bounded waits,
//! process checks, the scripted stand-ins for the model APIs (`anthropic`, `openai`, on what
//! `standin` shares), the MCP echo server, and the real CLIs against them (`cli`).
#![allow(dead_code)]

pub mod anthropic;
pub mod cli;
pub mod door;
pub mod git;
pub mod mcp_echo;
pub mod openai;
pub mod scripted;

pub use anthropic::standin;
pub use door::Door;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use paseo_core::model::{AgentConfig, AgentId, ItemKind, NewItem};
use paseo_core::providers::{
    EventSink, McpAccess, Provider, ProviderEvent, Session, SessionSpec, SinkMessage, TurnInput,
    TurnOutcome,
};
use tokio::sync::mpsc;

/// How long any single wait in a test may take before it fails.
pub const WAIT: Duration = Duration::from_secs(30);

pub fn spec(cwd: &Path) -> SessionSpec {
    SessionSpec {
        agent_id: AgentId::new(),
        provider: String::new(),
        cwd: cwd.to_path_buf(),
        config: AgentConfig::default(),
        resume: None,
        env: BTreeMap::new(),
        mcp: None,
        groups: None,
        sandbox: None,
    }
}

pub fn mcp_access() -> McpAccess {
    McpAccess {
        url: "http://127.0.0.1:9/mcp".into(),
        token: "test-token".into(),
        config_dir: secrets_dir(),
        tools: paseo_core::mcp::PaseoTools::served().into(),
    }
}

/// A private folder for the MCP configuration files sessions write (what the app's
/// `$PASEO_HOME/secrets` is), in the build's scratch folder; sessions remove their own files.
pub fn secrets_dir() -> PathBuf {
    use std::os::unix::fs::DirBuilderExt;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-secrets");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .expect("the tests' secrets folder");
    dir
}

/// The receiving end of a session's sink, with the last events seen (for failure messages).
pub struct Events {
    rx: mpsc::Receiver<SinkMessage>,
    pub seen: std::collections::VecDeque<ProviderEvent>,
}

const KEEP_SEEN: usize = 40;

pub fn sink(agent: AgentId, capacity: usize) -> (EventSink, Events) {
    let (tx, rx) = mpsc::channel(capacity);
    (
        EventSink::new(agent, 1, tx),
        Events {
            rx,
            seen: Default::default(),
        },
    )
}

pub fn prompt(s: &str) -> TurnInput {
    TurnInput::Prompt(s.to_string())
}

/// A started session, its events, and those that came before it was ready.
pub struct Started {
    pub s: Box<dyn Session>,
    pub ev: Events,
    pub opening: Vec<ProviderEvent>,
}

/// Starts a session of `provider` (its sink holding `cap` events) and waits until it is ready.
pub async fn start(provider: &dyn Provider, spec: SessionSpec, cap: usize) -> Started {
    let (sink, mut ev) = sink(spec.agent_id, cap);
    let s = provider.start(spec, sink).await.unwrap();
    let opening = ev.until(|e| matches!(e, ProviderEvent::Ready)).await;
    Started { s, ev, opening }
}

/// The first tool call among `events` (e.g. the one a permission question that follows is about).
pub fn first_tool_call(events: &[ProviderEvent]) -> Option<NewItem> {
    events
        .iter()
        .flat_map(|e| match e {
            ProviderEvent::Items(items) => items.as_slice(),
            _ => &[],
        })
        .find(|i| i.kind == ItemKind::ToolCall)
        .cloned()
}

/// One turn's events, collected up to its `TurnEnded`.
#[derive(Debug, Default)]
pub struct Turn {
    pub items: Vec<NewItem>,
    pub batches: usize,
    pub last_message: Option<String>,
    pub outcome: Option<TurnOutcome>,
    pub other: Vec<ProviderEvent>,
}

impl Turn {
    pub fn text_of(&self, kind: ItemKind) -> String {
        self.items
            .iter()
            .filter(|i| i.kind == kind)
            .map(|i| i.text.as_str())
            .collect()
    }
    pub fn output(&self, stream: &str) -> String {
        self.items
            .iter()
            .filter(|i| i.kind == ItemKind::Output && i.stream.as_deref() == Some(stream))
            .map(|i| i.text.as_str())
            .collect()
    }
    pub fn outcome(&self) -> &TurnOutcome {
        self.outcome.as_ref().expect("turn ended")
    }
    /// The first item of this kind.
    pub fn item(&self, kind: ItemKind) -> Option<&NewItem> {
        self.items.iter().find(|i| i.kind == kind)
    }
    /// Why the turn failed, with the output detail the record and notices carry; panics if it
    /// did not fail.
    pub fn failure(&self) -> String {
        match self.outcome() {
            TurnOutcome::Failed { message, detail } => match detail {
                Some(d) => format!("{message}: {d}"),
                None => message.clone(),
            },
            other => panic!("the turn did not fail: {other:?}"),
        }
    }
}

impl Events {
    pub async fn next(&mut self) -> ProviderEvent {
        match tokio::time::timeout(WAIT, self.rx.recv()).await {
            Ok(Some(m)) => {
                self.remember(&m.event);
                m.event
            }
            Ok(None) => panic!("the session's sink closed; seen: {:#?}", self.tail()),
            Err(_) => panic!("no event within {WAIT:?}; seen: {:#?}", self.tail()),
        }
    }

    /// Like `next`, but `None` if nothing arrives within `d`.
    pub async fn next_within(&mut self, d: Duration) -> Option<ProviderEvent> {
        match tokio::time::timeout(d, self.rx.recv()).await {
            Ok(Some(m)) => {
                self.remember(&m.event);
                Some(m.event)
            }
            _ => None,
        }
    }

    fn remember(&mut self, e: &ProviderEvent) {
        if self.seen.len() == KEEP_SEEN {
            self.seen.pop_front();
        }
        // Output floods would make this list huge: keep a summary of item batches.
        let e = match e {
            ProviderEvent::Items(items)
                if items.iter().map(|i| i.text.len()).sum::<usize>() > 4096 =>
            {
                ProviderEvent::Items(vec![])
            }
            other => other.clone(),
        };
        self.seen.push_back(e);
    }

    fn tail(&self) -> Vec<String> {
        self.seen
            .iter()
            .map(|e| format!("{e:?}").chars().take(400).collect())
            .collect()
    }

    /// Events up to and including the first one matching `pred`.
    pub async fn until(&mut self, pred: impl Fn(&ProviderEvent) -> bool) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        loop {
            let e = self.next().await;
            let done = pred(&e);
            out.push(e);
            if done {
                return out;
            }
        }
    }

    pub async fn ready(&mut self) {
        self.until(|e| matches!(e, ProviderEvent::Ready)).await;
    }

    /// Collects a turn up to its end.
    pub async fn turn(&mut self) -> Turn {
        let mut t = Turn::default();
        loop {
            match self.next().await {
                ProviderEvent::Items(items) => {
                    t.batches += 1;
                    t.items.extend(items);
                }
                ProviderEvent::LastMessage(m) => t.last_message = Some(m),
                ProviderEvent::TurnEnded(o) => {
                    t.outcome = Some(o);
                    return t;
                }
                other => t.other.push(other),
            }
        }
    }
}

/// Polls `f` until it returns `Some`, for at most `WAIT`.
pub async fn poll<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    eventually(WAIT, || {
        let v = f().ok_or_else(|| format!("timed out waiting for {what}"));
        async move { v }
    })
    .await
}

/// Tries `attempt` every 20 ms until it gives `Ok`, for at most `within`; then fails with what
/// the last attempt saw instead.
pub async fn eventually<T, F: std::future::Future<Output = Result<T, String>>>(
    within: Duration,
    mut attempt: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match attempt().await {
            Ok(v) => return v,
            Err(seen) if tokio::time::Instant::now() > deadline => panic!("{seen}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Whether a process is alive (a zombie waiting for its reaper counts as dead).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next().map(str::to_string));
            !matches!(state.as_deref(), Some("Z") | Some("X"))
        }
        Err(_) => false,
    }
}

/// Reads a pid a test script wrote to a file, waiting for the file to appear.
pub async fn read_pid(path: &Path) -> i32 {
    poll(&format!("pid file {}", path.display()), || {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    })
    .await
}

/// Resident memory of this test process in bytes.
pub fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap()
}

/// The pinned agent CLIs that `scripts/setup.sh` installs; a missing one fails the test.
pub fn agent_cli(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin = root.join("target/agent-clis/node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run scripts/setup.sh to install the pinned agent CLIs",
        bin.display()
    );
    bin.canonicalize().unwrap()
}

/// The host's pid of the process of `agent` that knows itself as `pid`: a contained agent runs
/// in a PID namespace of its own (SPEC 16), so the pids it reports are the box's. An unconfined
/// agent's are the host's already.
pub fn host_pid(agent: AgentId, pid: i32) -> i32 {
    for p in agent_pids(agent) {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{p}/status")) else {
            continue;
        };
        let inner = status
            .lines()
            .find(|l| l.starts_with("NSpid:"))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|x| x.parse::<i32>().ok());
        if inner == Some(pid) {
            return p;
        }
    }
    panic!("agent {agent} has no process {pid}")
}

/// Live processes whose environment carries `PASEO_AGENT_ID=<agent>`: an agent's process tree.
pub fn agent_pids(agent: AgentId) -> Vec<i32> {
    let needle = format!("PASEO_AGENT_ID={agent}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()) && alive(pid) {
            pids.push(pid);
        }
    }
    pids
}

/// Kills an agent's whole process tree with SIGKILL, as a crash or the OOM killer would.
pub fn crash_agent(agent: AgentId) {
    let pids = agent_pids(agent);
    assert!(!pids.is_empty(), "no process of agent {agent} found");
    for pid in pids {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}
