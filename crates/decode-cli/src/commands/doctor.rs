//! `decode doctor`: what this machine can enforce for bash commands, what the
//! sandbox of a project keeps read-only (docs/sandbox.md), and whether Decode's hook
//! is installed in Claude Code and Gemini CLI and where it points (docs/hooks.md).

use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_engine::sandbox::{self, Plan, Support};
use serde_json::json;

use crate::cli::{DoctorArgs, SelectArgs};
use crate::output;

pub fn run(args: DoctorArgs, dirs: &Dirs) -> ExitCode {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let support = sandbox::support();
    let state = match super::open_state(args.project.as_deref(), &SelectArgs::default(), dirs) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let root = state.project_root().to_path_buf();
    let scan = sandbox::scan(&root);
    let plan = Plan::new(&state.gate(), &scan);
    let read_only: Vec<String> = plan
        .read_only_paths()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let pinned = plan.pinned_paths().len();
    let hooks = super::hook_setup::installed(&dirs.home);

    if args.json {
        let (enforced, bwrap, version, why) = match support {
            Support::Enforced { bwrap, version } => (
                true,
                Some(bwrap.display().to_string()),
                Some(version.clone()),
                None,
            ),
            Support::Unavailable { why } => (false, None, None, Some(why.clone())),
        };
        let line = json!({
            "kernel": kernel,
            "max_user_namespaces": userns,
            "sandbox": enforced,
            "bwrap": bwrap,
            "bwrap_version": version,
            "problem": why,
            "no_new_privileges": enforced,
            "landlock": "not used",
            "project": root,
            "read_only": read_only,
            "pinned_folders": pinned,
            "scanned_entries": scan.entries,
            "scan_truncated": scan.truncated,
            "hooks": hooks,
        });
        output::json(&line.to_string());
    } else {
        output::out(&format!("kernel               Linux {kernel}"));
        output::out(&format!("user namespaces      max {userns}"));
        match support {
            Support::Enforced { bwrap, version } => {
                output::out(&format!(
                    "bubblewrap           {} ({version})",
                    bwrap.display()
                ));
                output::out(
                    "sandbox              enforced for every bash command the person did not approve",
                );
                output::out("  no new privileges  yes (checked: NoNewPrivs is 1 inside)");
                output::out(
                    "  protected files    read-only (checked: a bound file cannot be written)",
                );
            }
            Support::Unavailable { why } => {
                output::out(&format!("sandbox              NOT ENFORCED: {why}"));
                output::out("  bash commands run with the gate alone; install bubblewrap (`apt install bubblewrap`) and allow unprivileged user namespaces");
            }
        }
        output::out(
            "landlock             not used (it cannot make one file read-only inside a writable folder)",
        );
        output::out(&format!("project              {}", root.display()));
        output::out(&format!(
            "  read-only          {} path(s){}",
            read_only.len(),
            if read_only.is_empty() { "" } else { ":" }
        ));
        for p in &read_only {
            output::out(&format!("    {p}"));
        }
        output::out(&format!(
            "  pinned folders     {pinned} (cannot be renamed inside the sandbox)"
        ));
        output::out(&format!(
            "  scanned            {} entries{}",
            scan.entries,
            if scan.truncated {
                " (stopped: too many)"
            } else {
                ""
            }
        ));
        print_hooks(&hooks);
    }
    match support {
        Support::Enforced { .. } => ExitCode::SUCCESS,
        Support::Unavailable { .. } => ExitCode::FAILURE,
    }
}

fn print_hooks(hooks: &[super::hook_setup::Installed]) {
    for h in hooks {
        let label = format!("{} hook", h.agent);
        let head = format!("{label:<21}");
        if let Some(problem) = &h.problem {
            output::out(&format!("{head}{}: {problem}", h.settings.display()));
            continue;
        }
        if h.hooks.is_empty() {
            output::out(&format!(
                "{head}not installed in {} (docs/hooks.md says how)",
                h.settings.display()
            ));
            continue;
        }
        for e in &h.hooks {
            let target = match (&e.resolved, e.this_decode) {
                (Some(p), true) => format!("{} (this decode)", p.display()),
                (Some(p), false) => format!("{} (another program than this decode)", p.display()),
                (None, _) => format!("`{}`, not found", e.program),
            };
            output::out(&format!(
                "{head}installed in {}: runs {target}",
                h.settings.display()
            ));
            for w in &e.warnings {
                output::out(&format!("  warning            {w}"));
            }
        }
    }
}
