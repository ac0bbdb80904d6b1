//! The window binary, `decode-window`: what `decode` (the command-line binary,
//! crates/decode-cli) becomes when it is given no subcommand. It takes the same
//! arguments; its subcommands run as `decode`'s do, and `native-dialog` is its own
//! (the approval dialogs run in a child process of the window).

mod gui;
mod links;
mod message_box;
mod native;
mod screens;
mod stream;
mod tray;

use std::process::ExitCode;
use std::sync::Arc;

use decode_cli::cli::{self, Command, OpenArgs, Parsed};
use decode_cli::{commands, logging, output};
use decode_core::dirs::Dirs;
use decode_engine::channel::DecisionChannel;
use decode_engine::chat::ChatSession;
use decode_engine::session::SessionStore;

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
    // A session to continue brings its project (unless a folder is given).
    let store = SessionStore::new(&dirs.data);
    let resumed = match &args.resume {
        Some(id) => match store.open(id) {
            Ok(r) => Some(r),
            Err(e) => return output::usage_error(&format!("decode: {e}")),
        },
        None => None,
    };
    let project = args
        .project_dir
        .clone()
        .or_else(|| resumed.as_ref().map(|r| r.session.header().project.clone()));
    let active = match commands::open_state(project.as_deref(), &args.select, dirs) {
        Ok(state) => Arc::new(state),
        Err(code) => return code,
    };
    let setup = gui::chat_setup(&args.provider, args.max_turns, dirs);
    let chat = Arc::new(ChatSession::new(
        Arc::clone(&active),
        Arc::new(DecisionChannel::new()),
        store,
        setup,
        resumed,
    ));
    let start = gui::Start {
        project: gui::Project { active, chat },
        dirs: dirs.clone(),
        provider: args.provider,
        max_turns: args.max_turns,
    };
    match gui::run(start) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            output::err(&format!("decode: {e}"));
            ExitCode::FAILURE
        }
    }
}
