//! Sessions whose every turn is one process (the `shell` and `command` providers): each turn
//! spawns the turn's command in its own process group in the agent's cwd, streams its output,
//! and ends with the exit status. Interrupt sends SIGINT to the group and escalates to SIGTERM
//! and SIGKILL if the turn ignores it; close stops the running turn and anything earlier turns
//! left running in the background.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::io::AsyncWriteExt;
use tokio::task::JoinHandle;

use super::output::{drain_readers, pump_output, Emitter, Progress};
use super::process::{
    self, check_dir, describe_exit, join_or_abort, signal_group, AgentEnv, Launch, INTERRUPT_GRACE,
    TERM_GRACE,
};
use super::{
    lock, EventSink, LastRun, ProviderError, ProviderEvent, Session, TurnInput, TurnOutcome,
};

/// The process one turn runs.
pub struct TurnCommand {
    pub argv: Vec<String>,
    /// Written to the process's stdin, which is then closed. `None`: stdin is /dev/null.
    pub stdin: Option<String>,
    /// A file the process reads (a prompt too long for an argument), removed after the turn.
    pub keep: Option<tempfile::TempPath>,
}

impl TurnCommand {
    pub fn new(argv: Vec<String>, stdin: Option<String>) -> TurnCommand {
        TurnCommand {
            argv,
            stdin,
            keep: None,
        }
    }
}

/// Linux's limit on one argument's length (`MAX_ARG_STRLEN`, the terminating NUL included): a
/// longer prompt cannot travel as an argument (`execve` fails with E2BIG).
pub const MAX_ARG_BYTES: usize = 128 * 1024;

/// The turn a prompt makes, or why it cannot run.
pub type BuildTurn = Arc<dyn Fn(&str) -> Result<TurnCommand, ProviderError> + Send + Sync>;

#[derive(Default)]
struct TurnState {
    pgid: Mutex<Option<i32>>,
    canceled: AtomicBool,
    finished: AtomicBool,
}

impl TurnState {
    fn pgid(&self) -> Option<i32> {
        *lock(&self.pgid)
    }
}

/// What every turn of a session runs with.
pub struct OneShot {
    /// The provider's id, in messages.
    pub name: String,
    /// Whether the agent reads its input (else a finish notice must never run as a command).
    pub reads_prompts: bool,
    pub cwd: PathBuf,
    pub env: AgentEnv,
    pub build: BuildTurn,
}

impl OneShot {
    /// Starts the session: it is ready at once, as every turn is a process of its own.
    pub async fn start(self, sink: EventSink) -> Result<Box<dyn Session>, ProviderError> {
        check_dir(&self.cwd)?;
        let emitter = Emitter::spawn(sink);
        emitter.event(ProviderEvent::Ready).await;
        Ok(Box::new(OneShotSession {
            turns: Arc::new(self),
            emitter,
            current: None,
            groups: Arc::default(),
            closing: Arc::default(),
        }))
    }
}

struct OneShotSession {
    turns: Arc<OneShot>,
    emitter: Emitter,
    current: Option<(Arc<TurnState>, JoinHandle<()>)>,
    groups: Arc<Mutex<Vec<i32>>>,
    closing: Arc<AtomicBool>,
}

impl Session for OneShotSession {
    fn send(&mut self, input: TurnInput) -> Result<(), ProviderError> {
        if matches!(input, TurnInput::Notice(_)) && !self.turns.reads_prompts {
            return Err(ProviderError::Invalid(format!(
                "{} agents do not read prompts: a finish notice is only recorded in the timeline",
                self.turns.name
            )));
        }
        if let Some((state, _)) = &self.current {
            if !state.finished.load(Ordering::SeqCst) {
                return Err(ProviderError::Invalid("a turn is already running".into()));
            }
        }
        // Forget groups whose processes are all gone, so a recycled id is never signalled.
        lock(&self.groups).retain(|g| process::group_alive(*g));
        let cmd = (self.turns.build)(input.text())?;
        let state = Arc::new(TurnState::default());
        let task = tokio::spawn(run_turn(
            self.turns.clone(),
            cmd,
            self.emitter.clone(),
            state.clone(),
            self.groups.clone(),
            self.closing.clone(),
        ));
        self.current = Some((state, task));
        Ok(())
    }

    fn interrupt(&mut self) -> Result<(), ProviderError> {
        let Some((state, _)) = &self.current else {
            return Ok(());
        };
        if state.finished.load(Ordering::SeqCst) || state.canceled.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        if let Some(pgid) = state.pgid() {
            escalate(pgid, state.clone());
        }
        Ok(())
    }

    fn respond_permission(&mut self, request_id: &str, _allow: bool) -> Result<(), ProviderError> {
        Err(ProviderError::Invalid(format!(
            "no pending permission request {request_id:?}: {} agents do not ask for permissions",
            self.turns.name
        )))
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        let this = *self;
        Box::pin(async move {
            this.closing.store(true, Ordering::SeqCst);
            if let Some((state, task)) = this.current {
                if let Some(pgid) = state.pgid() {
                    process::terminate_group(pgid, TERM_GRACE, None).await;
                }
                // The turn task reaps the leader promptly once it is dead.
                join_or_abort(task, std::time::Duration::from_secs(2)).await;
            }
            // Background processes of earlier turns live on in those turns' groups.
            let groups = std::mem::take(&mut *lock(&this.groups));
            for pgid in groups {
                process::terminate_group(pgid, TERM_GRACE, None).await;
            }
        })
    }
}

/// SIGINT now; SIGTERM and then SIGKILL if the turn is still running after a grace period each.
fn escalate(pgid: i32, state: Arc<TurnState>) {
    signal_group(pgid, libc::SIGINT);
    tokio::spawn(async move {
        for sig in [libc::SIGTERM, libc::SIGKILL] {
            tokio::time::sleep(INTERRUPT_GRACE).await;
            if state.finished.load(Ordering::SeqCst) {
                return;
            }
            tracing::debug!(pgid, sig, "interrupted turn still running; escalating");
            signal_group(pgid, sig);
        }
    });
}

async fn run_turn(
    turns: Arc<OneShot>,
    cmd: TurnCommand,
    emitter: Emitter,
    state: Arc<TurnState>,
    groups: Arc<Mutex<Vec<i32>>>,
    closing: Arc<AtomicBool>,
) {
    // Held until the turn's process is gone.
    let keep = cmd.keep;
    // From before the spawn: the process may run while spawning records its group.
    let started = std::time::Instant::now();
    let spawned = process::spawn(Launch {
        argv: &cmd.argv,
        cwd: &turns.cwd,
        env: &turns.env,
        stdin: cmd.stdin.is_some(),
    });
    let spawned = match spawned {
        Ok(s) => s,
        Err(e) => {
            state.finished.store(true, Ordering::SeqCst);
            if !closing.load(Ordering::SeqCst) {
                let message = format!("{}: {e}", turns.name);
                emitter
                    .event(ProviderEvent::TurnEnded(TurnOutcome::Failed {
                        message,
                        detail: None,
                    }))
                    .await;
            }
            return;
        }
    };
    let pgid = spawned.proc.pgid();
    *lock(&state.pgid) = Some(pgid);
    lock(&groups).push(pgid);
    if closing.load(Ordering::SeqCst) {
        state.finished.store(true, Ordering::SeqCst);
        spawned.proc.terminate(TERM_GRACE).await;
        return;
    }
    if state.canceled.load(Ordering::SeqCst) {
        escalate(pgid, state.clone());
    }
    if let (Some(text), Some(mut stdin)) = (cmd.stdin, spawned.stdin) {
        tokio::spawn(async move {
            // A command that exits without reading its input is not an error.
            let _ = stdin.write_all(text.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
    }
    let progress = Arc::new(Progress::default());
    let readers = vec![
        tokio::spawn(pump_output(
            spawned.stdout,
            "stdout",
            emitter.clone(),
            progress.clone(),
        )),
        tokio::spawn(pump_output(
            spawned.stderr,
            "stderr",
            emitter.clone(),
            progress.clone(),
        )),
    ];
    let status = spawned.proc.wait().await;
    let wall = started.elapsed();
    spawned.proc.disarm();
    drop(keep);
    drain_readers(readers, &progress).await;
    if closing.load(Ordering::SeqCst) {
        state.finished.store(true, Ordering::SeqCst);
        return;
    }
    let (tail, err_tail) = emitter.take_tails().await;
    let outcome = if state.canceled.load(Ordering::SeqCst) {
        TurnOutcome::Canceled
    } else if status.success() {
        TurnOutcome::Completed
    } else {
        // The stderr tail is in the timeline as output already: the error item only adds how
        // the command ended, and the tail goes with the error to the parent and the record.
        let err_tail = err_tail.trim();
        TurnOutcome::Failed {
            message: format!("the command {}", describe_exit(&status)),
            detail: (!err_tail.is_empty()).then(|| err_tail.to_string()),
        }
    };
    // Finished before the outcome is reported, so the runtime may start the next turn at once.
    state.finished.store(true, Ordering::SeqCst);
    emitter.event(ProviderEvent::LastMessage(tail)).await;
    emitter
        .event(ProviderEvent::Run(LastRun {
            wall_ms: u64::try_from(wall.as_millis()).unwrap_or(u64::MAX),
            exit_code: status.code(),
            ..LastRun::default()
        }))
        .await;
    emitter.event(ProviderEvent::TurnEnded(outcome)).await;
}
