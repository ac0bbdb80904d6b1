//! Command caps (SPEC §5 stage 7) that depend only on a fragment's words:
//! git config writes, container removal,
//! removal targets. Path-based caps live in `decide`.

/// The positional words of `args`, skipping options; options listed in
/// `with_arg` take the next word as their value.
fn positionals<'a>(args: &'a [String], with_arg: &[&str], max: usize) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() && out.len() < max {
        let a = args[i].as_str();
        if a == "--" {
            out.extend(
                args[i + 1..]
                    .iter()
                    .take(max - out.len())
                    .map(String::as_str),
            );
            break;
        }
        if a.starts_with('-') && a.len() > 1 {
            i += if with_arg.contains(&a) { 2 } else { 1 };
            continue;
        }
        out.push(a);
        i += 1;
    }
    out
}

const GIT_GLOBAL_WITH_ARG: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--config-env",
    "--exec-path",
    "--list-cmds",
    "--attr-source",
];

/// `git [global options] SUB REST…` → `(SUB, REST)`.
pub(crate) fn git_subcommand(core: &[String]) -> Option<(&str, &[String])> {
    if core.first().map(String::as_str) != Some("git") {
        return None;
    }
    let mut i = 1;
    while i < core.len() {
        let a = core[i].as_str();
        if a.starts_with('-') {
            i += if GIT_GLOBAL_WITH_ARG.contains(&a) {
                2
            } else {
                1
            };
            continue;
        }
        return Some((a, &core[i + 1..]));
    }
    None
}

const DOCKER_WITH_ARG: &[&str] = &[
    "-H",
    "--host",
    "-c",
    "--context",
    "--config",
    "-l",
    "--log-level",
    "--tlscacert",
    "--tlscert",
    "--tlskey",
    // docker compose options
    "-f",
    "--file",
    "-p",
    "--project-name",
    "--profile",
    "--env-file",
    "--project-directory",
    "--ansi",
    "--parallel",
    "--progress",
];

pub(crate) const PKG_WITH_ARG: &[&str] = &[
    "--registry",
    "-w",
    "--workspace",
    "--prefix",
    "-C",
    "--dir",
    "--filter",
    "-F",
    "--cwd",
    "-Z",
    "--config",
    "--color",
    "--loglevel",
    "--userconfig",
];

/// Where a subcommand may stand in `args` (the words after the program),
/// skipping options: `with_arg` options take the next word; options the
/// table does not know may take one or not, and both readings count, so a
/// subcommand cannot hide behind an option's value (`npm --tag beta
/// publish`). Indexes in order, at most 8.
pub(crate) fn subcommand_candidates(args: &[String], with_arg: &[&str]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at: Vec<usize> = vec![0];
    let mut seen = std::collections::HashSet::new();
    while let Some(i) = at.pop() {
        if i >= args.len() || !seen.insert(i) || out.len() >= 8 {
            continue;
        }
        let a = args[i].as_str();
        if a == "--" {
            if i + 1 < args.len() && !out.contains(&(i + 1)) {
                out.push(i + 1);
            }
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            if a.contains('=')
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && a.len() > 2
                    && !with_arg.contains(&a))
            {
                // `--opt=value`, or a cluster of short flags (`-la`).
                at.push(i + 1);
            } else if with_arg.contains(&a) {
                at.push(i + 2);
            } else if is_flag(a) {
                at.push(i + 1);
            } else {
                at.push(i + 2);
                at.push(i + 1);
            }
            continue;
        }
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out.sort_unstable();
    out
}

/// Options that never take a value, whatever the program.
fn is_flag(a: &str) -> bool {
    matches!(
        a,
        "-v" | "-q"
            | "-h"
            | "-y"
            | "-f"
            | "-n"
            | "--verbose"
            | "--quiet"
            | "--silent"
            | "--help"
            | "--version"
            | "--dry-run"
            | "--force"
            | "--yes"
            | "--no-color"
            | "--color"
            | "--debug"
            | "--json"
            | "--all"
            | "--recursive"
            | "-r"
            | "--frozen"
            | "--locked"
            | "--offline"
    )
}

/// `git config` that writes the repository's `.git/config` (not `--global`,
/// `--system` or `--file`), or `git -c core.hooksPath=…`.
pub(crate) fn git_config_write(core: &[String]) -> bool {
    if core.first().map(String::as_str) != Some("git") {
        return false;
    }
    let mut i = 1;
    while i < core.len() {
        let a = core[i].as_str();
        if a == "-c" {
            let kv = core
                .get(i + 1)
                .map(|s| s.to_ascii_lowercase())
                .unwrap_or_default();
            if kv.starts_with("core.hookspath") {
                return true;
            }
        } else if let Some(kv) = a.strip_prefix("-c") {
            if kv.to_ascii_lowercase().starts_with("core.hookspath") {
                return true;
            }
        }
        if !a.starts_with('-') {
            break;
        }
        i += if GIT_GLOBAL_WITH_ARG.contains(&a) {
            2
        } else {
            1
        };
    }
    let Some(("config", rest)) = git_subcommand(core) else {
        return false;
    };
    let mut positional = Vec::new();
    let mut write_opt = false;
    let mut j = 0;
    while j < rest.len() {
        let a = rest[j].as_str();
        if a.starts_with("--get")
            || matches!(
                a,
                "-l" | "--list" | "--global" | "--system" | "-f" | "--file" | "--blob"
            )
            || a.starts_with("--file=")
            || a.starts_with("--blob=")
        {
            return false;
        }
        if matches!(
            a,
            "--unset"
                | "--unset-all"
                | "--add"
                | "--replace-all"
                | "--rename-section"
                | "--remove-section"
                | "-e"
                | "--edit"
        ) {
            write_opt = true;
        } else if matches!(a, "--type" | "--default" | "--comment") {
            j += 1;
        } else if !a.starts_with('-') {
            positional.push(a);
        }
        j += 1;
    }
    match positional.first().copied() {
        Some("get" | "list") => false,
        Some("set" | "unset" | "rename-section" | "remove-section" | "edit") => true,
        _ => write_opt || positional.len() >= 2,
    }
}

/// Container removal (never automatic).
pub(crate) fn container_removal(core: &[String]) -> Option<String> {
    let name = core.first()?.as_str();
    let args = &core[1..];
    let volumes = |rest: &[String]| {
        rest.iter().any(|a| {
            a == "-v"
                || a == "--volumes"
                || a.starts_with("--volumes=")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('v'))
        })
    };
    let p = match name {
        "docker" | "podman" => positionals(args, DOCKER_WITH_ARG, 2),
        "docker-compose" | "podman-compose" => {
            let p = positionals(args, DOCKER_WITH_ARG, 1);
            if p.first() == Some(&"down") && volumes(args) {
                return Some(format!("`{name} down -v` removes containers and volumes"));
            }
            return None;
        }
        _ => return None,
    };
    let what = match p.as_slice() {
        ["rm", ..] => "removes containers",
        ["container", "rm" | "remove" | "prune"] => "removes containers",
        ["volume", "rm" | "remove" | "prune"] => "removes volumes",
        ["system", "prune"] => "removes containers, images and volumes",
        ["compose", "down"] if volumes(args) => "removes containers and volumes",
        _ => return None,
    };
    let shown = p.join(" ");
    Some(format!("`{name} {shown}` {what}"))
}

/// The targets of `rm` / `rmdir`.
pub(crate) fn removal_targets(core: &[String]) -> Vec<&str> {
    match core.first().map(String::as_str) {
        Some("rm" | "rmdir") => {}
        _ => return Vec::new(),
    }
    let mut out = Vec::new();
    let mut options_done = false;
    for a in &core[1..] {
        if !options_done && a == "--" {
            options_done = true;
            continue;
        }
        if options_done || !a.starts_with('-') || a == "-" {
            out.push(a.as_str());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn containers() {
        assert!(container_removal(&v("docker rm x")).is_some());
        assert!(container_removal(&v("docker container rm x")).is_some());
        assert!(container_removal(&v("docker compose down -v")).is_some());
        assert!(container_removal(&v("docker compose down")).is_none());
        assert!(container_removal(&v("docker-compose down --volumes")).is_some());
        assert!(container_removal(&v("docker ps")).is_none());
    }
}
