//! Command-line arguments of `paseo-desktop` and `paseo-headless`.

use std::sync::OnceLock;
use thiserror::Error;

/// How the process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The desktop app: main window, tray, single instance.
    Window,
    /// No window at all, until SIGINT/SIGTERM (servers, CI, scripts).
    Headless,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Window => "window",
            Mode::Headless => "headless",
        }
    }
}

/// Which binary is running. Both run the same headless mode; only `paseo-desktop` links the
/// window stack (Tauri, GTK, WebKit) and can open windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    Desktop,
    Headless,
}

impl Program {
    /// The binary's name, as its messages and `--version` say it.
    pub fn name(self) -> &'static str {
        match self {
            Program::Desktop => "paseo-desktop",
            Program::Headless => "paseo-headless",
        }
    }

    pub fn usage(self) -> &'static str {
        match self {
            Program::Desktop => USAGE,
            Program::Headless => HEADLESS_USAGE,
        }
    }

    /// The mode without arguments.
    fn default_mode(self) -> Mode {
        match self {
            Program::Desktop => Mode::Window,
            Program::Headless => Mode::Headless,
        }
    }
}

static PROGRAM: OnceLock<Program> = OnceLock::new();

/// Names the running binary for the messages written before the log (or instead of it); the
/// entry point calls it first. Later calls change nothing.
pub fn set_program(program: Program) {
    let _ = PROGRAM.set(program);
}

/// The running binary (`paseo-desktop` unless its entry point said otherwise, e.g. in tests).
pub fn program() -> Program {
    PROGRAM.get().copied().unwrap_or(Program::Desktop)
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Run(Mode),
    /// `paseo-headless attach`: join this user's backend over stdin/stdout (SPEC 17).
    Attach,
    Help,
    Version,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum CliError {
    #[error("unknown argument '{0}' (try --help)")]
    UnknownArgument(String),
}

pub const USAGE: &str = "\
Usage: paseo-desktop [--headless]

Runs and supervises fleets of coding agents.

Options:
  --headless   run without any window until SIGINT or SIGTERM (paseo-headless runs the same
               without linking GTK or WebKit: it starts faster and needs no display stack)
  --help       print this help
  --version    print the version

Environment:
  PASEO_HOME   data root (default ~/.paseo); one process at a time owns it
  RUST_LOG     log filter (default info); logs go to $PASEO_HOME/logs/
";

pub const HEADLESS_USAGE: &str = "\
Usage: paseo-headless [attach]

Runs Paseo without any window until SIGINT or SIGTERM: the agents, their records and the MCP
server, exactly as `paseo-desktop --headless` does, from a binary that links no GTK or WebKit
(it starts faster and runs on servers with no display stack installed).

Commands:
  attach       join this user's backend (starting it, detached, if none runs) and carry its
               protocol over stdin/stdout: what the app runs on a host over ssh

Options:
  --headless   accepted, so scripts written for paseo-desktop --headless work unchanged
  --help       print this help
  --version    print the version

Environment:
  PASEO_HOME   data root (default ~/.paseo); one process at a time owns it
  RUST_LOG     log filter (default info); logs go to $PASEO_HOME/logs/
";

/// Parses `paseo-desktop`'s arguments (after the program name).
pub fn parse<I, S>(args: I) -> Result<Command, CliError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    parse_for(Program::Desktop, args)
}

/// Parses the arguments (after the program name) of `program`.
pub fn parse_for<I, S>(program: Program, args: I) -> Result<Command, CliError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut mode = program.default_mode();
    for arg in args {
        match arg.as_ref() {
            "--headless" => mode = Mode::Headless,
            "attach" if program == Program::Headless => return Ok(Command::Attach),
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            other => return Err(CliError::UnknownArgument(other.to_string())),
        }
    }
    Ok(Command::Run(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_modes_help_and_version() {
        assert_eq!(parse::<_, &str>([]), Ok(Command::Run(Mode::Window)));
        assert_eq!(parse(["--headless"]), Ok(Command::Run(Mode::Headless)));
        assert_eq!(parse(["--help"]), Ok(Command::Help));
        assert_eq!(parse(["--headless", "-V"]), Ok(Command::Version));
    }

    #[test]
    fn rejects_unknown_arguments_by_name() {
        let err = parse(["--headles"]).unwrap_err();
        assert_eq!(err.to_string(), "unknown argument '--headles' (try --help)");
    }

    #[test]
    fn paseo_headless_is_always_headless_and_takes_the_same_options() {
        let headless = |args: &[&str]| parse_for(Program::Headless, args.iter());
        assert_eq!(headless(&[]), Ok(Command::Run(Mode::Headless)));
        assert_eq!(headless(&["--headless"]), Ok(Command::Run(Mode::Headless)));
        assert_eq!(headless(&["-h"]), Ok(Command::Help));
        assert_eq!(headless(&["--version"]), Ok(Command::Version));
        assert_eq!(headless(&["attach"]), Ok(Command::Attach));
        assert_eq!(
            parse(["attach"]),
            Err(CliError::UnknownArgument("attach".into()))
        );
        assert_eq!(
            headless(&["--window"]),
            Err(CliError::UnknownArgument("--window".into()))
        );
        assert!(Program::Headless
            .usage()
            .starts_with("Usage: paseo-headless"));
    }
}
