//! `decode doctor`: what this machine can enforce for bash commands, every bound a
//! project's sandbox holds them in (docs/sandbox.md), and whether Decode's hook is
//! installed in Claude Code and Gemini CLI and where it points (docs/hooks.md).

use std::path::PathBuf;
use std::process::ExitCode;

use decode_core::dirs::Dirs;
use decode_engine::sandbox::env::{removed_from, Removed};
use decode_engine::sandbox::{self, Inputs, Kind, Plan, ReadDeny, Scan, Support};
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
    let report = match Report::gather(&args, dirs) {
        Ok(r) => r,
        Err(code) => return code,
    };
    if args.json {
        print_json(&report);
    } else {
        print_text(&report);
    }
    match report.support {
        Support::Enforced { .. } => ExitCode::SUCCESS,
        Support::Unavailable { .. } => ExitCode::FAILURE,
    }
}

/// What the doctor found, gathered before any of it is printed.
struct Report {
    kernel: String,
    userns: String,
    support: &'static Support,
    root: PathBuf,
    inputs: Inputs,
    scan: Scan,
    writable: Vec<(String, String)>,
    read_only: Vec<String>,
    hidden: Vec<(String, String)>,
    service_dirs: Vec<(String, String)>,
    sockets: Vec<(String, String)>,
    pinned: usize,
    hooks: Vec<super::hook_setup::Installed>,
    watched: usize,
    /// The environment's names a command does not get: secrets, service addresses.
    secrets: Vec<String>,
    services: Vec<String>,
    own_network: bool,
}

impl Report {
    fn gather(args: &DoctorArgs, dirs: &Dirs) -> Result<Report, ExitCode> {
        let kernel = first_line_of("/proc/sys/kernel/osrelease");
        let userns = first_line_of("/proc/sys/user/max_user_namespaces");
        let support = sandbox::support();
        let state = super::open_state(args.project.as_deref(), &SelectArgs::default(), dirs)?;
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
        let (secrets, services) = removed_env_names(&inputs.user.env_pass);
        let own_network = plan.own_network();
        Ok(Report {
            kernel,
            userns,
            support,
            root,
            inputs,
            scan,
            writable,
            read_only,
            hidden,
            service_dirs,
            sockets,
            pinned,
            hooks,
            watched,
            secrets,
            services,
            own_network,
        })
    }
}

/// The trimmed text of a kernel file, or "unknown".
fn first_line_of(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The names in this process's environment a command does not get: the secrets,
/// then the service addresses.
fn removed_env_names(env_pass: &[String]) -> (Vec<String>, Vec<String>) {
    let names: Vec<std::ffi::OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    let removed = removed_from(names.iter(), env_pass);
    let name_list = |why: Removed| -> Vec<String> {
        removed
            .iter()
            .filter(|(_, w)| *w == why)
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    };
    (name_list(Removed::Secret), name_list(Removed::Service))
}

fn print_json(r: &Report) {
    let (enforced, bwrap, version, why) = match r.support {
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
        "kernel": r.kernel,
        "max_user_namespaces": r.userns,
        "sandbox": enforced,
        "bwrap": bwrap,
        "bwrap_version": version,
        "problem": why,
        "no_new_privileges": enforced,
        "own_network": enforced && r.own_network,
        "landlock": "not used",
        "project": r.root,
        "writable": pairs(&r.writable),
        "read_only": r.read_only,
        "pinned_folders": r.pinned,
        "hidden": pairs(&r.hidden),
        "service_folders": pairs(&r.service_dirs),
        "service_sockets": pairs(&r.sockets),
        "env_removed": {"secrets": r.secrets, "services": r.services},
        "env_pass": r.inputs.user.env_pass,
        "user_settings_problems": r.inputs.user_problems,
        "watched_missing": r.watched,
        "read_deny_rules": r.scan.deny_rules,
        "read_deny_unenforced": r.scan.deny_unenforced,
        "scanned_entries": r.scan.entries,
        "scan_truncated": r.scan.truncated,
        "hooks": r.hooks,
    });
    output::json(&line.to_string());
}

fn out(s: String) {
    output::out(&s);
}

/// One indented line per path, with why it is there.
fn list(pairs: &[(String, String)]) {
    for (p, why) in pairs {
        output::out(&format!("    {p}  ({why})"));
    }
}

fn print_text(r: &Report) {
    out(format!("kernel               Linux {}", r.kernel));
    out(format!("user namespaces      max {}", r.userns));
    print_support(r.support, r.own_network);
    out("landlock             not used (it cannot make one file read-only inside a writable folder)".into());
    out(format!("project              {}", r.root.display()));
    print_places(r);
    print_environment(r);
    out(format!(
        "  scanned            {} entries{}",
        r.scan.entries,
        if r.scan.truncated {
            " (stopped: too many)"
        } else {
            ""
        }
    ));
    print_hooks(&r.hooks);
}

/// Whether bash commands are sandboxed here, and what the sandbox holds them to.
fn print_support(support: &Support, own_network: bool) {
    match support {
        Support::Enforced { bwrap, version, .. } => {
            out(format!(
                "bubblewrap           {} ({version})",
                bwrap.display()
            ));
            out(
                "sandbox              enforced for every bash command the person did not approve"
                    .into(),
            );
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
}

/// The project's places: writable, protected, watched, pinned, hidden, and the host
/// services taken away.
fn print_places(r: &Report) {
    out(format!(
        "  writable           {} place(s); everything else is read-only:",
        r.writable.len()
    ));
    list(&r.writable);
    out(format!(
        "  protected          {} path(s) read-only inside them{}",
        r.read_only.len(),
        if r.read_only.is_empty() { "" } else { ":" }
    ));
    for p in &r.read_only {
        out(format!("    {p}"));
    }
    out(format!(
        "  watched            {} protected path(s) that do not exist: what a command makes there is taken away",
        r.watched
    ));
    out(format!(
        "  pinned folders     {} (cannot be renamed inside the sandbox)",
        r.pinned
    ));
    out(format!(
        "  hidden             {} path(s){}",
        r.hidden.len(),
        if r.hidden.is_empty() { "" } else { ":" }
    ));
    list(&r.hidden);
    if !r.scan.deny_rules.is_empty() {
        out(format!(
            "  read deny rules    {} (the files they cover are hidden){}",
            r.scan.deny_rules.join(", "),
            if r.scan.deny_unenforced.is_empty() {
                String::new()
            } else {
                format!(
                    "; TOO BROAD to enforce, commands need approval: {}",
                    r.scan.deny_unenforced.join(", ")
                )
            }
        ));
    }
    out(format!(
        "  host services      {} folder(s) emptied, {} socket(s) refused:",
        r.service_dirs.len(),
        r.sockets.len()
    ));
    list(&r.service_dirs);
    list(&r.sockets);
}

/// What a command's environment loses, what the person keeps, and settings problems.
fn print_environment(r: &Report) {
    let (secrets, services) = (&r.secrets, &r.services);
    out(format!(
        "  environment        removed: {} secret(s){}{}; {} service address(es){}{}",
        secrets.len(),
        if secrets.is_empty() { "" } else { " " },
        secrets.join(", "),
        services.len(),
        if services.is_empty() { "" } else { " " },
        services.join(", ")
    ));
    if !r.inputs.user.env_pass.is_empty() {
        out(format!(
            "                     kept by your sandbox.env.pass: {}",
            r.inputs.user.env_pass.join(", ")
        ));
    }
    for p in &r.inputs.user_problems {
        out(format!("  your settings      {p} (treated as empty)"));
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
