//! The built-in `shell` provider: each prompt is a command line run by the user's shell
//! (`$SHELL`, falling back to `/bin/sh`) in the agent's cwd. Works with nothing installed. A
//! shell agent cannot read, so finish notices are never run as commands.
//!
//! The prompt never goes on the shell's command line, which every local user can read in
//! `/proc/<pid>/cmdline` (SPEC 14, secrets): it is written to a private (0600) script file that
//! the shell runs (`$SHELL <file>`), removed when the turn ends. Its standard input stays empty,
//! so a command that reads stdin sees end-of-file rather than the rest of the script.

use std::path::Path;
use std::sync::Arc;

use super::oneshot::{OneShot, TurnCommand};
use super::process::{find_argv0, find_program, AgentEnv};
use super::{
    Configured, EventSink, Provider, ProviderError, ProviderInfo, SessionSpec, SessionStart,
};
use crate::config::ProviderConfig;

pub struct ShellProvider {
    base: Configured,
}

impl ShellProvider {
    pub fn new(id: impl Into<String>, config: ProviderConfig) -> Self {
        ShellProvider {
            base: Configured::new(id, config),
        }
    }
}

/// The shell's argv prefix: the configured command, else `$SHELL` if it exists, else
/// `/bin/sh`.
fn shell(base: &Configured, env: &AgentEnv) -> Vec<String> {
    if let Some(cmd) = &base.config.command {
        return cmd.clone();
    }
    match env.get("SHELL") {
        Some(sh) if !sh.is_empty() && find_program(&sh, env).is_ok() => vec![sh],
        _ => vec!["/bin/sh".to_string()],
    }
}

/// Writes a script to a new private (0600) temp file: in the agent's private temp folder when
/// it is contained (its box has no other `/tmp`), else in the system's.
fn script_file(prompt: &str, dir: Option<&Path>) -> Result<tempfile::TempPath, ProviderError> {
    use std::io::Write;
    let spawn = |source| ProviderError::Spawn {
        what: "the shell: the script file of its prompt".into(),
        source,
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix("paseo-shell-").suffix(".sh");
    let mut file = match dir {
        Some(d) => builder.tempfile_in(d),
        None => builder.tempfile(),
    }
    .map_err(spawn)?;
    file.write_all(prompt.as_bytes()).map_err(spawn)?;
    file.flush().map_err(spawn)?;
    Ok(file.into_temp_path())
}

impl Provider for ShellProvider {
    fn info(&self) -> ProviderInfo {
        let env = self.base.env();
        let reason = find_argv0(&shell(&self.base, &env), &env).err();
        self.base.info("shell", "Shell", reason, false)
    }

    fn start(&self, spec: SessionSpec, sink: EventSink) -> SessionStart {
        let base = self.base.clone();
        Box::pin(async move {
            let env = base.session_env(&spec);
            let shell = shell(&base, &env);
            if let Err(reason) = find_argv0(&shell, &env) {
                return Err(base.unavailable(reason));
            }
            let tmp = env
                .sandbox
                .as_ref()
                .and_then(|p| p.private_tmp().map(Path::to_path_buf));
            let build = Arc::new(move |prompt: &str| {
                // Every shell accepts a script file as its first argument; the file is private
                // and removed after the turn (see the module's documentation).
                let script = script_file(prompt, tmp.as_deref())?;
                let mut argv = shell.clone();
                argv.push(script.to_string_lossy().into_owned());
                Ok(TurnCommand {
                    argv,
                    stdin: None,
                    keep: Some(script),
                })
            });
            OneShot {
                name: base.id,
                reads_prompts: false,
                cwd: spec.cwd,
                env,
                build,
            }
            .start(sink)
            .await
        })
    }
}
