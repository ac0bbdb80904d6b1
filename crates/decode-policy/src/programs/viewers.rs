//! Editors, pagers, debuggers and database shells: programs whose own
//! command language can run shell commands and write files (`vim -c
//! '!CMD'`, `less +!CMD`, `gdb -ex 'shell CMD'`, `lldb -o 'platform shell
//! CMD'`, `emacs --eval`, `sqlite3 db '.shell CMD'`, `psql -c '\! CMD'`,
//! `dc -e '!CMD'`, `ed`'s commands on its standard input).
//! Such a script, given by an option, a file or a `+CMD` word, makes the
//! command opaque (docs/permissions.md, "Fail closed"); opening a file
//! (`vim f`, `less f`, `gdb ./prog`) stays an ordinary local command.

use super::schema::{Ctx, Hooks, Node, Program, Runs, Writes};
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived, Role};

/// vim's options that take a value.
const VIM: OptionSpec<'static> = OptionSpec {
    short_value: "cSuUiTwWsrtq",
    glued: "",
    value: &[
        "--cmd",
        "--startuptime",
        "--servername",
        "--remote",
        "--remote-send",
        "--remote-expr",
        "--remote-silent",
        "--remote-wait",
        "--remote-wait-silent",
        "--remote-tab",
        "--listen",
    ],
    flags: &["--version", "--help", "-h", "-e", "-E", "-es", "-Es"],
    complete: false,
};

/// gdb's options (it takes `-ex` and `--ex` alike).
const GDB: OptionSpec<'static> = OptionSpec {
    short_value: "xpcds",
    glued: "",
    value: &[
        "-ex",
        "--ex",
        "-eval-command",
        "--eval-command",
        "-iex",
        "--iex",
        "-init-eval-command",
        "--init-eval-command",
        "-x",
        "--x",
        "-command",
        "--command",
        "-ix",
        "--ix",
        "-init-command",
        "--init-command",
        "--pid",
        "--core",
        "--cd",
        "--directory",
        "--data-directory",
        "--args",
    ],
    flags: &[
        "--batch",
        "-batch",
        "--version",
        "--help",
        "-q",
        "--quiet",
        "-nx",
        "--nx",
    ],
    complete: false,
};

/// lldb's options.
const LLDB: OptionSpec<'static> = OptionSpec {
    short_value: "oOksSKapcfL",
    glued: "",
    value: &[
        "--one-line",
        "--one-line-before-file",
        "--one-line-on-crash",
        "--source",
        "--source-before-file",
        "--source-on-crash",
        "--attach-pid",
        "--attach-name",
        "--core",
        "--file",
        "--arch",
    ],
    flags: &[
        "--batch",
        "-b",
        "--version",
        "--help",
        "-h",
        "-Q",
        "--source-quietly",
    ],
    complete: false,
};

/// less's options that take a value.
const LESS: OptionSpec<'static> = OptionSpec {
    short_value: "bhjkoOpPtTxyz#",
    glued: "",
    value: &[
        "--lesskey-file",
        "--lesskey-src",
        "--lesskey-content",
        "--log-file",
        "--LOG-FILE",
        "--pattern",
        "--prompt",
        "--tag",
        "--tag-file",
        "--tabs",
        "--shift",
        "--window",
        "--max-back-scroll",
        "--max-forw-scroll",
    ],
    flags: &["--version", "--help"],
    complete: false,
};

/// emacs's options (it takes `-eval` and `--eval` alike).
const EMACS: OptionSpec<'static> = OptionSpec {
    short_value: "lfLdte",
    glued: "",
    value: &[
        "--eval",
        "-eval",
        "--execute",
        "-execute",
        "--funcall",
        "-funcall",
        "--load",
        "-load",
        "--script",
        "-script",
        "-scriptload",
        "--directory",
        "--chdir",
        "--socket-name",
        "--server-file",
    ],
    flags: &[
        "--batch",
        "-batch",
        "--version",
        "--help",
        "-Q",
        "-q",
        "-nw",
    ],
    complete: false,
};

/// gdb's commands that only run or inspect the program debugged (`gdb
/// -batch -ex run -ex bt ./app`).
const GDB_PLAIN: &[&str] = &[
    "run",
    "r",
    "start",
    "bt",
    "backtrace",
    "where",
    "info",
    "i",
    "frame",
    "f",
    "up",
    "down",
    "list",
    "l",
    "break",
    "b",
    "tbreak",
    "continue",
    "c",
    "next",
    "n",
    "step",
    "s",
    "stepi",
    "nexti",
    "finish",
    "quit",
    "q",
    "kill",
    "disassemble",
];

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        names: &[
            "vim", "vi", "nvim", "ex", "view", "vimdiff", "nvimdiff", "rvim", "rview", "gvim",
            "gview", "evim", "vimx", "nex", "nvi",
        ],
        node: Node {
            options: VIM,
            runs: &[Runs::Script {
                opts: &["-c", "--cmd", "--remote-send", "--remote-expr"],
                files: &["-S", "-u", "-U", "-s"],
                plus: true,
                plain: &[],
            }],
            writes: &[Writes::OptionValue(&["-w", "-W", "--startuptime"])],
            hooks: Hooks {
                see: Some(ex_mode),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("vim -c '!rm -rf x' f", "opaque; runs 'rm -rf x'"),
            ("vi '+!id' f", "opaque; runs 'id'"),
            ("nvim -c 'silent !id'", "opaque; runs 'id'"),
            ("vim -S evil.vim", "opaque"),
            ("vim +10 f", "plain"),
            ("vim -u NONE f", "plain"),
            ("vim --version", "plain"),
            ("vim -es f", "opaque"),
            ("ex f", "opaque"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["gdb", "gdb-multiarch", "cgdb", "gdbtui"],
        node: Node {
            options: GDB,
            runs: &[Runs::Script {
                opts: &[
                    "-ex",
                    "--ex",
                    "-eval-command",
                    "--eval-command",
                    "-iex",
                    "--iex",
                    "-init-eval-command",
                    "--init-eval-command",
                ],
                files: &[
                    "-x",
                    "--x",
                    "-command",
                    "--command",
                    "-ix",
                    "--ix",
                    "-init-command",
                    "--init-command",
                ],
                plus: false,
                plain: GDB_PLAIN,
            }],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("gdb -batch -ex 'shell rm -rf x'", "opaque; runs 'rm -rf x'"),
            ("gdb -ex '!id'", "opaque; runs 'id'"),
            ("gdb -x cmds ./a.out", "opaque"),
            ("gdb ./a.out", "plain"),
            ("gdb -batch -ex run -ex bt ./app", "plain"),
            ("gdb -batch -ex 'print system(\"id\")' ./app", "opaque"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["lldb"],
        node: Node {
            options: LLDB,
            runs: &[Runs::Script {
                opts: &[
                    "-o",
                    "--one-line",
                    "-O",
                    "--one-line-before-file",
                    "-k",
                    "--one-line-on-crash",
                ],
                files: &[
                    "-s",
                    "--source",
                    "-S",
                    "--source-before-file",
                    "-K",
                    "--source-on-crash",
                ],
                plus: false,
                plain: &[
                    "run",
                    "r",
                    "bt",
                    "quit",
                    "q",
                    "continue",
                    "c",
                    "disassemble",
                ],
            }],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("lldb -o 'platform shell rm x'", "opaque; runs 'rm x'"),
            ("lldb ./a.out", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["less", "more", "most", "pg"],
        node: Node {
            options: LESS,
            runs: &[Runs::Script {
                opts: &["--lesskey-content"],
                files: &["-k", "--lesskey-file", "--lesskey-src"],
                plus: true,
                plain: &[],
            }],
            writes: &[Writes::OptionValue(&[
                "-o",
                "-O",
                "--log-file",
                "--LOG-FILE",
            ])],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("less '+!rm x' f", "opaque; runs 'rm x'"),
            ("less +G f", "plain"),
            ("less -N f", "plain"),
            ("less -o log f", "writes log"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["emacs", "emacsclient", "emacs-nox"],
        node: Node {
            options: EMACS,
            runs: &[Runs::Script {
                opts: &[
                    "--eval",
                    "-eval",
                    "--execute",
                    "-execute",
                    "--funcall",
                    "-funcall",
                    "-f",
                    "-e",
                ],
                files: &[
                    "--load",
                    "-load",
                    "-l",
                    "--script",
                    "-script",
                    "-scriptload",
                ],
                plus: false,
                plain: &[],
            }],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("emacs --batch --eval '(shell-command \"id\")'", "opaque"),
            ("emacs -nw f", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["sqlite3", "sqlite", "psql", "mysql", "mariadb", "duckdb"],
        node: Node {
            hooks: Hooks {
                see: Some(sql_shell),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("sqlite3 db '.shell rm -rf x'", "opaque; runs 'rm -rf x'"),
            ("sqlite3 db 'select 1' .tables", "plain"),
            ("psql -c '\\! id'", "opaque; runs 'id'"),
            ("psql -c 'select 1'", "plain"),
            ("mysql -e 'system id'", "opaque; runs 'id'"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["dc"],
        node: Node {
            options: DC,
            hooks: Hooks {
                see: Some(dc),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("dc -e '!rm x'", "opaque; runs 'rm x'"),
            ("dc -e '2 3 + p'", "plain"),
            ("dc -f calc.dc", "opaque"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["ed", "red"],
        node: Node {
            hooks: Hooks {
                see: Some(ex_mode),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[("ed -s f", "opaque"), ("ed --version", "plain")],
        ..Program::BASE
    },
];

/// dc's options.
const DC: OptionSpec<'static> = OptionSpec {
    short_value: "ef",
    glued: "",
    value: &["--expression", "--file"],
    flags: &["--version", "--help", "-V", "-h"],
    complete: false,
};

/// dc's `!CMD` runs a shell command: an expression holding `!` (or one
/// only known when it runs), a script file (`-f`) or operand files make
/// the command opaque.
fn dc(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at.min(c.words.len())..];
    let files = !options::values(args, &DC, &["-f", "--file"]).is_empty()
        || !options::operands(args, &DC).is_empty();
    let mut runs = files;
    for v in options::values(args, &DC, &["-e", "--expression"]) {
        if args[v.at].dynamic || v.text.contains('!') {
            runs = true;
            if let Some((_, cmd)) = v.text.split_once('!') {
                let cmd = cmd.lines().next().unwrap_or("").trim();
                if !cmd.is_empty() {
                    a.derived
                        .push(Derived::Source(cmd.to_string(), Role::Checked));
                }
            }
        }
    }
    if runs {
        a.dynamic = Some("`dc` runs a script that can run shell commands (`!`)".into());
    }
    start
}

/// `ed`, `ex` and `vim -e`/`-es` read editor commands from their standard
/// input, which can run shell commands (`!CMD`) and write any file (`w
/// FILE`): opaque; the shell commands a visible script holds meet deny
/// rules and caps.
fn ex_mode(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at.min(c.words.len())..];
    let version = args
        .iter()
        .any(|w| matches!(w.text.as_str(), "--version" | "--help" | "-V" | "-h"));
    let ex = matches!(c.name, "ed" | "red" | "ex" | "nex")
        || args
            .iter()
            .any(|w| matches!(w.text.as_str(), "-e" | "-E" | "-es" | "-Es" | "-se" | "-sE"));
    if !ex || version {
        return start;
    }
    a.dynamic = Some(format!(
        "`{}` runs the editor commands on its standard input (they can run shell commands and write any file)",
        c.name
    ));
    for r in c.redirs {
        if let Some(Some(text)) = &r.feed {
            for line in text.lines() {
                if let Some(cmd) = line.trim_start().strip_prefix('!') {
                    a.derived
                        .push(Derived::Source(cmd.to_string(), Role::Checked));
                }
            }
        }
    }
    start
}

/// What database shells run besides SQL: sqlite3's dot-commands (`.shell`,
/// `.system`, `.output FILE`…) other than those that only show, its
/// `writefile()`/`edit()`/`load_extension()`; psql's `\!`, `\o`, `\i`,
/// `COPY … PROGRAM`; mysql's `system`/`\!`, `tee`, `source`. Any of them,
/// or a script file (`-f`, `-init`), makes the command opaque.
fn sql_shell(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at.min(c.words.len())..];
    let spec = OptionSpec {
        short_value: "cefoLdUhp",
        glued: "",
        value: &[
            "-cmd",
            "-init",
            "--command",
            "--execute",
            "--file",
            "--output",
            "--log-file",
            "--init-command",
            "--dbname",
            "--username",
            "--host",
            "--port",
        ],
        flags: &[],
        complete: false,
    };
    let from_file = !options::values(
        args,
        &spec,
        &[
            "-init",
            "-f",
            "--file",
            "-L",
            "--log-file",
            "-o",
            "--output",
        ],
    )
    .is_empty();
    let mut texts: Vec<(String, bool)> =
        options::values(args, &spec, &["-cmd", "-c", "--command", "-e", "--execute"])
            .into_iter()
            .map(|v| (v.text, args[v.at].dynamic))
            .collect();
    if matches!(c.name, "sqlite3" | "sqlite" | "duckdb") {
        // The first operand is the database; the others are commands.
        let ops = options::operands(args, &spec);
        texts.extend(
            ops.iter()
                .skip(1)
                .map(|&k| (args[k].text.clone(), args[k].dynamic)),
        );
    }
    let mut runs = from_file;
    for (text, dynamic) in &texts {
        let (hit, cmd) = sql_runs(text);
        runs |= hit || *dynamic;
        if let Some(cmd) = cmd {
            a.derived.push(Derived::Source(cmd, Role::Checked));
        }
    }
    if runs {
        a.dynamic = Some(format!(
            "`{}` runs commands that can run shell commands or write files (or a script file)",
            c.name
        ));
    }
    start
}

/// Whether a database shell's command text runs or writes beyond SQL, and
/// the shell command it visibly runs.
fn sql_runs(text: &str) -> (bool, Option<String>) {
    const SHOW: &[&str] = &[
        ".tables",
        ".schema",
        ".indexes",
        ".indices",
        ".headers",
        ".header",
        ".mode",
        ".databases",
        ".help",
        ".quit",
        ".exit",
        ".width",
        ".timer",
        ".show",
        ".separator",
        ".nullvalue",
        ".fullschema",
        ".stats",
        ".eqp",
        ".bail",
        ".echo",
        ".changes",
        ".dump",
        ".print",
        ".dbinfo",
        ".lint",
        ".limit",
        ".expert",
    ];
    let mut hit = false;
    let mut shell = None;
    for line in text.lines().map(str::trim) {
        let first = line.split_whitespace().next().unwrap_or("");
        let lower = line.to_ascii_lowercase();
        if let Some(rest) = line.strip_prefix("\\!") {
            hit = true;
            shell = Some(rest.trim().to_string());
        } else if matches!(first, ".shell" | ".system") {
            hit = true;
            shell = Some(line[first.len()..].trim().to_string());
        } else if lower.starts_with("system ") {
            hit = true;
            shell = Some(line[7..].trim().to_string());
        } else if (first.starts_with('.') && !SHOW.contains(&first))
            || (first.starts_with('\\')
                && !matches!(
                    first,
                    "\\dt"
                        | "\\d"
                        | "\\l"
                        | "\\dn"
                        | "\\du"
                        | "\\conninfo"
                        | "\\x"
                        | "\\timing"
                        | "\\q"
                ))
            || [
                "writefile(",
                "edit(",
                "load_extension(",
                " program ",
                "into outfile",
                "into dumpfile",
                "vacuum into",
                "attach ",
                "tee ",
                "source ",
            ]
            .iter()
            .any(|k| lower.contains(k))
            || lower.starts_with("tee")
            || lower.starts_with("source")
        {
            hit = true;
        }
    }
    (hit, shell.filter(|s| !s.is_empty()))
}
