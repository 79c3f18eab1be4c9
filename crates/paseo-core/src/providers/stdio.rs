//! One long-lived agent CLI process spoken to in JSON lines over stdio (Claude Code's
//! stream-json, Codex's app-server JSON-RPC): the [`Session`] both CLIs share.
//!
//! A [`Protocol`] is one CLI's pure state machine: stdout lines in, provider events and stdin
//! messages out, no I/O. [`StdioSession`] owns the process around it: a task writing the
//! protocol's messages to stdin as JSON lines, a task keeping the tail of stderr (for the exit
//! message), a task reading stdout line by line into the protocol and its events into the
//! sink, and close (stdin closed, then SIGTERM, grace, SIGKILL of the whole group, reaped).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::output::{Emitter, Tail};
use super::process::{self, describe_exit, join_or_abort, AgentEnv, Launch, Proc, TERM_GRACE};
use super::{lock, EventSink, ProviderError, ProviderEvent, Session, TurnInput, TurnOutcome};

/// A stdout line longer than this is skipped (a runaway tool result must not exhaust memory).
const MAX_LINE: usize = 32 * 1024 * 1024;
/// How much of stderr the exit message may quote.
const STDERR_TAIL_CHARS: usize = 2000;

/// What the start of a session, or one stdout line, leads to.
#[derive(Debug, Default, PartialEq)]
pub struct Step {
    pub events: Vec<ProviderEvent>,
    /// Messages to write to the CLI's stdin, one JSON line each.
    pub out: Vec<Value>,
    /// The session cannot go on (e.g. its thread could not be resumed): the process is
    /// stopped, and [`Protocol::on_exit`] says why.
    pub fatal: bool,
}

/// One CLI's protocol as a pure state machine, driven by [`StdioSession`]. Without I/O, it is
/// tested by replaying streams recorded from the real CLIs.
pub trait Protocol: Send + 'static {
    /// What opens the session: events to report before any output is read, messages to write.
    fn startup(&mut self) -> Step;
    /// The messages that start a turn with this input text; `Err` when a turn cannot start.
    fn send_turn(&mut self, text: &str) -> Result<Vec<Value>, ProviderError>;
    /// Forgets the turn just started: its messages could not be written.
    fn abandon_turn(&mut self);
    /// The messages that interrupt the running turn; none when there is nothing to interrupt
    /// (or the interrupt waits for something the CLI has yet to say).
    fn interrupt(&mut self) -> Vec<Value>;
    /// The message answering a pending permission request.
    fn answer_permission(&mut self, request_id: &str, allow: bool) -> Result<Value, ProviderError>;
    /// Parses one stdout line.
    fn on_line(&mut self, line: &str) -> Step;
    /// The process is gone (`message`: how, and the end of its stderr): a running turn fails,
    /// pending permissions are void, and the session reports its exit.
    fn on_exit(&mut self, message: &str) -> Vec<ProviderEvent>;
}

/// A stdout line as JSON. Blank lines are skipped, and so is anything else that is not JSON (a
/// CLI may print plain text among its messages).
pub fn parse_line(line: &str) -> Option<Value> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let parsed = serde_json::from_str(line);
    if parsed.is_err() {
        tracing::debug!("non-JSON stdout line: {line:.200}");
    }
    parsed.ok()
}

/// The events that end a turn, as both CLIs' protocols report it: questions left open can no
/// longer be answered, a turn without assistant text has an empty last message (not the
/// previous turn's), then the outcome.
pub fn turn_end(
    open_requests: impl IntoIterator<Item = String>,
    said_something: bool,
    outcome: TurnOutcome,
) -> Vec<ProviderEvent> {
    let mut events = resolved(open_requests);
    if !said_something {
        events.push(ProviderEvent::LastMessage(String::new()));
    }
    events.push(ProviderEvent::TurnEnded(outcome));
    events
}

/// The events that report a process gone (see [`Protocol::on_exit`]): open questions are
/// void, a running turn fails with the exit's message, and the session has exited.
pub fn exit_events(
    open_requests: impl IntoIterator<Item = String>,
    turn_running: bool,
    message: &str,
) -> Vec<ProviderEvent> {
    let mut events = resolved(open_requests);
    if turn_running {
        events.push(ProviderEvent::TurnEnded(TurnOutcome::Failed {
            message: message.to_string(),
            detail: None,
        }));
    }
    events.push(ProviderEvent::Exited {
        message: message.to_string(),
    });
    events
}

fn resolved(open_requests: impl IntoIterator<Item = String>) -> Vec<ProviderEvent> {
    open_requests
        .into_iter()
        .map(|request_id| ProviderEvent::PermissionResolved { request_id })
        .collect()
}

/// The status of each MCP server as the CLI last reported it, so only changes are reported.
#[derive(Debug, Default)]
pub struct McpStatuses(BTreeMap<String, String>);

impl McpStatuses {
    /// The event for a server's status, unless that status was reported already.
    pub fn update(&mut self, server: &str, status: &str) -> Option<ProviderEvent> {
        if self.0.get(server).map(String::as_str) == Some(status) {
            return None;
        }
        self.0.insert(server.to_string(), status.to_string());
        Some(ProviderEvent::McpStatus {
            server: server.to_string(),
            status: status.to_string(),
        })
    }
}

/// A [`Protocol`] running over one CLI process.
pub struct StdioSession<P> {
    protocol: Arc<Mutex<P>>,
    stdin: Option<mpsc::UnboundedSender<Value>>,
    proc: Option<Proc>,
    reader: Option<JoinHandle<()>>,
    closing: Arc<AtomicBool>,
    exited: Arc<AtomicBool>,
}

impl<P: Protocol> StdioSession<P> {
    /// Spawns `argv` in `cwd` and runs `protocol` over it. `cli` names the CLI in exit
    /// messages ("Claude Code exited with code 1: ...").
    pub async fn start(
        cli: &'static str,
        argv: &[String],
        cwd: &Path,
        env: &AgentEnv,
        mut protocol: P,
        sink: EventSink,
    ) -> Result<Box<dyn Session>, ProviderError> {
        let spawned = process::spawn(Launch {
            argv,
            cwd,
            env,
            stdin: true,
        })?;
        let opening = protocol.startup();
        let (stdin_tx, stdin_rx) = mpsc::unbounded_channel();
        for msg in opening.out {
            let _ = stdin_tx.send(msg);
        }
        if let Some(stdin) = spawned.stdin {
            tokio::spawn(write_stdin(stdin, stdin_rx));
        }
        let emitter = Emitter::spawn(sink);
        let stderr_tail = Arc::new(Mutex::new(Tail::new(STDERR_TAIL_CHARS)));
        let stderr_task = tokio::spawn(read_stderr(cli, spawned.stderr, stderr_tail.clone()));
        // Reported before any output is read, so they come first.
        emitter.send_all(opening.events).await;
        let protocol = Arc::new(Mutex::new(protocol));
        let closing = Arc::new(AtomicBool::new(false));
        let exited = Arc::new(AtomicBool::new(false));
        let reader = tokio::spawn(read_stdout(Reader {
            cli,
            stdout: spawned.stdout,
            protocol: protocol.clone(),
            emitter,
            stdin: stdin_tx.clone(),
            exit: spawned.proc.exit_watch(),
            pgid: spawned.proc.pgid(),
            stderr_task,
            stderr_tail,
            closing: closing.clone(),
            exited: exited.clone(),
        }));
        Ok(Box::new(StdioSession {
            protocol,
            stdin: Some(stdin_tx),
            proc: Some(spawned.proc),
            reader: Some(reader),
            closing,
            exited,
        }))
    }

    fn alive(&self) -> Result<(), ProviderError> {
        if self.exited.load(Ordering::SeqCst) {
            return Err(ProviderError::SessionGone);
        }
        Ok(())
    }

    /// Hands messages to the stdin writer. Nothing to write cannot fail, even once the process
    /// is gone (e.g. an interrupt with no turn running).
    fn write(&self, msgs: Vec<Value>) -> Result<(), ProviderError> {
        if msgs.is_empty() {
            return Ok(());
        }
        self.alive()?;
        let tx = self.stdin.as_ref().ok_or(ProviderError::SessionGone)?;
        msgs.into_iter()
            .try_for_each(|m| tx.send(m).map_err(|_| ProviderError::SessionGone))
    }
}

impl<P: Protocol> Session for StdioSession<P> {
    fn send(&mut self, input: TurnInput) -> Result<(), ProviderError> {
        self.alive()?;
        // The turn starts before its messages are written: the answer may come back at once.
        let msgs = lock(&self.protocol).send_turn(input.text())?;
        self.write(msgs)
            .inspect_err(|_| lock(&self.protocol).abandon_turn())
    }

    fn interrupt(&mut self) -> Result<(), ProviderError> {
        let msgs = lock(&self.protocol).interrupt();
        self.write(msgs)
    }

    fn respond_permission(&mut self, request_id: &str, allow: bool) -> Result<(), ProviderError> {
        let msg = lock(&self.protocol).answer_permission(request_id, allow)?;
        self.write(vec![msg])
    }

    fn close(mut self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            self.closing.store(true, Ordering::SeqCst);
            // Closing stdin asks the CLI to finish and exit on its own.
            self.stdin.take();
            if let Some(proc) = self.proc.take() {
                let mut exit = proc.exit_watch();
                let _ =
                    tokio::time::timeout(Duration::from_secs(1), exit.wait_for(|s| s.is_some()))
                        .await;
                proc.terminate(TERM_GRACE).await;
            }
            if let Some(reader) = self.reader.take() {
                join_or_abort(reader, Duration::from_millis(500)).await;
            }
        })
    }
}

async fn write_stdin(mut stdin: ChildStdin, mut rx: mpsc::UnboundedReceiver<Value>) {
    while let Some(msg) = rx.recv().await {
        let mut line = msg.to_string();
        line.push('\n');
        if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
    let _ = stdin.shutdown().await;
}

async fn read_stderr(cli: &'static str, stderr: ChildStderr, tail: Arc<Mutex<Tail>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(cli, "stderr: {line}");
        let mut t = lock(&tail);
        t.push(&line);
        t.push("\n");
    }
}

/// What the stdout reader works with.
struct Reader<P> {
    cli: &'static str,
    stdout: ChildStdout,
    protocol: Arc<Mutex<P>>,
    emitter: Emitter,
    stdin: mpsc::UnboundedSender<Value>,
    exit: watch::Receiver<Option<std::process::ExitStatus>>,
    pgid: i32,
    stderr_task: JoinHandle<()>,
    stderr_tail: Arc<Mutex<Tail>>,
    closing: Arc<AtomicBool>,
    exited: Arc<AtomicBool>,
}

/// Feeds stdout to the protocol until it ends, then reports the exit (unless closing).
async fn read_stdout<P: Protocol>(mut r: Reader<P>) {
    let mut lines = LineReader::new(BufReader::new(r.stdout), MAX_LINE);
    while let Some(line) = lines.next_line().await {
        let step = lock(&r.protocol).on_line(&line);
        for msg in step.out {
            let _ = r.stdin.send(msg);
        }
        if !r.emitter.send_all(step.events).await {
            return;
        }
        if step.fatal {
            // The session cannot go on: stop the process; the exit report below says why.
            process::signal_group(r.pgid, libc::SIGTERM);
        }
    }
    let status = r.exit.wait_for(|s| s.is_some()).await.ok().and_then(|s| *s);
    let _ = tokio::time::timeout(Duration::from_secs(1), r.stderr_task).await;
    r.exited.store(true, Ordering::SeqCst);
    if r.closing.load(Ordering::SeqCst) {
        return;
    }
    let mut message = match status {
        Some(s) => format!("{} {}", r.cli, describe_exit(&s)),
        None => format!("{} exited", r.cli),
    };
    let tail = lock(&r.stderr_tail).take();
    let tail = tail.trim();
    if !tail.is_empty() {
        message.push_str(": ");
        message.push_str(tail);
    }
    let events = lock(&r.protocol).on_exit(&message);
    r.emitter.send_all(events).await;
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
    //! The shared session around a real process, with a protocol small enough to read: each
    //! turn is one JSON line that the process answers with one line.
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::model::AgentId;
    use crate::providers::SinkMessage;

    #[derive(Default)]
    struct Echo {
        running: bool,
    }

    impl Protocol for Echo {
        fn startup(&mut self) -> Step {
            Step {
                events: vec![ProviderEvent::Ready],
                out: vec![json!({"hello": true})],
                fatal: false,
            }
        }
        fn send_turn(&mut self, text: &str) -> Result<Vec<Value>, ProviderError> {
            if std::mem::replace(&mut self.running, true) {
                return Err(ProviderError::Invalid("busy".into()));
            }
            Ok(vec![json!({"say": text})])
        }
        fn abandon_turn(&mut self) {
            self.running = false;
        }
        fn interrupt(&mut self) -> Vec<Value> {
            vec![]
        }
        fn answer_permission(&mut self, id: &str, _: bool) -> Result<Value, ProviderError> {
            Err(ProviderError::Invalid(format!("no request {id}")))
        }
        fn on_line(&mut self, line: &str) -> Step {
            let Some(v) = parse_line(line) else {
                return Step::default();
            };
            let Some(said) = v["say"].as_str() else {
                return Step::default();
            };
            self.running = false;
            let mut events = vec![ProviderEvent::LastMessage(said.to_string())];
            events.extend(turn_end([], true, TurnOutcome::Completed));
            Step {
                events,
                out: vec![],
                fatal: said == "stop",
            }
        }
        fn on_exit(&mut self, message: &str) -> Vec<ProviderEvent> {
            exit_events([], std::mem::take(&mut self.running), message)
        }
    }

    async fn start(script: &str) -> (Box<dyn Session>, mpsc::Receiver<SinkMessage>) {
        let agent = AgentId::new();
        let (tx, rx) = mpsc::channel(16);
        let env = AgentEnv::new(agent, &BTreeMap::new(), &BTreeMap::new(), None);
        let argv = ["/bin/sh".to_string(), "-c".into(), script.into()];
        let sink = EventSink::new(agent, 1, tx);
        let cwd = std::env::temp_dir();
        let session = StdioSession::start("Echo", &argv, &cwd, &env, Echo::default(), sink)
            .await
            .unwrap();
        (session, rx)
    }

    async fn next(rx: &mut mpsc::Receiver<SinkMessage>) -> ProviderEvent {
        let msg = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await;
        msg.expect("an event in time").expect("an open sink").event
    }

    #[tokio::test]
    async fn lines_go_both_ways_and_close_reports_nothing_more() {
        // Answers each line after the opening one with the line itself, like a CLI's reply.
        let (mut s, mut rx) = start("read opening; case $opening in *hello*) cat ;; esac").await;
        assert_eq!(next(&mut rx).await, ProviderEvent::Ready);
        s.send(TurnInput::Prompt("hi".into())).unwrap();
        assert!(matches!(
            s.send(TurnInput::Prompt("again".into())),
            Err(ProviderError::Invalid(_))
        ));
        assert_eq!(next(&mut rx).await, ProviderEvent::LastMessage("hi".into()));
        let ended = ProviderEvent::TurnEnded(TurnOutcome::Completed);
        assert_eq!(next(&mut rx).await, ended);
        assert!(s.interrupt().is_ok(), "nothing to write is not an error");
        tokio::time::timeout(Duration::from_secs(10), s.close())
            .await
            .expect("close resolves");
        assert!(rx.recv().await.is_none(), "nothing after close");
    }

    #[tokio::test]
    async fn an_exit_fails_the_running_turn_with_the_status_and_stderr() {
        let (mut s, mut rx) = start("read opening; read turn; echo 'bad input' >&2; exit 3").await;
        assert_eq!(next(&mut rx).await, ProviderEvent::Ready);
        s.send(TurnInput::Prompt("x".into())).unwrap();
        let message = "Echo exited with code 3: bad input".to_string();
        let failed = TurnOutcome::Failed {
            message: message.clone(),
            detail: None,
        };
        assert_eq!(next(&mut rx).await, ProviderEvent::TurnEnded(failed));
        assert_eq!(next(&mut rx).await, ProviderEvent::Exited { message });
        assert!(matches!(
            s.send(TurnInput::Prompt("y".into())),
            Err(ProviderError::SessionGone)
        ));
        assert!(s.interrupt().is_ok());
        s.close().await;
    }

    #[tokio::test]
    async fn a_fatal_line_stops_the_process() {
        let (mut s, mut rx) = start("read opening; cat; sleep 300").await;
        assert_eq!(next(&mut rx).await, ProviderEvent::Ready);
        s.send(TurnInput::Prompt("stop".into())).unwrap();
        assert_eq!(
            next(&mut rx).await,
            ProviderEvent::LastMessage("stop".into())
        );
        next(&mut rx).await;
        // Without the SIGTERM the process would sleep on; the exit comes at once.
        let exited = next(&mut rx).await;
        assert!(
            matches!(&exited, ProviderEvent::Exited { message } if message.contains("SIGTERM")),
            "{exited:?}"
        );
        s.close().await;
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
