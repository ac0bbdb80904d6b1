//! `decode doctor`: what this machine can enforce for bash commands, every bound a
//! project's sandbox holds them in (docs/sandbox.md), and whether Decode's hook is
//! installed in Claude Code and Gemini CLI and where it points (docs/hooks.md).

use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_engine::sandbox::env::{removed_from, Removed};
use decode_engine::sandbox::{self, Inputs, Kind, Plan, ReadDeny, Support};
use serde_json::json;

use crate::cli::{DoctorArgs, SelectArgs};
use crate::output;

/// The mounts of one kind, with why each is there.
fn of_kind(plan: &Plan, kinds: &[Kind]) -> Vec<(String, String)> {
    plan.mounts()
        .into_iter()
        .filter(|m| kinds.contains(&m.kind))
        .map(|m| (m.path.display().to_string(), m.why.clone()))
        .collect()
}

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
    let inputs = Inputs::for_state(&state);
    let deny = ReadDeny::of(&state, &inputs.homes);
    let scan = sandbox::scan_all(&root, &inputs.extra_writable(), Some(&deny));
    let plan = Plan::new(&state.gate(), &scan, &inputs);
    let writable = of_kind(&plan, &[Kind::Writable]);
    let read_only: Vec<String> = plan
        .read_only_paths()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let hidden = of_kind(&plan, &[Kind::Hidden]);
    let service_dirs = of_kind(&plan, &[Kind::Tmpfs]);
    let sockets = of_kind(&plan, &[Kind::NullSocket]);
    let pinned = plan.pinned_paths().len();
    let hooks = super::hook_setup::installed(&dirs.home);
    let watched = plan.watched_absent().len();
    let names: Vec<std::ffi::OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    let removed = removed_from(names.iter(), &inputs.user.env_pass);
    let name_list = |why: Removed| -> Vec<String> {
        removed
            .iter()
            .filter(|(_, w)| *w == why)
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    };
    let (secrets, services) = (name_list(Removed::Secret), name_list(Removed::Service));
    let own_network = plan.own_network();

    if args.json {
        let (enforced, bwrap, version, why) = match support {
            Support::Enforced { bwrap, version, .. } => (
                true,
                Some(bwrap.display().to_string()),
                Some(version.clone()),
                None,
            ),
            Support::Unavailable { why } => (false, None, None, Some(why.clone())),
        };
        let pairs = |v: &[(String, String)]| -> Vec<serde_json::Value> {
            v.iter()
                .map(|(p, w)| json!({"path": p, "why": w}))
                .collect()
        };
        let line = json!({
            "kernel": kernel,
            "max_user_namespaces": userns,
            "sandbox": enforced,
            "bwrap": bwrap,
            "bwrap_version": version,
            "problem": why,
            "no_new_privileges": enforced,
            "own_network": enforced && own_network,
            "landlock": "not used",
            "project": root,
            "writable": pairs(&writable),
            "read_only": read_only,
            "pinned_folders": pinned,
            "hidden": pairs(&hidden),
            "service_folders": pairs(&service_dirs),
            "service_sockets": pairs(&sockets),
            "env_removed": {"secrets": secrets, "services": services},
            "env_pass": inputs.user.env_pass,
            "user_settings_problems": inputs.user_problems,
            "watched_missing": watched,
            "read_deny_rules": scan.deny_rules,
            "read_deny_unenforced": scan.deny_unenforced,
            "scanned_entries": scan.entries,
            "scan_truncated": scan.truncated,
            "hooks": hooks,
        });
        output::json(&line.to_string());
    } else {
        let out = |s: String| output::out(&s);
        let list = |pairs: &[(String, String)]| {
            for (p, why) in pairs {
                output::out(&format!("    {p}  ({why})"));
            }
        };
        out(format!("kernel               Linux {kernel}"));
        out(format!("user namespaces      max {userns}"));
        match support {
            Support::Enforced { bwrap, version, .. } => {
                out(format!(
                    "bubblewrap           {} ({version})",
                    bwrap.display()
                ));
                out("sandbox              enforced for every bash command the person did not approve".into());
                out("  no new privileges  yes (checked: NoNewPrivs is 1 inside)".into());
                out(
                    "  processes          none outlives the call (a process namespace of its own)"
                        .into(),
                );
                out(match decode_engine::sandbox::local_sockets_filtered() {
                    true => "  local sockets      none of its own: socket(AF_UNIX) and vsock refused (a system-call filter), so a server the person starts at any path during a command is out of reach; socketpair works".into(),
                    false => "  local sockets      NOT filtered on this architecture: a server the person starts during a command outside the covered folders is reachable".into(),
                });
                if own_network {
                    out("  network            its own, loopback only: no port and no abstract socket of the host (X11, D-Bus, …)".into());
                    out(format!(
                        "  proxy              the only way out: Decode's proxy on 127.0.0.1:{} (HTTP, HTTPS) and :{} (SOCKS5) in each command's network, every host judged by the host policy (`decode check net HOST`); no direct DNS",
                        decode_engine::net::PROXY_HTTP_PORT,
                        decode_engine::net::PROXY_SOCKS_PORT
                    ));
                } else {
                    out("  network            SHARED with the host: the kernel cannot make a network namespace, so abstract sockets (X11, D-Bus) and the host's ports are reachable".into());
                    out("  proxy              none: commands use the host's network directly (no network namespace), so the host policy judges only web_fetch".into());
                }
            }
            Support::Unavailable { why } => {
                out(format!("sandbox              NOT ENFORCED: {why}"));
                out("  bash commands run with the gate alone; install bubblewrap (`apt install bubblewrap`) and allow unprivileged user namespaces".into());
            }
        }
        out("landlock             not used (it cannot make one file read-only inside a writable folder)".into());
        out(format!("project              {}", root.display()));
        out(format!(
            "  writable           {} place(s); everything else is read-only:",
            writable.len()
        ));
        list(&writable);
        out(format!(
            "  protected          {} path(s) read-only inside them{}",
            read_only.len(),
            if read_only.is_empty() { "" } else { ":" }
        ));
        for p in &read_only {
            out(format!("    {p}"));
        }
        out(format!(
            "  watched            {watched} protected path(s) that do not exist: what a command makes there is taken away"
        ));
        out(format!(
            "  pinned folders     {pinned} (cannot be renamed inside the sandbox)"
        ));
        out(format!(
            "  hidden             {} path(s){}",
            hidden.len(),
            if hidden.is_empty() { "" } else { ":" }
        ));
        list(&hidden);
        if !scan.deny_rules.is_empty() {
            out(format!(
                "  read deny rules    {} (the files they cover are hidden){}",
                scan.deny_rules.join(", "),
                if scan.deny_unenforced.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; TOO BROAD to enforce, commands need approval: {}",
                        scan.deny_unenforced.join(", ")
                    )
                }
            ));
        }
        out(format!(
            "  host services      {} folder(s) emptied, {} socket(s) refused:",
            service_dirs.len(),
            sockets.len()
        ));
        list(&service_dirs);
        list(&sockets);
        out(format!(
            "  environment        removed: {} secret(s){}{}; {} service address(es){}{}",
            secrets.len(),
            if secrets.is_empty() { "" } else { " " },
            secrets.join(", "),
            services.len(),
            if services.is_empty() { "" } else { " " },
            services.join(", ")
        ));
        if !inputs.user.env_pass.is_empty() {
            out(format!(
                "                     kept by your sandbox.env.pass: {}",
                inputs.user.env_pass.join(", ")
            ));
        }
        for p in &inputs.user_problems {
            out(format!("  your settings      {p} (treated as empty)"));
        }
        out(format!(
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
