//! The built-in `shell` provider: each prompt is a command line run by the user's shell
//! (`$SHELL -c <prompt>`, falling back to `/bin/sh`) in the agent's cwd. Works with nothing
//! installed. A shell agent cannot read, so finish notices are never run as commands.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::oneshot::{OneShotSession, TurnCommand};
use super::process::{find_program, AgentEnv, Emitter};
use super::{
    EventSink, Provider, ProviderError, ProviderEvent, ProviderInfo, Session, SessionSpec,
};
use crate::config::ProviderConfig;

pub struct ShellProvider {
    id: String,
    config: ProviderConfig,
}

impl ShellProvider {
    pub fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        ShellProvider {
            id: id.into(),
            config,
        }
    }

    /// The shell's argv prefix: the configured command, else `$SHELL` if it exists, else
    /// `/bin/sh`.
    fn shell(&self, env: &AgentEnv) -> Vec<String> {
        if let Some(cmd) = &self.config.command {
            return cmd.clone();
        }
        match env.get("SHELL") {
            Some(sh) if !sh.is_empty() && find_program(&sh, env).is_ok() => vec![sh],
            _ => vec!["/bin/sh".to_string()],
        }
    }

    fn env(&self, spec: Option<&SessionSpec>) -> AgentEnv {
        match spec {
            Some(s) => AgentEnv::new(s.agent_id, &self.config.env, &s.env, s.mcp.as_ref()),
            None => AgentEnv {
                set: self.config.env.clone(),
            },
        }
    }
}

impl Provider for ShellProvider {
    fn info(&self) -> ProviderInfo {
        let env = self.env(None);
        let shell = self.shell(&env);
        let reason = find_program(&shell[0], &env).err();
        ProviderInfo {
            id: self.id.clone(),
            label: self.config.label.clone().unwrap_or_else(|| "Shell".into()),
            kind: "shell".into(),
            available: reason.is_none(),
            reason,
            reads_prompts: false,
            models: self.config.models.clone(),
        }
    }

    fn start(
        &self,
        spec: SessionSpec,
        sink: EventSink,
    ) -> BoxFuture<'static, Result<Box<dyn Session>, ProviderError>> {
        let env = self.env(Some(&spec));
        let shell = self.shell(&env);
        let id = self.id.clone();
        Box::pin(async move {
            find_program(&shell[0], &env).map_err(|reason| ProviderError::Unavailable {
                provider: id.clone(),
                reason,
            })?;
            if !spec.cwd.is_dir() {
                return Err(ProviderError::Invalid(format!(
                    "the working directory {} does not exist",
                    spec.cwd.display()
                )));
            }
            let build = Arc::new(move |prompt: &str| {
                let mut argv = shell.clone();
                argv.push("-c".into());
                argv.push(prompt.to_string());
                TurnCommand { argv, stdin: None }
            });
            let emitter = Emitter::spawn(sink);
            emitter.event(ProviderEvent::Ready).await;
            let session = OneShotSession::new(id, false, spec.cwd, env, build, emitter);
            Ok(Box::new(session) as Box<dyn Session>)
        })
    }
}
