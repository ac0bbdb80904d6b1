//! The `decode` binary: the command-line subcommands, and the door to the window.
//!
//! Subcommands never open a window and need no display. Usage errors print one line to
//! stderr and exit 2. With no subcommand (`decode`, `decode DIR …`) it becomes the
//! window binary, `decode-window`, installed beside it, with the same arguments.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

use decode_cli::cli::{self, Command, Parsed};
use decode_cli::{logging, output};
use decode_core::dirs::Dirs;

/// The window binary's name.
const WINDOW: &str = "decode-window";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let cli = match cli::parse(args.iter().cloned()) {
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
    let command = match cli.command {
        None => {
            // A mistyped mode, agent or folder is a usage error here, before any
            // window library loads.
            if let Err(code) = check_window_args(&cli.open, &dirs) {
                return code;
            }
            return window(&args[1..]);
        }
        Some(Command::NativeDialog) => return window(&args[1..]),
        Some(c) => c,
    };
    let _log = logging::init(&dirs.state, true);
    decode_cli::run(command, &dirs)
}

/// The window's start-up choices, checked as its subcommands check theirs: one line
/// on stderr and exit 2 for an unknown mode, agent or folder. (A resumed session
/// brings its own folder: the window checks that one.)
fn check_window_args(open: &cli::OpenArgs, dirs: &Dirs) -> Result<(), ExitCode> {
    if let Some(m) = &open.select.mode {
        decode_core::state::parse_mode(m)
            .map_err(|e| output::usage_error(&format!("decode: {e}")))?;
    }
    if open.resume.is_some() && open.project_dir.is_none() {
        return Ok(());
    }
    let project = decode_cli::commands::project_dir(open.project_dir.as_deref())
        .map_err(|l| output::usage_error(&l))?;
    if let Some(agent) = &open.select.agent {
        decode_core::state::ActiveState::open(&project, &dirs.home, &dirs.data, Some(agent), None)
            .map_err(|e| output::usage_error(&format!("decode: {e}")))?;
    }
    Ok(())
}

/// Where the window binary is: beside this one, else on `PATH`.
fn window_binary() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(WINDOW)));
    if let Some(b) = beside.filter(|b| b.is_file()) {
        return Some(b);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(WINDOW))
        .find(|p| p.is_file())
}

/// Becomes the window binary with `args` (only returns if that fails).
fn window(args: &[OsString]) -> ExitCode {
    let Some(bin) = window_binary() else {
        output::err(&format!(
            "decode: the window is not installed ({WINDOW} is neither beside decode nor on PATH); the subcommands work without it (decode --help)"
        ));
        return ExitCode::FAILURE;
    };
    let e = std::process::Command::new(&bin).args(args).exec();
    output::err(&format!("decode: cannot start {}: {e}", bin.display()));
    ExitCode::FAILURE
}
