//! Package managers and the runners of language tools: `npm`, `pnpm`,
//! `yarn`, `bun`, `npx`, `uv`, `poetry`, `conda`, `cargo`, `twine`. What
//! they run (`npx CMD`, `uv run CMD`, `pnpm NAME`) is seen through; what
//! they publish asks (docs/permissions.md, "Fail closed" and "The stages").

use super::schema::{Args, Argv, Ctx, Hooks, Moves, Node, Program, Runs, Sub, Writes};
use super::support::{global_options, join, runner_start, shell_stdin};
use crate::options::{self, OptionSpec};
use crate::shell::model::Target;
use crate::shell::model::{Analysis, Derived, Role, Workdir};
use crate::shell::words::Word;

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
/// The same without `-w` (pnpm, bun).
const PKG_WITH_ARG_NO_W: &[&str] = &[
    "--registry",
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
const NPM_GLOBAL: OptionSpec<'static> = global_options(PKG_WITH_ARG);
const PNPM_GLOBAL: OptionSpec<'static> = global_options(PKG_WITH_ARG_NO_W);

/// pnpm's own commands (any other word is run with `pnpm exec`).
const PNPM_COMMANDS: &[&str] = &[
    "add",
    "i",
    "install",
    "ci",
    "update",
    "up",
    "upgrade",
    "remove",
    "rm",
    "uninstall",
    "un",
    "link",
    "ln",
    "unlink",
    "import",
    "rebuild",
    "rb",
    "prune",
    "fetch",
    "patch",
    "patch-commit",
    "patch-remove",
    "audit",
    "list",
    "ls",
    "ll",
    "la",
    "outdated",
    "why",
    "licenses",
    "run",
    "run-script",
    "test",
    "t",
    "tst",
    "start",
    "exec",
    "dlx",
    "create",
    "publish",
    "pack",
    "store",
    "root",
    "bin",
    "env",
    "setup",
    "init",
    "deploy",
    "doctor",
    "config",
    "c",
    "get",
    "set",
    "server",
    "recursive",
    "multi",
    "m",
    "help",
    "cache",
    "self-update",
    "approve-builds",
    "ignored-builds",
    "cat-file",
    "cat-index",
    "find-hash",
    "dedupe",
    "sbom",
    "version",
    "catalog",
    "restart",
    "stop",
    "owner",
    "whoami",
    "login",
    "logout",
    "adduser",
    "dist-tag",
    "deprecate",
    "docs",
    "search",
    "view",
    "info",
    "show",
    "unpublish",
    "x",
];

/// bun's own commands (any other word, and `bun run NAME` without such a script,
/// runs a program from PATH).
const BUN_COMMANDS: &[&str] = &[
    "run",
    "test",
    "x",
    "exec",
    "install",
    "i",
    "add",
    "a",
    "remove",
    "rm",
    "update",
    "outdated",
    "link",
    "unlink",
    "pm",
    "build",
    "init",
    "create",
    "c",
    "upgrade",
    "publish",
    "patch",
    "patch-commit",
    "audit",
    "info",
    "why",
    "repl",
    "help",
    "completions",
    "feedback",
    "ci",
];

const UV_RUN: OptionSpec<'static> = OptionSpec {
    short_value: "p",
    glued: "",
    value: &[
        "--with",
        "--python",
        "--package",
        "--directory",
        "--project",
        "--env-file",
        "--group",
        "--extra",
        "--index",
        "--index-url",
    ],
    flags: &[
        "--no-sync",
        "--frozen",
        "--locked",
        "--isolated",
        "--quiet",
        "-q",
        "--all-extras",
        "--no-project",
    ],
    complete: false,
};
const UV_TOOL: OptionSpec<'static> = OptionSpec {
    short_value: "p",
    glued: "",
    value: &[
        "--with",
        "--python",
        "--from",
        "--index",
        "--index-url",
        "--directory",
    ],
    flags: &["--quiet", "-q", "--isolated"],
    complete: false,
};

/// The options of `npx` (and of `npm exec`, read the same).
const NPX: OptionSpec<'static> = OptionSpec {
    short_value: "pc",
    glued: "",
    value: &[
        "--package",
        "--call",
        "--registry",
        "--cache",
        "--userconfig",
        "--prefix",
    ],
    flags: &["--yes", "-y", "--no", "--quiet", "-q", "--ignore-existing"],
    complete: false,
};

/// `npm exec`, `pnpm exec`/`dlx`, `yarn exec`/`dlx`, `bun x`: `-w` takes a
/// workspace in npm and none in pnpm, so it is read both ways.
const EXEC: OptionSpec<'static> = OptionSpec {
    short_value: "pc",
    glued: "",
    value: &[
        "--package",
        "--call",
        "--registry",
        "--cache",
        "--filter",
        "--workspace",
    ],
    flags: &["--yes", "-y", "--no", "--quiet", "-q", "--recursive", "-r"],
    complete: false,
};

/// A language tool's `run`: the command after its options.
const fn run_sub(options: OptionSpec<'static>, moves: Moves) -> Sub {
    Sub {
        names: &["run"],
        node: Node {
            options,
            runs: &[Runs::Command {
                skip: 0,
                assignments: false,
            }],
            moves,
            ..Node::NONE
        },
        subs: &[],
    }
}

/// A tool whose `run` may stand after options the gate does not read.
const RUN_LATER: Node = Node {
    runs: &[Runs::SubAfterOptions("run")],
    ..Node::NONE
};

/// The sub-commands of the npm family that publish.
const NPM_SUBS: &[Sub] = &[
    Sub::external(&["publish"], "publish"),
    Sub::group(&["npm"], &[Sub::external(&["publish"], "publish")]),
];

/// The npm family's options and configuration keys that name a program it
/// runs (the shell that runs every script, an editor, git) or a
/// configuration file that may name one.
const NPM_HOOKS: Runs = Runs::Opaque {
    options: &[
        "--script-shell",
        "--shell",
        "--userconfig",
        "--globalconfig",
        "--node-options",
        "--onload-script",
        "--init-module",
        "--editor",
        "--browser",
        "--viewer",
        "--git",
        "--yarn-path",
        "--use-yarnrc",
        "--rc-filename",
    ],
    keys: &[
        "script-shell",
        "script_shell",
        "shell",
        "shell-emulator",
        "userconfig",
        "globalconfig",
        "node-options",
        "onload-script",
        "init-module",
        "editor",
        "browser",
        "viewer",
        "git",
        "yarnPath",
        "yarn-path",
    ],
    why: "is given a program to run or a configuration to obey (`--script-shell`, `config set script-shell`), which the gate cannot read",
};

const fn npm_family(
    names: &'static [&'static str],
    options: OptionSpec<'static>,
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node: Node {
            options,
            runs: &[NPM_HOOKS],
            hooks: Hooks {
                see: Some(npm_family_see),
                writes: Some(npm_global_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        subs: NPM_SUBS,
        args: Args::Read,
        generic_verbs: false,
        examples,
        ..Program::BASE
    }
}

/// A global install into a folder given on the command line (`npm install -g
/// --prefix DIR`, `pnpm add -g --global-bin-dir DIR`, `yarn global add
/// --prefix DIR`): packages and their programs land in it (`DIR/bin`,
/// `DIR/lib`) under names only known when it runs. (Without such an option
/// the folder is the one npm's configuration names; the sandbox keeps it
/// read-only unless it is a writable place.)
fn npm_global_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let global = args.iter().enumerate().any(|(k, a)| {
        matches!(
            a.as_str(),
            "-g" | "--global" | "--location=global" | "global"
        ) || (a == "--location" && args.get(k + 1).is_some_and(|n| n == "global"))
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('g'))
    });
    let installs = args.iter().any(|a| {
        let w = crate::aliases::npm_command(a).unwrap_or(a);
        matches!(
            w,
            "install" | "add" | "update" | "upgrade" | "link" | "rebuild" | "install-test"
        )
    });
    if !global || !installs {
        return;
    }
    const INTO: &[&str] = &[
        "--prefix",
        "--prefi",
        "--global-dir",
        "--global-bin-dir",
        "--global-folder",
    ];
    for (k, a) in args.iter().enumerate() {
        let (raw, at) = match a.split_once('=') {
            Some((o, v)) if INTO.contains(&o) => (v, k),
            None if INTO.contains(&a.as_str()) => match args.get(k + 1) {
                Some(v) => (v.as_str(), k + 1),
                None => continue,
            },
            _ => continue,
        };
        let mut t = Target::new(raw, v.dyn_arg(at));
        t.contents = true;
        out.push(t);
    }
}

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        names: &["uv"],
        node: RUN_LATER,
        subs: &[
            run_sub(UV_RUN, Moves::to(&["--directory"])),
            Sub::group(&["tool"], &[run_sub(UV_TOOL, Moves::to(&["--directory"]))]),
            Sub::external(&["publish"], "publish"),
        ],
        args: Args::Read,
        examples: &[
            ("uv run --with rich -q pytest -x", "runs `pytest -x`"),
            ("uv tool run --from ruff ruff check", "runs `ruff check`"),
            (
                "uv -q run rm -rf /home",
                "opaque; runs `uv run rm -rf /home`",
            ),
            ("uv publish", "external uv publish"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["uvx"],
        node: Node {
            moves: Moves::to(&["--directory"]),
            ..Node::runs_command(UV_TOOL, 0)
        },
        args: Args::Read,
        takes_command: true,
        examples: &[("uvx -p 3.12 black .", "runs `black .`")],
        ..Program::BASE
    },
    Program {
        names: &["pipx"],
        node: RUN_LATER,
        subs: &[run_sub(
            OptionSpec {
                short_value: "",
                glued: "",
                value: &["--spec", "--python", "--pip-args", "--index-url"],
                flags: &["--no-cache", "--verbose", "--quiet"],
                complete: false,
            },
            Moves::HERE,
        )],
        args: Args::Read,
        examples: &[("pipx run --spec black==24 black src", "runs `black src`")],
        ..Program::BASE
    },
    Program {
        names: &["poetry", "pdm", "rye", "pipenv"],
        node: RUN_LATER,
        subs: &[run_sub(
            OptionSpec {
                value: &["--directory", "-C"],
                ..OptionSpec::NONE
            },
            Moves::to(&["--directory", "-C"]),
        )],
        args: Args::Read,
        examples: &[
            (
                "poetry run --directory app pytest",
                "runs `pytest`; cwd app",
            ),
            ("poetry publish", "external poetry publish"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["hatch"],
        node: RUN_LATER,
        subs: &[Sub {
            names: &["run"],
            node: Node {
                hooks: Hooks {
                    see: Some(hatch_env),
                    ..Hooks::NONE
                },
                ..run_sub(
                    OptionSpec {
                        value: &["--directory", "-C"],
                        ..OptionSpec::NONE
                    },
                    Moves::to(&["--directory", "-C"]),
                )
                .node
            },
            subs: &[],
        }],
        args: Args::Read,
        examples: &[
            ("hatch run test", "runs `test`"),
            (
                "hatch run dev:rm -rf /home",
                "opaque; runs `dev:rm -rf /home`; runs `rm -rf /home`",
            ),
        ],
        ..Program::BASE
    },
    Program {
        names: &["conda", "mamba", "micromamba"],
        node: RUN_LATER,
        subs: &[run_sub(
            OptionSpec {
                short_value: "np",
                glued: "",
                value: &["--name", "--prefix", "--cwd"],
                flags: &["--no-capture-output", "--live-stream"],
                complete: false,
            },
            Moves::to(&["--cwd"]),
        )],
        args: Args::Read,
        examples: &[(
            "conda run -n base --live-stream python -V",
            "runs `python -V`",
        )],
        ..Program::BASE
    },
    Program {
        names: &["npx", "bunx", "pnpx"],
        node: Node {
            options: NPX,
            hooks: Hooks {
                see: Some(npx),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        args: Args::Read,
        takes_command: false,
        examples: &[
            ("npx -p typescript tsc --noEmit", "runs `tsc --noEmit`"),
            ("npx -p x -c 'rm -rf /home'", "runs 'rm -rf /home'"),
            (
                "npx vercel@latest deploy",
                "runs `vercel@latest deploy`; external vercel@latest deploy",
            ),
        ],
        ..Program::BASE
    },
    Program {
        canonical: Some(crate::aliases::npm_command),
        ..npm_family(
            &["npm"],
            NPM_GLOBAL,
            &[
                ("npm exec -- curl x", "runs `curl x`"),
                ("npm --tag beta publish", "external npm publish"),
                ("npm publ", "external npm publish"),
                ("npm run deploy", "plain"),
                ("npm explore x -- make", "runs 'make'; cwd ?"),
                ("npm i -g --prefix ~/.local x", "writes ~/.local"),
                ("npm install --location=global --prefix=/opt/n x", "writes /opt/n"),
                ("npm install -g typescript", "plain"),
            ],
        )
    },
    npm_family(
        &["yarn"],
        NPM_GLOBAL,
        &[
            (
                "yarn exec 'rm -rf /home'",
                "runs `home`; runs 'rm -rf /home'",
            ),
            ("yarn workspace app jest", "runs `yarn jest`; cwd ?"),
            ("yarn npm publish", "external yarn npm publish"),
        ],
    ),
    npm_family(
        &["pnpm"],
        PNPM_GLOBAL,
        &[
            ("pnpm eslint .", "runs `eslint .`"),
            ("pnpm -w publish", "external pnpm publish"),
            ("pnpm install", "plain"),
            ("pnpm add -g --global-bin-dir ~/.local/bin x", "writes ~/.local/bin"),
        ],
    ),
    npm_family(
        &["bun"],
        PNPM_GLOBAL,
        &[
            ("bun x cowsay hi", "runs `cowsay hi`"),
            ("bun exec 'rm -rf x'", "runs 'rm -rf x'"),
            ("bun publish", "external bun publish"),
        ],
    ),
    Program {
        names: &["cargo"],
        node: Node {
            options: global_options(&[
                "--config",
                "-Z",
                "-C",
                "--color",
                "--manifest-path",
                "--root",
            ]),
            hooks: Hooks {
                see: Some(cargo),
                ..Hooks::NONE
            },
            // `cargo install --root DIR` puts programs in DIR/bin.
            writes: &[Writes::Into {
                options: &["--root"],
                flags: &[],
            }],
            ..Node::NONE
        },
        subs: &[Sub::external(&["publish"], "publish")],
        args: Args::Read,
        generic_verbs: false,
        toolchain: Some('+'),
        examples: &[
            ("cargo +nightly publish", "external cargo publish"),
            ("cargo --color never build", "plain"),
            (
                "cargo --config target.x.runner=rm run -- -rf /home",
                "opaque; runs `rm -rf /home`",
            ),
        ],
        ..Program::BASE
    },
    Program {
        names: &["apt", "apt-get", "apt-cache", "aptitude", "apt-mark"],
        node: Node {
            options: OptionSpec {
                short_value: "oct",
                glued: "",
                value: &["--option", "--config-file", "--target-release"],
                flags: &[],
                complete: false,
            },
            runs: &[Runs::Opaque {
                options: &["-o", "--option", "-c", "--config-file"],
                keys: &[],
                why: "is given configuration that may name programs it runs (`APT::Update::Pre-Invoke`, `DPkg::Pre-Invoke`), which the gate does not read",
            }],
            hooks: Hooks {
                see: Some(apt_hooks),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            (
                "apt-get -o APT::Update::Pre-Invoke::=id update",
                "opaque; runs 'id'",
            ),
            ("apt-get install -y ffmpeg", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["dpkg"],
        node: Node {
            options: OptionSpec {
                value: &["--pre-invoke", "--post-invoke", "--admindir", "--instdir", "--root"],
                ..OptionSpec::NONE
            },
            runs: &[
                Runs::OptionLine(&["--pre-invoke", "--post-invoke"]),
                Runs::Opaque {
                    options: &["--pre-invoke", "--post-invoke"],
                    keys: &[],
                    why: "runs a hook command around its work",
                },
            ],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("dpkg --pre-invoke='rm x' -i a.deb", "opaque; runs 'rm x'"),
            ("dpkg -l", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["nix-shell"],
        node: Node {
            options: OptionSpec {
                short_value: "pEAI",
                glued: "",
                value: &["--run", "--command", "--packages", "--expr", "--attr", "--arg", "--argstr"],
                flags: &["--pure", "--impure"],
                complete: false,
            },
            runs: &[Runs::OptionCommand(&["--run", "--command"])],
            hooks: Hooks {
                see: Some(nix_shell),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("nix-shell -p hello --run 'rm -rf x'", "runs 'rm -rf x'"),
            ("nix-shell -p hello", "opaque"),
            ("nix-shell --version", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["nix"],
        node: Node {
            runs: &[Runs::OptionWords {
                opts: &["-c", "--command"],
                until: &[],
            }],
            hooks: Hooks {
                see: Some(nix_shell),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        examples: &[
            ("nix develop", "opaque"),
            ("nix build .#x", "plain"),
            ("nix develop -c rm -rf x", "runs `rm -rf x`"),
            ("nix shell nixpkgs#hello --command hello", "runs `hello`"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["pm2"],
        subs: &[Sub {
            names: &["start"],
            node: Node {
                runs: &[Runs::Line { skip: 0 }],
                ..Node::NONE
            },
            subs: &[],
        }],
        examples: &[("pm2 start 'rm -rf x'", "runs 'rm -rf x'"), ("pm2 list", "plain")],
        ..Program::BASE
    },
    Program {
        names: &["pip", "pip3", "pip2"],
        node: Node {
            options: OptionSpec {
                short_value: "trcei",
                glued: "",
                value: &[
                    "--target",
                    "--prefix",
                    "--root",
                    "--requirement",
                    "--constraint",
                    "--editable",
                    "--index-url",
                    "--extra-index-url",
                ],
                flags: &["--user", "--upgrade", "-U", "--quiet", "-q"],
                complete: false,
            },
            writes: &[Writes::Into {
                options: &["-t", "--target", "--prefix", "--root"],
                flags: &[("--user", "~/.local")],
            }],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("pip install --user black", "writes ~/.local"),
            ("pip install --prefix ~/.local x", "writes ~/.local"),
            ("pip install -r requirements.txt", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["twine"],
        node: Node {
            options: global_options(&[]),
            ..Node::NONE
        },
        subs: &[Sub::external(&["upload"], "upload")],
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("twine upload dist/*", "external twine upload"),
            ("twine check dist/*", "plain"),
        ],
        ..Program::BASE
    },
];

/// `hatch run ENV:CMD` runs CMD in ENV.
fn hatch_env(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    if let Some(j) = start.filter(|&j| c.words[j].text.contains(':')) {
        a.dynamic =
            Some("`hatch run ENV:COMMAND` names an environment and a command in one word".into());
        if let Some((_, cmd)) = c.words[j].text.split_once(':') {
            let mut ws = vec![Word::raw(cmd)];
            ws.extend_from_slice(&c.words[j + 1..]);
            a.derived.push(Derived::Words(ws, Role::Checked));
        }
    }
    start
}

/// `npx`, `bunx`, `pnpx`.
fn npx(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    package_exec(c.words, c.at, &NPX, c.role, a)
}

/// A package runner's command (`npx`, `npm exec`…): `-c STRING` (`--call`)
/// runs a string in a shell; otherwise the command starts after the options.
fn package_exec(
    words: &[Word],
    from: usize,
    spec: &OptionSpec<'_>,
    role: Role,
    a: &mut Analysis,
) -> Option<usize> {
    let end = options::scan(words, from, spec).start;
    let calls = options::values(&words[from..end], spec, &["-c", "--call"]);
    if !calls.is_empty() {
        for v in calls {
            a.derived.push(Derived::Source(v.text, role));
        }
        return None;
    }
    runner_start(words, from, spec, a)
}

/// Whether `w` is a sub-command of `name` that runs a command given as
/// its arguments (`npm exec`, `npm x`, `pnpm dlx`, `bun x`).
fn exec_like(name: &str, w: &str) -> bool {
    (name == "npm" && crate::aliases::npm_command(w) == Some("exec"))
        || matches!(
            (name, w),
            ("pnpm", "exec" | "dlx") | ("yarn", "exec" | "dlx") | ("bun", "x" | "exec")
        )
}

/// `npm`, `pnpm`, `yarn`, `bun`: the sub-command after the global options;
/// what `exec`, `dlx`, `x`, `workspace`, `explore` (and pnpm's and bun's
/// unknown words) run.
fn npm_family_see(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let (name, words) = (c.name, c.words);
    let spec = if matches!(name, "pnpm" | "bun") {
        PNPM_GLOBAL
    } else {
        NPM_GLOBAL
    };
    let texts: Vec<&str> = words[c.at..].iter().map(|w| w.text.as_str()).collect();
    let subs = options::candidates(&texts, &spec);
    // An option of unknown arity before the sub-command (`pnpm -w exec`,
    // where `-w` takes no value but npm's does): if any reading runs a
    // command, where it starts is not known.
    if subs.iter().skip(1).any(|&k| exec_like(name, texts[k])) {
        a.dynamic = Some(format!(
            "`{name}`: an option before the sub-command may or may not take a value, and one reading runs a command"
        ));
        return None;
    }
    let at = c.at + *subs.first()?;
    npm_folders(c, at, &spec, a);
    let sub_word = words[at].text.as_str();
    if name == "npm" && sub_word == "explore" {
        // `npm explore PKG -- CMD` runs CMD in a shell in the package's folder.
        a.move_to(Workdir::Unknown);
        match words[at..].iter().position(|w| w.text == "--") {
            Some(d) => {
                let line = join(&words[at + d + 1..], "");
                if !line.is_empty() {
                    a.derived.push(Derived::Source(line, Role::Checked));
                }
            }
            None => shell_stdin("sh", c.redirs, c.role, c.allow_ok, a),
        }
    }
    if name == "bun" && sub_word == "exec" {
        // `bun exec "…"` runs the string in Bun's shell.
        if at + 1 < words.len() {
            a.derived
                .push(Derived::Source(join(&words[at + 1..], ""), Role::Checked));
        }
        return None;
    }
    if name == "pnpm" && exec_like(name, sub_word) && pnpm_shell_mode(c, at, a) {
        return None;
    }
    if pkg_runs_program(c, at, a) {
        return None;
    }
    npm_sub(c, at, a)
}

/// `npm --prefix DIR`, `pnpm -C DIR`, `yarn --cwd DIR`: what it runs runs
/// there; in workspaces (`npm exec -w x`, `--ws`, `pnpm -r`, `--filter`,
/// `yarn workspace x`), in each workspace's folder.
fn npm_folders(c: &Ctx<'_>, at: usize, spec: &OptionSpec<'_>, a: &mut Analysis) {
    let dirs = ["--prefix", "-C", "--dir", "--cwd"];
    for v in options::values(&c.words[c.at..at], spec, &dirs) {
        a.move_to(Workdir::At(v.text));
    }
    let workspaces = [
        "-w",
        "--workspace",
        "--ws",
        "--workspaces",
        "--filter",
        "-F",
        "-r",
        "--recursive",
    ];
    // (pnpm's and bun's `-w` is the workspace root, not a workspace.)
    let listed = if matches!(c.name, "pnpm" | "bun") {
        &workspaces[1..]
    } else {
        &workspaces[..]
    };
    let in_workspaces = options::flagged(&c.words[c.at..], spec, listed);
    if in_workspaces
        || (c.name == "yarn" && matches!(c.words[at].text.as_str(), "workspace" | "workspaces"))
    {
        a.move_to(Workdir::Unknown);
    }
}

/// The first word after the options starting at `from`.
fn operand(words: &[Word], from: usize) -> usize {
    let mut j = from;
    while j < words.len() && words[j].text.starts_with('-') {
        j += 1;
        if words[j - 1].text == "--" {
            break;
        }
    }
    j
}

/// pnpm's shell mode (`pnpm -c exec 'CMD'`, `-rc`, `--shell-mode`, before or
/// after `exec`): the command is a string for the shell. Only pnpm's and
/// exec's own options count: `pnpm exec sh -c …` is sh's `-c`.
fn pnpm_shell_mode(c: &Ctx<'_>, at: usize, a: &mut Analysis) -> bool {
    let exec_options = OptionSpec {
        value: &[
            "--filter",
            "-F",
            "--workspace-concurrency",
            "--reporter",
            "-C",
            "--dir",
        ],
        ..OptionSpec::NONE
    };
    let end = options::scan(c.words, at + 1, &exec_options).start;
    let shell_mode = c.words[c.at..end]
        .iter()
        .take_while(|w| w.text != "--")
        .filter(|w| w.text.starts_with('-'))
        .any(|w| {
            w.text == "--shell-mode" || (!w.text.starts_with("--") && w.text[1..].contains('c'))
        });
    if shell_mode {
        let j = operand(c.words, at + 1);
        if j < c.words.len() {
            a.derived
                .push(Derived::Source(join(&c.words[j..], ""), Role::Checked));
        }
    }
    shell_mode
}

/// pnpm runs a command it does not know with `exec`; bun runs one (and
/// `bun run NAME` without such a script) from PATH.
fn pkg_runs_program(c: &Ctx<'_>, at: usize, a: &mut Analysis) -> bool {
    let sub_word = c.words[at].text.as_str();
    let runs_program = match c.name {
        "pnpm" => !PNPM_COMMANDS.contains(&sub_word) && !exec_like(c.name, sub_word),
        "bun" => !BUN_COMMANDS.contains(&sub_word) || sub_word == "run",
        _ => false,
    };
    if !runs_program || a.deep {
        return false;
    }
    let j = if sub_word == "run" {
        operand(c.words, at + 1)
    } else {
        at
    };
    if j < c.words.len() {
        a.derived
            .push(Derived::Words(c.words[j..].to_vec(), Role::Checked));
    }
    true
}

/// What the npm family's `exec` (and `dlx`, `x`), `yarn workspace NAME` and
/// `yarn workspaces foreach` run.
fn npm_sub(c: &Ctx<'_>, at: usize, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    match (c.name, words[at].text.as_str()) {
        (name, w) if exec_like(name, w) => {
            if name == "yarn" && w == "exec" && at + 1 < words.len() {
                // Yarn 2 and later run `yarn exec`'s arguments as a shell script.
                a.derived
                    .push(Derived::Source(join(&words[at + 1..], ""), Role::Checked));
            }
            package_exec(words, at + 1, &EXEC, c.role, a)
        }
        ("yarn", "workspace") if at + 2 < words.len() => {
            let mut ws = vec![words[c.i].clone()];
            ws.extend_from_slice(&words[at + 2..]);
            a.derived.push(Derived::Words(ws, c.role));
            None
        }
        ("yarn", "workspaces") if words.get(at + 1).is_some_and(|w| w.text == "foreach") => {
            let spec = OptionSpec {
                short_value: "j",
                value: &["--jobs", "--from", "--include", "--exclude"],
                flags: &[
                    "-A",
                    "--all",
                    "-R",
                    "--recursive",
                    "-W",
                    "--worktree",
                    "-v",
                    "--verbose",
                    "-p",
                    "--parallel",
                    "-i",
                    "--interlaced",
                    "-t",
                    "--topological",
                    "--topological-dev",
                    "--no-private",
                ],
                ..OptionSpec::NONE
            };
            let j = runner_start(words, at + 2, &spec, a).unwrap_or(words.len());
            if j < words.len() {
                let mut ws = vec![words[c.i].clone()];
                ws.extend_from_slice(&words[j..]);
                a.derived.push(Derived::Words(ws, c.role));
            }
            None
        }
        _ => None,
    }
}

/// `cargo [+toolchain] [OPTIONS] SUB`: an alias from the person's cargo
/// configuration is judged as what it runs; `--config` that defines an
/// alias, names a file, or makes cargo run another program (a runner, a
/// linker, a rustc wrapper) is opaque.
fn cargo(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let texts: Vec<&str> = words[c.at..].iter().map(|w| w.text.as_str()).collect();
    let skip = usize::from(texts.first().is_some_and(|t| t.starts_with('+')));
    let spec = global_options(&["--config", "-Z", "-C", "--color", "--manifest-path"]);
    if let Some(&k) = options::candidates(&texts[skip..], &spec).first() {
        let at = c.at + skip + k;
        if let Some(exp) = c.config.cargo_alias(&words[at].text) {
            let mut ws = words[c.i..at].to_vec();
            ws.extend(exp.iter().map(|e| Word::raw(e)));
            ws.extend_from_slice(&words[at + 1..]);
            a.derived.push(Derived::Words(ws, c.role));
        }
    }
    for j in c.at..words.len() {
        let t = words[j].text.as_str();
        let value = if t == "--config" {
            words.get(j + 1).map(|w| w.text.as_str())
        } else {
            t.strip_prefix("--config=")
        };
        if let Some(v) = value {
            cargo_config(words, v, a);
        }
    }
    None
}

/// One `cargo --config` value.
fn cargo_config(words: &[Word], v: &str, a: &mut Analysis) {
    if v.trim_start().starts_with("alias") || !v.contains('=') {
        a.dynamic =
            Some("`cargo --config` defines an alias or loads configuration from a file".into());
    }
    let runs = v.split_once('=').filter(|(k, _)| {
        let k = k.to_ascii_lowercase();
        k.ends_with("runner") || k.contains("rustc") || k.ends_with("linker")
    });
    if let Some((key, program)) = runs {
        // `target.….runner="rm"`: `cargo run -- ARGS` runs it with ARGS.
        a.dynamic = Some(format!("`cargo --config {key}` runs another program"));
        let program = program.trim().trim_matches(['"', '\'', '[', ']']);
        let mut ws = vec![Word::raw(program)];
        if let Some(d) = words.iter().position(|w| w.text == "--") {
            ws.extend_from_slice(&words[d + 1..]);
        }
        a.derived.push(Derived::Words(ws, Role::Checked));
    }
}

/// The command a package runner runs (`npx vercel deploy`, `npm exec …`,
/// `pnpm dlx …`, `yarn dlx …`, `bunx …`, `python -m twine …`, `uv pip …`), as words, the
/// package's version and scope dropped (`vercel@latest` is `vercel`).
pub(crate) fn runner_target(core: &[String]) -> Option<Vec<String>> {
    let name = core.first()?.as_str();
    let args = &core[1..];
    let runner_opts: &[&str] = &["-p", "--package", "-c", "--call", "--registry", "--cache"];
    let first_positional = |args: &[String], with: &[&str]| {
        options::candidates(args, &global_options(with))
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
        n if n.starts_with("python") => args.iter().position(|a| a == "-m")? + 1,
        // `uv pip install …` is pip's command line.
        "uv" => Some(first_positional(args, &[])?).filter(|&k| args[k] == "pip")?,
        _ => return None,
    };
    let mut words: Vec<String> = args.get(start..)?.to_vec();
    let first = words.first_mut()?;
    if let Some(at) = first.rfind('@').filter(|&k| k > 0) {
        first.truncate(at);
    }
    if let Some(slash) = first.rfind('/') {
        *first = first[slash + 1..].to_string();
    }
    Some(words)
}

/// apt's `-o KEY=VALUE` hooks (`APT::Update::Pre-Invoke`, `DPkg::Post-Invoke`,
/// `DPkg::Pre-Install-Pkgs`, `Acquire::http::Proxy-Auto-Detect`): what they
/// run meets deny rules and caps (the command is opaque already).
fn apt_hooks(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let spec = OptionSpec {
        short_value: "oct",
        value: &["--option", "--config-file"],
        ..OptionSpec::NONE
    };
    for v in options::values(&c.words[c.at..], &spec, &["-o", "--option"]) {
        let Some((key, cmd)) = v.text.split_once('=') else {
            continue;
        };
        let key = key.to_ascii_lowercase();
        let runs = ["invoke", "install-pkgs", "autodetect", "auto-detect"]
            .iter()
            .any(|k| key.contains(k));
        if runs && !cmd.trim().is_empty() {
            a.derived
                .push(Derived::Source(cmd.to_string(), Role::Checked));
        }
    }
    start
}

/// `nix-shell`, `nix develop` and `nix shell` without a command to run
/// (`--run`, `--command`, `-c`) start an interactive shell: it reads its
/// script from standard input.
fn nix_shell(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at.min(c.words.len())..];
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let shell = c.name == "nix-shell"
        || texts
            .iter()
            .find(|t| !t.starts_with('-'))
            .is_some_and(|t| matches!(*t, "develop" | "shell"));
    let command = texts.iter().any(|t| {
        matches!(*t, "-c" | "--command" | "--run")
            || t.starts_with("--command=")
            || t.starts_with("--run=")
    });
    let info = texts
        .iter()
        .any(|t| matches!(*t, "--version" | "--help" | "-h"));
    if shell && !command && !info {
        shell_stdin(c.name, c.redirs, Role::Checked, false, a);
    }
    start
}
