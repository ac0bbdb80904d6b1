//! The `decode` binary: the window (default) and the command-line subcommands.
//!
//! Subcommands never open a window and need no display. Usage errors print one line to
//! stderr and exit 2.

mod cli;
mod commands;
mod gui;
mod logging;
mod output;

use std::process::ExitCode;
use std::sync::Arc;

use cli::{Command, OpenArgs, Parsed};
use decode_core::dirs::Dirs;

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
        Some(Command::Check(args)) => commands::check::run(args, &dirs),
        Some(Command::Trust(args)) => commands::trust::run(args, &dirs),
        Some(Command::Agents(args)) => commands::agents::run(args),
        Some(Command::Tool(args)) => commands::tool::run(args, &dirs),
        Some(Command::Run(args)) => commands::run::run(*args, &dirs),
        Some(Command::Key(args)) => commands::key::run(args),
        Some(Command::Sessions(args)) => commands::run::sessions(args, &dirs),
    }
}

fn open_window(args: OpenArgs, dirs: &Dirs) -> ExitCode {
    let active = match commands::open_state(args.project_dir.as_deref(), &args.select, dirs) {
        Ok(state) => state,
        Err(code) => return code,
    };
    match gui::run(Arc::new(active)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            output::err(&format!("decode: {e}"));
            ExitCode::FAILURE
        }
    }
}
