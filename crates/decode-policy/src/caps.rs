//! Command caps (stage 7 in docs/permissions.md, "The stages") that depend only on a fragment's words:
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

/// `git config` that sets or removes a value, and `git -c
/// core.hooksPath=…`: why it is never automatic, or `None`. The
/// repository's own configuration always counts (`.git/config` runs code);
/// the global and system ones (and `--file`) when the key is one whose value
/// git runs, defines an alias or loads other files, or is not known.
pub(crate) fn git_config_write(core: &[String]) -> Option<&'static str> {
    const REPO: &str = "changes the repository's git configuration (.git/config runs code)";
    const OTHER: &str =
        "changes a git configuration file with a key whose value git runs (aliases, programs, includes)";
    if core.first().map(String::as_str) != Some("git") {
        return None;
    }
    let mut i = 1;
    while i < core.len() {
        let a = core[i].as_str();
        let kv = if a == "-c" {
            core.get(i + 1).map(|s| s.to_ascii_lowercase())
        } else {
            a.strip_prefix("-c").map(str::to_ascii_lowercase)
        };
        if kv.is_some_and(|kv| kv.starts_with("core.hookspath")) {
            return Some(REPO);
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
    let (sub, rest) = git_subcommand(core)?;
    match sub {
        "config" => {}
        // Other subcommands that write `.git/config`.
        "remote" => {
            let p = rest.iter().find(|a| !a.starts_with('-'))?;
            return matches!(
                p.as_str(),
                "add" | "rename" | "remove" | "rm" | "set-head" | "set-branches" | "set-url"
            )
            .then_some(REPO);
        }
        "branch" => {
            return rest
                .iter()
                .any(|a| {
                    a == "-u"
                        || a.starts_with("--set-upstream-to")
                        || a == "--unset-upstream"
                        || a == "--edit-description"
                })
                .then_some(REPO);
        }
        "lfs" => {
            let p = rest.iter().find(|a| !a.starts_with('-'))?;
            return matches!(p.as_str(), "install" | "uninstall" | "update").then_some(REPO);
        }
        "submodule" => {
            let p = rest.iter().find(|a| !a.starts_with('-'))?;
            return matches!(
                p.as_str(),
                "init" | "add" | "set-url" | "set-branch" | "sync"
            )
            .then_some(REPO);
        }
        "init" | "clone" => {
            return rest
                .iter()
                .any(|a| a.starts_with("--template") || a.starts_with("--separate-git-dir"))
                .then_some(REPO);
        }
        _ => return None,
    }
    let mut positional = Vec::new();
    let mut write_opt = false;
    let mut elsewhere = false;
    let mut j = 0;
    while j < rest.len() {
        let a = rest[j].as_str();
        if a.starts_with("--get")
            || matches!(a, "-l" | "--list" | "--blob")
            || a.starts_with("--blob=")
        {
            return None;
        }
        if matches!(a, "--global" | "--system") || a.starts_with("--file=") {
            elsewhere = true;
        } else if matches!(a, "-f" | "--file") {
            elsewhere = true;
            j += 1;
        } else if matches!(
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
    let (writes, key) = match positional.first().copied() {
        Some("get" | "list" | "get-color" | "get-colorbool") => return None,
        Some("set" | "unset") => (true, positional.get(1).copied()),
        Some("rename-section" | "remove-section" | "edit") => (true, None),
        _ => (
            write_opt || positional.len() >= 2,
            positional.first().copied(),
        ),
    };
    if !writes {
        return None;
    }
    if !elsewhere {
        return Some(REPO);
    }
    match key {
        Some(k)
            if !k.contains(['$', '`'])
                && git_key_runs(k).is_none()
                && !k.eq_ignore_ascii_case("core.hookspath") =>
        {
            None
        }
        _ => Some(OTHER),
    }
}

/// Git configuration keys whose value git runs (or that define aliases or
/// load other files): `Some(true)` when the value is a command, `Some(false)`
/// when the key makes the command opaque.
pub(crate) fn git_key_runs(key: &str) -> Option<bool> {
    let k = key.to_ascii_lowercase();
    if k.starts_with("alias.") || k.starts_with("include.") || k.starts_with("includeif.") {
        return Some(false);
    }
    let runs = matches!(
        k.as_str(),
        "core.pager"
            | "core.sshcommand"
            | "core.editor"
            | "core.fsmonitor"
            | "core.askpass"
            | "core.gitproxy"
            | "sequence.editor"
            | "diff.external"
            | "gpg.program"
            | "credential.helper"
            | "uploadpack.packobjectshook"
            | "web.browser"
    ) || k.starts_with("pager.")
        || k.starts_with("filter.")
        || k.ends_with(".textconv")
        || k.ends_with(".command")
        || k.ends_with(".cmd")
        || k.ends_with(".clean")
        || k.ends_with(".smudge")
        || k.ends_with(".process")
        || k.ends_with(".program")
        || (k.starts_with("gpg.") && k.ends_with(".program"));
    if k == "core.hookspath" {
        // Judged as a write of the repository's hooks (never automatic).
        return None;
    }
    runs.then_some(true)
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
