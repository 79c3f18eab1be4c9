//! `command` providers: any command-line agent the user configures in `config.json`. Each turn
//! runs the configured argv with the `{prompt}` argument replaced by the prompt (or, with
//! `"stdin": true`, the prompt written to its stdin; with neither, the prompt is appended as the
//! last argument), with the same turn semantics as the shell provider.
//!
//! The prompt is always one argument of its own, never spliced into a larger one: prompts come
//! from other agents and finish notices too, so a template that put them in a shell string
//! (`sh -c "bot '{prompt}'"`) would run their text as commands (SPEC 14). Such templates are
//! refused when config.json is read ([`check_template`]).

use std::sync::Arc;

use super::oneshot::{OneShot, TurnCommand, MAX_ARG_BYTES};
use super::process::find_program;
use super::{
    Configured, EventSink, Provider, ProviderError, ProviderInfo, SessionSpec, SessionStart,
};
pub use crate::config::template::{check_template, PROMPT_PLACEHOLDER};
use crate::config::ProviderConfig;

pub struct CommandProvider {
    base: Configured,
}

impl CommandProvider {
    pub fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        CommandProvider {
            base: Configured::new(id, config),
        }
    }

    fn template(&self) -> Vec<String> {
        self.base.config.command.clone().unwrap_or_default()
    }

    fn reads_prompts(&self) -> bool {
        let config = &self.base.config;
        config.reads_prompts.unwrap_or(config.stdin)
    }
}

/// Why the command cannot run: none is configured, or its program is not there.
fn unavailable(template: &[String], env: &super::process::AgentEnv) -> Option<String> {
    match template.first() {
        Some(program) => find_program(program, env).err(),
        None => Some("no command is configured".into()),
    }
}

/// The argv and stdin of one turn. A prompt that would go in an argument longer than Linux
/// allows is refused with the limit named (the provider's `stdin` setting takes any length).
pub fn build_turn(
    template: &[String],
    stdin: bool,
    prompt: &str,
) -> Result<TurnCommand, ProviderError> {
    let mut substituted = false;
    // Only a whole `{prompt}` argument is replaced (config.json refuses any other).
    let mut argv: Vec<String> = template
        .iter()
        .map(|arg| {
            if arg == PROMPT_PLACEHOLDER {
                substituted = true;
                prompt.to_string()
            } else {
                arg.clone()
            }
        })
        .collect();
    if stdin {
        return Ok(TurnCommand::new(argv, Some(prompt.to_string())));
    }
    if !substituted {
        argv.push(prompt.to_string());
    }
    if let Some(long) = argv.iter().find(|a| a.len() >= MAX_ARG_BYTES) {
        return Err(ProviderError::Invalid(format!(
            "the prompt makes a {} byte argument, over Linux's limit of {MAX_ARG_BYTES} bytes per \
             argument; set \"stdin\": true in this provider's configuration to pass prompts of \
             any length on its standard input",
            long.len()
        )));
    }
    Ok(TurnCommand::new(argv, None))
}

impl Provider for CommandProvider {
    fn info(&self) -> ProviderInfo {
        let reason = unavailable(&self.template(), &self.base.env());
        let label = self.base.id.clone();
        self.base
            .info("command", &label, reason, self.reads_prompts())
    }

    fn start(&self, spec: SessionSpec, sink: EventSink) -> SessionStart {
        let base = self.base.clone();
        let template = self.template();
        let reads_prompts = self.reads_prompts();
        Box::pin(async move {
            let env = base.session_env(&spec);
            if let Some(reason) = unavailable(&template, &env) {
                return Err(base.unavailable(reason));
            }
            let stdin = base.config.stdin;
            let build = Arc::new(move |prompt: &str| build_turn(&template, stdin, prompt));
            OneShot {
                name: base.id,
                reads_prompts,
                cwd: spec.cwd,
                env,
                build,
            }
            .start(sink)
            .await
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
        let t = build_turn(
            &argv(&["bot", "--msg", "{prompt}", "-q"]),
            false,
            "hi there",
        )
        .unwrap();
        assert_eq!(t.argv, ["bot", "--msg", "hi there", "-q"]);
        assert_eq!(t.stdin, None);
        let t = build_turn(&argv(&["bot", "-q"]), false, "hi").unwrap();
        assert_eq!(t.argv, ["bot", "-q", "hi"]);
        let t = build_turn(&argv(&["bot", "-q"]), true, "hi").unwrap();
        assert_eq!(t.argv, ["bot", "-q"]);
        assert_eq!(t.stdin.as_deref(), Some("hi"));
    }

    /// SPEC 9, 11: a prompt too long for one argument is refused with the limit named,
    /// never an E2BIG from execve; on stdin any length goes.
    #[test]
    fn a_prompt_too_long_for_an_argument_is_refused_naming_the_limit() {
        let long = "x".repeat(MAX_ARG_BYTES);
        for template in [&["bot", "--msg", "{prompt}"][..], &["bot"][..]] {
            let Err(e) = build_turn(&argv(template), false, &long) else {
                panic!("{template:?}: a {} byte argument was accepted", long.len());
            };
            let e = e.to_string();
            assert!(e.contains("131072 bytes per argument"), "{e}");
            assert!(e.contains("\"stdin\": true"), "{e}");
        }
        let t = build_turn(&argv(&["bot"]), true, &long).unwrap();
        assert_eq!(t.stdin.map(|s| s.len()), Some(MAX_ARG_BYTES));
    }

    /// SPEC 14: a prompt is one argument, never part of a shell string or a larger argument.
    #[test]
    fn templates_that_splice_the_prompt_or_run_it_as_shell_are_refused() {
        for (template, at, says) in [
            (
                &["bot", "--msg={prompt}"][..],
                1,
                "must be a whole argument",
            ),
            (
                &["sh", "-c", "bot '{prompt}'"][..],
                2,
                "must be a whole argument",
            ),
            (
                &["sh", "-c", "{prompt}"][..],
                2,
                "the script sh runs with -c",
            ),
            (
                &["/bin/bash", "-lc", "{prompt}"][..],
                2,
                "/bin/bash runs with -lc",
            ),
            (
                &["env", "zsh", "-e", "-c", "-x", "{prompt}"][..],
                5,
                "zsh runs with -c",
            ),
        ] {
            let Err((i, message)) = check_template(&argv(template)) else {
                panic!("{template:?} was accepted");
            };
            assert_eq!(i, at, "{template:?}: {message}");
            assert!(message.contains(says), "{template:?}: {message}");
        }
        for template in [
            &["bot", "--msg", "{prompt}"][..],
            &["sh", "-c", "bot \"$1\"", "sh", "{prompt}"][..],
            &["bash", "{prompt}"][..],
            &["bot"][..],
        ] {
            assert_eq!(check_template(&argv(template)), Ok(()), "{template:?}");
        }
    }
}
