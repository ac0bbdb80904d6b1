//! Command caps (SPEC §5 stage 7) that depend only on a fragment's words:
//! external effects and privilege, protected merges, container removal,
//! removal targets. Path-based caps live in `decide`.

/// Privilege wrappers.
pub(crate) const PRIVILEGE: &[&str] = &["sudo", "doas", "su", "pkexec", "run0"];

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

const KUBE_WITH_ARG: &[&str] = &[
    "-n",
    "--namespace",
    "--context",
    "--kubeconfig",
    "--cluster",
    "--user",
    "-s",
    "--server",
    "--token",
    "--as",
    "--as-group",
    "--kube-context",
    "-v",
    "--kube-apiserver",
    "--kube-token",
    "--repository-config",
    "--registry-config",
];

const PKG_WITH_ARG: &[&str] = &[
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

/// External effects and privilege (SPEC §5): the reason, when capped.
pub(crate) fn external_effect(core: &[String], chain: &[String]) -> Option<String> {
    if let Some(p) = chain.iter().find(|n| PRIVILEGE.contains(&n.as_str())) {
        return Some(format!(
            "`{p}` runs with elevated privileges: asks every time"
        ));
    }
    external_core(core, 0)
}

/// The index in `args` of the first positional word, skipping options
/// (`with_arg` take the next word).
fn first_positional(args: &[String], with_arg: &[&str]) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return (i + 1 < args.len()).then_some(i + 1);
        }
        if a.starts_with('-') && a.len() > 1 {
            i += if with_arg.contains(&a) { 2 } else { 1 };
            continue;
        }
        return Some(i);
    }
    None
}

/// The command a package runner runs (`npx vercel deploy`, `npm exec …`,
/// `pnpm dlx …`, `yarn dlx …`, `bunx …`, `python -m twine …`), as words.
fn runner_target(core: &[String]) -> Option<Vec<String>> {
    let name = core.first()?.as_str();
    let args = &core[1..];
    let runner_opts: &[&str] = &["-p", "--package", "-c", "--call", "--registry", "--cache"];
    let start = match name {
        "npx" | "bunx" | "pnpx" => first_positional(args, runner_opts)?,
        "npm" | "pnpm" | "yarn" | "bun" => {
            let sub = first_positional(args, PKG_WITH_ARG)?;
            if !matches!(args[sub].as_str(), "exec" | "x" | "dlx") {
                return None;
            }
            sub + 1 + first_positional(&args[sub + 1..], runner_opts)?
        }
        n if n.starts_with("python") => {
            let m = args.iter().position(|a| a == "-m")?;
            m + 1
        }
        _ => return None,
    };
    let mut words: Vec<String> = args.get(start..)?.to_vec();
    let first = words.first_mut()?;
    // `vercel@latest` → `vercel`; `@scope/pkg@1` → `@scope/pkg`.
    if let Some(at) = first.rfind('@').filter(|&k| k > 0) {
        first.truncate(at);
    }
    if let Some(slash) = first.rfind('/') {
        *first = first[slash + 1..].to_string();
    }
    Some(words)
}

fn external_core(core: &[String], depth: usize) -> Option<String> {
    let name = core.first()?.as_str();
    let args = &core[1..];
    let hit = |what: &str| Some(format!("{what} has external effects: asks every time"));
    if depth < 4 {
        if let Some(inner) = runner_target(core) {
            if let Some(r) = external_core(&inner, depth + 1) {
                return Some(r);
            }
        }
    }
    match name {
        "git" => {
            if let Some(("push", _)) = git_subcommand(core) {
                return hit("git push");
            }
        }
        "gh" => {
            let p = positionals(args, &["-R", "--repo"], 2);
            match p.as_slice() {
                ["pr", s @ ("create" | "merge")] => return hit(&format!("gh pr {s}")),
                ["release", "create"] => return hit("gh release create"),
                ["repo", s @ ("create" | "delete")] => return hit(&format!("gh repo {s}")),
                _ => {}
            }
        }
        "npm" | "pnpm" | "yarn" | "cargo" | "bun" => {
            // `cargo +nightly publish`: the toolchain is not a subcommand.
            let skip =
                usize::from(name == "cargo" && args.first().is_some_and(|a| a.starts_with('+')));
            let p = positionals(&args[skip..], PKG_WITH_ARG, 2);
            match p.as_slice() {
                ["publish", ..] => return hit(&format!("{name} publish")),
                ["npm", "publish"] if name == "yarn" => return hit("yarn npm publish"),
                _ => {}
            }
        }
        "twine" if positionals(args, &[], 1).first() == Some(&"upload") => {
            return hit("twine upload");
        }
        "docker" | "podman" => {
            let p = positionals(args, DOCKER_WITH_ARG, 2);
            let pushes = args
                .iter()
                .any(|a| a == "--push" || a == "--push=true" || a.contains("type=registry"));
            match p.as_slice() {
                ["push", ..] => return hit(&format!("{name} push")),
                ["image", "push"] => return hit(&format!("{name} image push")),
                ["buildx", "build" | "b"] | ["build", ..] | ["image", "build"] if pushes => {
                    return hit(&format!("{name} build --push"));
                }
                ["manifest", "push"] => return hit(&format!("{name} manifest push")),
                _ => {}
            }
        }
        "kubectl" | "oc" => {
            if let Some(s @ ("apply" | "create" | "delete" | "rollout")) =
                positionals(args, KUBE_WITH_ARG, 1).first().copied()
            {
                return hit(&format!("{name} {s}"));
            }
        }
        "helm" => {
            if let Some(s @ ("install" | "upgrade")) =
                positionals(args, KUBE_WITH_ARG, 1).first().copied()
            {
                return hit(&format!("helm {s}"));
            }
        }
        "terraform" | "tofu" => {
            if let Some(s @ ("apply" | "destroy")) = positionals(args, &[], 1).first().copied() {
                return hit(&format!("{name} {s}"));
            }
        }
        "vercel" => {
            if args
                .iter()
                .any(|a| a == "--prod" || a.starts_with("--prod="))
            {
                return hit("vercel --prod");
            }
            match positionals(
                args,
                &["--scope", "--token", "-t", "--cwd", "-A", "--local-config"],
                1,
            )
            .first()
            .copied()
            {
                Some("deploy") => return hit("vercel deploy"),
                // Bare `vercel` deploys too.
                None => return hit("vercel"),
                _ => {}
            }
        }
        "netlify" | "fly" | "flyctl" | "firebase"
            if positionals(
                args,
                &["--project", "-P", "-a", "--app", "-c", "--config"],
                1,
            )
            .first()
                == Some(&"deploy") =>
        {
            return hit(&format!("{name} deploy"));
        }
        "gcloud" if args.iter().any(|a| a == "deploy") => {
            return hit("gcloud … deploy");
        }
        _ => {}
    }
    None
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

/// What kind of merge a fragment does, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Merge {
    Git,
    GhPr,
}

pub(crate) fn merge(core: &[String]) -> Option<Merge> {
    match core.first()?.as_str() {
        "git" => match git_subcommand(core) {
            Some(("merge", rest))
                if !rest
                    .iter()
                    .any(|a| matches!(a.as_str(), "--abort" | "--quit" | "--continue")) =>
            {
                Some(Merge::Git)
            }
            _ => None,
        },
        "gh" => match positionals(&core[1..], &["-R", "--repo"], 2).as_slice() {
            ["pr", "merge"] => Some(Merge::GhPr),
            _ => None,
        },
        _ => None,
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
    fn externals() {
        assert!(external_effect(&v("git -C x -c a=b push"), &[]).is_some());
        assert!(external_effect(&v("git status"), &[]).is_none());
        assert!(external_effect(&v("make deploy"), &[]).is_none());
        assert!(external_effect(&v("npm run deploy"), &[]).is_none());
        assert!(external_effect(&v("gcloud app deploy"), &[]).is_some());
        assert!(external_effect(&v("kubectl -n prod apply -f x"), &[]).is_some());
        assert!(external_effect(&v("rm x"), &v("sudo rm")).is_some());
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
