//! `command` providers: any command-line agent the user configures in `config.json`. Each turn
//! runs the configured argv with `{prompt}` replaced by the prompt (or, with `"stdin": true`,
//! the prompt written to its stdin; with neither, the prompt is appended as the last argument),
//! with the same turn semantics as the shell provider.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::oneshot::{OneShotSession, TurnCommand};
use super::process::{find_program, AgentEnv, Emitter};
use super::{
    EventSink, Provider, ProviderError, ProviderEvent, ProviderInfo, Session, SessionSpec,
};
use crate::config::ProviderConfig;

pub const PROMPT_PLACEHOLDER: &str = "{prompt}";

pub struct CommandProvider {
    id: String,
    config: ProviderConfig,
}

impl CommandProvider {
    pub fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        CommandProvider {
            id: id.into(),
            config,
        }
    }

    fn template(&self) -> Vec<String> {
        self.config.command.clone().unwrap_or_default()
    }
}

/// The argv and stdin of one turn.
pub fn build_turn(template: &[String], stdin: bool, prompt: &str) -> TurnCommand {
    let mut substituted = false;
    let mut argv: Vec<String> = template
        .iter()
        .map(|arg| {
            if arg.contains(PROMPT_PLACEHOLDER) {
                substituted = true;
                arg.replace(PROMPT_PLACEHOLDER, prompt)
            } else {
                arg.clone()
            }
        })
        .collect();
    if stdin {
        return TurnCommand {
            argv,
            stdin: Some(prompt.to_string()),
        };
    }
    if !substituted {
        argv.push(prompt.to_string());
    }
    TurnCommand { argv, stdin: None }
}

impl Provider for CommandProvider {
    fn info(&self) -> ProviderInfo {
        let env = AgentEnv {
            set: self.config.env.clone(),
        };
        let template = self.template();
        let reason = match template.first() {
            Some(program) => find_program(program, &env).err(),
            None => Some("no command is configured".into()),
        };
        ProviderInfo {
            id: self.id.clone(),
            label: self.config.label.clone().unwrap_or_else(|| self.id.clone()),
            kind: "command".into(),
            available: reason.is_none(),
            reason,
            reads_prompts: self.config.reads_prompts.unwrap_or(self.config.stdin),
            models: self.config.models.clone(),
        }
    }

    fn start(
        &self,
        spec: SessionSpec,
        sink: EventSink,
    ) -> BoxFuture<'static, Result<Box<dyn Session>, ProviderError>> {
        let env = AgentEnv::new(
            spec.agent_id,
            &self.config.env,
            &spec.env,
            spec.mcp.as_ref(),
        );
        let template = self.template();
        let stdin = self.config.stdin;
        let reads_prompts = self.config.reads_prompts.unwrap_or(stdin);
        let id = self.id.clone();
        Box::pin(async move {
            let Some(program) = template.first() else {
                return Err(ProviderError::Unavailable {
                    provider: id,
                    reason: "no command is configured".into(),
                });
            };
            find_program(program, &env).map_err(|reason| ProviderError::Unavailable {
                provider: id.clone(),
                reason,
            })?;
            if !spec.cwd.is_dir() {
                return Err(ProviderError::Invalid(format!(
                    "the working directory {} does not exist",
                    spec.cwd.display()
                )));
            }
            let build = Arc::new(move |prompt: &str| build_turn(&template, stdin, prompt));
            let emitter = Emitter::spawn(sink);
            emitter.event(ProviderEvent::Ready).await;
            let session = OneShotSession::new(id, reads_prompts, spec.cwd, env, build, emitter);
            Ok(Box::new(session) as Box<dyn Session>)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn prompt_is_substituted_or_appended_or_piped() {
        let t = build_turn(&argv(&["bot", "--msg={prompt}", "-q"]), false, "hi there");
        assert_eq!(t.argv, ["bot", "--msg=hi there", "-q"]);
        assert_eq!(t.stdin, None);
        let t = build_turn(&argv(&["bot", "-q"]), false, "hi");
        assert_eq!(t.argv, ["bot", "-q", "hi"]);
        let t = build_turn(&argv(&["bot", "-q"]), true, "hi");
        assert_eq!(t.argv, ["bot", "-q"]);
        assert_eq!(t.stdin.as_deref(), Some("hi"));
    }
}
