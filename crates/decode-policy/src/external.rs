//! The external-effects and privilege cap (docs/permissions.md, "Caps"):
//! commands that push, publish, deploy, upload, change shared
//! infrastructure, or raise privileges ask every time.
//!
//! A subcommand is found wherever it could stand: after options whose arity
//! the gate does not know (both readings count), and a word only known when
//! the command runs counts as every subcommand.

use crate::caps::{global_options, subcommand_candidates, DOCKER, GIT, PKG_WITH_ARG};
use crate::options::OptionSpec;

/// Privilege wrappers and programs that switch users.
pub(crate) const PRIVILEGE: &[&str] = &[
    "sudo", "sudoedit", "doas", "su", "pkexec", "run0", "runuser", "setpriv",
];

const KUBE: OptionSpec<'static> = global_options(&[
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
    "-o",
    "--output",
]);

/// Task runners run the project's own scripts: `make deploy` is not a deploy
/// by itself (settings `caps.external` can make it one).
const TASK_RUNNERS: &[&str] = &[
    "make", "gmake", "just", "task", "rake", "invoke", "inv", "nox", "tox", "gulp", "grunt",
    "mage", "ninja", "scons", "cmake", "meson",
];

/// Programs whose first word after the options is data or a file, never a
/// subcommand.
const NOT_SUBCOMMANDS: &[&str] = &[
    "echo",
    "printf",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "man",
    "which",
    "type",
    "command",
    "cd",
    "pushd",
    "ls",
    "cat",
    "bat",
    "head",
    "tail",
    "less",
    "more",
    "wc",
    "file",
    "stat",
    "mkdir",
    "rmdir",
    "rm",
    "cp",
    "mv",
    "ln",
    "touch",
    "chmod",
    "chown",
    "find",
    "fd",
    "fdfind",
    "tree",
    "du",
    "df",
    "diff",
    "cmp",
    "sort",
    "uniq",
    "cut",
    "tr",
    "sed",
    "awk",
    "gawk",
    "jq",
    "yq",
    "vim",
    "vi",
    "nvim",
    "nano",
    "emacs",
    "code",
    "open",
    "xdg-open",
    "python",
    "python3",
    "python2",
    "node",
    "ruby",
    "perl",
    "php",
    "java",
    "test",
    "[",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "tee",
    "xxd",
    "od",
    "hexdump",
    "strings",
    "base64",
    "md5sum",
    "sha256sum",
    "sha1sum",
    "zip",
    "unzip",
    "gzip",
    "gunzip",
    "tar",
    "curl",
    "wget",
    "export",
    "unset",
    "source",
    ".",
    "alias",
    "set",
    "read",
    "true",
    "false",
    "exit",
    "return",
    "sleep",
    "kill",
    "wait",
    "time",
    "date",
    "env",
    "id",
    "whoami",
    "pwd",
    "nl",
    "paste",
    "column",
    "fold",
    "fmt",
    "expand",
    "rev",
    "shuf",
    "seq",
    "yes",
    "watch",
    "mktemp",
    "install",
];

const PUBLISH_WORDS: &[&str] = &["push", "publish", "deploy", "upload"];

/// Whether a cap could apply to a command starting with these words (a
/// quick test before the caps run on a later word of an unknown program).
pub(crate) fn might_cap(words: &[String]) -> bool {
    let Some(name) = words.first() else {
        return false;
    };
    knows_program(name)
        || matches!(name.as_str(), "rm" | "rmdir" | "find" | "docker" | "podman")
        || words.iter().any(|w| {
            PUBLISH_WORDS.contains(&w.as_str()) || w == "gh-deploy" || w.ends_with(":publish")
        })
}

/// Programs whose arguments the gate understands: wrappers, runners,
/// privilege wrappers, the programs the caps name, and those that take
/// their arguments as data. For any other program, a later unquoted word
/// that a deny rule or cap names asks (`foo run curl x`).
pub(crate) fn knows_program(name: &str) -> bool {
    const KNOWN: &[&str] = &[
        // wrappers and runners
        "env",
        "command",
        "builtin",
        "busybox",
        "exec",
        "nohup",
        "setsid",
        "unbuffer",
        "time",
        "nice",
        "timeout",
        "stdbuf",
        "ionice",
        "taskset",
        "chrt",
        "flock",
        "script",
        "strace",
        "ltrace",
        "coproc",
        "xargs",
        "find",
        "fd",
        "fdfind",
        "parallel",
        "watch",
        "eval",
        "trap",
        "npx",
        "bunx",
        "pnpx",
        "uv",
        "uvx",
        "pipx",
        "poetry",
        "pdm",
        "hatch",
        "rye",
        "pipenv",
        "conda",
        "mamba",
        "micromamba",
        "caffeinate",
        "chroot",
        "unshare",
        "nsenter",
        "firejail",
        "systemd-run",
        "sg",
        "dbus-run-session",
        "xvfb-run",
        "valgrind",
        "ssh",
        "bash",
        "sh",
        "zsh",
        "dash",
        "ksh",
        "mksh",
        "ash",
        "yash",
        "fish",
        "csh",
        "tcsh",
        // the programs the caps name
        "git",
        "gh",
        "glab",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "cargo",
        "twine",
        "docker",
        "podman",
        "docker-compose",
        "podman-compose",
        "kubectl",
        "oc",
        "helm",
        "terraform",
        "tofu",
        "terragrunt",
        "pulumi",
        "vercel",
        "netlify",
        "fly",
        "flyctl",
        "firebase",
        "gcloud",
        "aws",
        "az",
        "mvn",
        "mvnw",
        "gradle",
        "gradlew",
        "rm",
        "rmdir",
        // arguments as data
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "man",
        "which",
        "type",
    ];
    KNOWN.contains(&name) || PRIVILEGE.contains(&name)
}

/// Arguments of a command with, for each, whether it is only known when the
/// command runs.
struct Args<'a> {
    words: &'a [String],
    dynamic: &'a [bool],
}

impl Args<'_> {
    /// Word `k` is `w`, or could be (dynamic).
    fn is(&self, k: usize, w: &str) -> bool {
        self.words.get(k).is_some_and(|a| a == w) || self.dynamic.get(k) == Some(&true)
    }

    fn is_any(&self, k: usize, ws: &[&str]) -> bool {
        ws.iter().any(|w| self.is(k, w))
    }

    fn rest(&self, k: usize) -> Args<'_> {
        Args {
            words: self.words.get(k..).unwrap_or(&[]),
            dynamic: self.dynamic.get(k..).unwrap_or(&[]),
        }
    }

    fn subs(&self, spec: &OptionSpec<'_>) -> Vec<usize> {
        subcommand_candidates(self.words, spec)
    }

    /// Some candidate subcommand is one of `first`, followed by a candidate
    /// second word in `second` (empty `second`: the first alone).
    fn pair(&self, spec: &OptionSpec<'_>, first: &[&str], second: &[&str]) -> Option<String> {
        for k in self.subs(spec) {
            if !self.is_any(k, first) {
                continue;
            }
            let f = self.words.get(k).cloned().unwrap_or_default();
            if second.is_empty() {
                return Some(f);
            }
            let rest = self.rest(k + 1);
            // The second word's own options are not known: every reading counts
            // (`git subtree -P dir push`).
            for j in rest.subs(&OptionSpec::default()) {
                if rest.is_any(j, second) {
                    let s = rest.words.get(j).cloned().unwrap_or_default();
                    return Some(format!("{f} {s}"));
                }
            }
        }
        None
    }
}

/// External effects and privilege: the reason, when capped. `dynamic[k]`:
/// `core[k]` is only known when the command runs.
pub(crate) fn external_effect(
    core: &[String],
    dynamic: &[bool],
    chain: &[String],
) -> Option<String> {
    if let Some(p) = chain
        .iter()
        .chain(core.first())
        .find(|n| PRIVILEGE.contains(&n.as_str()))
    {
        return Some(format!(
            "`{p}` runs with elevated privileges: asks every time"
        ));
    }
    external_core(core, dynamic, 0)
}

fn hit(what: &str) -> Option<String> {
    Some(format!("{what} has external effects: asks every time"))
}

/// The command a package runner runs (`npx vercel deploy`, `npm exec …`,
/// `pnpm dlx …`, `yarn dlx …`, `bunx …`, `python -m twine …`), as words.
fn runner_target(core: &[String]) -> Option<Vec<String>> {
    let name = core.first()?.as_str();
    let args = &core[1..];
    let runner_opts: &[&str] = &["-p", "--package", "-c", "--call", "--registry", "--cache"];
    let first_positional = |args: &[String], with: &[&str]| {
        subcommand_candidates(args, &global_options(with))
            .first()
            .copied()
    };
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

/// `npm`'s spelling of a command: aliases and unique abbreviations.
fn npm_canonical(word: &str) -> &str {
    crate::aliases::npm_command(word).unwrap_or(word)
}

fn external_core(core: &[String], dynamic: &[bool], depth: usize) -> Option<String> {
    let name = core.first()?.as_str();
    if depth < 4 {
        if let Some(inner) = runner_target(core) {
            let inner_dyn = vec![false; inner.len()];
            if let Some(r) = external_core(&inner, &inner_dyn, depth + 1) {
                return Some(r);
            }
        }
    }
    let none = [];
    let a = Args {
        words: &core[1..],
        dynamic: dynamic.get(1..).unwrap_or(&none),
    };
    match name {
        "git-push" | "git-send-pack" | "git-http-push" => return hit(name),
        n if n.starts_with("git-remote-") => return hit(name),
        "git" => {
            if let Some(w) = a.pair(&GIT, &["push", "send-pack", "http-push"], &[]) {
                return hit(&format!("git {w}"));
            }
            if let Some(w) = a.pair(&GIT, &["subtree", "lfs", "annex"], &["push"]) {
                return hit(&format!("git {w}"));
            }
            if let Some(w) = a.pair(&GIT, &["svn"], &["dcommit"]) {
                return hit(&format!("git {w}"));
            }
        }
        "gh" => {
            let with = &["-R", "--repo"];
            if let Some(w) = a.pair(&global_options(with), &["pr"], &["create", "new", "merge"]) {
                return hit(&format!("gh {w}"));
            }
            if let Some(w) = a.pair(
                &global_options(with),
                &["release"],
                &["create", "new", "upload"],
            ) {
                return hit(&format!("gh {w}"));
            }
            if let Some(w) = a.pair(
                &global_options(with),
                &["repo"],
                &["create", "new", "delete"],
            ) {
                return hit(&format!("gh {w}"));
            }
        }
        "glab" => {
            let with = &["-R", "--repo"];
            if let Some(w) = a.pair(&global_options(with), &["mr"], &["merge", "accept"]) {
                return hit(&format!("glab {w}"));
            }
            if let Some(w) = a.pair(
                &global_options(with),
                &["release"],
                &["create", "new", "upload"],
            ) {
                return hit(&format!("glab {w}"));
            }
        }
        "npm" | "pnpm" | "yarn" | "bun" | "cargo" => {
            // `cargo +nightly publish`: the toolchain is not a subcommand.
            let skip =
                usize::from(name == "cargo" && a.words.first().is_some_and(|x| x.starts_with('+')));
            let a = a.rest(skip);
            let with_arg = crate::caps::pkg_with_arg(name);
            for k in a.subs(&global_options(&with_arg)) {
                let w = a.words.get(k).map(String::as_str).unwrap_or("");
                let canonical = if name == "npm" { npm_canonical(w) } else { w };
                if canonical == "publish" || a.dynamic.get(k) == Some(&true) {
                    return hit(&format!("{name} publish"));
                }
                if name == "yarn" && w == "npm" {
                    let rest = a.rest(k + 1);
                    if rest
                        .subs(&global_options(&with_arg))
                        .into_iter()
                        .any(|j| rest.is(j, "publish"))
                    {
                        return hit("yarn npm publish");
                    }
                }
            }
        }
        "twine" => {
            if a.pair(&global_options(&[]), &["upload"], &[]).is_some() {
                return hit("twine upload");
            }
        }
        "docker" | "podman" => {
            // `--push`, `--output type=registry`, `push=1` (BuildKit reads an
            // empty value as true, any other with Go's ParseBool).
            let pushes = a.words.iter().any(|x| {
                x == "--push"
                    || x.starts_with("--push=")
                    || x.contains("type=registry")
                    || x.split([',', ' ', '"', '\'']).any(|part| {
                        let part = part
                            .trim_start_matches("--output=")
                            .trim_start_matches("--set=");
                        let part = part.rsplit('.').next().unwrap_or(part);
                        part == "push"
                            || part.strip_prefix("push=").is_some_and(|v| {
                                !matches!(v, "0" | "f" | "F" | "false" | "FALSE" | "False")
                            })
                    })
            });
            if let Some(w) = a.pair(&DOCKER, &["push"], &[]) {
                return hit(&format!("{name} {w}"));
            }
            if let Some(w) = a.pair(
                &DOCKER,
                &["image", "manifest", "compose", "plugin"],
                &["push"],
            ) {
                return hit(&format!("{name} {w}"));
            }
            if pushes {
                if let Some(w) = a.pair(
                    &DOCKER,
                    &["build", "buildx", "builder", "image", "compose"],
                    &[],
                ) {
                    return hit(&format!("{name} {w} --push"));
                }
            }
        }
        "docker-compose" | "podman-compose" => {
            if a.pair(&DOCKER, &["push"], &[]).is_some() {
                return hit(&format!("{name} push"));
            }
            if a.words.iter().any(|x| x == "--push") && a.pair(&DOCKER, &["build"], &[]).is_some() {
                return hit(&format!("{name} build --push"));
            }
        }
        "kubectl" | "oc" => {
            if let Some(w) = a.pair(
                &KUBE,
                &[
                    "apply", "create", "delete", "rollout", "replace", "patch", "scale", "set",
                    "edit",
                ],
                &[],
            ) {
                return hit(&format!("{name} {w}"));
            }
        }
        "helm" => {
            if let Some(w) = a.pair(
                &KUBE,
                &[
                    "install",
                    "upgrade",
                    "uninstall",
                    "delete",
                    "rollback",
                    "push",
                ],
                &[],
            ) {
                return hit(&format!("helm {w}"));
            }
        }
        "terraform" | "tofu" | "terragrunt" => {
            if let Some(w) = a
                .pair(
                    &global_options(&["-chdir"]),
                    &["state"],
                    &["push", "rm", "mv"],
                )
                .or_else(|| {
                    a.pair(
                        &global_options(&["-chdir"]),
                        &["apply", "destroy", "import"],
                        &[],
                    )
                })
            {
                return hit(&format!("{name} {w}"));
            }
        }
        "pulumi" => {
            if let Some(w) = a.pair(
                &global_options(&["-s", "--stack", "-C", "--cwd"]),
                &["up", "destroy", "update"],
                &[],
            ) {
                return hit(&format!("pulumi {w}"));
            }
        }
        "vercel" => {
            if a.words
                .iter()
                .any(|x| x == "--prod" || x.starts_with("--prod="))
            {
                return hit("vercel --prod");
            }
            let with = &[
                "--scope",
                "--global-config",
                "--local-config",
                "--token",
                "-t",
                "--cwd",
                "-A",
                "--local-config",
                "-S",
                "-Q",
            ];
            let subs = a.subs(&global_options(with));
            const READ_ONLY: &[&str] = &[
                "help",
                "ls",
                "list",
                "inspect",
                "logs",
                "whoami",
                "pull",
                "dev",
                "build",
                "login",
                "logout",
                "link",
                "init",
                "--version",
                "-v",
            ];
            let read_only = !subs.is_empty()
                && subs.iter().all(|&k| {
                    a.words
                        .get(k)
                        .is_some_and(|w| READ_ONLY.contains(&w.as_str()))
                        && a.dynamic.get(k) != Some(&true)
                });
            let version = a
                .words
                .iter()
                .any(|x| x == "--version" || x == "-v" || x == "--help" || x == "-h");
            if !read_only && !version {
                return hit("vercel (a deploy)");
            }
        }
        "netlify" | "fly" | "flyctl" | "firebase" | "wrangler" | "surge" | "heroku" => {
            let with = &[
                "--project",
                "-P",
                "-a",
                "--app",
                "-c",
                "--config",
                "--site",
                "-s",
            ];
            if let Some(w) = a.pair(
                &global_options(with),
                &["deploy", "publish", "release"],
                &[],
            ) {
                return hit(&format!("{name} {w}"));
            }
        }
        "gcloud" | "aws" | "az" => {
            if a.words
                .iter()
                .zip(a.dynamic.iter().chain(std::iter::repeat(&false)))
                .any(|(x, &d)| d || matches!(x.as_str(), "deploy" | "publish" | "push" | "upload"))
            {
                return hit(&format!("{name} … deploy"));
            }
        }
        "mvn" | "mvnw" | "gradle" | "gradlew" | "ant" | "sbt" => {
            // Any goal or task of that name.
            for (k, x) in a.words.iter().enumerate() {
                if x.starts_with('-') {
                    continue;
                }
                let task = x.rsplit(':').next().unwrap_or(x);
                let plugin = x.split(':').next().unwrap_or(x);
                // Gradle's generated tasks: `publishAllPublicationsTo…`, `publishPlugins`.
                let gradle_publish = name.starts_with("gradle") && task.starts_with("publish");
                if PUBLISH_WORDS.contains(&task)
                    || gradle_publish
                    || (x.contains(':') && PUBLISH_WORDS.contains(&plugin))
                    || a.dynamic.get(k) == Some(&true)
                {
                    return hit(&format!("{name} {x}"));
                }
            }
        }
        n if TASK_RUNNERS.contains(&n) || NOT_SUBCOMMANDS.contains(&n) => {}
        _ => {
            // Any other program: `push`, `publish`, `deploy`, `upload`
            // (or `gh-deploy`) as its first subcommand word, or after a
            // known group (`jj git push`, `dotnet nuget push`).
            let subs = a.subs(&global_options(&[]));
            for &k in &subs {
                let known = a.dynamic.get(k) != Some(&true);
                if known
                    && a.words
                        .get(k)
                        .is_some_and(|w| PUBLISH_WORDS.contains(&w.as_str()) || w == "gh-deploy")
                {
                    return hit(&format!("{name} {}", a.words[k]));
                }
                if a.is_any(k, &["git", "nuget", "lfs", "release", "annex", "state"]) && known {
                    let rest = a.rest(k + 1);
                    for j in rest.subs(&global_options(&[])) {
                        if rest
                            .words
                            .get(j)
                            .is_some_and(|w| PUBLISH_WORDS.contains(&w.as_str()))
                        {
                            return hit(&format!("{name} {} {}", a.words[k], rest.words[j]));
                        }
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn ext(s: &str) -> bool {
        let c = v(s);
        external_effect(&c, &vec![false; c.len()], &[]).is_some()
    }

    #[test]
    fn externals() {
        for yes in [
            "git -C x -c a=b push",
            "git --shallow-file x push",
            "gh pr new",
            "gh -R o/r pr create",
            "npm --tag beta publish",
            "kubectl -o yaml apply -f x",
            "hg push",
            "hg -R r push",
            "poetry publish",
            "uv publish",
            "mvn clean deploy",
            "./gradlew publish",
            "jj git push",
            "git lfs push",
            "dotnet nuget push x.nupkg",
            "mkdocs gh-deploy",
            "glab mr merge",
            "serverless deploy",
            "cdk deploy",
            "vercel",
            "vercel --prod",
            "gcloud app deploy",
            "docker compose push",
            "docker buildx build --push .",
            "sudoedit /etc/hosts",
            "cargo +nightly publish",
            "twine upload dist/*",
        ] {
            let c: Vec<String> = v(yes)
                .into_iter()
                .map(|w| w.trim_start_matches("./").to_string())
                .collect();
            assert!(
                external_effect(&c, &vec![false; c.len()], &[]).is_some(),
                "{yes}"
            );
        }
        for no in [
            "git status",
            "git commit -m push",
            "make deploy",
            "npm run deploy",
            "gh pr view",
            "kubectl get pods -o yaml",
            "ls deploy",
            "cd upload",
            "cargo test",
            "vercel ls",
            "docker build .",
            "python deploy.py",
        ] {
            assert!(!ext(no), "{no}");
        }
        assert!(external_effect(&v("rm x"), &[false, false], &v("sudo rm")).is_some());
        // A subcommand only known when it runs could be `push`.
        assert!(external_effect(&v("git $x"), &[false, true], &[]).is_some());
        assert!(external_effect(&v("wc -l $f"), &[false, false, true], &[]).is_none());
    }
}
