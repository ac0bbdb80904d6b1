//! Decode's command line: every subcommand of the `decode` binary, and what the
//! window binary (`decode-window`) shares with it: argument parsing, output and
//! logging. Links no GUI library: `decode check` and `decode hook` start in
//! milliseconds. `decode` with no subcommand starts the window binary with the same
//! arguments.

pub mod cli;
pub mod commands;
pub mod logging;
pub mod output;
pub mod terminal;

use std::process::ExitCode;

use cli::Command;
use decode_core::dirs::Dirs;

/// Runs one subcommand (`NativeDialog` belongs to the window binary: the caller
/// handles it).
pub fn run(command: Command, dirs: &Dirs) -> ExitCode {
    match command {
        Command::Check(args) => commands::check::run(args, dirs),
        Command::Settings(args) => commands::settings::run(args, dirs),
        Command::Trust(args) => commands::trust::run(args, dirs),
        Command::Agents(args) => commands::agents::run(args, dirs),
        Command::Tool(args) => commands::tool::run(args, dirs),
        Command::Run(args) => commands::run::run(*args, dirs),
        Command::Key(args) => commands::key::run(args),
        Command::Sessions(args) => commands::run::sessions(args, dirs),
        Command::Doctor(args) => commands::doctor::run(args, dirs),
        Command::Hook(args) => commands::hook::run(args, dirs),
        Command::Mcp(args) => commands::mcp::run(args, dirs),
        Command::Undo(args) => commands::undo::run(args, dirs),
        Command::NativeDialog => {
            output::usage_error("decode: native-dialog is the window's own subcommand")
        }
    }
}
