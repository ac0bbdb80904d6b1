//! Command caps (stage 7 in docs/permissions.md, "The stages") that depend only on a fragment's words:
//! git config writes, container removal,
//! removal targets. Path-based caps live in `decide`.

use crate::options::{self, OptionSpec, Step};

/// Options that never take a value, whatever the program.
const COMMON_FLAGS: &[&str] = &[
    "-v",
    "-q",
    "-h",
    "-y",
    "-f",
    "-n",
    "--verbose",
    "--quiet",
    "--silent",
    "--help",
    "--version",
    "--dry-run",
    "--force",
    "--yes",
    "--no-color",
    "--color",
    "--debug",
    "--json",
    "--all",
    "--recursive",
    "-r",
    "--frozen",
    "--locked",
    "--offline",
];

/// The options before a program's sub-command when the gate knows only
/// those in `value` take a value: the common flags take none, any other
/// option is read both ways.
pub(crate) const fn global_options<'a>(value: &'a [&'a str]) -> OptionSpec<'a> {
    OptionSpec {
        short_value: "",
        glued: "",
        value,
        flags: COMMON_FLAGS,
        complete: false,
    }
}

/// git's global options (`git [OPTIONS] SUB`). One it does not know is read
/// both ways: a newer git may have an option this list lacks.
pub(crate) const GIT: OptionSpec<'static> = OptionSpec {
    short_value: "",
    glued: "",
    value: &[
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--config-env",
        "--attr-source",
    ],
    flags: &[
        "-p",
        "-P",
        "-v",
        "-h",
        "--paginate",
        "--no-pager",
        "--bare",
        "--exec-path",
        "--html-path",
        "--man-path",
        "--info-path",
        "--no-replace-objects",
        "--no-lazy-fetch",
        "--no-optional-locks",
        "--no-advice",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--version",
        "--help",
    ],
    complete: false,
};

/// docker's (and podman's, and compose's) options before the sub-command.
pub(crate) const DOCKER: OptionSpec<'static> = OptionSpec {
    short_value: "",
    glued: "",
    value: &[
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
    ],
    flags: &[
        "-D",
        "--debug",
        "--tls",
        "--tlsverify",
        "-v",
        "--version",
        "--help",
        "--dry-run",
        "--compatibility",
    ],
    complete: false,
};

/// The npm family's options before the sub-command that take a value
/// (npm's `-w` takes a workspace; pnpm's and bun's take none).
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

/// The options before `name`'s sub-command that take a value (pnpm's and
/// bun's `-w` takes none).
pub(crate) fn pkg_with_arg(name: &str) -> Vec<&'static str> {
    PKG_WITH_ARG
        .iter()
        .copied()
        .filter(|o| *o != "-w" || !matches!(name, "pnpm" | "bun"))
        .collect()
}

/// `git [global options] SUB REST…` → `(SUB, REST)` (an option the gate
/// does not know read as taking no value).
pub(crate) fn git_subcommand(core: &[String]) -> Option<(&str, &[String])> {
    if core.first().map(String::as_str) != Some("git") {
        return None;
    }
    let i = 1 + options::scan(&core[1..], 0, &GIT).start;
    let sub = core.get(i)?;
    Some((sub.as_str(), &core[i + 1..]))
}

/// Where a subcommand may stand in `args` (the words after the program):
/// every reading of the options counts, so a subcommand cannot hide behind
/// an option's value (`npm --tag beta publish`). Indexes in order, at most 8.
pub(crate) fn subcommand_candidates(args: &[String], spec: &OptionSpec<'_>) -> Vec<usize> {
    options::candidates(args, spec)
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
        match GIT.step(a) {
            Step::Option { width, .. } => i += width,
            Step::Operand | Step::EndOfOptions => break,
        }
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
    if k.starts_with("alias.")
        || k.starts_with("include.")
        || k.starts_with("includeif.")
        // Which command runs, or which remotes may run one, is decided later.
        || k.starts_with("protocol.")
        || k == "help.autocorrect"
        || k == "init.templatedir"
        || (k.starts_with("url.") && k.contains("ext::"))
    {
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
            | "sendemail.sendmailcmd"
            | "sendemail.smtpserver"
            | "gpg.ssh.defaultkeycommand"
            | "instaweb.httpd"
            | "core.alternaterefscommand"
    ) || k.starts_with("pager.")
        // `remote.NAME.uploadpack`/`receivepack`, `merge.NAME.driver`.
        || k.ends_with(".uploadpack")
        || k.ends_with(".receivepack")
        || k.ends_with(".driver")
        || k.ends_with(".helper")
        || k.ends_with(".proxy")
        // `sendemail.toCmd`, `imap.tunnel`, `interactive.diffFilter`,
        // `submodule.NAME.update = !CMD`.
        || k.ends_with("cmd")
        || k == "imap.tunnel"
        || k == "interactive.difffilter"
        || (k.starts_with("submodule.") && k.ends_with(".update"))

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
    // Every reading of the options: `docker --unknown x rm c` may remove `c`.
    let pairs = || {
        subcommand_candidates(args, &DOCKER).into_iter().map(|k| {
            let rest = &args[k + 1..];
            let second: Vec<&str> = subcommand_candidates(rest, &DOCKER)
                .into_iter()
                .map(|j| rest[j].as_str())
                .collect();
            (args[k].as_str(), second)
        })
    };
    match name {
        "docker" | "podman" => {}
        "docker-compose" | "podman-compose" => {
            if pairs().any(|(first, _)| first == "rm") {
                return Some(format!("`{name} rm` removes containers"));
            }
            return (pairs().any(|(first, _)| first == "down") && volumes(args))
                .then(|| format!("`{name} down -v` removes containers and volumes"));
        }
        _ => return None,
    }
    for (first, second) in pairs() {
        let found = |words: &[&str]| second.iter().find(|s| words.contains(s)).copied();
        let (shown, what) = match first {
            "rm" => (None, "removes containers"),
            "container" => match found(&["rm", "remove", "prune"]) {
                Some(s) => (Some(s), "removes containers"),
                None => continue,
            },
            "volume" => match found(&["rm", "remove", "prune"]) {
                Some(s) => (Some(s), "removes volumes"),
                None => continue,
            },
            "system" => match found(&["prune"]) {
                Some(s) => (Some(s), "removes containers, images and volumes"),
                None => continue,
            },
            "compose" => match found(&["down", "rm"]) {
                Some("rm") => (Some("rm"), "removes containers"),
                Some(s) if volumes(args) => (Some(s), "removes containers and volumes"),
                _ => continue,
            },
            "pod" => match found(&["rm", "prune"]) {
                Some(s) => (Some(s), "removes pods and their containers"),
                None => continue,
            },
            _ => continue,
        };
        let shown = match shown {
            Some(s) => format!("{first} {s}"),
            None => first.to_string(),
        };
        return Some(format!("`{name} {shown}` {what}"));
    }
    None
}

/// The targets of `rm` / `rmdir`.
pub(crate) fn removal_targets(core: &[String]) -> Vec<&str> {
    match core.first().map(String::as_str) {
        Some("rm" | "rmdir") => {}
        _ => return Vec::new(),
    }
    // rm and rmdir have no option that takes a separate value.
    let args = &core[1..];
    let targets: Vec<&str> = options::operands(args, &OptionSpec::FLAGS_ONLY)
        .into_iter()
        .map(|k| args[k].as_str())
        .collect();
    let parents =
        core[0] == "rmdir" && options::flagged(args, &OptionSpec::FLAGS_ONLY, &["-p", "--parents"]);
    if !parents {
        return targets;
    }
    // `rmdir -p a/b/c` removes a/b and a too, when they are left empty.
    let mut out = Vec::new();
    for t in targets {
        let mut rest = t.trim_end_matches('/');
        out.push(t);
        while let Some((up, _)) = rest.rsplit_once('/') {
            if up.is_empty() {
                break;
            }
            out.push(up);
            rest = up;
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
