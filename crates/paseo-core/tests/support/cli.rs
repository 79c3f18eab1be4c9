//! The real agent CLIs (pinned Claude Code and Codex) against their stand-in model APIs: the
//! providers the tests build, and the tests both CLIs must pass written once (interrupt,
//! resume, close, a crash, the app's MCP tools, permission questions), run by tests/suite/claude.rs
//! and tests/suite/codex.rs with the scripted prompts below.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use paseo_core::config::{ProviderConfig, ProviderKind};
use paseo_core::model::{ItemKind, NewItem, WorkspaceId};
use paseo_core::providers::claude::ClaudeProvider;
use paseo_core::providers::codex::CodexProvider;
use paseo_core::providers::shell::ShellProvider;
use paseo_core::providers::{
    PermissionRequest, Provider, ProviderEvent, ProviderRegistry, SessionSpec, TurnInput,
    TurnOutcome,
};
use paseo_core::runtime::{CreateAgent, WorkspaceTarget};
use serde_json::json;

use super::anthropic::{self, AnthropicStandIn};
use super::mcp_echo::{self, McpEcho};
use super::openai::{self, OpenAiStandIn};
use super::{
    agent_cli, agent_pids, alive, crash_agent, poll, prompt, read_pid, spec, Events, Started, Turn,
};

/// The prompt every script answers slowly (a turn to interrupt or crash).
pub const SLOW: &str = "be slow please";
/// The prompt every script answers with a call of the app's `create_agent` tool.
pub const ORCHESTRATE: &str = "please orchestrate";
/// The prompt every script answers with a shell command leaving a process tree running, with
/// its pids in `fg.pid` and `bg.pid`.
pub const START_TREE: &str = "please start a tree";
/// What the scripted models pass to `create_agent` for `ORCHESTRATE`.
pub fn orchestrate_args() -> serde_json::Value {
    json!({"provider": "shell", "initialPrompt": "echo hi"})
}
/// The command `START_TREE` runs.
pub const TREE: &str =
    "nohup sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; echo $$ > fg.pid; sleep 300";

/// The config of a provider of `kind` running the pinned CLI `bin` (then `args`) in `env`.
/// With PASEO_RECORD_DIR set, a `recorded` one also copies the CLI's stdout to
/// `<dir>/<test name>.jsonl`: how the parser fixtures in tests/fixtures are re-recorded.
pub fn cli_config(
    kind: ProviderKind,
    bin: &str,
    args: Vec<String>,
    mut env: BTreeMap<String, String>,
    recorded: bool,
) -> ProviderConfig {
    let cli = agent_cli(bin).display().to_string();
    let mut command = match std::env::var("PASEO_RECORD_DIR") {
        Ok(dir) if recorded => {
            let name = std::thread::current().name().unwrap_or(bin).to_string();
            env.insert("PASEO_RECORD_FILE".into(), format!("{dir}/{name}.jsonl"));
            vec![
                "/bin/sh".into(),
                "-c".into(),
                r#""$0" "$@" | tee -a "$PASEO_RECORD_FILE""#.into(),
                cli,
            ]
        }
        _ => vec![cli],
    };
    command.extend(args);
    ProviderConfig {
        command: Some(command),
        env,
        ..ProviderConfig::new(kind)
    }
}

/// One CLI's stand-in model API, as the shared tests use it.
pub trait CliApi {
    /// The CLI's name in the provider's messages.
    const NAME: &'static str;
    /// The model the tests' agents ask for, if the provider is not configured with one.
    const MODEL: Option<&'static str>;
    /// The model every request names.
    const SERVED_MODEL: &'static str;
    /// The agent `mode` under which the CLI asks before it runs a command.
    const ASKING_MODE: Option<&'static str>;
    /// The tool a permission question about a command names.
    const COMMAND_TOOL: &'static str;
    /// How the model is offered the app's `create_agent` tool.
    const CREATE_AGENT_TOOL: &'static str;
    /// The provider running the pinned CLI against this stand-in, its state under `home`.
    fn provider(&self, home: &Path, recorded: bool) -> Arc<dyn Provider>;
    /// What the model was given last, request by request.
    fn inputs(&self) -> Vec<Seen>;
    /// The conversation the model was given last.
    fn history(&self) -> String;
    /// The model each request named.
    fn models(&self) -> Vec<String>;
    /// The tools offered in the first request.
    fn first_tools(&self) -> Vec<String>;

    /// Whether the model has been given this prompt as its last input.
    fn asked(&self, prompt: &str) -> bool {
        self.inputs().contains(&Seen::Text(prompt.into()))
    }
}

/// The last input of a model request, whichever the API.
#[derive(Clone, Debug, PartialEq)]
pub enum Seen {
    Text(String),
    /// What a tool call gave (OpenAI's function outputs carry no error flag).
    ToolOutput {
        content: String,
        is_error: bool,
    },
    Other,
}

impl CliApi for AnthropicStandIn {
    const NAME: &'static str = "Claude Code";
    const MODEL: Option<&'static str> = Some("standin-model");
    const SERVED_MODEL: &'static str = "standin-model";
    const ASKING_MODE: Option<&'static str> = None;
    const COMMAND_TOOL: &'static str = "Bash";
    const CREATE_AGENT_TOOL: &'static str = "mcp__paseo__create_agent";
    fn provider(&self, home: &Path, recorded: bool) -> Arc<dyn Provider> {
        let env = self.claude_env(home);
        let config = cli_config(ProviderKind::Claude, "claude", vec![], env, recorded);
        Arc::new(ClaudeProvider::new("claude", config))
    }
    fn inputs(&self) -> Vec<Seen> {
        let seen = |r: anthropic::Request| match r.input() {
            anthropic::Input::Text(t) => Seen::Text(t),
            anthropic::Input::ToolResult {
                content, is_error, ..
            } => Seen::ToolOutput { content, is_error },
        };
        self.requests().into_iter().map(seen).collect()
    }
    fn history(&self) -> String {
        self.requests().pop().unwrap().body["messages"].to_string()
    }
    fn models(&self) -> Vec<String> {
        self.requests().iter().map(|r| r.model().into()).collect()
    }
    fn first_tools(&self) -> Vec<String> {
        self.requests()[0].tool_names()
    }
}

impl CliApi for OpenAiStandIn {
    const NAME: &'static str = "Codex";
    const MODEL: Option<&'static str> = None;
    const SERVED_MODEL: &'static str = openai::MODEL;
    const ASKING_MODE: Option<&'static str> = Some("on-request");
    const COMMAND_TOOL: &'static str = "shell";
    const CREATE_AGENT_TOOL: &'static str = "mcp__paseo/create_agent";
    fn provider(&self, home: &Path, recorded: bool) -> Arc<dyn Provider> {
        let (args, env) = (self.codex_args(), self.codex_env(home));
        let config = cli_config(ProviderKind::Codex, "codex", args, env, recorded);
        Arc::new(CodexProvider::new("codex", config))
    }
    fn inputs(&self) -> Vec<Seen> {
        let seen = |r: openai::Request| match r.input() {
            openai::Input::Text(t) => Seen::Text(t),
            openai::Input::FunctionOutput { output, .. } => Seen::ToolOutput {
                content: output,
                is_error: false,
            },
            openai::Input::Other(_) => Seen::Other,
        };
        self.requests().into_iter().map(seen).collect()
    }
    fn history(&self) -> String {
        self.requests().pop().unwrap().body["input"].to_string()
    }
    fn models(&self) -> Vec<String> {
        let model = |r: &openai::Request| r.body["model"].as_str().unwrap_or("").to_string();
        self.requests().iter().map(model).collect()
    }
    fn first_tools(&self) -> Vec<String> {
        self.requests()[0].tool_names()
    }
}

/// A CLI provider test's world: the stand-in, the CLI's home, the agent's cwd.
pub struct Cli<A> {
    pub api: A,
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl<A: CliApi> Cli<A> {
    pub fn new(api: A) -> Self {
        Cli {
            api,
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }
    pub fn provider(&self) -> Arc<dyn Provider> {
        self.api.provider(self.home.path(), true)
    }
    pub fn work(&self) -> PathBuf {
        self.work.path().to_path_buf()
    }
    pub fn spec(&self) -> SessionSpec {
        let mut s = spec(self.work.path());
        s.config.model = A::MODEL.map(Into::into);
        s
    }
    /// A spec under which the CLI asks before running a command.
    pub fn asking_spec(&self) -> SessionSpec {
        let mut s = self.spec();
        s.config.mode = A::ASKING_MODE.map(Into::into);
        s
    }
    /// Starts a session and waits until it is ready.
    pub async fn start(&self, spec: SessionSpec) -> Started {
        super::start(&*self.provider(), spec, 64).await
    }
    /// Waits until the model was given `prompt`.
    pub async fn asked(&self, prompt: &str) {
        poll("the model call", || self.api.asked(prompt).then_some(())).await
    }
}

/// The session id reported before ready.
pub fn session_id(opening: &[ProviderEvent]) -> String {
    opening
        .iter()
        .find_map(|e| match e {
            ProviderEvent::SessionId(id) => Some(id.clone()),
            _ => None,
        })
        .expect("a session id before ready")
}

/// Two turns on one process, the second a finish notice: each completes with the echo as its
/// text and last message, and the model was called once per turn. The session (its MCP server
/// not listening) is returned with its id and first turn for the CLI's own checks.
pub async fn text_turns<A: CliApi>(st: &Cli<A>, hello: &str) -> (Started, String, Turn) {
    let provider = st.provider();
    assert!(provider.info().available, "{:?}", provider.info());
    let mut spec = st.spec();
    spec.mcp = Some(super::mcp_access());
    let mut started = st.start(spec).await;
    let id = session_id(&started.opening);
    started.s.send(prompt(hello)).unwrap();
    let first = started.ev.turn().await;
    assert_eq!(first.outcome(), &TurnOutcome::Completed);
    let echo = format!("echo: {hello}");
    assert_eq!(first.text_of(ItemKind::Assistant), echo);
    assert_eq!(first.last_message.as_deref(), Some(echo.as_str()));

    let notice = "<paseo-notice>child done</paseo-notice>";
    started.s.send(TurnInput::Notice(notice.into())).unwrap();
    let t = started.ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(t.last_message, Some(format!("echo: {notice}")));
    let models = st.api.models();
    assert_eq!(models.len(), 2, "one process, two turns, two model calls");
    assert!(models.iter().all(|m| m == A::SERVED_MODEL), "{models:?}");
    (started, id, first)
}

/// Interrupting a turn mid-stream cancels it, and the next turn runs on the same session.
pub async fn interrupt_mid_turn<A: CliApi>(st: &Cli<A>) {
    let Started { mut s, mut ev, .. } = st.start(st.spec()).await;
    s.send(prompt(SLOW)).unwrap();
    st.asked(SLOW).await;
    s.interrupt().unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Canceled);
    s.send(prompt("after the interrupt")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert_eq!(t.last_message.as_deref(), Some("echo: after the interrupt"));
    s.close().await;
}

/// A second process started with the stored session id resumes the conversation.
pub async fn a_new_process_resumes<A: CliApi>(st: &Cli<A>) {
    let spec = st.spec();
    let Started {
        mut s,
        mut ev,
        opening,
    } = st.start(spec.clone()).await;
    let id = session_id(&opening);
    s.send(prompt("remember the word alpha")).unwrap();
    assert_eq!(ev.turn().await.outcome(), &TurnOutcome::Completed);
    s.close().await;

    let mut spec2 = spec;
    spec2.resume = Some(id.clone());
    let Started {
        mut s,
        mut ev,
        opening,
    } = st.start(spec2).await;
    assert_eq!(session_id(&opening), id);
    s.send(prompt("what was the word")).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed);
    assert!(!t
        .other
        .iter()
        .any(|e| matches!(e, ProviderEvent::SessionId(other) if *other != id)));
    let history = st.api.history();
    assert!(
        history.contains("remember the word alpha"),
        "history lost: {history:.600}"
    );
    assert!(history.contains("echo: remember the word alpha"));
    s.close().await;
}

/// Closing a session mid-turn stops the processes its tool started, background ones too.
pub async fn close_kills_the_tools_processes<A: CliApi>(st: &Cli<A>) {
    let Started { mut s, mut ev, .. } = st.start(st.asking_spec()).await;
    s.send(prompt(START_TREE)).unwrap();
    let (req, _) = permission(&mut ev).await;
    s.respond_permission(&req.request_id, true).unwrap();
    let fg = read_pid(&st.work().join("fg.pid")).await;
    let bg = read_pid(&st.work().join("bg.pid")).await;
    assert!(alive(fg) && alive(bg));
    s.close().await;
    assert!(!alive(fg), "the tool's shell {fg} survived close");
    assert!(
        !alive(bg),
        "the tool's background process {bg} survived close"
    );
}

/// The CLI killed mid-turn: the turn fails with the signal, then the session reports the exit.
pub async fn a_process_dying_mid_turn<A: CliApi>(st: &Cli<A>) {
    let spec = st.spec();
    let agent = spec.agent_id;
    let Started { mut s, mut ev, .. } = st.start(spec).await;
    s.send(prompt(SLOW)).unwrap();
    st.asked(SLOW).await;
    crash_agent(agent);
    let events = ev
        .until(|e| matches!(e, ProviderEvent::Exited { .. }))
        .await;
    let failed: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::TurnEnded(TurnOutcome::Failed { message, .. }) => Some(message.clone()),
            ProviderEvent::TurnEnded(other) => panic!("turn ended {other:?}"),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    let killed = format!("{} was killed by signal 9 (SIGKILL)", A::NAME);
    assert!(failed[0].starts_with(&killed), "{}", failed[0]);
    let ProviderEvent::Exited { message } = events.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(message, &failed[0]);
    assert!(s.send(prompt("again")).is_err());
    s.close().await;
    assert!(agent_pids(agent).is_empty());
}

/// The app's MCP server (the echo) is connected with the agent's token, its tools are loaded,
/// and the model's call of one runs without a permission question (in `mode`). The turn is
/// returned for the CLI's own checks.
pub async fn mcp_tools_are_called_without_a_prompt<A: CliApi>(
    st: &Cli<A>,
    mode: Option<&str>,
) -> Turn {
    let mcp = McpEcho::start("agent-token").await;
    let mut spec = st.spec();
    spec.config.mode = mode.map(Into::into);
    spec.mcp = Some(mcp.access());
    let Started { mut s, mut ev, .. } = st.start(spec).await;
    s.send(prompt(ORCHESTRATE)).unwrap();
    let t = ev.turn().await;
    assert_eq!(t.outcome(), &TurnOutcome::Completed, "{t:?}");
    assert!(
        !t.other
            .iter()
            .any(|e| matches!(e, ProviderEvent::Permission(_))),
        "{:?}",
        t.other
    );
    let call = t.item(ItemKind::ToolCall).expect("an MCP tool call item");
    assert_eq!(call.tool_name.as_deref(), Some("mcp__paseo__create_agent"));
    let result = t.item(ItemKind::ToolResult).expect("its result");
    assert!(!result.is_error, "{result:?}");
    assert!(
        result.text.starts_with("called create_agent with"),
        "{result:?}"
    );
    let called = mcp_echo::Call {
        tool: "create_agent".into(),
        arguments: orchestrate_args(),
    };
    assert_eq!(mcp.calls(), [called]);
    assert_eq!(mcp.unauthorized(), 0);
    let tools = st.api.first_tools();
    assert!(tools.iter().any(|t| t == A::CREATE_AGENT_TOOL), "{tools:?}");
    s.close().await;
    t
}

/// Waits for a permission question; the events before it come along.
pub async fn permission(ev: &mut Events) -> (PermissionRequest, Vec<ProviderEvent>) {
    let mut before = ev
        .until(|e| matches!(e, ProviderEvent::Permission(_)))
        .await;
    let Some(ProviderEvent::Permission(req)) = before.pop() else {
        unreachable!()
    };
    (req, before)
}

/// A permission question answered, for the CLI's own checks.
pub struct Question {
    pub file: &'static str,
    pub allowed: bool,
    pub req: PermissionRequest,
    /// The tool call the question is about.
    pub call: NewItem,
    pub turn: Turn,
}

/// `ask <file>` makes the model run a command creating `<file>` (`touch <file>`), which the
/// CLI asks about: allowed once, then denied. Each time the question shows the command, the
/// command's tool call is on the timeline before the question and the question names it; nothing runs before the answer; the turn completes
/// either way, the file exists if it was allowed, and the question cannot be answered twice.
/// `check` looks at each question as the CLI asked it.
pub async fn questions_are_answered<A: CliApi>(st: &Cli<A>, ask: &str, check: impl Fn(&Question)) {
    let Started { mut s, mut ev, .. } = st.start(st.asking_spec()).await;
    for (file, allowed) in [("allowed-file", true), ("denied-file", false)] {
        s.send(prompt(&format!("{ask} {file}"))).unwrap();
        let (req, before) = permission(&mut ev).await;
        assert_eq!(req.tool_name, A::COMMAND_TOOL);
        let touch = format!("touch {file}");
        assert!(req.input.to_string().contains(&touch), "{req:?}");
        let call = super::first_tool_call(&before).expect("a tool call before the question");
        assert!(call.call_id.is_some());
        assert_eq!(req.call_id, call.call_id);
        assert!(!st.work().join(file).exists(), "ran before the answer");
        s.respond_permission(&req.request_id, allowed).unwrap();
        let turn = ev.turn().await;
        assert_eq!(turn.outcome(), &TurnOutcome::Completed);
        assert_eq!(st.work().join(file).exists(), allowed, "{turn:?}");
        assert!(s.respond_permission(&req.request_id, true).is_err());
        check(&Question {
            file,
            allowed,
            req,
            call,
            turn,
        });
    }
    s.close().await;
}

/// Both CLIs against their stand-ins, and the built-in shell: the providers of the tests that
/// run agents of every provider through the runtime.
pub struct Clis {
    pub claude: AnthropicStandIn,
    pub codex: OpenAiStandIn,
    home: tempfile::TempDir,
}

impl Clis {
    pub fn new(claude: AnthropicStandIn, codex: OpenAiStandIn) -> Clis {
        Clis {
            claude,
            codex,
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// Both CLIs against stand-ins that answer every prompt with it ("claude says: …",
    /// "codex says: …"), and a tool result with what it said.
    pub async fn echoing() -> Clis {
        let claude = AnthropicStandIn::start(|req| match req.input() {
            anthropic::Input::Text(t) => anthropic::Reply::text(format!("claude says: {t}")),
            anthropic::Input::ToolResult { content, .. } => {
                anthropic::Reply::text(format!("tool said {content}"))
            }
        })
        .await;
        let codex = OpenAiStandIn::start(|req| match req.input() {
            openai::Input::Text(t) => openai::Reply::text(format!("codex says: {t}")),
            other => openai::Reply::text(format!("got {other:?}")),
        })
        .await;
        Clis::new(claude, codex)
    }

    pub fn registry(&self) -> ProviderRegistry {
        let mut r = ProviderRegistry::new();
        let shell = ProviderConfig::new(ProviderKind::Shell);
        r.insert("shell", Arc::new(ShellProvider::new("shell", shell)));
        r.insert("claude", self.claude.provider(self.home.path(), false));
        r.insert("codex", self.codex.provider(self.home.path(), false));
        r
    }
}

/// An agent of `provider` in workspace `ws` starting with `prompt`; the CLIs' agents ask for
/// the model their stand-in serves.
pub fn create(provider: &str, ws: &WorkspaceId, prompt: &str) -> CreateAgent {
    let target = WorkspaceTarget::existing(ws.clone());
    let mut c = CreateAgent::new(provider, target);
    c.initial_prompt = Some(prompt.into());
    c.model = match provider {
        "claude" => AnthropicStandIn::MODEL.map(str::to_string),
        "codex" => Some(openai::MODEL.into()),
        _ => None,
    };
    c
}

/// The shared tests, run against one CLI: `setup` makes its `Cli`; each line names a test and
/// the shared test it runs.
#[macro_export]
macro_rules! cli_tests {
    ($setup:ident; $($name:ident => $test:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                support::cli::$test(&$setup().await).await;
            }
        )*
    };
}
