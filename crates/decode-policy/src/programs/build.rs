//! Build tools: `make`, `cmake`, the C compilers and `rustc`/`go`, maven and
//! gradle, and the task runners (`just`, `rake`…) that run the project's own
//! scripts — `make deploy` is not a deploy by itself (settings `caps.external`
//! can make it one). What they run (`make SHELL=…`, `cmake -E`, `gcc
//! -wrapper`) and where they write (`-o`) (docs/permissions.md, "Fail
//! closed").

use super::schema::{Args, Argv, Ctx, Hooks, Node, Program, Writes};
use super::support::{is_assignment, run_string};
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived, Role, Target, Workdir};
use crate::shell::words::Word;

const MAKE: OptionSpec<'static> = OptionSpec {
    short_value: "CEfIjlOoW",
    glued: "",
    value: &[
        "--directory",
        "--eval",
        "--file",
        "--makefile",
        "--include-dir",
        "--jobs",
        "--load-average",
        "--old-file",
        "--assume-old",
        "--what-if",
        "--new-file",
        "--assume-new",
        "--output-sync",
    ],
    flags: &[],
    complete: true,
};

const COMPILER: Node = Node {
    hooks: Hooks {
        writes: Some(compiler_writes),
        ..Hooks::NONE
    },
    ..Node::NONE
};

/// Goals and tasks, any of which may publish.
const GOALS: Node = Node {
    hooks: Hooks {
        effect: Some(goals),
        ..Hooks::NONE
    },
    ..Node::NONE
};

/// Task runners: they run the project's own scripts.
const TASK_RUNNERS: &[&str] = &[
    "just", "task", "rake", "invoke", "inv", "nox", "tox", "gulp", "grunt", "mage", "ninja",
    "scons", "meson",
];

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        names: &["make", "gmake"],
        node: Node {
            options: MAKE,
            hooks: Hooks {
                see: Some(make),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("make deploy", "plain"),
            ("make SHELL=/tmp/x test", "runs '/tmp/x'"),
            ("make --eval '$(shell rm -rf x)'", "opaque; runs 'rm -rf x'"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["cmake"],
        node: Node {
            hooks: Hooks {
                see: Some(cmake),
                ..Hooks::NONE
            },
            options: OptionSpec {
                value: &["--prefix"],
                ..OptionSpec::NONE
            },
            // `cmake --install build --prefix DIR`.
            writes: &[Writes::Into {
                options: &["--prefix"],
                flags: &[],
            }],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("cmake --install build --prefix ~/.local", "writes ~/.local"),
            ("cmake -E chdir build make", "runs `make`; cwd build"),
            ("cmake -E remove_directory /home", "runs `rm -rf /home`"),
            ("cmake --build .", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["cc", "gcc", "clang", "g++", "c++", "clang++"],
        node: Node {
            hooks: Hooks {
                see: Some(compiler_wrapper),
                writes: Some(compiler_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        examples: &[
            ("gcc -o bin/a a.c", "writes bin/a"),
            ("gcc -wrapper rm,-rf,/home a.c", "runs `rm -rf /home`"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["ld", "rustc", "go"],
        node: COMPILER,
        examples: &[("rustc -o out main.rs", "writes out")],
        ..Program::BASE
    },
    Program {
        names: &["mvn", "mvnw", "gradle", "gradlew"],
        node: GOALS,
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("mvn clean deploy", "external mvn deploy"),
            ("gradlew publish", "external gradlew publish"),
            ("mvn test", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["ant", "sbt"],
        node: GOALS,
        generic_verbs: false,
        examples: &[("sbt publish", "external sbt publish")],
        ..Program::BASE
    },
    Program {
        names: TASK_RUNNERS,
        node: Node {
            hooks: Hooks {
                see: Some(task_runner),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("just deploy", "plain"),
            ("just -d ~/other release", "opaque"),
            ("ninja -C build", "plain"),
        ],
        ..Program::BASE
    },
];

/// `make SHELL=…` (the program make runs recipes with) and `--eval TEXT`
/// (makefile text, which may run `$(shell …)`).
fn make(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let elsewhere = options::values(
        &c.words[c.at..],
        &MAKE,
        &[
            "-C",
            "--directory",
            "-f",
            "--file",
            "--makefile",
            "-I",
            "--include-dir",
        ],
    )
    .into_iter()
    .any(|v| outside(&v.text, c.words[c.at + v.at].dynamic));
    if elsewhere {
        a.dynamic = Some(RUNNER_ELSEWHERE.replace("{}", c.name));
    }
    for v in options::values(&c.words[c.at..], &MAKE, &["-E", "--eval"]) {
        a.dynamic = Some("`make --eval` runs makefile text given on the command line".into());
        // Its `$(shell CMD)` calls meet the deny rules and caps.
        for cmd in make_shell_calls(&v.text) {
            a.derived.push(Derived::Source(cmd, Role::Checked));
        }
    }
    for w in &c.words[c.at..] {
        let Some((name, v)) = make_assignment(&w.text) else {
            continue;
        };
        if super::variables::install_folder(name) && !v.is_empty() {
            // `make install PREFIX=~/.local`: the project's install rule
            // writes there.
            a.own_writes
                .extend(super::variables::install_target(v, w.dynamic));
        } else if name == "SHELL" {
            let mut v2 = w.clone();
            v2.text = v.to_string();
            run_string(&v2, c.role, "`make SHELL=…`", a);
        } else if name == ".SHELLFLAGS" {
            // Recipes run as `$(SHELL) $(.SHELLFLAGS) RECIPE`: the flags
            // may hold a command (`-c 'sudo id'`).
            a.dynamic = Some("`make .SHELLFLAGS=…` changes how every recipe runs".into());
            let cmd = v
                .split_whitespace()
                .skip_while(|t| t.starts_with('-'))
                .collect::<Vec<_>>()
                .join(" ");
            if !cmd.is_empty() {
                a.derived.push(Derived::Source(cmd, Role::Checked));
            }
        }
    }
    None
}

/// A task runner runs the project's own scripts; pointed at a folder or a
/// file outside the project (`make -C ~/x release`, `just -d /srv`), it runs
/// scripts the gate has no reason to trust.
const RUNNER_ELSEWHERE: &str =
    "`{}` runs the tasks of a folder or file that may lie outside the project (an absolute, home or `..` path, or one only known when it runs)";

/// A path that may lie outside the project: absolute, in the home folder,
/// climbing with `..`, or only known when the command runs.
fn outside(path: &str, dynamic: bool) -> bool {
    dynamic || path.starts_with(['/', '~']) || path.split('/').any(|p| p == "..")
}

/// Task runners' options naming where their tasks come from (`just -d DIR`,
/// `--justfile F`, `task -d DIR`, `rake -f F`, `ninja -C DIR`, `meson -C`).
fn task_runner(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    const WHERE: &[&str] = &[
        "-d",
        "--working-directory",
        "--justfile",
        "-f",
        "--file",
        "--taskfile",
        "--dir",
        "--directory",
        "-C",
        "--rakefile",
        "--noxfile",
        "-c",
        "--gulpfile",
        "--gruntfile",
    ];
    let spec = OptionSpec {
        value: WHERE,
        ..OptionSpec::NONE
    };
    let args = &c.words[c.at.min(c.words.len())..];
    if options::values(args, &spec, WHERE)
        .into_iter()
        .any(|v| outside(&v.text, args[v.at].dynamic))
    {
        a.dynamic = Some(RUNNER_ELSEWHERE.replace("{}", c.name));
    }
    start
}

/// A make variable assignment on the command line (`NAME=V`, `NAME:=V`,
/// `NAME::=V`, `NAME+=V`, `NAME?=V`, `NAME!=V`): its name and value.
fn make_assignment(text: &str) -> Option<(&str, &str)> {
    let (head, v) = text.split_once('=')?;
    let name = head.trim_end_matches([':', '+', '?', '!']).trim();
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some((name, v))
}

/// The commands of make's `$(shell CMD)` and `${shell CMD}` calls in `text`.
fn make_shell_calls(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [("$(shell ", ')'), ("${shell ", '}')] {
        let mut rest = text;
        while let Some(at) = rest.find(open) {
            let body = &rest[at + open.len()..];
            let opener = if close == ')' { '(' } else { '{' };
            let mut depth = 1;
            let mut end = body.len();
            for (k, ch) in body.char_indices() {
                if ch == opener {
                    depth += 1;
                } else if ch == close {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
            }
            out.push(body[..end].to_string());
            rest = &body[end..];
        }
    }
    out
}

/// `cmake -E chdir DIR CMD…`, `env … CMD…`, `time CMD…` run CMD;
/// `remove_directory DIR…` removes like `rm -rf`. Any other cmake is a
/// program whose words the gate does not read.
fn cmake(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    if words.get(c.at).map(|w| w.text.as_str()) != Some("-E") {
        super::unknown::see(c, a);
        return start;
    }
    let at = c.at + 2;
    match words.get(c.at + 1).map(|w| w.text.as_str()) {
        Some("chdir") if at + 1 < words.len() => {
            a.move_to(Workdir::At(words[at].text.clone()));
            Some(at + 1)
        }
        Some("env") => {
            let mut j = at;
            while j < words.len()
                && (words[j].text.starts_with("--") || is_assignment(&words[j].text))
            {
                j += 1;
            }
            (j < words.len()).then_some(j)
        }
        Some("time") => (at < words.len()).then_some(at),
        Some("remove_directory" | "rm") => {
            let mut ws = vec![Word::raw("rm"), Word::raw("-rf")];
            ws.extend(
                words[at..]
                    .iter()
                    .filter(|w| !w.text.starts_with('-'))
                    .cloned(),
            );
            a.derived.push(Derived::Words(ws, Role::Checked));
            None
        }
        _ => None,
    }
}

/// `-wrapper PROG,ARGS` runs each compiler pass under PROG.
fn compiler_wrapper(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    for (k, w) in c.words.iter().enumerate().skip(c.at) {
        if w.text == "-wrapper" {
            if let Some(list) = c.words.get(k + 1) {
                let ws: Vec<Word> = list.text.split(',').map(Word::raw).collect();
                a.derived.push(Derived::Words(ws, Role::Checked));
            }
        }
    }
    start
}

/// Compilers read no clusters: `-o F`, `-oF`, `--output F`, `-MF F`, and
/// the linker's own `-o FILE` (`-Wl,-o,FILE`).
fn compiler_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    for (k, a) in args.iter().enumerate() {
        if matches!(a.as_str(), "-o" | "--out" | "--output" | "-MF") && k + 1 < args.len() {
            out.push(Target::new(&args[k + 1], v.dyn_arg(k + 1)));
        } else if let Some(x) = a
            .strip_prefix("-o")
            .or_else(|| a.strip_prefix("--output="))
            .or_else(|| a.strip_prefix("--out="))
            .or_else(|| a.strip_prefix("-MF"))
            .filter(|x| !x.is_empty())
        {
            out.push(Target::new(x, v.dyn_arg(k)));
        } else if let Some(list) = a.strip_prefix("-Wl,") {
            let parts: Vec<&str> = list.split(',').collect();
            for (p, w) in parts.iter().enumerate() {
                if let Some(f) = parts.get(p + 1).filter(|_| *w == "-o" || *w == "--output") {
                    out.push(Target::new(f, v.dyn_arg(k)));
                } else if let Some(f) = w.strip_prefix("--output=") {
                    out.push(Target::new(f, v.dyn_arg(k)));
                }
            }
        }
    }
}

/// maven's and gradle's goals and tasks (and ant's, sbt's): any of them
/// named `push`, `publish`, `deploy` or `upload` (`mvn clean deploy`,
/// `deploy:deploy-file`), gradle's generated `publish…` tasks, or one only
/// known when it runs.
fn goals(v: &Argv<'_>) -> Option<String> {
    let name = v.name();
    for (k, x) in v.args().iter().enumerate() {
        if x.starts_with('-') {
            continue;
        }
        let task = x.rsplit(':').next().unwrap_or(x);
        let plugin = x.split(':').next().unwrap_or(x);
        // Gradle's generated tasks: `publishAllPublicationsTo…`, `publishPlugins`.
        let gradle_publish = name.starts_with("gradle") && task.starts_with("publish");
        if super::schema::PUBLISH_WORDS.contains(&task)
            || gradle_publish
            || (x.contains(':') && super::schema::PUBLISH_WORDS.contains(&plugin))
            || v.dyn_arg(k)
        {
            return Some(format!("{name} {x}"));
        }
    }
    None
}
