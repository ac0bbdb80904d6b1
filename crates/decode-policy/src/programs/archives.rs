//! Archivers and compressors: `tar`, `zip`, `unzip`, `7z`, `gzip` and its
//! kind, `split`. What they run (`tar --to-command`, `zip -TT`, `split
//! --filter`) and where they write: the archive they create, where they
//! extract, what decompressing names (docs/permissions.md, "Fail closed").

use super::schema::{Argv, Ctx, Hooks, Node, Program, Removes, Runs, Writes};
use super::support::run_string;
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Target};

/// tar's options that take a value (it has more: an option it does not
/// know is read both ways).
const TAR: OptionSpec<'static> = OptionSpec {
    short_value: "bCfFgHIKLNTVX",
    glued: "",
    value: &[
        "--checkpoint-action",
        "--to-command",
        "--use-compress-program",
        "--info-script",
        "--new-volume-script",
        "--rsh-command",
        "--rmt-command",
        "--directory",
        "--file",
        "--files-from",
        "--exclude-from",
        "--blocking-factor",
        "--format",
        "--listed-incremental",
        "--newer",
        "--label",
    ],
    flags: &[],
    complete: false,
};

const UNZIP: OptionSpec<'static> = OptionSpec {
    short_value: "dP",
    glued: "",
    value: &[],
    flags: &[],
    complete: false,
};

/// GNU split: `--filter`, and the pieces `PREFIX` + a suffix.
pub(crate) const SPLIT: OptionSpec<'static> = OptionSpec {
    short_value: "abClnt",
    glued: "",
    value: &[
        "--suffix-length",
        "--bytes",
        "--line-bytes",
        "--lines",
        "--number",
        "--separator",
        "--additional-suffix",
        "--filter",
    ],
    flags: &[],
    complete: true,
};

const COMPRESSORS: &[&str] = &[
    "gunzip",
    "gzip",
    "unxz",
    "xz",
    "bunzip2",
    "bzip2",
    "unzstd",
    "zstd",
    "unlzma",
    "lzma",
    "unlz4",
    "lz4",
    "uncompress",
];

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        names: &["tar", "gtar", "bsdtar"],
        node: Node {
            options: TAR,
            runs: &[Runs::OptionCommand(&[
                "-I",
                "-F",
                "--to-command",
                "--use-compress-program",
                "--info-script",
                "--new-volume-script",
                "--rsh-command",
                "--rmt-command",
            ])],
            hooks: Hooks {
                see: Some(tar_see),
                writes: Some(archive_writes),
                ..Hooks::NONE
            },
            removes: &[
                Removes::OperandsWith(&["--remove-files"]),
                Removes::By(tar_removes_under),
            ],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            (
                "tar --remove-files -czf a.tgz src",
                "writes a.tgz; removes a.tgz, src",
            ),
            ("tar -xzf a.tgz -C out", "writes out"),
            ("tar -cf out.tar src", "writes out.tar"),
            (
                "tar --to-command='sh -c x' -xf a.tar",
                "runs 'sh -c x'; writes .",
            ),
            (
                "tar cIf 'rm -rf /home' x.tar .",
                "runs 'rm -rf /home'; writes x.tar",
            ),
            ("tar -tf a.tar", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["zip"],
        node: Node {
            options: OptionSpec {
                value: &["-TT", "--unzip-command"],
                ..OptionSpec::NONE
            },
            runs: &[Runs::OptionLine(&["-TT", "--unzip-command"])],
            // `-m`/`--move`: the files are removed once archived.
            removes: &[Removes::OperandsWith(&["-m", "--move"])],
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("zip -T -TT 'rm -rf x' a.zip f", "runs 'rm -rf x'"),
            ("zip -rm a.zip src", "removes a.zip, src"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["unzip"],
        node: Node {
            options: UNZIP,
            hooks: Hooks {
                writes: Some(archive_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        generic_verbs: false,
        examples: &[
            ("unzip x.zip -d out", "writes out"),
            ("unzip -l x.zip", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["cpio", "bsdcpio", "pax", "ar"],
        node: Node {
            hooks: Hooks {
                writes: Some(unpack_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        examples: &[
            ("cpio -idm -D ~/x", "writes ~/x"),
            ("cpio -pdm /srv/out", "writes /srv/out"),
            ("cpio -o", "plain"),
            ("pax -r -f a.pax", "writes ."),
            ("ar x lib.a --output=objs", "writes objs"),
            ("ar t lib.a", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &[
            "dpkg-deb",
            "unsquashfs",
            "cabextract",
            "unar",
            "unrar",
            "jar",
        ],
        node: Node {
            hooks: Hooks {
                writes: Some(unpack_into_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        examples: &[
            ("dpkg-deb -x a.deb ~/x", "writes ~/x"),
            ("dpkg-deb -c a.deb", "plain"),
            ("unsquashfs -d ~/x a.sqfs", "writes ~/x"),
            ("cabextract -d ~/x a.cab", "writes ~/x"),
            ("unar -o ~/x a.zip", "writes ~/x"),
            ("unrar x a.rar ~/x/", "writes ~/x/"),
            ("jar xf a.jar", "writes ."),
            ("jar tf a.jar", "plain"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["7z", "7za", "7zr", "7zz"],
        node: Node {
            hooks: Hooks {
                writes: Some(archive_writes),
                ..Hooks::NONE
            },
            // `-sdel`: the files are removed once archived.
            removes: &[Removes::By(seven_zip_sdel)],
            ..Node::NONE
        },
        examples: &[
            ("7z x a.7z -oout", "writes out"),
            ("7z a -sdel a.7z src", "removes a, a.7z, src"),
        ],
        ..Program::BASE
    },
    Program {
        names: COMPRESSORS,
        node: Node {
            options: OptionSpec {
                short_value: "So",
                value: &["--suffix", "--output"],
                ..OptionSpec::NONE
            },
            writes: &[Writes::OptionValue(&["-o", "--output"])],
            hooks: Hooks {
                writes: Some(compressor_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        examples: &[
            ("gunzip ~/.bashrc.gz", "writes ~/.bashrc"),
            ("gzip -k a", "writes a.gz"),
            ("xz big.log", "writes big.log.xz"),
        ],
        ..Program::BASE
    },
    Program {
        names: &["split", "csplit"],
        node: Node {
            options: SPLIT,
            runs: &[Runs::OptionLine(&["--filter"])],
            hooks: Hooks {
                writes: Some(split_writes),
                ..Hooks::NONE
            },
            ..Node::NONE
        },
        examples: &[
            ("split -n13 -a1 x ~/.bashr", "writes ~/.bashr$(suffix)"),
            (
                "split --filter='gzip > $FILE.gz' big",
                "runs 'gzip > $FILE.gz'",
            ),
        ],
        ..Program::BASE
    },
];

/// `tar --checkpoint-action=exec=CMD` (also after other actions,
/// `echo,exec=CMD`), and the old style (`tar cIf CMD x.tar .`), where each
/// letter that takes a value takes the next word in turn.
fn tar_see(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at..];
    for v in options::values(args, &TAR, &["--checkpoint-action"]) {
        if let Some((_, cmd)) = v.text.split_once("exec=") {
            let mut w = args[v.at].clone();
            w.text = cmd.to_string();
            run_string(&w, c.role, "`tar --checkpoint-action=exec`", a);
        }
    }
    if let Some(first) = args.first().filter(|w| !w.text.starts_with('-')) {
        let valued = first
            .text
            .chars()
            .filter(|ch| TAR.short_value.contains(*ch));
        for (next, ch) in (1..).zip(valued) {
            if let Some(w) = args.get(next).filter(|_| matches!(ch, 'I' | 'F')) {
                run_string(w, c.role, "`tar`", a);
            }
        }
    }
    start
}

/// `tar --remove-files -C DIR MEMBERS`: the members are DIR's, which the
/// operands alone do not say; DIR counts as removed (fail closed: `-C /
/// home` removes /home).
fn tar_removes_under(core: &[String]) -> Vec<&str> {
    if !core.iter().any(|a| a == "--remove-files") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (k, a) in core.iter().enumerate().skip(1) {
        if let Some(v) = a.strip_prefix("--directory=") {
            out.push(v);
        } else if matches!(a.as_str(), "-C" | "--directory") {
            if let Some(v) = core.get(k + 1) {
                out.push(v.as_str());
            }
        } else if let Some(v) = a.strip_prefix("-C").filter(|v| !v.is_empty()) {
            out.push(v);
        }
    }
    out
}

/// What `tar`, `unzip` and `7z` write: the archive tar creates or appends
/// to (and its own records), and where they extract. The archive's names
/// are not known; the destination is judged (the kernel sandbox keeps
/// protected files read-only).
fn archive_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let name = v.name();
    if name != "unzip" && name != "7z" {
        tar_archive(v, out);
    }
    let args = v.args();
    let extract = if name == "unzip" {
        // -l, -v, -t, -Z list or test; -p extracts to standard output.
        !args.iter().any(|a| {
            a.starts_with('-') && !a.starts_with("--") && a.contains(['l', 'v', 't', 'Z', 'p'])
        })
    } else {
        args.iter().enumerate().any(|(k, a)| {
            a == "--extract"
                || a == "--get"
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('x'))
                || (k == 0 && !a.starts_with('-') && a.contains('x'))
                || a == "x"
        })
    };
    if extract {
        extract_targets(v, out);
    }
}

/// The archive tar creates or appends to (`-cf FILE`), its listed-incremental
/// and index files, and `--one-top-level`.
fn tar_archive(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let old_style = args.first().filter(|a| !a.starts_with('-'));
    let letters: String = args
        .iter()
        .filter(|a| a.starts_with('-') && !a.starts_with("--"))
        .chain(old_style)
        .map(|a| a.as_str())
        .collect();
    let writes_archive = letters.contains(['c', 'r', 'u', 'A'])
        || args.iter().any(|a| {
            matches!(
                a.as_str(),
                "--create" | "--append" | "--update" | "--concatenate" | "--catenate"
            )
        });
    let mut wanted = vec!["-g", "--listed-incremental", "--index-file"];
    if writes_archive {
        wanted.extend(["-f", "--file"]);
    }
    for o in options::values(args, &TAR, &wanted) {
        out.push(Target::new(&o.text, v.dyn_arg(o.at)));
    }
    for (k, a) in args.iter().enumerate() {
        for p in ["--index-file=", "--one-top-level="] {
            if let Some(x) = a.strip_prefix(p) {
                out.push(Target::new(x, v.dyn_arg(k)));
            }
        }
    }
    if let (true, Some(first)) = (writes_archive, old_style) {
        // `tar cf FILE …`: each value letter takes the next word.
        let valued = first.chars().filter(|c| TAR.short_value.contains(*c));
        for (next, c) in (1..).zip(valued) {
            if let Some(f) = args.get(next).filter(|_| c == 'f') {
                out.push(Target::new(f, v.dyn_arg(next)));
            }
        }
    }
}

/// Where `tar -x`, `unzip` and `7z x` put files: the destination folder
/// (`-C DIR`, `-d DIR`, `-oDIR`, else here), and each member named on the
/// command line in it (`tar -C ~ -xf a.tar .bashrc`).
fn extract_targets(v: &Argv<'_>, out: &mut Vec<Target>) {
    let (name, args) = (v.name(), v.args());
    let dirs: Vec<(usize, String)> = match name {
        "unzip" => options::values(args, &UNZIP, &["-d"])
            .into_iter()
            .map(|o| (o.at, o.text))
            .collect(),
        // `7z x a.7z -oDIR`: attached only.
        "7z" => args
            .iter()
            .enumerate()
            .filter_map(|(k, a)| Some((k, a.strip_prefix("-o")?.to_string())))
            .collect(),
        _ => tar_dirs(args),
    };
    let destination = |d: &str, dynamic: bool| {
        let mut t = Target::new(d, dynamic);
        t.contents = true;
        t.archive = true;
        t
    };
    if dirs.is_empty() {
        out.push(destination(".", false));
    }
    let members: Vec<usize> = match name {
        "unzip" => options::operands(args, &UNZIP)
            .into_iter()
            .skip(1)
            .collect(),
        "7z" => Vec::new(),
        _ => {
            let old_style = args.first().is_some_and(|a| !a.starts_with('-'));
            let archive: Vec<usize> = options::values(args, &TAR, &["-f", "--file"])
                .iter()
                .map(|o| o.at)
                .collect();
            options::operands(args, &TAR)
                .into_iter()
                .filter(|k| !archive.contains(k) && (*k > 0 || !old_style))
                .collect()
        }
    };
    for (k, d) in &dirs {
        out.push(destination(d, v.dyn_arg(*k)));
    }
    // `tar -P` keeps absolute names: anywhere.
    if name != "unzip" && options::flagged(args, &TAR, &["-P", "--absolute-names"]) {
        out.push(Target::new("$(absolute names in the archive)", true));
    }
    let places: Vec<(String, bool)> = if dirs.is_empty() {
        vec![(".".to_string(), false)]
    } else {
        dirs.iter()
            .map(|(k, d)| (d.clone(), v.dyn_arg(*k)))
            .collect()
    };
    for &m in &members {
        for (d, dd) in &places {
            let member = args[m].trim_start_matches("./");
            out.push(Target::new(&format!("{d}/{member}"), *dd || v.dyn_arg(m)));
        }
    }
}

/// Where `cpio -i|-p`, `pax -r` and `ar x` put the files of an archive
/// (names the gate cannot know): `cpio -D DIR` or `--directory`, the
/// pass-through folder (`cpio -p DIR`, `pax -rw … DIR`), `ar --output`, else
/// the folder they run in.
fn unpack_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let (name, args) = (v.name(), v.args());
    let short = |c: char| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
    };
    let (extracts, passes) = match name {
        "ar" => {
            let first = args.iter().find(|a| !a.starts_with("--"));
            (
                first.is_some_and(|a| a.trim_start_matches('-').contains('x')),
                false,
            )
        }
        "pax" => (short('r'), short('r') && short('w')),
        _ => (
            short('i') || args.iter().any(|a| a == "--extract"),
            short('p') || args.iter().any(|a| a == "--pass-through"),
        ),
    };
    if !extracts && !passes {
        return;
    }
    let mut dirs: Vec<(String, bool)> = Vec::new();
    for (k, a) in args.iter().enumerate() {
        let value = |opt: &str| -> Option<(String, bool)> {
            if a == opt {
                return args.get(k + 1).map(|d| (d.clone(), v.dyn_arg(k + 1)));
            }
            let glued = a.strip_prefix(opt)?;
            let glued = glued.strip_prefix('=').unwrap_or(glued);
            (!glued.is_empty() && (opt.len() == 2 || a.contains('=')))
                .then(|| (glued.to_string(), v.dyn_arg(k)))
        };
        let found = match name {
            "ar" => value("--output"),
            "pax" => None,
            _ => value("-D").or_else(|| value("--directory")),
        };
        dirs.extend(found);
    }
    if passes {
        if let Some(k) = args.iter().rposition(|a| !a.starts_with('-')) {
            dirs.push((args[k].clone(), v.dyn_arg(k)));
        }
    }
    if dirs.is_empty() {
        dirs.push((".".to_string(), false));
    }
    for (d, dynamic) in dirs {
        let mut t = Target::new(&d, dynamic);
        t.contents = true;
        t.archive = true;
        out.push(t);
    }
}

/// Where other unpackers put files whose names come from their input:
/// `dpkg-deb -x A DIR`, `unsquashfs -d DIR`,
/// `cabextract -d DIR`, `unar -o DIR`, `unrar x A DIR/`, `jar x` (here).
fn unpack_into_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let (name, args) = (v.name(), v.args());
    let operands: Vec<usize> = (0..args.len())
        .filter(|&k| !args[k].starts_with('-'))
        .collect();
    let value = |opts: &[&str]| -> Option<(String, bool)> {
        args.iter().enumerate().find_map(|(k, a)| {
            opts.iter().find_map(|o| {
                if a == o {
                    return args.get(k + 1).map(|d| (d.clone(), v.dyn_arg(k + 1)));
                }
                let rest = a.strip_prefix(o)?;
                let rest = rest.strip_prefix('=').unwrap_or(rest);
                (!rest.is_empty()).then(|| (rest.to_string(), v.dyn_arg(k)))
            })
        })
    };
    let here = Some((".".to_string(), false));
    let dest = match name {
        "dpkg-deb" => args
            .iter()
            .any(|a| {
                matches!(
                    a.as_str(),
                    "-x" | "-X" | "--extract" | "--vextract" | "-R" | "--raw-extract"
                )
            })
            .then(|| operands.last().map(|&k| (args[k].clone(), v.dyn_arg(k))))
            .flatten(),
        "unsquashfs" => value(&["-d", "-dest"]).or(Some(("squashfs-root".into(), false))),
        "cabextract" => value(&["-d", "--directory"]).or(here),
        "unar" => value(&["-o", "-output-directory", "--output-directory"]).or(here),
        "unrar" => match operands.first().map(|&k| args[k].as_str()) {
            Some("x" | "e") => operands
                .last()
                .filter(|&&k| operands.len() > 2 && args[k].ends_with('/'))
                .map(|&k| (args[k].clone(), v.dyn_arg(k)))
                .or(here),
            _ => None,
        },
        // `jar xf a.jar`: the first word's letters.
        _ => args
            .first()
            .is_some_and(|a| a.trim_start_matches('-').contains('x'))
            .then_some((".".to_string(), false)),
    };
    if let Some((d, dynamic)) = dest {
        let mut t = Target::new(&d, dynamic);
        t.contents = true;
        t.archive = true;
        out.push(t);
    }
}

/// Where tar extracts (`-C DIR`, `--directory=DIR`, in any cluster), and in
/// the old style without a dash (`tar xzCf DIR a.tgz`), where each letter
/// that takes a value takes the next word in turn.
fn tar_dirs(args: &[String]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = options::values(args, &TAR, &["-C", "--directory"])
        .into_iter()
        .map(|v| (v.at, v.text))
        .collect();
    if let Some(first) = args.first().filter(|a| !a.starts_with('-')) {
        let mut next = 1;
        for c in first.chars() {
            if TAR.short_value.contains(c) {
                if c == 'C' {
                    if let Some(d) = args.get(next) {
                        out.push((next, d.clone()));
                    }
                }
                next += 1;
            }
        }
    }
    out
}

/// Decompressing writes each file without its suffix (`gunzip ~/.bashrc.gz`
/// writes ~/.bashrc), compressing with one, unless to standard output;
/// `gunzip -N` the name stored in the archive.
fn compressor_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let (name, args) = (v.name(), v.args());
    let spec = OptionSpec {
        short_value: "So",
        value: &["--suffix", "--output"],
        ..OptionSpec::NONE
    };
    let decompress = name.starts_with("un")
        || name == "gunzip"
        || name == "bunzip2"
        || options::flagged(args, &spec, &["-d", "--decompress", "--uncompress"]);
    let to_stdout = options::flagged(args, &spec, &["-c", "--stdout", "--to-stdout"]);
    if decompress && !to_stdout && options::flagged(args, &spec, &["-N", "--name"]) {
        out.push(Target::new("$(name stored in the archive)", true));
    }
    if to_stdout {
        return;
    }
    let suffix = options::values(args, &spec, &["-S", "--suffix"]).pop();
    for k in options::operands(args, &spec) {
        let f = args[k].as_str();
        if !decompress {
            let ext = match name {
                "gzip" => ".gz",
                "xz" => ".xz",
                "bzip2" => ".bz2",
                "zstd" => ".zst",
                "lzma" => ".lzma",
                _ => ".lz4",
            };
            let ext = suffix.as_ref().map_or(ext, |s| s.text.as_str());
            out.push(Target::new(&format!("{f}{ext}"), v.dyn_arg(k)));
            continue;
        }
        let stripped = [
            ".gz", ".xz", ".bz2", ".zst", ".lzma", ".lz4", ".Z", ".tgz", ".z",
        ]
        .iter()
        .copied()
        .chain(suffix.iter().map(|s| s.text.as_str()))
        .find_map(|x| f.strip_suffix(x).filter(|s| !s.is_empty()));
        out.push(Target::new(stripped.unwrap_or(f), v.dyn_arg(k)));
    }
}

/// The pieces are PREFIX (the second operand; `-f PREFIX` for csplit)
/// followed by a suffix: `split -n13 -a1 x ~/.bashr` writes ~/.bashrc.
fn split_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    let prefix = if v.name() == "split" {
        options::operands(args, &SPLIT)
            .get(1)
            .map(|&k| args[k].clone())
    } else {
        let spec = OptionSpec {
            short_value: "bfn",
            value: &["--suffix-format", "--prefix", "--digits"],
            complete: true,
            ..OptionSpec::NONE
        };
        options::values(args, &spec, &["-f", "--prefix"])
            .pop()
            .map(|o| o.text)
    };
    if let Some(p) = prefix {
        out.push(Target::new(&format!("{p}$(suffix)"), true));
    }
}

/// `7z … -sdel`: every word that is no switch (the command letter, the
/// archive and the files) counts as moved away — the archive and the
/// command letter are never critical folders.
fn seven_zip_sdel(core: &[String]) -> Vec<&str> {
    let args = core.get(1..).unwrap_or_default();
    if !args.iter().any(|a| a.eq_ignore_ascii_case("-sdel")) {
        return Vec::new();
    }
    args.iter()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect()
}
