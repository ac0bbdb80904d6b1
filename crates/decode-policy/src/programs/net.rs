//! Programs that reach other machines: `curl`, `wget`, `ssh`, `scp`, `sftp`,
//! `rsync`. What they run (`ssh HOST CMD`, `-o ProxyCommand=…`, `rsync -e`)
//! and the files they write (`curl -o`, `wget -O`, rsync's destination and
//! logs) (docs/permissions.md, "Fail closed").

use super::schema::{Argv, Copy, Ctx, Hooks, Node, Program, Removes, Runs, Writes};
use super::support::{run_string, value_word};
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived, Role, Target};

/// curl's options that take a value (it has more).
const CURL: OptionSpec<'static> = OptionSpec {
    short_value: "AbcCdDeEFHKmoPQrtTuUwxXyYz",
    glued: "",
    value: &[
        "--output",
        "--dump-header",
        "--cookie-jar",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--output-dir",
        "--data",
        "--header",
        "--request",
        "--user",
        "--user-agent",
        "--cookie",
        "--form",
        "--config",
        "--upload-file",
        "--write-out",
        "--etag-save",
        "--etag-compare",
        "--libcurl",
        "--hsts",
        "--alt-svc",
        "--proxy",
        "--referer",
        "--range",
        "--max-time",
    ],
    flags: &[],
    complete: false,
};

/// wget's options that take a value (it has more); `-nv`, `-nc`, `-nd`:
/// `-n` and one letter.
const WGET: OptionSpec<'static> = OptionSpec {
    short_value: "eoaiBtOTwQPlARDIXU",
    glued: "n",
    value: &[
        "--output-document",
        "--directory-prefix",
        "--output-file",
        "--append-output",
        "--input-file",
        "--execute",
        "--tries",
        "--timeout",
        "--user-agent",
        "--header",
        "--level",
        "--save-cookies",
        "--warc-file",
        "--rejected-log",
        "--hsts-file",
    ],
    flags: &[],
    complete: false,
};

/// rsync's options that take a value (it has more).
pub(crate) const RSYNC: OptionSpec<'static> = OptionSpec {
    short_value: "efBTM",
    glued: "",
    value: &[
        "--rsh",
        "--rsync-path",
        "--exclude",
        "--include",
        "--filter",
        "--log-file",
        "--password-file",
        "--exclude-from",
        "--include-from",
        "--files-from",
        "--chmod",
        "--chown",
        "--backup-dir",
        "--partial-dir",
        "--temp-dir",
        "--log-file-format",
        "--write-batch",
        "--only-write-batch",
        "--read-batch",
        "--suffix",
        "--compare-dest",
        "--copy-dest",
        "--link-dest",
        "--block-size",
        "--remote-option",
        "--max-size",
        "--min-size",
        "--bwlimit",
        "--timeout",
        "--port",
    ],
    flags: &[],
    complete: false,
};

const SSH: Node = Node {
    hooks: Hooks {
        see: Some(ssh),
        ..Hooks::NONE
    },
    ..Node::NONE
};

/// aria2c's options that take a value (it has many more).
const ARIA2C: OptionSpec<'static> = OptionSpec {
    short_value: "doilsjx",
    glued: "",
    value: &[
        "--dir",
        "--out",
        "--input-file",
        "--log",
        "--save-session",
        "--conf-path",
        "--on-download-complete",
        "--on-download-start",
        "--on-download-error",
        "--on-download-stop",
        "--on-download-pause",
        "--on-bt-download-complete",
    ],
    flags: &[],
    complete: false,
};

/// aria2c's options whose value is a program it runs at an event.
const ARIA2C_HOOKS: &[&str] = &[
    "--on-download-complete",
    "--on-download-start",
    "--on-download-error",
    "--on-download-stop",
    "--on-download-pause",
    "--on-bt-download-complete",
];

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        names: &["aria2c"],
        node: Node {
            options: ARIA2C,
            runs: &[
                Runs::OptionCommand(ARIA2C_HOOKS),
                Runs::Opaque {
                    options: &["--conf-path"],
                    keys: &[],
                    why: "reads a configuration file that may name programs it runs",
                },
            ],
            // Without `-d` the files land in the current folder, under
            // names the server chooses.
            writes: &[
                Writes::Into {
                    options: &["-d", "--dir"],
                    flags: &[],
                },
                Writes::OptionValue(&["-l", "--log", "--save-session"]),
            ],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("aria2c -d ~ https://x.y/a", "writes ~"),
            (
                "aria2c --on-download-complete x.sh https://x.y/a",
                "runs 'x.sh'",
            ),
        ],
        ..Program::BASE
    },
    Program {
        names: &["curl"],
        node: Node {
            options: CURL,
            writes: &[Writes::OptionValue(&[
                "-D",
                "-c",
                "--dump-header",
                "--cookie-jar",
                "--trace",
                "--trace-ascii",
                "--stderr",
                "--etag-save",
                "--libcurl",
                "--hsts",
                "--alt-svc",
            ])],
            hooks: Hooks {
                writes: Some(curl_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("curl -sSLo out.json https://x.y/a", "writes out.json"),
            ("curl -O https://x.y/a/.bashrc", "writes .bashrc"),
            ("curl https://x.y/a", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["wget"],
        node: Node {
            options: WGET,
            writes: &[Writes::OptionValue(&[
                "-o",
                "-a",
                "--output-file",
                "--append-output",
                "--save-cookies",
                "--warc-file",
                "--rejected-log",
                "--hsts-file",
            ])],
            hooks: Hooks {
                writes: Some(wget_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("wget -O x.tgz https://x.y/a", "writes x.tgz"),
            ("wget https://x.y/a/b.tgz", "writes b.tgz"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["ssh"],
        node: SSH,
        args: super::schema::Args::Read,
        takes_command: true,
        examples: &[
            ("ssh host 'rm -rf x'", "runs 'rm -rf x'"),
            ("ssh -o ProxyCommand='nc %h %p' host", "runs 'nc %h %p'"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["scp", "sftp"],
        node: SSH,
        examples: &[
            ("scp a host:b", "plain"),
            ("sftp -D 'rm -rf x' host", "runs 'rm -rf x'"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["rsync"],
        node: Node {
            options: RSYNC,
            runs: &[Runs::OptionCommand(&["-e", "--rsh", "--rsync-path"])],
            writes: &[
                Writes::OptionValue(&[
                    "--backup-dir",
                    "--log-file",
                    "--write-batch",
                    "--only-write-batch",
                    "--temp-dir",
                    "-T",
                    "--partial-dir",
                ]),
                Writes::Copy {
                    kind: Copy::Sync,
                    target_dir: &[],
                    no_target_dir: &[],
                },
            ],
            // `--delete…` empties the destination of what the source lacks;
            // `--remove-source-files` moves the sources' files away.
            removes: &[
                Removes::Last(&[
                    "--delete",
                    "--del",
                    "--delete-before",
                    "--delete-during",
                    "--delete-delay",
                    "--delete-after",
                    "--delete-excluded",
                    "--delete-missing-args",
                ]),
                Removes::Sources(&["--remove-source-files"], &[]),
            ],
            ..Node::NONE
        },
        examples: &[
            (
                "rsync -a --delete empty/ out",
                "writes out, out; removes out",
            ),
            (
                "rsync -a --remove-source-files a b",
                "writes b/a, b; removes a",
            ),
            ("rsync -a src/ out", "writes out, out"),
            ("rsync -e 'ssh -p 2' a host:b", "runs 'ssh -p 2'"),
        ],
        ..Program::BASE
    },
];

/// `ssh [options] HOST COMMAND…` (and `scp`, `sftp`): the command, and the
/// `-o …Command=…` options, which run here.
fn ssh(c: &Ctx<'_>, _: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let short_value = match c.name {
        "scp" => "cFiJloPSX",
        "sftp" => "BbcDFiJlPRSsoX",
        _ => "BbcDEeFIiJLlmOopQRSWw",
    };
    let spec = OptionSpec {
        short_value,
        complete: true,
        ..OptionSpec::NONE
    };
    let args = &c.words[c.at..];
    let host = options::scan(args, 0, &spec).start;
    if c.name == "sftp" {
        // `-D PROGRAM`: a local sftp server program it runs.
        for v in options::values(&args[..host], &spec, &["-D"]) {
            run_string(&value_word(args, &v), c.role, "`sftp -D`", a);
        }
    }
    for v in options::values(&args[..host], &spec, &["-o"]) {
        let lower = v.text.to_ascii_lowercase();
        for key in [
            "proxycommand",
            "localcommand",
            "remotecommand",
            "knownhostscommand",
        ] {
            if let Some(rest) = lower.strip_prefix(key) {
                let value = rest.trim_start_matches([' ', '=', '\t']);
                let mut w = args[v.at].clone();
                w.text = v.text[v.text.len() - value.len()..].to_string();
                run_string(&w, c.role, "`ssh -o …Command`", a);
            }
        }
    }
    if c.name != "ssh" || host >= args.len() {
        return None;
    }
    let cmd = &args[host + 1..];
    if cmd.iter().any(|w| w.dynamic) {
        a.dynamic = Some("`ssh` runs a remote command only known when it runs".into());
    } else if !cmd.is_empty() {
        let s: Vec<&str> = cmd.iter().map(|w| w.text.as_str()).collect();
        a.derived.push(Derived::Source(s.join(" "), Role::Checked));
    }
    None
}

/// The last part of a URL's path (what `curl -O` and `wget` name the file).
fn url_basename(u: &str) -> Option<String> {
    let path = u.split(['?', '#']).next()?;
    let after = path.split_once("://").map_or(path, |(_, r)| r);
    let (_, p) = after.split_once('/')?;
    let name = p.rsplit('/').next()?;
    (!name.is_empty()).then(|| name.to_string())
}

/// Each URL's file name, in `dir` when given.
fn url_names(v: &Argv<'_>, dir: Option<&str>, out: &mut Vec<Target>) {
    for (k, a) in v.args().iter().enumerate() {
        if a.contains("://") {
            if let Some(b) = url_basename(a) {
                let p = match dir {
                    Some(d) => format!("{d}/{b}"),
                    None => b,
                };
                out.push(Target::new(&p, v.dyn_arg(k)));
            }
        }
    }
}

/// `curl -o FILE` (in `--output-dir DIR`), `-O` (the URL's name), and
/// `-w '%output{FILE}…'` (curl 8.3: where is not read here).
fn curl_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let out_dir = options::values(args, &CURL, &["--output-dir"]).pop();
    for o in options::values(args, &CURL, &["-o", "--output"]) {
        match &out_dir {
            Some(d) if !o.text.starts_with('/') => out.push(Target::new(
                &format!("{}/{}", d.text, o.text),
                v.dyn_arg(o.at) || v.dyn_arg(d.at),
            )),
            _ => out.push(Target::new(&o.text, v.dyn_arg(o.at))),
        }
    }
    if options::values(args, &CURL, &["-w", "--write-out"])
        .iter()
        .any(|o| o.text.contains("%output{"))
    {
        out.push(Target::new("$(curl --write-out %output)", true));
    }
    if options::flagged(args, &CURL, &["-O", "--remote-name", "--remote-name-all"]) {
        let dir = options::values(args, &CURL, &["--output-dir"])
            .into_iter()
            .next()
            .map(|o| o.text);
        url_names(v, dir.as_deref(), out);
        // `-J`: the server names the file (Content-Disposition).
        if options::flagged(args, &CURL, &["-J", "--remote-header-name"]) {
            let mut t = Target::new(dir.as_deref().unwrap_or("."), false);
            t.contents = true;
            out.push(t);
        }
    }
}

/// `wget -O FILE`, else each URL's name (in `-P DIR`); `-e COMMAND` sets
/// any wgetrc setting (`output_document=…`, `dir_prefix=…`) and `-x`/`-r`
/// make the URL's folders locally: where they write is not read here.
fn wget_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let explicit = options::values(args, &WGET, &["-O", "--output-document"]);
    for o in &explicit {
        out.push(Target::new(&o.text, v.dyn_arg(o.at)));
    }
    if explicit.is_empty() {
        let dir = options::values(args, &WGET, &["-P", "--directory-prefix"])
            .into_iter()
            .next()
            .map(|o| o.text);
        url_names(v, dir.as_deref(), out);
    }
    let commands = !options::values(args, &WGET, &["-e", "--execute"]).is_empty()
        || args.iter().any(|a| a.starts_with("--execute="));
    let folders = options::flagged(
        args,
        &WGET,
        &[
            "-x",
            "-r",
            "-m",
            "--force-directories",
            "--recursive",
            "--mirror",
        ],
    );
    if commands || folders {
        out.push(Target::new(
            "$(wget: a path from its settings or URLs)",
            true,
        ));
    }
}
