//! Wrappers: programs that run a command given as their operands, with
//! options of their own (`timeout 30 CMD`, `nice -n 5 CMD`, `env X=1 CMD`,
//! `xargs CMD`, `strace -f CMD`). Seen through like `env`
//! (docs/permissions.md, "Shell commands: fragments").

use super::schema::{Args, Ctx, Hooks, Moves, Node, Program, Runs, Writes};
use super::support::{join, runner_start, skip_opts};
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived, Role, Target, Workdir};
use crate::shell::words::Word;

/// A wrapper that runs its operands as a command after `skip` words.
const fn wrapper(options: OptionSpec<'static>, skip: usize) -> Node {
    Node::runs_command(options, skip)
}

/// Options: short letters that take a value, long ones that do, and those
/// known to take none (any other is read both ways).
const fn opts(
    short_value: &'static str,
    value: &'static [&'static str],
    flags: &'static [&'static str],
) -> OptionSpec<'static> {
    OptionSpec {
        short_value,
        glued: "",
        value,
        flags,
        complete: false,
    }
}

/// A program the gate reads fully, that runs its operands.
const fn entry(
    names: &'static [&'static str],
    node: Node,
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node,
        subs: &[],
        args: Args::Read,
        generic_verbs: true,
        takes_command: true,
        canonical: None,
        toolchain: None,
        examples,
    }
}

const TRACE_VALUE: &[&str] = &[
    "--output",
    "--attach",
    "--user",
    "--trace",
    "--signal",
    "--status",
    "--string-limit",
    "--env",
    "--expr",
    "--trace-path",
    "--columns",
    "--align",
    "--library",
    "--config",
    "--indent",
    "--depth",
];

const STRACE: OptionSpec<'static> = opts(
    "abeEIoOpPsSuXU",
    TRACE_VALUE,
    &[
        "-f",
        "-F",
        "-c",
        "-C",
        "-q",
        "-v",
        "-y",
        "-Y",
        "-T",
        "-t",
        "-r",
        "-x",
        "-n",
        "-k",
        "-i",
        "-w",
        "-z",
        "-Z",
        "-d",
        "-D",
        "-h",
        "-V",
        "--follow-forks",
        "--output-separately",
        "--summary-only",
        "--summary",
        "--summary-wall-clock",
        "--syscall-times",
        "--relative-timestamps",
        "--instruction-pointer",
        "--stack-trace",
        "--no-abbrev",
        "--successful-only",
        "--failed-only",
        "--daemonize",
        "--seccomp-bpf",
        "--debug",
        "--help",
        "--version",
    ],
);

const LTRACE: OptionSpec<'static> = opts(
    "aADeFlnopsuwx",
    TRACE_VALUE,
    &[
        "-L",
        "-f",
        "-S",
        "-C",
        "-i",
        "-c",
        "-r",
        "-t",
        "-T",
        "-b",
        "-h",
        "-V",
        "--demangle",
        "--no-signals",
        "--help",
        "--version",
    ],
);

/// GNU parallel's options that take a value (others it has are read both ways).
const PARALLEL: OptionSpec<'static> = OptionSpec {
    short_value: "ajSPIdECnNLsl",
    glued: "",
    value: &[
        "--arg-file",
        "--jobs",
        "--sshlogin",
        "--sshloginfile",
        "--joblog",
        "--delimiter",
        "--colsep",
        "--wd",
        "--workdir",
        "--tmpdir",
        "--results",
        "--max-args",
        "--max-replace-args",
        "--max-chars",
        "--timeout",
        "--retries",
        "--delay",
        "--load",
        "--memfree",
        "--basefile",
        "--return",
        "--transferfile",
        "--tagstring",
        "--env",
        "--header",
        "--semaphorename",
        "--id",
    ],
    flags: &[
        "-k",
        "-q",
        "-u",
        "-v",
        "-X",
        "--keep-order",
        "--quote",
        "--ungroup",
        "--verbose",
        "--will-cite",
        "--dry-run",
        "--progress",
        "--bar",
        "--eta",
        "--tag",
        "--group",
        "--line-buffer",
        "--null",
        "-0",
    ],
    complete: false,
};

/// xargs: `-e[EOF]`, `-i[R]`, `-l[N]` take optional values, attached only.
const XARGS: OptionSpec<'static> = OptionSpec {
    short_value: "adEILnPs",
    glued: "eil",
    value: &[
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
    ],
    flags: &[],
    complete: true,
};

/// util-linux script: `-t[FILE]` takes its file only attached.
pub(crate) const SCRIPT: OptionSpec<'static> = OptionSpec {
    short_value: "cEBIOTmo",
    glued: "t",
    value: &[
        "--command",
        "--echo",
        "--log-io",
        "--log-in",
        "--log-out",
        "--log-timing",
        "--logging-format",
        "--output-limit",
    ],
    flags: &[],
    complete: true,
};

pub(crate) const PROGRAMS: &[Program] = &[
    entry(
        &["command"],
        wrapper(opts("", &[], &["-p", "-v", "-V"]), 0),
        &[("command -p ls -a", "runs `ls -a`")],
    ),
    entry(
        &["builtin", "busybox"],
        wrapper(opts("", &[], &[]), 0),
        &[("busybox rm -f x", "runs `rm -f x`; removes x")],
    ),
    entry(
        &["exec"],
        wrapper(opts("a", &[], &["-c", "-l"]), 0),
        &[("exec -a name cat notes.txt", "runs `cat notes.txt`")],
    ),
    entry(
        &["nohup", "setsid", "unbuffer"],
        wrapper(
            opts(
                "",
                &[],
                &["-c", "-f", "-w", "-p", "--ctty", "--fork", "--wait"],
            ),
            0,
        ),
        &[("setsid -f npm start", "runs `npm start`")],
    ),
    entry(
        &["nice"],
        wrapper(opts("n", &["--adjustment"], &[]), 0),
        &[("nice -n 5 make", "runs `make`")],
    ),
    entry(
        &["timeout"],
        wrapper(
            opts(
                "sk",
                &["--signal", "--kill-after"],
                &[
                    "-f",
                    "-p",
                    "-v",
                    "--foreground",
                    "--preserve-status",
                    "--verbose",
                ],
            ),
            1,
        ),
        &[
            ("timeout -s KILL 30 npm test", "runs `npm test`"),
            ("timeout 5", "plain"),
        ],
    ),
    entry(
        &["stdbuf"],
        wrapper(opts("ioe", &["--input", "--output", "--error"], &[]), 0),
        &[("stdbuf -o L grep x log.txt", "runs `grep x log.txt`")],
    ),
    entry(
        &["ionice"],
        wrapper(
            opts(
                "cnPpu",
                &["--class", "--classdata", "--pid", "--pgid", "--uid"],
                &["-t", "--ignore"],
            ),
            0,
        ),
        &[(
            "ionice -c 3 rsync -a a/ b/",
            "runs `rsync -a a/ b/`; writes b/, b/",
        )],
    ),
    entry(
        &["taskset"],
        wrapper(
            opts(
                "",
                &[],
                &["-a", "-c", "-p", "--all-tasks", "--cpu-list", "--pid"],
            ),
            1,
        ),
        &[("taskset -c 0-1 make -j2", "runs `make -j2`")],
    ),
    entry(
        &["chrt"],
        wrapper(
            opts(
                "TPD",
                &["--sched-runtime", "--sched-period", "--sched-deadline"],
                &[
                    "-a",
                    "-b",
                    "-d",
                    "-e",
                    "-f",
                    "-i",
                    "-o",
                    "-r",
                    "-R",
                    "-m",
                    "-p",
                    "-v",
                    "--all-tasks",
                    "--batch",
                    "--deadline",
                    "--ext",
                    "--fifo",
                    "--idle",
                    "--other",
                    "--rr",
                    "--reset-on-fork",
                    "--max",
                    "--pid",
                    "--verbose",
                ],
            ),
            1,
        ),
        &[("chrt -f 10 make bench", "runs `make bench`")],
    ),
    entry(
        &["strace"],
        Node {
            hooks: Hooks {
                see: Some(trace_output),
                ..Hooks::NONE
            },
            ..wrapper(STRACE, 0)
        },
        &[
            (
                "strace -f -o trace.txt node app.js",
                "runs `node app.js`; writes trace.txt",
            ),
            (
                "strace -o '|rm -rf /home' true",
                "runs `true`; runs 'rm -rf /home'",
            ),
        ],
    ),
    entry(
        &["ltrace"],
        Node {
            hooks: Hooks {
                see: Some(trace_output),
                ..Hooks::NONE
            },
            ..wrapper(LTRACE, 0)
        },
        &[("ltrace -e malloc ls -l", "runs `ls -l`")],
    ),
    entry(
        &["caffeinate"],
        wrapper(opts("tw", &[], &["-d", "-i", "-m", "-s", "-u"]), 0),
        &[("caffeinate -i -t 60 make", "runs `make`")],
    ),
    entry(
        &["xvfb-run"],
        wrapper(
            opts(
                "nsfepw",
                &[
                    "--server-num",
                    "--server-args",
                    "--auth-file",
                    "--error-file",
                    "--xauth-protocol",
                    "--wait",
                ],
                &["-a", "--auto-servernum"],
            ),
            0,
        ),
        &[("xvfb-run -a -s -ac cargo test", "runs `cargo test`")],
    ),
    entry(
        &["dbus-run-session"],
        wrapper(opts("", &["--config-file", "--dbus-daemon"], &[]), 0),
        &[(
            "dbus-run-session -- gnome-keyring-daemon --unlock",
            "runs `gnome-keyring-daemon --unlock`",
        )],
    ),
    entry(
        &["valgrind"],
        wrapper(opts("", &[], &["-q", "--quiet", "-v"]), 0),
        &[("valgrind -q node app.js", "runs `node app.js`")],
    ),
    Program {
        generic_verbs: false,
        ..entry(
            &["env"],
            Node {
                hooks: Hooks {
                    see: Some(env),
                    ..Hooks::NONE
                },
                ..Node::NONE
            },
            &[
                ("env X=1 GIT_DIR=.git git status", "runs `git status`"),
                ("env -C src ls", "runs `ls`; cwd src"),
                ("env -S 'rm -rf /home'", "runs 'rm -rf /home'"),
                ("env", "plain"),
            ],
        )
    },
    Program {
        generic_verbs: false,
        ..entry(
            &["time"],
            Node {
                hooks: Hooks {
                    see: Some(time),
                    ..Hooks::NONE
                },
                ..Node::NONE
            },
            &[
                ("time -p make", "runs `make`"),
                ("time -50 cmd", "opaque; runs `cmd`"),
            ],
        )
    },
    entry(
        &["flock"],
        Node {
            hooks: Hooks {
                see: Some(flock),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        &[
            ("flock /tmp/l make", "runs `make`"),
            ("flock /tmp/l -c 'rm -rf /home'", "runs 'rm -rf /home'"),
        ],
    ),
    entry(
        &["xargs"],
        Node {
            options: XARGS,
            hooks: Hooks {
                see: Some(xargs),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        &[
            ("xargs -n 1 wc -l", "runs `wc -l`"),
            ("xargs -I{} git {}", "runs `git {}`"),
        ],
    ),
    Program {
        takes_command: false,
        ..entry(
            &["coproc"],
            Node {
                runs: &[Runs::Next],
                ..Node::NONE
            },
            &[("coproc cat", "runs `cat`")],
        )
    },
    Program {
        generic_verbs: false,
        ..entry(
            &["watch"],
            Node {
                options: OptionSpec {
                    short_value: "dnq",
                    value: &["--differences", "--interval", "--equexit"],
                    complete: true,
                    ..OptionSpec::NONE
                },
                runs: &[Runs::Line { skip: 0 }],
                ..Node::NONE
            },
            &[("watch -n 5 git status", "runs 'git status'")],
        )
    },
    entry(
        &["parallel"],
        Node {
            options: PARALLEL,
            moves: Moves::to(&["--wd", "--workdir"]),
            hooks: Hooks {
                see: Some(parallel),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        &[("parallel gzip ::: a b", "runs `gzip`; runs 'gzip'")],
    ),
    entry(
        &["eval"],
        Node {
            hooks: Hooks {
                see: Some(eval),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        &[(
            "eval 'git push'",
            "opaque; runs `git push`; runs 'git push'",
        )],
    ),
    Program {
        takes_command: false,
        ..entry(
            &["trap"],
            Node {
                hooks: Hooks {
                    see: Some(trap),
                    ..Hooks::NONE
                },
                ..Node::NONE
            },
            &[("trap 'rm -rf x' EXIT", "runs 'rm -rf x'")],
        )
    },
    entry(
        &["script"],
        Node {
            options: SCRIPT,
            runs: &[Runs::OptionLine(&["-c", "--command"])],
            writes: &[Writes::OptionValue(&[
                "-B",
                "-I",
                "-O",
                "-T",
                "-t",
                "--log-io",
                "--log-in",
                "--log-out",
                "--log-timing",
            ])],
            hooks: Hooks {
                see: Some(script),
                writes: Some(script_file),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        &[
            (
                "script -q -c 'make test' log.txt",
                "runs 'make test'; writes log.txt",
            ),
            ("script -q", "opaque; writes typescript"),
        ],
    ),
];

/// `strace -o '|CMD'` (or `!CMD`) pipes the trace into CMD; any other `-o`
/// value is a file it writes.
fn trace_output(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let spec = if c.name == "strace" { STRACE } else { LTRACE };
    let opts = &c.words[c.at..start.unwrap_or(c.words.len())];
    for v in options::values(opts, &spec, &["-o", "--output"]) {
        match v.text.strip_prefix(['|', '!']) {
            Some(cmd) => a
                .derived
                .push(Derived::Source(cmd.to_string(), Role::Checked)),
            None => a.own_writes.push(Target::new(&v.text, opts[v.at].dynamic)),
        }
    }
    start
}

/// Bash's `time` keyword knows only `-p`: `time -50 cmd` runs `-50`, while
/// /usr/bin/time (after `env`, say) reads `-f FMT`. Which one runs depends on
/// where the word stands, so any other option asks.
fn time(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let first = c.words.get(c.at).map(|w| w.text.as_str());
    if first.is_some_and(|t| t.starts_with('-') && t != "-p" && t != "--") {
        a.dynamic = Some(
            "`time` with an option other than -p: bash's keyword and /usr/bin/time read it differently"
                .into(),
        );
    }
    Some(skip_opts(c.words, c.at, "fo", &["--format", "--output"]))
}

/// `flock [OPTIONS] FILE COMMAND…` or `flock FILE -c STRING`.
fn flock(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let short = "wEc";
    let long = ["--timeout", "--wait", "--conflict-exit-code", "--command"];
    let mut j = c.at;
    let mut file_seen = false;
    while j < words.len() {
        let t = words[j].text.as_str();
        let cmd = if t == "-c" || t == "--command" {
            words.get(j + 1).map(|w| w.text.clone())
        } else {
            t.strip_prefix("--command=").map(str::to_string)
        };
        if let Some(cmd) = cmd {
            a.derived.push(Derived::Source(cmd, Role::Checked));
            return None;
        }
        if t == "--" {
            // After `--`: the file (unless it came before), then the command.
            let at = if file_seen { j + 1 } else { j + 2 };
            return (at < words.len()).then_some(at);
        }
        if t.starts_with('-') && t.len() > 1 {
            j = skip_opts(words, j, short, &long).max(j + 1);
            continue;
        }
        if file_seen {
            return Some(j);
        }
        file_seen = true;
        j += 1;
    }
    None
}

/// `xargs [OPTIONS] CMD…`: CMD runs with words appended; `-I R` (`-iR`,
/// `--replace=R`): words holding R are filled in when it runs (`xargs -I{}
/// git {}` may run any sub-command).
fn xargs(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let j = options::scan(words, c.at, &XARGS).start;
    let opts = &words[c.at..j];
    let mut replace: Vec<String> = options::values(opts, &XARGS, &["-I", "-i"])
        .into_iter()
        .map(|v| v.text)
        .collect();
    if options::flagged(opts, &XARGS, &["-i", "--replace"]) && replace.is_empty() {
        replace.push("{}".into());
    }
    for w in opts {
        if let Some(r) = w.text.strip_prefix("--replace=") {
            replace.push(r.to_string());
        }
    }
    if j < words.len() && !a.deep {
        let filled: Vec<Word> = words[j..]
            .iter()
            .map(|w| {
                let mut w = w.clone();
                w.dynamic |= replace
                    .iter()
                    .any(|r| !r.is_empty() && w.text.contains(r.as_str()));
                w
            })
            .collect();
        a.derived.push(Derived::Words(filled, c.role));
    }
    Some(j)
}

/// `parallel [OPTIONS] CMD … ::: ARGS`: the command line (run by a shell)
/// gets the arguments appended, from `:::`, files or input.
fn parallel(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let start = runner_start(words, c.at, &PARALLEL, a);
    let opts = &words[c.at..start.unwrap_or(words.len())];
    for v in options::values(opts, &PARALLEL, &["--wd", "--workdir"]) {
        a.move_to(Workdir::At(v.text));
    }
    if let Some(j) = start {
        let end = words[j..]
            .iter()
            .position(|w| w.text.starts_with("::::") || w.text.starts_with(":::"))
            .map_or(words.len(), |k| j + k);
        if end > j {
            a.derived
                .push(Derived::Words(words[j..end].to_vec(), c.role));
            let line: Vec<&str> = words[j..end].iter().map(|w| w.text.as_str()).collect();
            a.derived
                .push(Derived::Source(line.join(" "), Role::Checked));
            return None;
        }
    }
    parallel_without_command(&words[start.unwrap_or(words.len())..], a);
    None
}

/// GNU parallel with no command runs each input as a command: the
/// arguments after `:::` are command strings; from `::::` files or
/// standard input they are only known when it runs (opaque).
fn parallel_without_command(rest: &[Word], a: &mut Analysis) {
    let mut from_args = false;
    for w in rest {
        let t = w.text.as_str();
        if t.starts_with("::::") {
            from_args = false;
            a.dynamic = Some("`parallel` runs the lines of a file as commands".into());
        } else if t.starts_with(":::") {
            from_args = true;
        } else if from_args && !t.trim().is_empty() {
            a.derived
                .push(Derived::Source(t.to_string(), Role::Checked));
        }
    }
    if !rest.iter().any(|w| w.text.starts_with(":::")) {
        a.dynamic = Some("`parallel` runs the lines of its input as commands".into());
    }
}

/// `eval ARGS…` runs its arguments joined as a string: opaque, and deny
/// rules, ask rules and caps also see `eval A B` as `A B`.
fn eval(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    a.dynamic = Some("`eval` runs a string as a command".into());
    if !a.deep {
        let s = join(&c.words[c.at..], "");
        if !s.trim().is_empty() {
            a.derived.push(Derived::Source(s, Role::Checked));
        }
    }
    let j = skip_opts(c.words, c.at, "", &[]);
    (j < c.words.len()).then_some(j)
}

/// `trap 'CMD' SIGNAL` runs CMD later.
fn trap(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let j = skip_opts(c.words, c.at, "", &[]);
    if let Some(w) = c.words.get(j) {
        if w.text != "-" && !w.text.is_empty() {
            a.derived
                .push(Derived::Source(w.text.clone(), Role::Checked));
        }
    }
    None
}

/// `script` without `-c` starts a shell that reads standard input.
fn script(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let commands = options::values(&c.words[c.at..], &SCRIPT, &["-c", "--command"]);
    if commands.is_empty() {
        super::support::shell_stdin(c.name, c.redirs, Role::Checked, false, a);
    }
    start
}

/// The typescript (`typescript` unless named) and `--timing=FILE`.
fn script_file(v: &super::schema::Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    for (k, a) in args.iter().enumerate() {
        if let Some(f) = a.strip_prefix("--timing=") {
            out.push(Target::new(f, v.dyn_arg(k)));
        }
    }
    match options::operands(args, &SCRIPT).first() {
        Some(&k) => out.push(Target::new(&args[k], v.dyn_arg(k))),
        None => out.push(Target::new("typescript", false)),
    }
}

/// GNU env's long options (without the dashes).
const ENV_LONG: &[&str] = &[
    "ignore-environment",
    "null",
    "unset",
    "chdir",
    "split-string",
    "block-signal",
    "default-signal",
    "ignore-signal",
    "list-signal-handling",
    "debug",
    "help",
    "version",
    "argv0",
];

/// `env [OPTIONS] [NAME=VALUE]… COMMAND`; `-S STRING` is split and run.
fn env(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let mut j = c.at;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "--" {
            j += 1;
            break;
        }
        let step = if t.starts_with("--") {
            env_long(words, j, a)
        } else if t.starts_with('-') && t.len() > 1 {
            env_short(words, j, a)
        } else if t == "-" {
            // A lone `-` is `-i`.
            Some(1)
        } else {
            break;
        };
        match step {
            Some(n) => j += n,
            None => return None,
        }
    }
    // env takes any word holding `=` as an assignment (`BASH_FUNC_ls%%=…`).
    let first = j;
    while j < words.len() && words[j].text.find('=').is_some_and(|k| k > 0) {
        j += 1;
    }
    super::variables::assignments(words[first..j].iter(), Role::Checked, a);
    Some(j)
}

/// One of GNU env's long options (or a unique abbreviation of one, `--ch=/`)
/// at `words[j]`: how many words it takes, or `None` when it runs a string.
fn env_long(words: &[Word], j: usize, a: &mut Analysis) -> Option<usize> {
    let long = &words[j].text[2..];
    let (name, attached) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    let matching: Vec<&str> = ENV_LONG
        .iter()
        .copied()
        .filter(|l| l.starts_with(name))
        .collect();
    let full = if ENV_LONG.contains(&name) {
        Some(name)
    } else if matching.len() == 1 && !name.is_empty() {
        Some(matching[0])
    } else {
        None
    };
    let takes_value = matches!(full, Some("unset" | "chdir" | "split-string" | "argv0"));
    let value = match (takes_value, attached) {
        (true, Some(v)) => Some(v.to_string()),
        (true, None) => words.get(j + 1).map(|w| w.text.clone()),
        (false, _) => None,
    };
    match full {
        Some("split-string") => {
            let after = if attached.is_some() { j + 1 } else { j + 2 };
            let rest = join(&words[after.min(words.len())..], "");
            let line = env_split_line(&value.unwrap_or_default(), &rest, a);
            a.derived.push(Derived::Source(line, Role::Checked));
            return None;
        }
        Some("chdir") => {
            if let Some(d) = value {
                a.move_to(Workdir::At(d));
            }
        }
        Some(_) => {}
        None => {
            // An ambiguous abbreviation or an option of another env:
            // where the command starts is not known.
            a.dynamic = Some(format!(
                "`env --{name}`: an option the gate does not know, so where the command starts is not known"
            ));
        }
    }
    Some(if takes_value && attached.is_none() {
        2
    } else {
        1
    })
}

/// A cluster of env's short options (`-iu NAME`, `-iS'…'`) at `words[j]`:
/// `u`, `C`, `S`, `a` (argv0) and `P` (BSD's search path) take a value, the
/// rest of the cluster or the next word; a letter the gate does not know
/// makes the start unknown. How many words it takes, or `None` when it runs
/// a string.
fn env_short(words: &[Word], j: usize, a: &mut Analysis) -> Option<usize> {
    let t = words[j].text.as_str();
    if let Some(s) = t.strip_prefix("-S") {
        let (s, consumed) = if s.is_empty() {
            (words.get(j + 1).map(|w| w.text.clone()), 2)
        } else {
            (Some(s.to_string()), 1)
        };
        let rest = join(&words[(j + consumed).min(words.len())..], "");
        let line = env_split_line(&s.unwrap_or_default(), &rest, a);
        a.derived.push(Derived::Source(line, Role::Checked));
        return None;
    }
    let mut consumed = 1;
    for (pos, c) in t[1..].char_indices() {
        if !matches!(c, 'i' | '0' | 'v' | 'u' | 'C' | 'S' | 'a' | 'P') {
            a.dynamic = Some(format!(
                "`env -{c}`: an option the gate does not know, so where the command starts is not known"
            ));
        }
        if matches!(c, 'u' | 'C' | 'S' | 'a' | 'P') {
            let rest = &t[1 + pos + 1..];
            let value = if rest.is_empty() {
                consumed = 2;
                words.get(j + 1).map(|w| w.text.clone())
            } else {
                Some(rest.to_string())
            };
            if let Some(d) = value.clone().filter(|_| c == 'C') {
                a.move_to(Workdir::At(d));
            }
            if c == 'S' {
                let rest = join(&words[(j + consumed).min(words.len())..], "");
                let line = env_split_line(&value.unwrap_or_default(), &rest, a);
                a.derived.push(Derived::Source(line, Role::Checked));
                return None;
            }
            break;
        }
    }
    Some(consumed)
}

/// The command line `env -S STRING REST…` runs, as the shell reads it: env's own
/// escapes are applied where they change words (`\_` is a space, a `#` starting a
/// word ends the string, before REST is appended). A string with any escape,
/// comment or variable is opaque too: env's reading is not bash's.
fn env_split_line(s: &str, rest: &str, a: &mut Analysis) -> String {
    if s.contains(['\\', '#', '$']) {
        a.dynamic = Some(
            "`env -S` with escapes, comments or variables: env splits the string its own way"
                .into(),
        );
    }
    let mut line = String::new();
    let mut chars = s.chars().peekable();
    let mut word_start = true;
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'_') {
            chars.next();
            line.push(' ');
            word_start = true;
            continue;
        }
        // `\c` ends the string (`rm -rf /home/\cx` runs `rm -rf /home/`).
        if (c == '#' && word_start) || (c == '\\' && chars.peek() == Some(&'c')) {
            break;
        }
        word_start = c.is_whitespace();
        line.push(c);
    }
    if !rest.is_empty() {
        line.push(' ');
        line.push_str(rest);
    }
    line
}
