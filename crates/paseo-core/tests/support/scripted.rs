//! A scripted provider for runtime-level tests (the app never ships it): the prompt text is the
//! script. `ok <text>` completes with <text>, `fail <msg>` fails, `hang` runs until
//! interrupted, `stubborn` ignores interrupts, `perm` asks for a permission, `die` exits
//! mid-turn; anything else (notices included) is echoed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::sync::mpsc;

use paseo_core::model::{AgentId, ItemKind, NewItem, WorkspaceId};
use paseo_core::providers::{
    EventSink, PermissionRequest, Provider, ProviderEvent, ProviderInfo, ProviderRegistry, Session,
    SessionSpec, TurnInput, TurnOutcome,
};
use paseo_core::runtime::{CreateAgent, RuntimeOptions, WorkspaceTarget};
use paseo_core::server::{Runtime, Server};

#[derive(Default)]
pub struct Log {
    pub starts: Vec<(AgentId, Option<String>)>,
    /// The system prompt each start was given.
    pub system_prompts: Vec<(AgentId, Option<String>)>,
    pub inputs: Vec<(AgentId, TurnInput)>,
    pub closes: Vec<AgentId>,
}

pub struct Scripted {
    pub id: &'static str,
    pub reads: bool,
    pub log: Arc<Mutex<Log>>,
}

enum Ctl {
    Turn(TurnInput),
    Interrupt,
    Permission(bool),
}

struct ScriptedSession {
    tx: mpsc::UnboundedSender<Ctl>,
    agent: AgentId,
    log: Arc<Mutex<Log>>,
    task: tokio::task::JoinHandle<()>,
}

impl Provider for Scripted {
    fn info(&self) -> ProviderInfo {
        ProviderInfo {
            id: self.id.into(),
            label: self.id.into(),
            kind: "test".into(),
            available: true,
            reason: None,
            reads_prompts: self.reads,
            models: vec![],
            unconfined: false,
        }
    }

    fn start(
        &self,
        spec: SessionSpec,
        sink: EventSink,
    ) -> BoxFuture<'static, Result<Box<dyn Session>, paseo_core::providers::ProviderError>> {
        let log = self.log.clone();
        async move {
            let agent = spec.agent_id;
            {
                let mut log = log.lock().unwrap();
                log.starts.push((agent, spec.resume.clone()));
                log.system_prompts
                    .push((agent, spec.config.system_prompt.clone()));
            }
            let session_id = spec
                .resume
                .clone()
                .unwrap_or_else(|| format!("sess-{agent}"));
            let (tx, mut rx) = mpsc::unbounded_channel::<Ctl>();
            let log2 = log.clone();
            let task = tokio::spawn(async move {
                sink.send(ProviderEvent::SessionId(session_id)).await;
                sink.send(ProviderEvent::Ready).await;
                while let Some(c) = rx.recv().await {
                    let Ctl::Turn(input) = c else { continue };
                    log2.lock().unwrap().inputs.push((agent, input.clone()));
                    let text = input.text().to_string();
                    let (cmd, arg) = text.split_once(' ').unwrap_or((text.as_str(), ""));
                    match cmd {
                        "fail" => {
                            sink.send(ProviderEvent::TurnEnded(TurnOutcome::Failed {
                                message: arg.to_string(),
                                detail: None,
                            }))
                            .await;
                        }
                        "die" => {
                            sink.send(ProviderEvent::Exited {
                                message: "exit code 3".into(),
                            })
                            .await;
                            return;
                        }
                        "hang" | "stubborn" => loop {
                            match rx.recv().await {
                                Some(Ctl::Interrupt) if cmd == "hang" => {
                                    sink.send(ProviderEvent::TurnEnded(TurnOutcome::Canceled))
                                        .await;
                                    break;
                                }
                                None => return,
                                _ => {}
                            }
                        },
                        "perm" => {
                            sink.send(ProviderEvent::Permission(PermissionRequest {
                                request_id: "p1".into(),
                                kind: paseo_core::model::PermissionKind::Tool,
                                tool_name: "Bash".into(),
                                input: serde_json::json!({"command": "rm -rf /tmp/x"}),
                                description: None,
                                call_id: None,
                            }))
                            .await;
                            loop {
                                match rx.recv().await {
                                    Some(Ctl::Permission(allow)) => {
                                        let t = if allow { "allowed" } else { "denied" };
                                        sink.send(ProviderEvent::LastMessage(t.into())).await;
                                        sink.send(ProviderEvent::TurnEnded(TurnOutcome::Completed))
                                            .await;
                                        break;
                                    }
                                    None => return,
                                    _ => {}
                                }
                            }
                        }
                        _ => {
                            // "ok <text>", notices and anything else: answer and complete.
                            let reply = if cmd == "ok" {
                                arg.to_string()
                            } else {
                                format!("echo: {text}")
                            };
                            sink.send(ProviderEvent::Items(vec![NewItem::new(
                                ItemKind::Assistant,
                                reply.clone(),
                            )]))
                            .await;
                            sink.send(ProviderEvent::LastMessage(reply)).await;
                            sink.send(ProviderEvent::TurnEnded(TurnOutcome::Completed))
                                .await;
                        }
                    }
                }
            });
            Ok(Box::new(ScriptedSession {
                tx,
                agent,
                log,
                task,
            }) as Box<dyn Session>)
        }
        .boxed()
    }
}

impl Session for ScriptedSession {
    fn send(&mut self, input: TurnInput) -> Result<(), paseo_core::providers::ProviderError> {
        self.tx
            .send(Ctl::Turn(input))
            .map_err(|_| paseo_core::providers::ProviderError::SessionGone)
    }
    fn interrupt(&mut self) -> Result<(), paseo_core::providers::ProviderError> {
        self.tx
            .send(Ctl::Interrupt)
            .map_err(|_| paseo_core::providers::ProviderError::SessionGone)
    }
    fn respond_permission(
        &mut self,
        _request_id: &str,
        allow: bool,
    ) -> Result<(), paseo_core::providers::ProviderError> {
        self.tx
            .send(Ctl::Permission(allow))
            .map_err(|_| paseo_core::providers::ProviderError::SessionGone)
    }
    fn close(self: Box<Self>) -> BoxFuture<'static, ()> {
        self.log.lock().unwrap().closes.push(self.agent);
        self.task.abort();
        async {}.boxed()
    }
}

pub struct Env {
    pub dir: tempfile::TempDir,
    pub work: std::path::PathBuf,
    pub log: Arc<Mutex<Log>>,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        Env {
            work: work.canonicalize().unwrap(),
            dir,
            log: Default::default(),
        }
    }

    pub fn home(&self) -> std::path::PathBuf {
        self.dir.path().join("home")
    }

    pub async fn start(&self) -> Runtime {
        let rt = self.start_held().await;
        rt.handle.deliver_pending().await.unwrap();
        rt
    }

    /// Started as the app starts it before its MCP server is up: notices and load repairs are
    /// held until `deliver_pending`.
    #[allow(dead_code)]
    pub async fn start_held(&self) -> Runtime {
        let mut reg = ProviderRegistry::new();
        reg.insert(
            "script",
            Arc::new(Scripted {
                id: "script",
                reads: true,
                log: self.log.clone(),
            }),
        );
        reg.insert(
            "mute",
            Arc::new(Scripted {
                id: "mute",
                reads: false,
                log: self.log.clone(),
            }),
        );
        let mut opts = RuntimeOptions::new(self.home(), reg);
        opts.cancel_timeout = Duration::from_millis(300);
        Runtime::start(opts, None).await.unwrap()
    }
}

/// The work folder as a workspace of `h`.
pub async fn workspace(h: &Server, env: &Env) -> WorkspaceId {
    // Through the door by hand: this file is also part of the core's own tests, which have no
    // `Door`.
    let add = paseo_core::api::verbs::AddWorkspace {
        path: env.work.display().to_string(),
        host: None,
    };
    match h.call(paseo_core::runtime::Caller::User, add.into()).await {
        Ok(paseo_core::api::Response::Workspace(w)) => w.record.workspace_id,
        other => panic!("addWorkspace: {other:?}"),
    }
}

/// A scripted agent in `ws` whose first prompt (its script) is `prompt`.
pub fn req(ws: &WorkspaceId, prompt: &str) -> CreateAgent {
    let mut r = CreateAgent::new("script", WorkspaceTarget::existing(ws.clone()));
    r.initial_prompt = Some(prompt.to_string());
    r
}
