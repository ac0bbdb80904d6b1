//! The `decode` binary: the window (default) and the command-line subcommands.
//!
//! Subcommands never open a window and need no display. Usage errors print one line to
//! stderr and exit 2.

mod cli;
mod gui;
mod logging;
mod output;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use cli::{Command, OpenArgs, Parsed};
use decode_core::dirs::Dirs;
use decode_core::state::{self, ActiveState};
use decode_policy::Mode;

fn main() -> ExitCode {
    let cli = match cli::parse(std::env::args_os()) {
        Parsed::Run(cli) => cli,
        Parsed::Info(text) => {
            output::out(text.trim_end());
            return ExitCode::SUCCESS;
        }
        Parsed::UsageError(line) => return output::usage_error(&line),
    };
    let dirs = match Dirs::from_env() {
        Ok(d) => d,
        Err(e) => return output::usage_error(&format!("decode: {e}")),
    };
    let _log = logging::init(&dirs.state, cli.command.is_some());

    match cli.command {
        None => open_window(cli.open, &dirs),
        Some(Command::Check(_)) | Some(Command::Trust(_)) | Some(Command::Agents(_)) => {
            output::usage_error("decode: this subcommand is not available in this build")
        }
    }
}

/// Resolves a project folder argument (default: the current directory).
fn project_dir(arg: Option<&Path>) -> Result<PathBuf, String> {
    let raw = match arg {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir().map_err(|e| format!("decode: no current directory: {e}"))?,
    };
    match std::fs::canonicalize(&raw) {
        Ok(p) if p.is_dir() => Ok(p),
        Ok(_) => Err(format!("decode: {} is not a folder", raw.display())),
        Err(e) => Err(format!("decode: cannot open {}: {e}", raw.display())),
    }
}

fn parse_mode(mode: Option<&str>) -> Result<Option<Mode>, String> {
    mode.map(|m| state::parse_mode(m).map_err(|e| format!("decode: {e}")))
        .transpose()
}

fn open_window(args: OpenArgs, dirs: &Dirs) -> ExitCode {
    let project = match project_dir(args.project_dir.as_deref()) {
        Ok(p) => p,
        Err(line) => return output::usage_error(&line),
    };
    let mode = match parse_mode(args.select.mode.as_deref()) {
        Ok(m) => m,
        Err(line) => return output::usage_error(&line),
    };
    let (active, diagnostics) = match ActiveState::open(
        &project,
        &dirs.home,
        &dirs.data,
        args.select.agent.as_deref(),
        mode,
    ) {
        Ok(v) => v,
        Err(e) => return output::usage_error(&format!("decode: {e}")),
    };
    for d in diagnostics {
        output::err(&format!("decode: {d}"));
    }
    match gui::run(Arc::new(active)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            output::err(&format!("decode: {e}"));
            ExitCode::FAILURE
        }
    }
}
