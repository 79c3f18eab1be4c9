//! What both Paseo binaries run without a window, in a crate with no Tauri dependency: the
//! command line, the data root and its lock, the logs, the backend (config, the core runtime and
//! its MCP server) and the headless mode. `paseo-desktop` (the Tauri shell) re-exports these
//! modules and adds the windows; `paseo-headless` is [`run_headless`] alone, so it links no GTK,
//! WebKit or libsoup and starts without the dynamic loader's cost of resolving them.
//!
//! Log lines keep the target `paseo_desktop::…` they always had (set explicitly where they are
//! written), so both binaries write the same log and `RUST_LOG=paseo_desktop=debug` filters
//! either one.

pub mod attach;
pub mod backend;
pub mod cli;
pub mod data_root;
pub mod headless;
pub mod lock;
mod logfile;
pub mod logging;
pub mod socket;

pub use paseo_core;

use cli::{Command, Mode, Program};
use std::path::PathBuf;
use std::process::ExitCode;

/// The start both binaries share: names the program, parses its arguments, answers `--help`
/// and `--version`, and resolves the data root. `Ok` is the mode to run on that root; `Err` the
/// exit code the process ends with (the message is already written).
pub fn prepare(program: Program) -> Result<(Mode, PathBuf), ExitCode> {
    paseo_core::runtime::limit_heap_arenas();
    cli::set_program(program);
    let name = program.name();
    let mut attach = false;
    let mode = match cli::parse_for(program, std::env::args().skip(1)) {
        Ok(Command::Run(mode)) => mode,
        Ok(Command::Attach) => {
            attach = true;
            Mode::Headless
        }
        Ok(Command::Help) => {
            print!("{}", program.usage());
            return Err(ExitCode::SUCCESS);
        }
        Ok(Command::Version) => {
            println!("{name} {}", env!("CARGO_PKG_VERSION"));
            return Err(ExitCode::SUCCESS);
        }
        Err(error) => {
            eprintln!("{name}: {error}");
            return Err(ExitCode::from(2));
        }
    };
    match data_root::from_env() {
        // Attach runs here and ends the process, as --help does: it starts no backend itself.
        Ok(root) if attach => Err(attach::run(root)),
        Ok(root) => Ok((mode, root)),
        Err(error) => {
            eprintln!("{name}: {error}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// The `paseo-headless` binary: `paseo-desktop --headless` without the window stack.
pub fn run_headless() -> ExitCode {
    match prepare(Program::Headless) {
        Ok((_, root)) => headless::run(root),
        Err(code) => code,
    }
}
