//! `decode trust DIR` and `decode trust --revoke DIR` (docs/permissions.md; README).

use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_core::trust::{TrustError, TrustStore};

use crate::cli::TrustArgs;
use crate::output;

pub fn run(args: TrustArgs, dirs: &Dirs) -> ExitCode {
    let mut store = TrustStore::open(&dirs.data);
    if let Some(problem) = store.problem() {
        output::err(&format!("decode: {problem}"));
        return ExitCode::FAILURE;
    }
    if args.revoke {
        match store.revoke(&args.dir) {
            Ok(true) => {
                output::out(&format!("{} is no longer trusted", args.dir.display()));
                ExitCode::SUCCESS
            }
            Ok(false) => {
                output::out(&format!("{} was not trusted", args.dir.display()));
                ExitCode::SUCCESS
            }
            Err(e) => failure(e),
        }
    } else {
        match store.trust(&args.dir) {
            Ok(path) => {
                output::out(&format!(
                    "trusted {}: its allow rules, additional directories, agents and hooks now apply",
                    path.display()
                ));
                let (settings, _) = decode_core::settings::Settings::load(&path);
                let hooks = decode_engine::workspace::project_hooks(&path, &settings);
                if !hooks.is_empty() {
                    output::out("its hooks now run around tool calls (inside the sandbox):");
                    for h in hooks {
                        output::out(&format!(
                            "  {} {} `{}` ({})",
                            h.event,
                            h.matcher.as_deref().unwrap_or("*"),
                            h.command,
                            h.file
                        ));
                    }
                }
                ExitCode::SUCCESS
            }
            Err(e) => failure(e),
        }
    }
}

fn failure(e: TrustError) -> ExitCode {
    match e {
        TrustError::BadPath { .. } => output::usage_error(&format!("decode: {e}")),
        _ => {
            output::err(&format!("decode: {e}"));
            ExitCode::FAILURE
        }
    }
}
