//! Which bound of the sandbox a command hit, read from what it printed
//! (docs/sandbox.md, "When a command hits a bound"): the result says which bound and
//! which path or host, and Decode asks the person whether to run it again outside.
//!
//! The kernel answers a command that crosses a bound with an ordinary error, which
//! programs print with the path: `Read-only file system` for a write outside the
//! writable places or to a protected path, `Permission denied` for a hidden file (a
//! hidden file or folder is an empty one nobody may read), `Connection refused` for a
//! host service's socket, `Address family not supported by protocol` for a local
//! socket (the system-call filter), and the resolver's and the socket layer's errors
//! for the network. A line counts only where it names what the sandbox changed: a
//! `Permission denied` on a file that is not hidden is the system's own answer, not
//! a bound. Programs that print nothing, or no path, give a bound without a path
//! (or none): the result then says less.

use std::path::{Path, PathBuf};

use decode_protocol::{BoundKind, SandboxBound};

use super::mounts::Kind;
use super::Plan;

/// Errors of programs that reach for a host service, with the service.
const SERVICE_ERRORS: &[(&str, &str)] = &[
    (
        "cannot connect to the docker daemon",
        "the container engine (Docker)",
    ),
    ("cannot connect to podman", "the container engine (Podman)"),
    ("can't open display", "the display (X11)"),
    ("cannot open display", "the display (X11)"),
    ("unable to open display", "the display (X11)"),
    ("failed to connect to bus", "the D-Bus session bus"),
    ("cannot autolaunch d-bus", "the D-Bus session bus"),
    ("could not connect to d-bus", "the D-Bus session bus"),
    (
        "failed to connect to user scope bus",
        "systemd's user manager",
    ),
    (
        "could not open a connection to your authentication agent",
        "ssh-agent",
    ),
    ("error connecting to agent", "ssh-agent"),
    ("can't connect to the agent", "gpg-agent"),
    ("no gpg-agent running", "gpg-agent"),
    ("no server running on", "a terminal multiplexer (tmux)"),
    ("error connecting to /", "a terminal multiplexer"),
    ("no screen session found", "a terminal multiplexer (screen)"),
    (
        "there is no screen to be resumed",
        "a terminal multiplexer (screen)",
    ),
    ("cannot connect to wayland", "the display (Wayland)"),
    ("failed to connect to wayland", "the display (Wayland)"),
];

/// Errors of the resolver and the socket layer when there is no network.
const NETWORK_ERRORS: &[&str] = &[
    "network is unreachable",
    "could not resolve host",
    "couldn't resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "no address associated with hostname",
    "failed to lookup address",
    "failed to resolve",
    "getaddrinfo eai_again",
    "getaddrinfo enotfound",
    "eai_again",
    "dns error",
    "could not resolve proxy",
    "network unreachable",
    "enetunreach",
];

/// The first bound the output `text` of a command run in `cwd` shows, if any.
pub fn find(text: &str, plan: &Plan, cwd: &Path) -> Option<SandboxBound> {
    // A write refused anywhere is the strongest sign; then a hidden file; then
    // services and the network.
    let mut found: Option<SandboxBound> = None;
    for line in text.lines().take(20_000) {
        let lower = line.to_ascii_lowercase();
        if lower.contains("read-only file system") || lower.contains("erofs") {
            let b = write_bound(line, plan, cwd);
            if b.path.is_some() {
                return Some(b);
            }
            found.get_or_insert(b);
            continue;
        }
        if lower.contains("permission denied") || lower.contains("eacces") {
            if let Some((p, why)) = paths_in(line, cwd).into_iter().find_map(|p| {
                plan.at(&p)
                    .filter(|m| m.kind == Kind::Hidden)
                    .map(|m| (p.clone(), m.why.clone()))
            }) {
                let deny_rule = why.contains("deny rule");
                return Some(SandboxBound {
                    kind: BoundKind::Hidden,
                    message: if deny_rule {
                        format!(
                            "{} is hidden from commands: a `read` deny rule covers it, so it stays hidden outside the sandbox too",
                            p.display()
                        )
                    } else {
                        format!(
                            "{} is hidden from commands in the sandbox ({why})",
                            p.display()
                        )
                    },
                    path: Some(p.display().to_string()),
                    host: None,
                    may_run_outside: !deny_rule,
                });
            }
            continue;
        }
        if found.is_some() {
            continue;
        }
        if let Some(b) = service_bound(line, &lower, plan, cwd) {
            found = Some(b);
            continue;
        }
        if plan.own_network() {
            if let Some(b) = network_bound(line, &lower) {
                found = Some(b);
            }
        }
    }
    found
}

fn write_bound(line: &str, plan: &Plan, cwd: &Path) -> SandboxBound {
    // The first path the line names that the sandbox keeps read-only.
    let hit = paths_in(line, cwd).into_iter().find_map(|p| {
        let kind = plan.at(&p).map(|m| m.kind);
        match kind {
            None | Some(Kind::BaseReadOnly | Kind::Protected | Kind::Hidden) => Some((p, kind)),
            _ => None,
        }
    });
    let message = match &hit {
        Some((p, Some(Kind::Protected))) => format!(
            "the command tried to write {}, which is protected by Decode: its sandbox keeps it read-only",
            p.display()
        ),
        Some((p, Some(Kind::Hidden))) => format!(
            "the command tried to write {}, which is hidden from commands in Decode's sandbox",
            p.display()
        ),
        Some((p, _)) => format!(
            "the command tried to write {}, outside the places commands may write in Decode's sandbox (the project, the temp folder, the toolchain caches, additionalDirectories and your sandbox.writable)",
            p.display()
        ),
        None => "the command tried to write where Decode's sandbox keeps everything read-only (outside the project, the temp folder, the toolchain caches, additionalDirectories and your sandbox.writable, or a protected path)".to_string(),
    };
    SandboxBound {
        kind: BoundKind::Write,
        path: hit.map(|(p, _)| p.display().to_string()),
        host: None,
        message,
        may_run_outside: true,
    }
}

fn service_bound(line: &str, lower: &str, plan: &Plan, cwd: &Path) -> Option<SandboxBound> {
    let refused = lower.contains("connection refused") || lower.contains("econnrefused");
    let missing = lower.contains("no such file or directory") || lower.contains("enoent");
    if refused || missing {
        // A socket the sandbox covered, named in the line.
        for p in paths_in(line, cwd) {
            if let Some(m) = plan
                .at(&p)
                .filter(|m| matches!(m.kind, Kind::NullSocket | Kind::Tmpfs))
            {
                let _ = m;
                return Some(SandboxBound {
                    kind: BoundKind::Service,
                    message: format!(
                        "{} is a service of the host, out of reach of commands in the sandbox",
                        p.display()
                    ),
                    path: Some(p.display().to_string()),
                    host: None,
                    may_run_outside: true,
                });
            }
        }
    }
    // The system-call filter: a command makes no local socket of its own, so a
    // client (or a server) of a Unix socket fails at `socket(AF_UNIX)`.
    if lower.contains("address family not supported by protocol")
        || lower.contains("eafnosupport")
        || lower.contains("cannot establish any listening sockets")
    {
        return Some(SandboxBound {
            kind: BoundKind::Service,
            message: "commands in the sandbox make no local (Unix domain) sockets, so no server of the host is reachable, whatever path it listens at".into(),
            path: None,
            host: None,
            may_run_outside: true,
        });
    }
    let (_, what) = SERVICE_ERRORS.iter().find(|(e, _)| lower.contains(e))?;
    Some(SandboxBound {
        kind: BoundKind::Service,
        message: format!(
            "{what} is a service of the host, out of reach of commands in the sandbox"
        ),
        path: None,
        host: None,
        may_run_outside: true,
    })
}

fn network_bound(line: &str, lower: &str) -> Option<SandboxBound> {
    let refused_loopback = (lower.contains("connection refused") || lower.contains("econnrefused"))
        && (lower.contains("localhost") || lower.contains("127.0.0.1") || lower.contains("[::1]"));
    if !NETWORK_ERRORS.iter().any(|e| lower.contains(e)) && !refused_loopback {
        return None;
    }
    let host = host_in(line);
    let message = match &host {
        Some(h) if refused_loopback => format!(
            "{h}: the host's own network services are out of reach of commands in the sandbox (a command's loopback is its own)"
        ),
        Some(h) => format!("{h} was not reached: commands in the sandbox reach the network only through Decode's proxy (the proxy variables), and name lookups only there"),
        None => "commands in the sandbox reach the network only through Decode's proxy (the proxy variables), and name lookups only there".to_string(),
    };
    Some(SandboxBound {
        kind: BoundKind::Network,
        message,
        path: None,
        host,
        may_run_outside: true,
    })
}

/// The host a network error line names: in a URL, after "host", or a quoted name.
fn host_in(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    if let Some(i) = lower.find("://") {
        let rest = &line[i + 3..];
        let end = rest
            .find(['/', '\'', '"', ' ', ')', '`'])
            .unwrap_or(rest.len());
        let host = rest[..end].rsplit('@').next().unwrap_or("");
        if !host.is_empty() {
            return Some(host.to_string());
        }
    }
    for key in [
        "resolve host: ",
        "resolve host ",
        "host: ",
        "enotfound ",
        "eai_again ",
    ] {
        if let Some(i) = lower.find(key) {
            let rest = &line[i + key.len()..];
            let h: String = rest
                .trim_start_matches(['\'', '"', '`'])
                .chars()
                .take_while(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']')
                })
                .collect();
            if h.contains(['.', ':']) || h == "localhost" {
                return Some(h);
            }
        }
    }
    for q in ['\'', '"', '`'] {
        for part in line.split(q).skip(1).step_by(2) {
            let looks = !part.is_empty()
                && part.contains('.')
                && !part.contains(['/', ' '])
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'));
            if looks {
                return Some(part.to_string());
            }
        }
    }
    None
}

/// The paths a line names: absolute ones, `~/…`, and relative ones that look like
/// paths (hold a `/` or start with a dot), resolved against `cwd`; as written and
/// folded lexically (the mounts are resolved paths; so are most messages).
fn paths_in(line: &str, cwd: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut out: Vec<PathBuf> = Vec::new();
    let tokens = line
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '\'' | '"'
                        | '`'
                        | '‘'
                        | '’'
                        | '“'
                        | '”'
                        | '('
                        | ')'
                        | ','
                        | '['
                        | ']'
                        | '<'
                        | '>'
                        | '='
                )
        })
        .filter(|t| !t.is_empty());
    for t in tokens {
        let t = t
            .trim_end_matches([':', ';', '.'])
            .trim_start_matches("file://");
        if t.is_empty() || t.contains("://") {
            continue;
        }
        let p = if let Some(rest) = t.strip_prefix("~/") {
            match &home {
                Some(h) => h.join(rest),
                None => continue,
            }
        } else if t.starts_with('/') {
            PathBuf::from(t)
        } else if t.contains('/') || (t.starts_with('.') && t.len() > 1 && t != "..") {
            cwd.join(t)
        } else {
            continue;
        };
        let p = decode_policy::paths::lexical(Path::new("/"), &p);
        let resolved = decode_policy::paths::resolve(&p);
        for q in [resolved, p] {
            if !out.contains(&q) {
                out.push(q);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_hosts_are_read_from_the_usual_messages() {
        let cwd = Path::new("/w/p");
        let ps = paths_in(
            "OSError: [Errno 30] Read-only file system: '/home/u/.bashrc'",
            cwd,
        );
        assert!(ps.contains(&PathBuf::from("/home/u/.bashrc")), "{ps:?}");
        let ps = paths_in(
            "touch: cannot touch '.git/hooks/x': Read-only file system",
            cwd,
        );
        assert!(ps.contains(&PathBuf::from("/w/p/.git/hooks/x")), "{ps:?}");
        let ps = paths_in("bash: line 1: ../other/f: Read-only file system", cwd);
        assert!(ps.contains(&PathBuf::from("/w/other/f")), "{ps:?}");
        assert_eq!(
            host_in("curl: (6) Could not resolve host: example.com"),
            Some("example.com".into())
        );
        assert_eq!(
            host_in("fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com"),
            Some("github.com".into())
        );
        assert_eq!(
            host_in("npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org"),
            Some("registry.npmjs.org".into())
        );
    }
}
