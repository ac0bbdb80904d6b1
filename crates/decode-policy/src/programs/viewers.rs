//! Editors, pagers and debuggers: programs whose own command language can
//! run shell commands and write files (`vim -c '!CMD'`, `less +!CMD`,
//! `gdb -ex 'shell CMD'`, `lldb -o 'platform shell CMD'`, `emacs --eval`).
//! Such a script, given by an option, a file or a `+CMD` word, makes the
//! command opaque (docs/permissions.md, "Fail closed"); opening a file
//! (`vim f`, `less f`, `gdb ./prog`) stays an ordinary local command.

use super::schema::{Node, Program, Runs, Writes};
use crate::options::OptionSpec;

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
];
