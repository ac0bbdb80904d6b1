//! Logging: `tracing` to stderr and to `decode.log` in the XDG state folder.
//!
//! `RUST_LOG` is respected (default `info` for Decode's crates, `warn` for the rest).
//! Command-line subcommands log at `warn` to stderr by default so their stdout stays
//! clean and their stderr holds only what a person needs to read.

use std::io::IsTerminal;
use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer};

/// Keeps the file writer alive; dropping it flushes the log.
pub struct LogGuard {
    _file: Option<WorkerGuard>,
}

/// Starts logging. `quiet` lowers the stderr default to errors (for subcommands, which
/// print their diagnostics themselves).
/// A state folder that cannot be created only loses the file log, never the app.
pub fn init(state_dir: &Path, quiet: bool) -> LogGuard {
    let default = if quiet {
        // Subcommands print their own diagnostics; the log file still gets everything.
        "error"
    } else {
        "warn,decode=info,decode_app=info,decode_cli=info,decode_core=info,decode_policy=info"
    };
    let stderr_filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let stderr_layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .compact()
        .with_filter(stderr_filter);

    let (file_layer, guard, file_error) = match open_log_file(state_dir) {
        Ok(file) => {
            let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                EnvFilter::new(
                    "info,decode_core=debug,decode_policy=info,decode_app=debug,decode_cli=debug",
                )
            });
            if quiet {
                // A short-lived subcommand (a hook runs before every tool call of
                // another agent) writes its few lines itself: no writer thread, no
                // queue allocated up front.
                let layer = fmt::layer()
                    .with_writer(std::sync::Mutex::new(file))
                    .with_ansi(false)
                    .with_filter(filter)
                    .boxed();
                (Some(layer), None, None)
            } else {
                let (writer, guard) = tracing_appender::non_blocking(file);
                let layer = fmt::layer()
                    .with_writer(writer)
                    .with_ansi(false)
                    .with_filter(filter)
                    .boxed();
                (Some(layer), Some(guard), None)
            }
        }
        Err(e) => (None, None, Some(e)),
    };

    // A second init (tests) keeps the first subscriber.
    let _ = tracing_subscriber::registry()
        .with(stderr_layer)
        .with(file_layer)
        .try_init();
    if let Some(e) = file_error {
        tracing::warn!("no log file in {}: {e}", state_dir.display());
    }
    LogGuard { _file: guard }
}

fn open_log_file(state_dir: &Path) -> std::io::Result<std::fs::File> {
    std::fs::create_dir_all(state_dir)?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(state_dir.join("decode.log"))
}
