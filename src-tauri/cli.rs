//! Command-line arguments of `paseo-desktop`.

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

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Run(Mode),
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
  --headless   run without any window until SIGINT or SIGTERM
  --help       print this help
  --version    print the version

Environment:
  PASEO_HOME   data root (default ~/.paseo); one process at a time owns it
  RUST_LOG     log filter (default info); logs go to $PASEO_HOME/logs/
";

/// Parses the arguments after the program name.
pub fn parse<I, S>(args: I) -> Result<Command, CliError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut mode = Mode::Window;
    for arg in args {
        match arg.as_ref() {
            "--headless" => mode = Mode::Headless,
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
}
