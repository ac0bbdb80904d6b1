//! Programs that work on files and text: the coreutils that write (`cp`,
//! `mv`, `ln`, `tee`, `touch`, `dd`, `sort -o`), remove (`rm`, `rmdir`),
//! edit in place (`sed -i`, `perl -i`, `patch`), search (`find`, `fd`,
//! `grep`, `rg`), and those that only read or take data (`ls`, `cat`,
//! `echo`). Where they write is where the never-automatic cap looks
//! (docs/permissions.md, "Fail closed").

use super::schema::{
    Args, Argv, Copy, Ctx, Effect, Hooks, Node, Patterns, Program, Reads, Removes, Runs, Writes,
};
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived, Role, Target};
use crate::shell::words::Word;

/// A program whose options are all known: `short` letters and `value` words
/// take a value, every other option takes none.
const fn known(short_value: &'static str, value: &'static [&'static str]) -> OptionSpec<'static> {
    OptionSpec {
        short_value,
        glued: "",
        value,
        flags: &[],
        complete: true,
    }
}

/// A program that only reads, whatever its operands (its first operand is
/// data, never a sub-command).
const fn reader(
    names: &'static [&'static str],
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node: Node {
            effect: Effect::ReadOnly,
            ..Node::NONE
        },
        generic_verbs: false,
        examples,
        ..Program::BASE
    }
}

/// A program that only reads while its words keep to `reads` (its first
/// operand is data, never a sub-command).
const fn reader_with(
    names: &'static [&'static str],
    reads: Reads,
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node: Node {
            effect: Effect::ReadOnly,
            reads,
            ..Node::NONE
        },
        generic_verbs: false,
        examples,
        ..Program::BASE
    }
}

/// A program that may change local files, whose first operand is data or a
/// file, never a sub-command.
const fn local(
    names: &'static [&'static str],
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        generic_verbs: false,
        examples,
        ..Program::BASE
    }
}

// The GNU coreutils options that take a value (`--backup[=C]` and the like
// take one only attached, so they are not listed).
const CP: OptionSpec<'static> = known(
    "St",
    &[
        "--suffix",
        "--target-directory",
        "--no-preserve",
        "--sparse",
    ],
);
const MV: OptionSpec<'static> = known("St", &["--suffix", "--target-directory"]);
const INSTALL: OptionSpec<'static> = known(
    "mogSt",
    &[
        "--mode",
        "--owner",
        "--group",
        "--suffix",
        "--target-directory",
        "--strip-program",
    ],
);
const LN: OptionSpec<'static> = known("St", &["--suffix", "--target-directory"]);
const SORT: OptionSpec<'static> = known(
    "koSTt",
    &[
        "--output",
        "--key",
        "--field-separator",
        "--buffer-size",
        "--temporary-directory",
        "--batch-size",
        "--compress-program",
        "--files0-from",
        "--parallel",
        "--random-source",
        "--sort",
    ],
);
const SED: OptionSpec<'static> = OptionSpec {
    // `-i[SUFFIX]`: a suffix only attached.
    glued: "i",
    ..known("efl", &["--expression", "--file", "--line-length"])
};

const COPY_DIRS: &[&str] = &["-t", "--target-directory"];
const NO_DIR: &[&str] = &["-T", "--no-target-directory"];

/// A program that writes each of its operands.
const fn writes_operands(
    names: &'static [&'static str],
    options: OptionSpec<'static>,
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node: Node {
            options,
            writes: &[Writes::Operands],
            ..Node::NONE
        },
        generic_verbs: false,
        examples,
        ..Program::BASE
    }
}

/// A program that copies, moves or links its sources.
const fn copies(
    names: &'static [&'static str],
    options: OptionSpec<'static>,
    kind: Copy,
    examples: &'static [(&'static str, &'static str)],
) -> Program {
    Program {
        names,
        node: Node {
            options,
            writes: match kind {
                Copy::Files => &[Writes::Copy {
                    kind: Copy::Files,
                    target_dir: COPY_DIRS,
                    no_target_dir: NO_DIR,
                }],
                Copy::Install => &[Writes::Copy {
                    kind: Copy::Install,
                    target_dir: COPY_DIRS,
                    no_target_dir: NO_DIR,
                }],
                _ => &[Writes::Copy {
                    kind: Copy::Link,
                    target_dir: COPY_DIRS,
                    no_target_dir: NO_DIR,
                }],
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples,
        ..Program::BASE
    }
}

/// find's options whose value is a pattern.
pub(crate) const FIND_PATTERNS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
];

/// `mv` writes where it moves to, and moves its sources away.
const MV_COPIES: Program = copies(
    &["mv"],
    MV,
    Copy::Files,
    &[
        ("mv a b", "writes b/a, b; removes a"),
        ("mv -t out a b", "writes out/a, out/b, out; removes a, b"),
    ],
);

pub(crate) const PROGRAMS: &[Program] = &[
    copies(
        &["cp"],
        CP,
        Copy::Files,
        &[
            ("cp .bashrc /home/u", "writes /home/u/.bashrc, /home/u"),
            ("cp -r x/.decode .", "writes ./.decode, ."),
            (
                "cp -b -S rc /tmp/y ~/.bash",
                "writes ~/.bashrc, ~/.bash/yrc, ~/.bash/y, ~/.bash",
            ),
        ],
    ),
    Program {
        node: Node {
            removes: &[Removes::Sources(&[], &["-t", "--target-directory"])],
            ..MV_COPIES.node
        },
        ..MV_COPIES
    },
    copies(
        &["install"],
        INSTALL,
        Copy::Install,
        &[("install -d out/bin", "writes out/bin")],
    ),
    copies(
        &["ln"],
        LN,
        Copy::Link,
        &[(
            "ln -s /home/u/.bashrc x",
            "writes x/.bashrc, x, /home/u/.bashrc",
        )],
    ),
    writes_operands(&["tee"], known("", &[]), &[("tee -a a b", "writes a, b")]),
    writes_operands(
        &["touch"],
        known("drt", &["--date", "--reference", "--time"]),
        &[("touch -r ref .envrc", "writes .envrc")],
    ),
    writes_operands(
        &["truncate"],
        known("rs", &["--reference", "--size"]),
        &[("truncate -s 0 log", "writes log")],
    ),
    writes_operands(
        &["mkdir", "mkfifo", "mknod"],
        known("m", &["--mode"]),
        &[("mkdir -m 700 -p a/b", "writes a/b")],
    ),
    Program {
        names: &["dd"],
        node: Node {
            writes: &[Writes::Prefixed(&["of="])],
            ..Node::NONE
        },
        examples: &[(
            "dd if=/dev/zero of=.decode/settings.json",
            "writes .decode/settings.json",
        )],
        ..Program::BASE
    },
    Program {
        names: &["sort"],
        node: Node {
            options: SORT,
            effect: Effect::ReadOnly,
            writes: &[Writes::OptionValue(&["-o", "--output"])],
            // `--files0-from FILE`: the files it reads are named in FILE.
            reads: Reads::unless(&["-o", "--output", "--compress-program", "--files0-from"]),
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            (
                "sort -uo.decode/settings.json x",
                "writes .decode/settings.json",
            ),
            ("sort -u x", "read-only"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["rm"],
        node: Node {
            options: OptionSpec::FLAGS_ONLY,
            removes: &[Removes::Operands],
            hooks: Hooks {
                forms: Some(rm_forms),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("rm -rf build", "removes build"),
            ("rm -- -x", "removes -x"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["shred", "wipe", "srm"],
        node: Node {
            options: known("nsx", &["--iterations", "--size", "--random-source"]),
            removes: &[Removes::Operands],
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("shred -u -n 3 secret", "removes secret"),
            ("wipe -rf old", "removes old"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["rmdir"],
        node: Node {
            options: OptionSpec::FLAGS_ONLY,
            removes: &[Removes::Operands, Removes::Parents(&["-p", "--parents"])],
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[("rmdir -p a/b/c", "removes a/b/c, a/b, a")],
        ..Program::BASE
    },
    Program {
        names: &["sed", "gsed"],
        node: Node {
            options: SED,
            effect: Effect::ReadOnly,
            // A script that only prints names no file (`/re/,$p`).
            patterns: Patterns {
                options: &[],
                by: Some(sed_print_scripts),
            },
            hooks: Hooks {
                see: Some(sed),
                writes: Some(sed_writes),
                ..Hooks::NONE
            },
            reads: Reads {
                by: Some(sed_prints_only),
                ..Reads::unless(&["-i", "--in-place", "-f", "--file"])
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("sed -i s/a/b/ f g", "writes f, g"),
            ("sed -n 1p f", "read-only"),
            ("sed 's/a/b/w /etc/x' f", "writes /etc/x"),
            ("sed 1e f", "opaque"),
            ("sed -n '/a/,$p' f", "read-only"),
            ("sed -n 'w x' f", "writes x"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["patch"],
        node: Node {
            hooks: Hooks {
                writes: Some(patch_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        examples: &[
            ("patch -b -z rc ~/.bash x", "writes ~/.bash, ~/.bashrc"),
            ("patch -d ~ -p1", "writes ~"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["perl"],
        node: Node {
            hooks: Hooks {
                see: Some(perl_code),
                writes: Some(perl_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("perl -i.bak -pe s/a/b/ f", "writes f, f.bak"),
            ("perl -e 'print 1'", "plain"),
            ("perl -e 'system(\"git push\")'", "opaque; runs 'git push'"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["rename", "prename", "file-rename"],
        node: Node {
            hooks: Hooks {
                writes: Some(rename_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        examples: &[("rename s/a/b/ *.txt", "writes $(rename: new names)")],
        ..Program::BASE
    },
    Program {
        names: &["find"],
        node: Node {
            options: OptionSpec {
                value: &["-fprint", "-fprint0", "-fprintf", "-fls"],
                ..OptionSpec::NONE
            },
            writes: &[Writes::OptionValue(&[
                "-fprint", "-fprint0", "-fprintf", "-fls",
            ])],
            patterns: Patterns {
                options: FIND_PATTERNS,
                by: None,
            },
            effect: Effect::ReadOnly,
            hooks: Hooks {
                see: Some(find),
                ..Hooks::NONE
            },
            // `-L`, `-H` and `-follow` follow links out of the folder;
            // `-files0-from FILE` reads its starting points from a file (which
            // files it then reads is not in the command).
            reads: Reads::here(&[
                "-exec",
                "-execdir",
                "-ok",
                "-okdir",
                "-delete",
                "-fprint",
                "-fls",
                "-L",
                "-H",
                "-follow",
                "-files0-from",
            ]),
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("find . -name '*.o' -delete", "plain"),
            (
                "find src -exec grep -l x {} ;",
                "runs `grep -l x {}` under src",
            ),
            ("find . -fprint /tmp/list", "writes /tmp/list"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["fd", "fdfind"],
        node: Node {
            runs: &[Runs::OptionWords {
                opts: &["-x", "--exec", "-X", "--exec-batch"],
                until: &[";"],
            }],
            effect: Effect::ReadOnly,
            hooks: Hooks {
                see: Some(fd_exec),
                ..Hooks::NONE
            },
            // `--list-details` runs `ls`.
            reads: Reads::here(&[
                "-x",
                "--exec",
                "-X",
                "--exec-batch",
                "-l",
                "--list-details",
                "-L",
                "--follow",
            ]),
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[("fd -e rs -x wc -l", "runs `wc -l`; runs `wc -l {}` under .")],
        ..Program::BASE
    },
    Program {
        names: &["rg", "ripgrep"],
        node: Node {
            effect: Effect::ReadOnly,
            // `--search-zip` runs decompressors, `--hostname-bin` a program.
            // `-L` follows links out of the folder.
            reads: Reads::here(&[
                "--pre",
                "--pre-glob",
                "-z",
                "--search-zip",
                "--hostname-bin",
                "-L",
                "--follow",
            ]),
            patterns: Patterns {
                options: &[],
                by: Some(grep_patterns),
            },
            hooks: Hooks {
                see: Some(rg_pre),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("rg -n TODO src", "read-only"),
            (
                "rg --pre ./x.sh TODO src",
                "runs `./x.sh`; runs `./x.sh {}` under src",
            ),
        ],
        ..Program::BASE
    },
    Program {
        names: &["ack"],
        node: Node {
            effect: Effect::ReadOnly,
            // It obeys a project's `.ackrc` (a pager, say): only bare `ack`.
            reads: Reads {
                only: Some(&[]),
                ..Reads::ANY
            },
            patterns: Patterns {
                options: &[],
                by: Some(grep_patterns),
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[("ack -l TODO", "plain"), ("ack", "read-only")],
        ..Program::BASE
    },
    Program {
        names: &["grep", "egrep", "fgrep", "ag"],
        node: Node {
            effect: Effect::ReadOnly,
            // `-R` follows links out of the folder.
            reads: Reads::here(&["--pager", "-R", "--dereference-recursive"]),
            patterns: Patterns {
                options: &[],
                by: Some(grep_patterns),
            },
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[("grep -rn 'curl x' src", "read-only")],
        ..Program::BASE
    },
    Program {
        names: &["man"],
        node: Node {
            options: OptionSpec {
                short_value: "CMPSsemLRTHEp",
                glued: "",
                value: &[
                    "--pager",
                    "--config-file",
                    "--manpath",
                    "--sections",
                    "--extension",
                    "--locale",
                    "--encoding",
                    "--html",
                    "--preprocessor",
                ],
                flags: &[],
                complete: false,
            },
            runs: &[Runs::OptionLine(&["-P", "--pager", "-H", "--html"])],
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("man -P 'rm -rf x' ls", "runs 'rm -rf x'"),
            ("man git-push", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["echo", "printf", "which", "type"],
        node: Node {
            effect: Effect::ReadOnly,
            // `printf -v PATH …` sets a variable of the shell.
            reads: Reads::unless(&["-v"]),
            ..Node::NONE
        },
        args: Args::Read,
        generic_verbs: false,
        examples: &[
            ("echo git push", "read-only"),
            ("printf '%s' deploy", "read-only"),
        ],
        ..Program::BASE
    },
    reader(
        &[
            "cat",
            "head",
            "tail",
            "stat",
            "df",
            "cmp",
            "cut",
            "tr",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "strings",
            "md5sum",
            "sha256sum",
            "sha1sum",
            "nl",
            "paste",
            "column",
            "fold",
            "fmt",
            "expand",
            "rev",
            "seq",
            "yes",
            "id",
            "whoami",
            "pwd",
            "true",
            "false",
            "test",
            "[",
            "sleep",
        ],
        &[("cat upload", "read-only")],
    ),
    // `--files0-from FILE`: the files it reads are named in FILE, not in the
    // command, so nothing proves them readable.
    reader_with(
        &["wc"],
        Reads::unless(&["--files0-from"]),
        &[("wc -l x", "read-only"), ("wc --files0-from=list", "plain")],
    ),
    reader_with(
        &["ls"],
        // `-L` follows links out of the folder.
        Reads::here(&["-L", "--dereference"]),
        &[("ls -la deploy", "read-only")],
    ),
    reader_with(
        &["du"],
        Reads::here(&["-L", "--dereference", "--files0-from"]),
        &[
            ("du -sh src", "read-only"),
            ("du --files0-from list", "plain"),
        ],
    ),
    // `tree -o FILE` writes, `-R` writes an HTML page per folder, `--fromfile`
    // reads the listing from files instead of the folders.
    reader_with(
        &["tree"],
        Reads::here(&["-o", "-R", "-l", "--fromfile"]),
        &[
            ("tree -L 2 src", "read-only"),
            ("tree --fromfile list", "plain"),
        ],
    ),
    // `file -C` compiles a magic file; `-z` may run decompressors.
    reader_with(
        &["file"],
        Reads::unless(&[
            "-C",
            "--compile",
            "-z",
            "-Z",
            "--uncompress",
            "--uncompress-noreport",
        ]),
        &[("file x", "read-only")],
    ),
    // BSD `base64 -o FILE` writes.
    reader_with(
        &["base64"],
        Reads::unless(&["-o", "--output"]),
        &[("base64 x", "read-only")],
    ),
    // `diff -l` runs `pr`; `-r` follows links out of the folders it compares.
    reader_with(
        &["diff"],
        Reads::unless(&["-l", "--paginate", "-r", "--recursive"]),
        &[("diff -u a b", "read-only")],
    ),
    // `uniq IN OUT` writes OUT.
    Program {
        names: &["uniq"],
        node: Node {
            options: known("fsw", &["--skip-fields", "--skip-chars", "--check-chars"]),
            effect: Effect::ReadOnly,
            reads: Reads {
                max_operands: Some(1),
                ..Reads::ANY
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[("uniq -c x", "read-only"), ("uniq a b", "plain")],
        ..Program::BASE
    },
    local(
        &[
            "bat", "jq", "yq", "xxd", "od", "hexdump", "shuf", "date", "chmod", "chown", "mktemp",
            "kill", "nano", "code", "open", "xdg-open", "python", "python3", "python2", "node",
            "ruby", "php", "java",
        ],
        &[
            ("python deploy.py", "plain"),
            ("python -m twine upload dist/x", "external twine upload"),
        ],
    ),
];

/// Whether sed's scripts (the `-e` values, or the first operand) only print:
/// addresses (numbers, `$`, `/regex/`, ranges, `!`) and the commands `p`,
/// `P`, `=`, `l`, `d`, `D`, `n`, `N`, `q`, `Q`, `z`, `F`, blocks and `;`.
/// Anything else (`w`, `W`, `r`, `R`, `e`, `s`, `y`, a custom delimiter) is
/// not proven.
fn sed_prints_only(args: &[String]) -> bool {
    let mut scripts: Vec<String> = options::values(args, &SED, &["-e", "--expression"])
        .into_iter()
        .map(|v| v.text)
        .collect();
    if scripts.is_empty() {
        match options::operands(args, &SED).first() {
            Some(&k) => scripts.push(args[k].clone()),
            None => return false,
        }
    }
    scripts.iter().all(|s| sed_script_prints(s))
}

/// The words (the program first) holding a sed script that only prints
/// ([`sed_script_prints`]): patterns, not paths. A script that reads or
/// writes a file (`r /etc/x`) keeps its paths.
fn sed_print_scripts(core: &[String]) -> Vec<usize> {
    let args = core.get(1..).unwrap_or(&[]);
    let mut at: Vec<usize> = options::values(args, &SED, &["-e", "--expression"])
        .into_iter()
        .map(|v| v.at)
        .collect();
    if at.is_empty() {
        at.extend(options::operands(args, &SED).first());
    }
    at.into_iter()
        // A script glued to its option (`-e/re/p`) stays a path: failing closed.
        .filter(|&k| !args[k].starts_with('-') && sed_script_prints(&args[k]))
        .map(|k| k + 1)
        .collect()
}

fn sed_script_prints(script: &str) -> bool {
    let mut chars = script.chars();
    while let Some(c) = chars.next() {
        match c {
            '/' => loop {
                match chars.next() {
                    None | Some('\n') => return false,
                    Some('\\') => {
                        if chars.next().is_none_or(|e| e == '\n') {
                            return false;
                        }
                    }
                    Some('/') => break,
                    Some(_) => {}
                }
            },
            '0'..='9' | ',' | '$' | '!' | '~' | '+' | ';' | '{' | '}' | ' ' | '\t' | '\n' => {}
            'p' | 'P' | '=' | 'l' | 'd' | 'D' | 'n' | 'N' | 'q' | 'Q' | 'z' | 'F' | 'I' | 'M' => {}
            _ => return false,
        }
    }
    true
}

/// `rm` with its recursive and force options spelled `-rf` / `-fr` / `-r`
/// / `-f` (other options dropped), then its operands: deny and ask rules
/// written as `rm -rf …` see `rm -fr x`, `rm -r -f x`, `rm --recursive
/// --force x`.
fn rm_forms(core: &[String]) -> Vec<String> {
    if core.first().map(String::as_str) != Some("rm") {
        return Vec::new();
    }
    let (mut r, mut f) = (false, false);
    let mut operands = Vec::new();
    let mut done = false;
    for a in &core[1..] {
        if done || !a.starts_with('-') || a == "-" {
            operands.push(a.as_str());
        } else if a == "--" {
            done = true;
        } else if let Some(long) = a.strip_prefix("--") {
            r |= long == "recursive";
            f |= long == "force";
        } else {
            r |= a.contains(['r', 'R']);
            f |= a.contains('f');
        }
    }
    let ops = operands.join(" ");
    let flags: &[&str] = match (r, f) {
        (true, true) => &["-rf", "-fr"],
        (true, false) => &["-r"],
        (false, true) => &["-f"],
        (false, false) => &[],
    };
    flags
        .iter()
        .map(|fl| {
            if ops.is_empty() {
                format!("rm {fl}")
            } else {
                format!("rm {fl} {ops}")
            }
        })
        .collect()
}

/// GNU sed runs commands with the `e` command and the `e` flag of `s`: such
/// a script is opaque, and so is one read from a file (`-f`) or only known
/// when it runs — unless `--sandbox` refuses `e`, `r` and `w`.
fn sed(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at..];
    if options::flagged(args, &SED, &["--sandbox"]) {
        return start;
    }
    if !options::values(args, &SED, &["-f", "--file"]).is_empty() {
        a.dynamic = Some("the sed script is read from a file (it may run commands: `e`)".into());
        return start;
    }
    // A value glued to its option (`-e1e…`, `--expression=…`) is its text
    // after the option; arithmetic expansions stand as numbers.
    let known = |at: usize, text: String| {
        let w = &args[at];
        if !w.dynamic {
            return Some(text);
        }
        let whole = w.numbers_only()?;
        let option = w.text.len().checked_sub(text.len())?;
        Some(whole.get(option..)?.to_string())
    };
    let mut scripts: Vec<Option<String>> = options::values(args, &SED, &["-e", "--expression"])
        .into_iter()
        .map(|v| known(v.at, v.text))
        .collect();
    if scripts.is_empty() {
        scripts.extend(
            options::operands(args, &SED)
                .first()
                .map(|&k| known(k, args[k].text.clone())),
        );
    }
    for script in scripts {
        let Some(script) = script else {
            a.dynamic =
                Some("the sed script is only known when it runs (it may run commands: `e`)".into());
            continue;
        };
        if sed_runs_commands(&script) {
            a.dynamic = Some("the sed script runs shell commands (`e`)".into());
            // What can be seen of them still meets the deny rules and caps.
            for cmd in sed_command_texts(&script) {
                a.derived.push(Derived::Source(cmd, Role::Checked));
            }
        }
    }
    start
}

/// Whether a GNU sed script runs a command: an `e` command (`1e CMD`,
/// `/x/e`, `$ecmd`), or an `s` command with the `e` flag. The script is read
/// command by command (addresses, `!`, blocks, the texts of `a`/`i`/`c` and
/// the file names of `r`/`w` skipped); text it cannot read counts as running
/// one when it holds an `e` at all.
pub(crate) fn sed_runs_commands(script: &str) -> bool {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    let unread = |i: usize| b[i.min(b.len())..].contains(&'e');
    loop {
        while i < b.len() && matches!(b[i], ' ' | '\t' | '\n' | ';' | '}') {
            i += 1;
        }
        if i >= b.len() {
            return false;
        }
        if b[i] == '#' {
            i = line_end(&b, i);
            continue;
        }
        if !sed_address(&b, &mut i) {
            return unread(i);
        }
        skip_blanks(&b, &mut i);
        if b.get(i) == Some(&',') {
            i += 1;
            skip_blanks(&b, &mut i);
            if matches!(b.get(i), Some('+' | '~')) {
                i += 1;
            }
            if !sed_address(&b, &mut i) {
                return unread(i);
            }
            skip_blanks(&b, &mut i);
        }
        while b.get(i) == Some(&'!') {
            i += 1;
            skip_blanks(&b, &mut i);
        }
        let Some(&cmd) = b.get(i) else {
            return false;
        };
        i += 1;
        match cmd {
            'e' => return true,
            '{' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | '='
            | 'F' | 'l' | 'L' | 'q' | 'Q' => {
                // An optional number (`q5`, `l 40`).
                skip_blanks(&b, &mut i);
                while b.get(i).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | ':' | 'b' | 't' | 'T' | 'v' => {
                i = line_end(&b, i);
            }
            's' => match sed_s_flags(&b, &mut i) {
                Some(flags) if flags.contains('e') => return true,
                Some(flags) if flags.contains('w') => i = line_end(&b, i),
                Some(_) => {}
                None => return unread(i),
            },
            'y' => {
                if sed_delimited(&b, &mut i, 2).is_none() {
                    return unread(i);
                }
            }
            _ => return unread(i),
        }
    }
}

/// The texts a sed script's `e` commands run, and the replacements of its
/// `s///e` commands (the line they make is what runs).
fn sed_command_texts(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (k, _) in script.match_indices('e') {
        let rest = script[k + 1..].split('\n').next().unwrap_or("").trim();
        if !rest.is_empty() && !out.iter().any(|o| o == rest) {
            out.push(rest.to_string());
        }
    }
    // `s/PATTERN/REPLACEMENT/…e`: the replacement, at least.
    for (k, _) in script.match_indices('s') {
        let mut chars = script[k + 1..].chars();
        let Some(d) = chars
            .next()
            .filter(|d| !d.is_alphanumeric() && !d.is_whitespace())
        else {
            continue;
        };
        let parts: Vec<&str> = script[k + 1 + d.len_utf8()..].splitn(3, d).collect();
        if let Some(repl) = parts.get(1).filter(|r| !r.trim().is_empty()) {
            if !out.iter().any(|o| o == repl) {
                out.push(repl.to_string());
            }
        }
    }
    out
}

fn skip_blanks(b: &[char], i: &mut usize) {
    while b.get(*i).is_some_and(|c| *c == ' ' || *c == '\t') {
        *i += 1;
    }
}

/// Where the line holding `i` ends (a backslash before a newline continues it).
fn line_end(b: &[char], mut i: usize) -> usize {
    while i < b.len() && b[i] != '\n' {
        i += if b[i] == '\\' { 2 } else { 1 };
    }
    i.min(b.len())
}

/// Reads an address at `b[i]` if there is one: a number (`N`, `N~M`), `$`,
/// `/REGEX/` or `\cREGEXc` with `I`/`M` flags. `false` when it cannot.
fn sed_address(b: &[char], i: &mut usize) -> bool {
    match b.get(*i) {
        Some(c) if c.is_ascii_digit() => {
            while b.get(*i).is_some_and(|c| c.is_ascii_digit() || *c == '~') {
                *i += 1;
            }
            true
        }
        Some('$') => {
            *i += 1;
            true
        }
        Some('/') => {
            if sed_delimited(b, i, 1).is_none() {
                return false;
            }
            while matches!(b.get(*i), Some('I' | 'M')) {
                *i += 1;
            }
            true
        }
        Some('\\') => {
            *i += 1;
            if sed_delimited(b, i, 1).is_none() {
                return false;
            }
            while matches!(b.get(*i), Some('I' | 'M')) {
                *i += 1;
            }
            true
        }
        _ => true,
    }
}

/// Reads `parts` delimited parts after a delimiter at `b[i]` (`/a/b/`):
/// `None` when the text ends first.
fn sed_delimited(b: &[char], i: &mut usize, parts: usize) -> Option<()> {
    let d = *b.get(*i)?;
    if d == '\n' || d == '\\' {
        return None;
    }
    *i += 1;
    let mut seen = 0;
    while seen < parts {
        let c = *b.get(*i)?;
        *i += if c == '\\' { 2 } else { 1 };
        if c == d {
            seen += 1;
        }
    }
    Some(())
}

/// An `s` command's flags, after its pattern and replacement.
fn sed_s_flags(b: &[char], i: &mut usize) -> Option<String> {
    sed_delimited(b, i, 2)?;
    let mut flags = String::new();
    while let Some(&c) = b.get(*i) {
        if c.is_ascii_alphanumeric() {
            flags.push(c);
            *i += 1;
            if c == 'w' {
                break;
            }
        } else {
            break;
        }
    }
    Some(flags)
}

/// sed scripts: the `-e`/`--expression` values, else the first operand;
/// `None` when a script comes from a file (`-f`).
fn sed_scripts(args: &[String]) -> Option<Vec<String>> {
    if !options::values(args, &SED, &["-f", "--file"]).is_empty() {
        return None;
    }
    let mut scripts: Vec<String> = options::values(args, &SED, &["-e", "--expression"])
        .into_iter()
        .map(|v| v.text)
        .collect();
    if scripts.is_empty() {
        scripts.extend(
            options::operands(args, &SED)
                .first()
                .map(|&k| args[k].clone()),
        );
    }
    Some(scripts)
}

/// The files a sed script writes with `w FILE`, `W FILE` or the `s///w
/// FILE` flag: the rest of the line after the `w` (and, to be safe, that
/// text cut at `;` or `}` too). Reads generously: a `w` that may be a
/// command or flag counts.
fn sed_w_files(script: &str) -> Vec<String> {
    let b = script.as_bytes();
    let mut out = Vec::new();
    for i in 0..b.len() {
        if b[i] != b'w' && b[i] != b'W' {
            continue;
        }
        // Skip back over s-command flags (`gw`, `2pw`).
        let mut k = i;
        while k > 0
            && matches!(
                b[k - 1],
                b'g' | b'p' | b'i' | b'I' | b'm' | b'M' | b'e' | b'0'..=b'9'
            )
        {
            k -= 1;
        }
        let before = if k == 0 { None } else { Some(b[k - 1]) };
        let command_place = before.is_none_or(|c| !c.is_ascii_alphanumeric() && c != b'_');
        if !command_place {
            continue;
        }
        let rest = &script[i + 1..];
        let line = rest.split('\n').next().unwrap_or(rest).trim();
        if line.is_empty() {
            continue;
        }
        let cut = line.split([';', '}']).next().unwrap_or(line).trim();
        for f in [line, cut] {
            if !f.is_empty() && !out.iter().any(|o| o == f) {
                out.push(f.to_string());
            }
        }
    }
    out
}

/// `sed -i` writes its files (and backups named by the suffix); a script
/// writes with `w`; a script from a file writes where it says.
fn sed_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let in_place = args.iter().any(|a| {
        let long = a.split('=').next().unwrap_or(a);
        a.starts_with("-i")
            || (long.len() > 4 && "--in-place".starts_with(long))
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
    });
    if in_place {
        sed_in_place(v, out);
    }
    match sed_scripts(args) {
        Some(scripts) => {
            for sc in scripts {
                for f in sed_w_files(&sc) {
                    let dynamic = f.contains(['$', '`']);
                    out.push(Target::new(&f, dynamic));
                }
            }
        }
        // The script is in a file: where it writes is unknown.
        None => out.push(Target::new("$(sed script file)", true)),
    }
}

/// `sed -i[SUFFIX]` (`--in-place=SUFFIX`): the files, and a backup beside
/// each, or where the suffix says when it holds `*` (the file's name):
/// `-i'.git/hooks/*'` backs `pre-commit` up into .git/hooks.
fn sed_in_place(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let scripts = options::values(args, &SED, &["-e", "-f", "--expression", "--file"]);
    let pos = options::operands(args, &SED);
    // Without -e/-f the first operand is the script.
    let files = if scripts.is_empty() {
        pos.into_iter().skip(1).collect::<Vec<_>>()
    } else {
        pos
    };
    let mut suffixes: Vec<(String, bool)> = options::values(args, &SED, &["-i"])
        .into_iter()
        .map(|o| (o.text, v.dyn_arg(o.at)))
        .collect();
    for (k, a) in args.iter().enumerate() {
        // `--in-place=SUFFIX`, or a GNU abbreviation (`--in-pl=rc`).
        let given = a
            .split_once('=')
            .filter(|(n, _)| n.len() > 2 && "--in-place".starts_with(n))
            .map(|(_, x)| x);
        if let Some(x) = given.filter(|x| !x.is_empty()) {
            suffixes.push((x.to_string(), v.dyn_arg(k)));
        }
    }
    for k in files {
        out.push(Target::new(&args[k], v.dyn_arg(k)));
        for (suffix, dynamic) in &suffixes {
            let file = args[k].as_str();
            let backup = if suffix.contains('*') {
                let base = file.rsplit('/').next().unwrap_or(file);
                let named = suffix.replace('*', base);
                match file.rsplit_once('/') {
                    Some((dir, _)) if !named.contains('/') => format!("{dir}/{named}"),
                    _ => named,
                }
            } else {
                format!("{file}{suffix}")
            };
            out.push(Target::new(&backup, *dynamic || v.dyn_arg(k)));
        }
    }
}

/// The file `patch` patches (when named), `-o`, the rejects, and backups
/// named by a suffix or prefix (`-b -z rc ~/.bash x`). Files named only
/// inside the patch are not read here.
fn patch_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let spec = known(
        "BdDFiopVYzr",
        &[
            "--prefix",
            "--directory",
            "--ifdef",
            "--fuzz",
            "--input",
            "--output",
            "--strip",
            "--version-control",
            "--basename-prefix",
            "--suffix",
            "--reject-file",
            "--quoting-style",
        ],
    );
    let ops = options::operands(args, &spec);
    if let Some(&k) = ops.first() {
        out.push(Target::new(&args[k], v.dyn_arg(k)));
    } else {
        // The files the patch names, under `-d DIR` or here: names the gate
        // cannot know, like an archive's.
        let dir = options::values(args, &spec, &["-d", "--directory"]).pop();
        let mut t = match dir {
            Some(d) => Target::new(&d.text, v.dyn_arg(d.at)),
            None => Target::new(".", false),
        };
        t.contents = true;
        t.archive = true;
        out.push(t);
    }
    for o in options::values(args, &spec, &["-o", "--output", "-r", "--reject-file"]) {
        out.push(Target::new(&o.text, v.dyn_arg(o.at)));
    }
    let prefixed =
        !options::values(args, &spec, &["-B", "--prefix", "-Y", "--basename-prefix"]).is_empty();
    let backup = prefixed || options::flagged(args, &spec, &["-b", "--backup", "-z", "--suffix"]);
    if let (true, Some(&k)) = (backup, ops.first()) {
        match options::values(args, &spec, &["-z", "--suffix"]).pop() {
            Some(o) if !prefixed => out.push(Target::new(
                &format!("{}{}", args[k], o.text),
                v.dyn_arg(k) || v.dyn_arg(o.at),
            )),
            _ => out.push(Target::new(
                &format!("{}$SIMPLE_BACKUP_SUFFIX", args[k]),
                true,
            )),
        }
    }
}

/// `perl -i[EXT] -pe CODE FILES`: the files, and their backups.
fn perl_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let spec = known("eEIx", &[]);
    let end = options::scan(args, 0, &spec).start;
    let ext = args[..end].iter().find_map(|a| {
        let body = a.strip_prefix('-').filter(|b| !b.starts_with('-'))?;
        let at = body.find('i')?;
        // Letters before `-i` must not have taken the rest as a value.
        (!body[..at].contains(['e', 'E', 'I', 'x', 'M', 'm'])).then(|| body[at + 1..].to_string())
    });
    let Some(ext) = ext else {
        return;
    };
    let has_code = !options::values(args, &spec, &["-e", "-E"]).is_empty();
    let files = options::operands(args, &spec)
        .into_iter()
        .skip(usize::from(!has_code));
    for k in files {
        out.push(Target::new(&args[k], v.dyn_arg(k)));
        if !ext.is_empty() {
            let file = args[k].as_str();
            // perl puts the whole file name for each `*`.
            let backup = if ext.contains('*') {
                ext.replace('*', file)
            } else {
                format!("{file}{ext}")
            };
            out.push(Target::new(&backup, v.dyn_arg(k)));
        }
    }
}

/// perl's words that run a program or code the gate cannot see.
const PERL_RUNS: &[&str] = &[
    "system", "exec", "qx", "readpipe", "fork", "syscall", "eval", "open", "pipe", "require", "do",
    "kill",
];

/// `perl -e CODE` (`-E`, clustered: `-ne`, `-lE`): code that runs a program
/// (`system`, `exec`, backticks, `qx`, a piped `open`) is opaque, and the
/// strings in it are judged as commands (deny rules, ask rules, caps).
fn perl_code(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = &c.words[c.at.min(c.words.len())..];
    let mut k = 0;
    while k < words.len() {
        let t = words[k].text.as_str();
        if t == "--" || !t.starts_with('-') {
            break;
        }
        // Flag letters, then `e`/`E` (`-ne`, `-lw0E`); `-Mfeature` is not one.
        let at = (!t.starts_with("--"))
            .then(|| t[1..].find(['e', 'E']))
            .flatten()
            .filter(|&n| {
                t[1..1 + n]
                    .chars()
                    .all(|ch| "acnpsTtUuWwXl0123456789".contains(ch))
            });
        let Some(at) = at else {
            k += 1;
            continue;
        };
        let glued = &t[at + 2..];
        let code = if glued.is_empty() {
            k += 1;
            words.get(k).map(|w| (w.text.as_str(), w.dynamic))
        } else {
            Some((glued, words[k].dynamic))
        };
        if let Some((code, dynamic)) = code {
            perl_judge(code, dynamic, a);
        }
        k += 1;
    }
    None
}

fn perl_judge(code: &str, dynamic: bool, a: &mut Analysis) {
    let runs = code.contains('`')
        || code
            .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .any(|w| PERL_RUNS.contains(&w));
    if !runs && !dynamic {
        return;
    }
    a.dynamic = Some("`perl -e` code runs a program or code the gate cannot read".into());
    for s in quoted_parts(code) {
        if !s.trim().is_empty() {
            a.derived.push(Derived::Source(s, Role::Checked));
        }
    }
}

/// The texts between quotes, backticks and `q(…)`/`qq(…)`/`qx(…)`-style
/// brackets in perl code.
fn quoted_parts(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        let close = match ch {
            '"' | '\'' | '`' => Some(ch),
            '(' | '{' | '[' | '<' if i > 0 && matches!(chars[i - 1], 'q' | 'x' | 'w') => {
                Some(match ch {
                    '(' => ')',
                    '{' => '}',
                    '[' => ']',
                    _ => '>',
                })
            }
            _ => None,
        };
        let Some(close) = close else {
            i += 1;
            continue;
        };
        let end = chars[i + 1..]
            .iter()
            .position(|&c| c == close)
            .map_or(chars.len(), |n| i + 1 + n);
        out.push(chars[i + 1..end].iter().collect());
        i = end + 1;
    }
    out
}

/// The new names come from an expression or a substitution: where they land
/// is not read here.
fn rename_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    if v.args().iter().any(|a| !a.starts_with('-')) {
        out.push(Target::new("$(rename: new names)", true));
    }
}

/// `find [OPTIONS] ROOTS… EXPRESSION`: the starting points (`-f ROOT`,
/// `-files0-from`: from a file; `-L`/`-follow`: anywhere links lead), and
/// what `-exec`, `-execdir`, `-ok`, `-okdir` run for each match.
fn find(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let (mut roots, mut j) = find_roots(words, c.at);
    // `-files0-from FILE`: starting points read from a file.
    if words[j.min(words.len())..]
        .iter()
        .any(|w| w.text == "-files0-from")
    {
        roots.push(None);
    }
    // `-L`/`-follow`: find follows links, so what lies under a starting
    // point may be anywhere.
    if words[c.at..]
        .iter()
        .any(|w| matches!(w.text.as_str(), "-L" | "-follow"))
    {
        roots = vec![None];
    }
    a.find_roots = Some(roots.clone());
    let expr: Vec<&str> = words[j.min(words.len())..]
        .iter()
        .map(|w| w.text.as_str())
        .collect();
    if find_removes(&words[j.min(words.len())..]) {
        // What it removes is what its tests match: a protected file they
        // may match counts as written (never automatic).
        for r in &roots {
            let root = r.as_deref().unwrap_or("$ROOT");
            if let Some(p) = find_may_match_protected(root, &expr) {
                a.own_writes.push(Target::new(&p, r.is_none()));
            }
        }
    }
    while j < words.len() {
        let t = words[j].text.as_str();
        if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = j + 1;
            let mut end = start;
            while end < words.len() && !matches!(words[end].text.as_str(), ";" | "+") {
                end += 1;
            }
            if end > start {
                // `-exec {} …`: the program is what find found.
                let mut ws = words[start..end].to_vec();
                ws[0].dynamic |= ws[0].text.contains("{}");
                a.derived.push(Derived::Find(ws, c.role, roots.clone()));
            }
            j = end + 1;
        } else {
            j += 1;
        }
    }
    None
}

/// Whether find's expression removes what it matches: `-delete`, or
/// `-exec`/`-execdir`/`-ok` with a removing program (or one only known when
/// it runs).
pub(crate) fn find_removes(expr: &[Word]) -> bool {
    expr.iter().enumerate().any(|(k, w)| match w.text.as_str() {
        "-delete" => true,
        "-exec" | "-execdir" | "-ok" | "-okdir" => expr.get(k + 1).is_some_and(|p| {
            p.dynamic
                || p.text.contains(['$', '`', '{'])
                || matches!(
                    p.text.rsplit('/').next().unwrap_or(""),
                    "rm" | "rmdir" | "unlink" | "shred" | "srm" | "wipe" | "mv" | "truncate"
                )
        }),
        _ => false,
    })
}

/// Protected files a project folder may hold, relative to a find root:
/// permission files, agent definitions, git internals, files other tools
/// run (docs/permissions.md, "Protected files").
const FIND_PROTECTED_SAMPLES: &[&str] = &[
    ".decode",
    ".decode/settings.json",
    ".decode/settings.local.json",
    ".decode/mcp.json",
    ".decode/agents/agent.md",
    "sub/.decode/settings.json",
    ".claude",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/agents/agent.md",
    ".mcp.json",
    ".git",
    ".git/config",
    ".git/HEAD",
    ".git/hooks/pre-commit",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".idea/workspace.xml",
    ".envrc",
];

/// A protected path under `root` that find's expression `expr` may match
/// (the first one), or `None` when its name and path tests rule them all
/// out. `-o` splits the expression into alternatives; parentheses, and a
/// test that cannot be read (`-regex`), match anything (fail closed).
pub(crate) fn find_may_match_protected(root: &str, expr: &[&str]) -> Option<String> {
    let base = root.trim_end_matches('/');
    let grouped = expr.iter().any(|t| matches!(*t, "(" | ")" | "\\(" | "\\)"));
    let branches: Vec<&[&str]> = expr.split(|t| matches!(*t, "-o" | "-or" | ",")).collect();
    FIND_PROTECTED_SAMPLES.iter().find_map(|rel| {
        let path = format!("{base}/{rel}");
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let hit = grouped || branches.iter().any(|b| find_branch_matches(b, &path, name));
        hit.then_some(path)
    })
}

/// Whether every positive name or path test of one `-o` alternative
/// matches the sample (negated and unknown tests do not restrict).
fn find_branch_matches(branch: &[&str], path: &str, name: &str) -> bool {
    let mut negated = false;
    let mut k = 0;
    while k < branch.len() {
        let t = branch[k];
        let value = branch.get(k + 1).copied();
        let test = match (t, value) {
            ("-name", Some(v)) => Some(fnmatch(v, name, false)),
            ("-iname", Some(v)) => Some(fnmatch(v, name, true)),
            ("-path" | "-wholename", Some(v)) => Some(fnmatch(v, path, false)),
            ("-ipath" | "-iwholename", Some(v)) => Some(fnmatch(v, path, true)),
            _ => None,
        };
        match test {
            Some(m) => {
                if !negated && !m {
                    return false;
                }
                negated = false;
                k += 2;
            }
            None => {
                negated = matches!(t, "!" | "-not");
                k += 1;
            }
        }
    }
    true
}

/// fnmatch(3) without flags, as find's `-name` and `-path` use it: `*` and
/// `?` match any character (`/` too), `[…]` a class, `\` quotes.
fn fnmatch(pattern: &str, text: &str, fold: bool) -> bool {
    let low = |s: &str| {
        if fold {
            s.to_lowercase()
        } else {
            s.to_string()
        }
    };
    let p: Vec<char> = low(pattern).chars().collect();
    let t: Vec<char> = low(text).chars().collect();
    // Iterative matching with one backtrack point for the last `*`: linear
    // in practice, quadratic at worst in these short words.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        let step = match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
                continue;
            }
            Some('?') => Some(i + 1),
            Some('[') => class_match(&p, i, t[j]),
            Some('\\') if i + 1 < p.len() => (p[i + 1] == t[j]).then_some(i + 2),
            Some(c) => (*c == t[j]).then_some(i + 1),
            None => None,
        };
        match (step, star) {
            (Some(n), _) => {
                i = n;
                j += 1;
            }
            (None, Some((si, sj))) => {
                i = si + 1;
                j = sj + 1;
                star = Some((si, sj + 1));
            }
            (None, None) => return false,
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

/// `[…]` at `p[i]` against `c`: the index after the class when it matches.
/// An unclosed `[` is a literal.
fn class_match(p: &[char], i: usize, c: char) -> Option<usize> {
    let mut k = i + 1;
    let negate = matches!(p.get(k), Some('!' | '^'));
    if negate {
        k += 1;
    }
    let start = k;
    let mut hit = false;
    while k < p.len() && (p[k] != ']' || k == start) {
        if p.get(k + 1) == Some(&'-') && k + 2 < p.len() && p[k + 2] != ']' {
            hit |= p[k] <= c && c <= p[k + 2];
            k += 3;
        } else {
            hit |= p[k] == c;
            k += 1;
        }
    }
    if k >= p.len() {
        return (c == '[').then_some(i + 1);
    }
    (hit != negate).then_some(k + 1)
}

/// `fd PATTERN PATHS… -x|-X CMD…`: CMD runs on what fd finds under PATHS,
/// like `find PATHS -exec CMD {} +` (the critical-removal cap reads the
/// roots). The words before the command other than the first (the
/// pattern) count as roots — an option's value among them only adds one.
fn fd_exec(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = &c.words[c.at.min(c.words.len())..];
    let Some(x) = words
        .iter()
        .position(|w| matches!(w.text.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
    else {
        return start;
    };
    let mut roots: Vec<Option<String>> = words[..x]
        .iter()
        .filter(|w| !w.text.starts_with('-'))
        .skip(1)
        .map(|w| (!w.dynamic).then(|| w.text.clone()))
        .collect();
    if roots.is_empty() {
        roots.push(Some(".".to_string()));
    }
    let end = words[x + 1..]
        .iter()
        .position(|w| w.text == ";")
        .map_or(words.len(), |n| x + 1 + n);
    let mut ws = words[x + 1..end].to_vec();
    if ws.is_empty() {
        return start;
    }
    if !ws.iter().any(|w| w.text.contains("{}")) {
        ws.push(Word::raw("{}"));
    }
    a.derived.push(Derived::Find(ws, c.role, roots));
    start
}

/// find's leading options (GNU: -H -L -P -D LIST -OLEVEL; BSD: -E -X -d -s
/// -x, -f ROOT), then the starting points: the words before the first
/// expression. Returns them (`None`: only known when it runs; `.` when none
/// is given) and where the expression starts.
fn find_roots(words: &[Word], from: usize) -> (Vec<Option<String>>, usize) {
    let mut j = from;
    let mut roots = Vec::new();
    while j < words.len() {
        match words[j].text.as_str() {
            "-H" | "-L" | "-P" | "-E" | "-X" | "-d" | "-s" | "-x" => j += 1,
            "-D" => j += 2,
            "-f" => {
                roots.push(
                    words
                        .get(j + 1)
                        .and_then(|w| (!w.dynamic).then(|| w.text.clone())),
                );
                j += 2;
            }
            "--" => {
                j += 1;
                break;
            }
            t if t.starts_with("-O") || (t.starts_with("-D") && t.len() > 2) => j += 1,
            _ => break,
        }
    }
    while j < words.len() {
        let t = words[j].text.as_str();
        if t.starts_with('-') || t == "(" || t == "!" || t == "," {
            break;
        }
        roots.push(if words[j].dynamic {
            None
        } else {
            Some(t.to_string())
        });
        j += 1;
    }
    if roots.is_empty() {
        roots.push(Some(".".to_string()));
    }
    (roots, j)
}

/// `rg --pre CMD`: rg runs `CMD FILE` for each file it searches, like
/// `find PATHS -exec CMD {} \;`.
fn rg_pre(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let words = c.words;
    let mut j = c.at;
    // The word that is `--pre`'s value, not a pattern or path.
    let mut skip = None;
    while j < words.len() {
        let t = words[j].text.as_str();
        if t == "--" {
            break;
        }
        let pre = if t == "--pre" {
            j += 1;
            skip = Some(j);
            words.get(j).cloned()
        } else {
            t.strip_prefix("--pre=").map(|v| Word {
                text: v.to_string(),
                ..words[j].clone()
            })
        };
        if let Some(p) = pre.filter(|p| !p.text.is_empty()) {
            let paths: Vec<Option<String>> = words[c.at..]
                .iter()
                .enumerate()
                .filter(|&(k, w)| !w.text.starts_with('-') && Some(c.at + k) != skip)
                .map(|(_, w)| w)
                .skip(1)
                .map(|w| (!w.dynamic).then(|| w.text.clone()))
                .collect();
            let roots = if paths.is_empty() {
                vec![Some(".".to_string())]
            } else {
                paths
            };
            a.derived.push(Derived::Words(vec![p.clone()], c.role));
            a.derived
                .push(Derived::Find(vec![p, Word::raw("{}")], c.role, roots));
        }
        j += 1;
    }
    start
}

/// Words of `core` (indexes) that are grep's, rg's, ag's or ack's pattern
/// (`-e`, `--regexp`, else the first operand) and their `--exclude`,
/// `--include`, `--glob` values: patterns, not files.
pub(crate) fn grep_patterns(core: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    let Some(name) = core.first() else {
        return out;
    };
    let git = name == "git";
    if git && core.get(1).map(String::as_str) != Some("grep") {
        return out;
    }
    let rg = name == "rg";
    let takes = |o: &str| (rg || o != "-r") && grep_takes_value(o);
    let mut explicit = false;
    let mut first = None;
    let mut k = if git { 2 } else { 1 };
    let mut done = false;
    while k < core.len() {
        let a = core[k].as_str();
        if !done && a == "--" {
            done = true;
        } else if !done && a.starts_with('-') && a.len() > 1 {
            let opt = a.split_once('=').map_or(a, |(o, _)| o);
            let pattern_opt = matches!(opt, "-e" | "--regexp");
            let filter_opt = matches!(
                opt,
                "--exclude" | "--exclude-dir" | "--include" | "-g" | "--glob" | "--iglob"
            );
            explicit |= pattern_opt;
            if a.contains('=') {
                if pattern_opt || filter_opt {
                    out.push(k);
                }
            } else if takes(a) {
                if pattern_opt || filter_opt {
                    out.push(k + 1);
                }
                k += 1;
            } else if a.starts_with("-e") && !a.starts_with("--") && a.len() > 2 {
                explicit = true;
                out.push(k);
            }
        } else if first.is_none() {
            first = Some(k);
        }
        k += 1;
    }
    if let (false, Some(f)) = (explicit, first) {
        out.push(f);
    }
    out
}

/// The options of grep and its kind that take a value.
fn grep_takes_value(o: &str) -> bool {
    matches!(
        o,
        "-A" | "-B"
            | "-C"
            | "-m"
            | "-e"
            | "-f"
            | "-d"
            | "-D"
            | "-g"
            | "-t"
            | "-T"
            | "-M"
            | "-j"
            | "-r"
            | "--regexp"
            | "--file"
            | "--glob"
            | "--iglob"
            | "--type"
            | "--type-not"
            | "--max-count"
            | "--context"
            | "--after-context"
            | "--before-context"
            | "--exclude"
            | "--exclude-dir"
            | "--include"
            | "--replace"
            | "--max-depth"
            | "--threads"
    )
}
