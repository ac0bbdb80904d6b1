//! The window binary, `decode-window`: what `decode` (the command-line binary,
//! crates/decode-cli) becomes when it is given no subcommand. It takes the same
//! arguments; its subcommands run as `decode`'s do, and `native-dialog` is its own
//! (the approval dialogs run in a child process of the window).

mod app;
mod commands;
mod links;
mod message_box;
mod native;
mod screens;
mod state;
mod stream;
mod tray;

use std::process::ExitCode;
use std::sync::Arc;

use decode_cli::cli::{self, Command, OpenArgs, Parsed};
use decode_cli::{logging, output};
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
    if cli.command.is_none() {
        software_paint();
    }
    let dirs = match Dirs::from_env() {
        Ok(d) => d,
        Err(e) => return output::usage_error(&format!("decode: {e}")),
    };
    let _log = logging::init(&dirs.state, cli.command.is_some());

    match cli.command {
        None => open_window(cli.open, &dirs),
        Some(Command::NativeDialog) => native::run_child(),
        Some(command) => decode_cli::run(command, &dirs),
    }
}

/// WebKitGTK's accelerated compositing paints a chat page slower, and with
/// twice the memory, than plain painting where the GPU is a software one
/// (docs/window.md, "Rendering"). Decode paints plainly unless the person
/// chose otherwise: `WEBKIT_DISABLE_COMPOSITING_MODE` already set (to any
/// value), or `DECODE_GPU_COMPOSITING=1`. Called first thing, before any
/// thread runs.
fn software_paint() {
    const VAR: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    let gpu = std::env::var_os("DECODE_GPU_COMPOSITING").is_some_and(|v| v == "1");
    if !gpu && std::env::var_os(VAR).is_none() {
        std::env::set_var(VAR, "1");
    }
}

fn open_window(args: OpenArgs, dirs: &Dirs) -> ExitCode {
    let overrides = match args.provider.overrides(args.max_turns) {
        Ok(o) => o,
        Err(line) => return output::usage_error(&line),
    };
    let bench = match decode_cli::commands::open_workbench(
        args.project_dir.as_deref(),
        args.resume.as_deref(),
        &args.select,
        overrides,
        dirs,
    ) {
        Ok(b) => Arc::new(b),
        Err(code) => return code,
    };
    match app::run(bench) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            output::err(&format!("decode: {e}"));
            ExitCode::FAILURE
        }
    }
}
