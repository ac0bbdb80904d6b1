//! Containers, clusters and cloud platforms: `docker`, `podman`,
//! `kubectl`, `helm`, `terraform`, `pulumi`, `vercel`, `netlify`, `fly`,
//! `gcloud`… What they push, deploy, publish or remove asks
//! (docs/permissions.md, "The stages"): a sub-command counts wherever it could
//! stand after options whose arity the gate does not know.

use super::schema::{Args, Argv, Hooks, Node, Program, Sub, PUBLISH_WORDS};
use super::support::global_options;
use crate::options::{self, OptionSpec};

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

/// A sub-command that pushes, under these groups (`docker image push`).
const PUSH: Sub = Sub::external(&["push"], "push");
const DOCKER_SUBS: &[Sub] = &[
    PUSH,
    Sub::group(&["image"], &[PUSH]),
    Sub::group(&["manifest"], &[PUSH]),
    Sub::group(&["compose"], &[PUSH]),
    Sub::group(&["plugin"], &[PUSH]),
];

const fn docker_like(
    names: &'static [&'static str],
    subs: &'static [Sub],
    args: Args,
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node: Node {
            options: DOCKER,
            hooks: Hooks {
                effect: Some(docker_push_flag),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        subs,
        args,
        generic_verbs: false,
        examples,
        ..Program::BASE
    }
}

/// A platform CLI whose `verbs` (after options, at any reading) deploy.
const fn platform(
    names: &'static [&'static str],
    options: OptionSpec<'static>,
    subs: &'static [Sub],
    args: Args,
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node: Node {
            options,
            ..Node::NONE
        },
        subs,
        args,
        generic_verbs: false,
        examples,
        ..Program::BASE
    }
}

const UNSHARE: Sub = Sub {
    names: &["unshare"],
    node: Node::runs_command(
        OptionSpec {
            short_value: "",
            glued: "",
            value: &[],
            flags: &["--rootless-netns", "--rootless-cni"],
            complete: false,
        },
        0,
    ),
    subs: &[],
};

const PODMAN_SUBS: &[Sub] = &[
    PUSH,
    Sub::group(&["image"], &[PUSH]),
    Sub::group(&["manifest"], &[PUSH]),
    Sub::group(&["compose"], &[PUSH]),
    Sub::group(&["plugin"], &[PUSH]),
    UNSHARE,
];

/// kubectl's commands that change the cluster: those that create, change
/// or remove objects (`run`, `expose` and `autoscale` create them; `label`,
/// `annotate`, `taint`, `cordon`, `drain` change them), run a command in a
/// container (`exec`, `attach`, `debug`) or copy files into one (`cp`).
const KUBECTL_VERBS: &[Sub] = &[
    Sub::external(&["apply"], "apply"),
    Sub::external(&["create"], "create"),
    Sub::external(&["delete"], "delete"),
    Sub::external(&["rollout"], "rollout"),
    Sub::external(&["replace"], "replace"),
    Sub::external(&["patch"], "patch"),
    Sub::external(&["scale"], "scale"),
    Sub::external(&["set"], "set"),
    Sub::external(&["edit"], "edit"),
    Sub::external(&["run"], "run"),
    Sub::external(&["expose"], "expose"),
    Sub::external(&["autoscale"], "autoscale"),
    Sub::external(&["label"], "label"),
    Sub::external(&["annotate"], "annotate"),
    Sub::external(&["taint"], "taint"),
    Sub::external(&["cordon", "uncordon"], "cordon"),
    Sub::external(&["drain"], "drain"),
    Sub::external(&["exec", "attach", "debug"], "exec"),
    Sub::external(&["cp"], "cp"),
    Sub::external(&["certificate"], "certificate"),
];

const PLATFORM_OPTIONS: OptionSpec<'static> = global_options(&[
    "--project",
    "-P",
    "-a",
    "--app",
    "-c",
    "--config",
    "--site",
    "-s",
]);

const PLATFORM_VERBS: &[Sub] = &[
    Sub::external(&["deploy"], "deploy"),
    Sub::external(&["publish"], "publish"),
    Sub::external(&["release"], "release"),
    Sub::external(&["push", "upload"], "push"),
    Sub::external(&["destroy"], "destroy"),
    Sub::external(&["rollback"], "rollback"),
    Sub::external(&["promote"], "promote"),
    Sub::external(&["redeploy"], "redeploy"),
    Sub::external(&["up"], "up"),
    Sub::external(&["down"], "down"),
    Sub::external(&["scale"], "scale"),
    Sub::external(&["restart"], "restart"),
    Sub::external(&["delete", "remove"], "delete"),
    Sub::external(&["set", "unset"], "set"),
    Sub::group(
        &[
            "apps",
            "app",
            "sites",
            "site",
            "projects",
            "project",
            "services",
            "service",
            "domains",
            "domain",
            "env",
            "secrets",
            "secret",
            "volumes",
            "volume",
            "certs",
            "alias",
            "aliases",
            "ips",
            "machines",
            "machine",
            "releases",
            "functions",
            "variables",
            "config",
            "db",
            "stack",
            "stacks",
            "svc",
            "job",
        ],
        PLATFORM_CHANGES,
    ),
];

/// What changes a hosted resource under one of the platforms' groups
/// (`fly apps destroy`, `vc env add`, `fly secrets set`).
const PLATFORM_CHANGES: &[Sub] = &[
    Sub::external(&["destroy"], "destroy"),
    Sub::external(&["delete", "rm", "remove"], "delete"),
    Sub::external(&["create", "add", "new"], "create"),
    Sub::external(&["set", "unset", "import"], "set"),
    Sub::external(
        &["deploy", "rollback", "promote", "restart", "stop", "start"],
        "deploy",
    ),
    Sub::external(&["move", "transfer", "rename"], "move"),
    Sub::external(&["push", "reset", "update", "scale"], "push"),
];

pub(crate) const PROGRAMS: &[Program] = &[
    docker_like(
        &["docker"],
        DOCKER_SUBS,
        Args::Read,
        &[
            ("docker push img", "external docker push"),
            (
                "docker buildx build --push .",
                "external docker buildx --push",
            ),
            ("docker build .", "plain"),
            ("docker --unknown x push c", "external docker push"),
        ],
    ),
    docker_like(
        &["podman"],
        PODMAN_SUBS,
        Args::Read,
        &[
            ("podman push img", "external podman push"),
            (
                "podman unshare cat /proc/self/uid_map",
                "runs `cat /proc/self/uid_map`",
            ),
        ],
    ),
    Program {
        names: &["buildah"],
        subs: &[UNSHARE],
        examples: &[("buildah unshare id", "runs `id`")],
        ..Program::BASE
    },
    Program {
        names: &["docker-compose", "podman-compose"],
        node: Node {
            options: DOCKER,
            hooks: Hooks {
                effect: Some(compose_push_flag),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        subs: &[PUSH],
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("docker-compose push", "external docker-compose push"),
            (
                "docker-compose build --push",
                "external docker-compose build --push",
            ),
        ],
        ..Program::BASE
    },
    platform(
        &["kubectl", "oc"],
        KUBE,
        KUBECTL_VERBS,
        Args::Read,
        &[
            ("kubectl -o yaml apply -f x", "external kubectl apply"),
            ("kubectl -f x.yaml apply", "external kubectl apply"),
            ("kubectl run x --image=busybox", "external kubectl run"),
            ("kubectl -n ns exec pod -- sh", "external kubectl exec"),
            ("kubectl get pods -o yaml", "plain"),
            ("kubectl logs deploy/x", "plain"),
            ("kubectl config set-context --current", "plain"),
        ],
    ),
    platform(
        &["helm"],
        KUBE,
        &[
            Sub::external(&["install"], "install"),
            Sub::external(&["upgrade"], "upgrade"),
            // helm's own aliases of `uninstall`.
            Sub::external(&["uninstall", "delete", "del", "un"], "uninstall"),
            Sub::external(&["rollback"], "rollback"),
            Sub::external(&["push"], "push"),
        ],
        Args::Read,
        &[
            ("helm upgrade app chart", "external helm upgrade"),
            ("helm del app", "external helm del"),
            ("helm -n x un app", "external helm un"),
            ("helm list", "plain"),
        ],
    ),
    platform(
        &["terraform", "tofu", "terragrunt"],
        global_options(&["-chdir"]),
        &[
            Sub::group(
                &["state"],
                &[
                    Sub::external(&["push"], "push"),
                    Sub::external(&["rm"], "rm"),
                    Sub::external(&["mv"], "mv"),
                ],
            ),
            Sub::external(&["apply"], "apply"),
            Sub::external(&["destroy"], "destroy"),
            Sub::external(&["import"], "import"),
        ],
        Args::Read,
        &[
            ("terraform apply", "external terraform apply"),
            ("terraform plan", "plain"),
        ],
    ),
    platform(
        &["pulumi"],
        global_options(&["-s", "--stack", "-C", "--cwd"]),
        &[
            // pulumi's own aliases: `up` is `update`, `destroy` is `down`/`dn`.
            Sub::external(&["up", "update", "u"], "up"),
            Sub::external(&["destroy", "down", "dn"], "destroy"),
            Sub::external(&["import"], "import"),
            Sub::external(&["refresh"], "refresh"),
            Sub::external(&["cancel"], "cancel"),
        ],
        Args::Read,
        &[
            ("pulumi up", "external pulumi up"),
            ("pulumi down --yes", "external pulumi down"),
            ("pulumi -C infra dn", "external pulumi dn"),
            ("pulumi preview", "plain"),
        ],
    ),
    Program {
        // `vc` is vercel's other name.
        names: &["vercel", "vc"],
        node: Node {
            hooks: Hooks {
                effect: Some(vercel),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("vercel", "external vercel (a deploy)"),
            ("vercel --prod", "external vercel --prod"),
            ("vercel ls", "plain"),
            ("vc", "external vc (a deploy)"),
            ("vc promote x", "external vc (a deploy)"),
            ("vc ls", "plain"),
            ("vc env ls", "plain"),
            ("vc env add X", "external vc (a deploy)"),
        ],
        ..Program::BASE
    },
    platform(
        // `ntl` is netlify's other name, `sls` serverless's.
        &[
            "netlify",
            "ntl",
            "fly",
            "flyctl",
            "firebase",
            "railway",
            "serverless",
            "sls",
            "cdk",
            "sam",
            "copilot",
            "supabase",
            "amplify",
            "doctl",
            "eb",
        ],
        PLATFORM_OPTIONS,
        PLATFORM_VERBS,
        Args::Read,
        &[
            ("fly deploy", "external fly deploy"),
            (
                "firebase hosting:channel:deploy preview",
                "external firebase hosting:channel:deploy",
            ),
            ("firebase deploy:prod", "external firebase deploy:prod"),
            ("firebase --project p deploy", "external firebase deploy"),
            ("firebase emulators:start", "plain"),
            ("fly status", "plain"),
            ("fly apps destroy x", "external fly apps destroy"),
            ("ntl deploy --prod", "external ntl deploy"),
            ("railway up", "external railway up"),
            ("sls remove", "external sls remove"),
            ("supabase db push", "external supabase db push"),
            ("cdk synth", "plain"),
            ("fly logs", "plain"),
        ],
    ),
    platform(
        &["wrangler", "heroku"],
        PLATFORM_OPTIONS,
        PLATFORM_VERBS,
        Args::Unread,
        &[
            ("wrangler publish", "external wrangler publish"),
            (
                "heroku container:push web",
                "external heroku container:push",
            ),
            (
                "heroku container:release web",
                "external heroku container:release",
            ),
            ("heroku logs --tail", "plain"),
            (
                "heroku releases:rollback",
                "external heroku releases:rollback",
            ),
        ],
    ),
    Program {
        names: &["surge"],
        node: Node {
            hooks: Hooks {
                effect: Some(surge),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("surge ./dist", "external surge (a deploy)"),
            ("surge list", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["gcloud", "aws", "az"],
        node: Node {
            hooks: Hooks {
                effect: Some(any_publish_word),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("gcloud app deploy", "external gcloud … deploy"),
            ("aws s3 ls", "plain"),
        ],
        ..Program::BASE
    },
];

/// docker's `--push`, `--output type=registry`, `push=1` (BuildKit reads an
/// empty value as true, any other with Go's ParseBool), with a build.
fn docker_push_flag(v: &Argv<'_>) -> Option<String> {
    let args = v.args();
    let pushes = args.iter().any(|x| {
        x == "--push"
            || x.starts_with("--push=")
            || x.contains("type=registry")
            || x.split([',', ' ', '"', '\'']).any(|part| {
                let part = part
                    .trim_start_matches("--output=")
                    .trim_start_matches("--set=");
                let part = part.rsplit('.').next().unwrap_or(part);
                part == "push"
                    || part.strip_prefix("push=").is_some_and(|x| {
                        !matches!(x, "0" | "f" | "F" | "false" | "FALSE" | "False")
                    })
            })
    });
    if !pushes {
        return None;
    }
    sub_at_any(
        v,
        &DOCKER,
        &["build", "buildx", "builder", "image", "compose"],
    )
    .map(|w| format!("{} {w} --push", v.name()))
}

/// `docker-compose build --push`.
fn compose_push_flag(v: &Argv<'_>) -> Option<String> {
    let pushes = v.args().iter().any(|x| x == "--push");
    (pushes && sub_at_any(v, &DOCKER, &["build"]).is_some())
        .then(|| format!("{} build --push", v.name()))
}

/// The first of `words` standing where a sub-command may (any reading of the
/// options), or a word only known when it runs.
fn sub_at_any<'a>(v: &Argv<'a>, spec: &OptionSpec<'_>, words: &[&str]) -> Option<&'a str> {
    let args = v.args();
    options::candidates(args, spec)
        .into_iter()
        .find(|&k| words.contains(&args[k].as_str()) || v.dyn_arg(k))
        .map(|k| args[k].as_str())
}

/// `surge` deploys the folder it is given (or the current one): any
/// invocation but its read-only commands and `--version`/`--help`.
fn surge(v: &Argv<'_>) -> Option<String> {
    const READ_ONLY: &[&str] = &[
        "list",
        "whoami",
        "login",
        "logout",
        "help",
        "--help",
        "-h",
        "--version",
        "-V",
    ];
    let args = v.args();
    let read_only = args
        .first()
        .is_some_and(|a| READ_ONLY.contains(&a.as_str()))
        && !v.dyn_arg(0);
    (!read_only).then(|| format!("{} (a deploy)", v.name()))
}

/// Bare `vercel` deploys: any arguments but a known read-only sub-command
/// (or `--version`, `--help`); `--prod` always.
fn vercel(v: &Argv<'_>) -> Option<String> {
    let args = v.args();
    if args
        .iter()
        .any(|x| x == "--prod" || x.starts_with("--prod="))
    {
        return Some(format!("{} --prod", v.name()));
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
    // Groups whose listing and pulling only read (`vc env ls`, `vc env pull`).
    const GROUPS: &[&str] = &[
        "env",
        "domains",
        "domain",
        "alias",
        "aliases",
        "project",
        "projects",
        "dns",
        "certs",
        "teams",
        "secrets",
        "integration",
    ];
    const GROUP_READS: &[&str] = &["ls", "list", "pull", "inspect", "help"];
    let reads = |k: usize| {
        let w = args[k].as_str();
        !v.dyn_arg(k)
            && (READ_ONLY.contains(&w)
                || (GROUPS.contains(&w)
                    && args
                        .get(k + 1)
                        .is_some_and(|n| GROUP_READS.contains(&n.as_str()))
                    && !v.dyn_arg(k + 1)))
    };
    let subs = options::candidates(args, &global_options(with));
    let read_only = !subs.is_empty() && subs.iter().all(|&k| reads(k));
    let version = args
        .iter()
        .any(|x| x == "--version" || x == "-v" || x == "--help" || x == "-h");
    (!read_only && !version).then(|| format!("{} (a deploy)", v.name()))
}

/// `gcloud`, `aws`, `az`: a deploy-like word anywhere (their command trees
/// are deep: `gcloud app deploy`, `aws s3 … upload`), or a word only known
/// when it runs.
fn any_publish_word(v: &Argv<'_>) -> Option<String> {
    let hit = v
        .args()
        .iter()
        .enumerate()
        .any(|(k, x)| v.dyn_arg(k) || PUBLISH_WORDS.contains(&x.as_str()));
    hit.then(|| format!("{} … deploy", v.name()))
}

/// Container removal (never automatic): `docker rm`, `docker container
/// rm|prune`, `docker volume rm|prune`, `docker system prune`, `docker
/// compose down -v`, `podman pod rm`, `docker-compose rm`.
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
        options::candidates(args, &DOCKER).into_iter().map(|k| {
            let rest = &args[k + 1..];
            let second: Vec<&str> = options::candidates(rest, &DOCKER)
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
