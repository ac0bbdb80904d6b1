//! Where a simple command writes (docs/permissions.md, "Fail closed"):
//! redirect targets, and the targets of the commands that write, copy, move
//! or link files. A target the gate cannot place — only known when the
//! command runs, relative to a folder only known then, or through a link the
//! same command made — counts as naming a protected file.

use super::Redir;
use crate::options::{self, OptionSpec};

/// One place a command writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The path as written (quoting removed).
    pub raw: String,
    /// Only known when the command runs.
    pub dynamic: bool,
    /// A file copied, moved or linked into `raw`: when `raw` is a folder the
    /// file lands at `raw/basename(from)`.
    pub from: Option<String>,
    /// `ln` creates a link here.
    pub link: bool,
    /// Files whose names the gate cannot know land inside `raw` (an
    /// archive extracted, a folder's contents copied: `cp -r x/. .`).
    pub contents: bool,
}

impl Target {
    pub(super) fn new(raw: &str, dynamic: bool) -> Target {
        Target {
            raw: raw.to_string(),
            dynamic,
            from: None,
            link: false,
            contents: false,
        }
    }
}

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

/// A program with more options than listed here: an option it does not know
/// may take the next word, which then counts as an operand too.
const fn partial(short_value: &'static str, value: &'static [&'static str]) -> OptionSpec<'static> {
    OptionSpec {
        short_value,
        glued: "",
        value,
        flags: &[],
        complete: false,
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
pub(super) const RSYNC: OptionSpec<'static> = partial(
    "efBTM",
    &[
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
);
const TEE: OptionSpec<'static> = known("", &[]);
const TOUCH: OptionSpec<'static> = known("drt", &["--date", "--reference", "--time"]);
const TRUNCATE: OptionSpec<'static> = known("rs", &["--reference", "--size"]);
const MKDIR: OptionSpec<'static> = known("m", &["--mode"]);
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
const CURL: OptionSpec<'static> = partial(
    "AbcCdDeEFHKmoPQrtTuUwxXyYz",
    &[
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
);
const WGET: OptionSpec<'static> = OptionSpec {
    // `-nv`, `-nc`, `-nd`: `-n` and one letter.
    glued: "n",
    ..partial(
        "eoaiBtOTwQPlARDIXU",
        &[
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
    )
};
const SED: OptionSpec<'static> = OptionSpec {
    // `-i[SUFFIX]`: a suffix only attached.
    glued: "i",
    ..known("efl", &["--expression", "--file", "--line-length"])
};
const TAR: OptionSpec<'static> = partial(
    "bCfFgHKLNTVX",
    &[
        "--directory",
        "--file",
        "--files-from",
        "--exclude-from",
        "--blocking-factor",
        "--format",
        "--listed-incremental",
        "--newer",
        "--label",
        "--use-compress-program",
    ],
);
const UNZIP: OptionSpec<'static> = partial("dP", &[]);
/// GNU split: `--filter`, and the pieces `PREFIX` + a suffix.
pub(super) const SPLIT: OptionSpec<'static> = known(
    "abClnt",
    &[
        "--suffix-length",
        "--bytes",
        "--line-bytes",
        "--lines",
        "--number",
        "--separator",
        "--additional-suffix",
        "--filter",
    ],
);
/// util-linux script: `-t[FILE]` takes its file only attached.
pub(super) const SCRIPT: OptionSpec<'static> = OptionSpec {
    glued: "t",
    ..known(
        "cEBIOTmo",
        &[
            "--command",
            "--echo",
            "--log-io",
            "--log-in",
            "--log-out",
            "--log-timing",
            "--logging-format",
            "--output-limit",
        ],
    )
};

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

fn url_basename(u: &str) -> Option<String> {
    let path = u.split(['?', '#']).next()?;
    let after = path.split_once("://").map_or(path, |(_, r)| r);
    let (_, p) = after.split_once('/')?;
    let name = p.rsplit('/').next()?;
    (!name.is_empty()).then(|| name.to_string())
}

/// Where the command `core` (program first, seen through) writes, and its
/// write redirections. `dynamic[k]`: `core[k]` is only known when it runs.
pub(crate) fn targets(core: &[String], dynamic: &[bool], redirs: &[Redir]) -> Vec<Target> {
    let mut out = Vec::new();
    for r in redirs {
        if let (true, Some(p)) = (r.write, &r.path) {
            out.push(Target::new(p, r.dynamic));
        }
    }
    let Some(name) = core.first() else {
        return out;
    };
    let args = &core[1..];
    let dy = |k: usize| dynamic.get(k + 1).copied().unwrap_or(false);
    let push = |out: &mut Vec<Target>, k: usize| out.push(Target::new(&args[k], dy(k)));
    match name.as_str() {
        "cp" | "mv" | "install" | "ln" | "rsync" => {
            let spec = match name.as_str() {
                "cp" => CP,
                "mv" => MV,
                "install" => INSTALL,
                "ln" => LN,
                _ => RSYNC,
            };
            let pos = options::operands(args, &spec);
            let target_dir: &[&str] = if name == "rsync" {
                &[]
            } else {
                &["-t", "--target-directory"]
            };
            let given_dir = options::values(args, &spec, target_dir).into_iter().next();
            let mut dir = None;
            let mut sources: Vec<usize> = pos.clone();
            if given_dir.is_none() {
                if name == "install" && options::flagged(args, &spec, &["-d", "--directory"]) {
                    for &k in &pos {
                        push(&mut out, k);
                    }
                    return out;
                }
                if pos.len() >= 2 || (name != "ln" && !pos.is_empty()) {
                    dir = sources.pop();
                }
            }
            let dests: Vec<Target> = match (dir, given_dir) {
                (Some(k), _) => vec![Target::new(&args[k], dy(k))],
                (None, Some(v)) => vec![Target::new(&v.text, dy(v.at))],
                // `ln -s TARGET`: the link is made in the current folder.
                (None, None) if name == "ln" => vec![Target::new(".", false)],
                (None, None) => Vec::new(),
            };
            // `cp -T`, `mv -T`: the source's contents land in the target;
            // so do `x/.` and, for rsync, `x/`.
            let no_target_dir =
                name != "rsync" && options::flagged(args, &spec, &["-T", "--no-target-directory"]);
            // A backup of what is overwritten, named by a suffix (`-b -S rc`
            // turns `~/.bash` into `~/.bashrc`); without `-S` the suffix may
            // come from the environment (SIMPLE_BACKUP_SUFFIX).
            let backup = options::flagged(args, &spec, &["-b", "--backup", "-S", "--suffix"]);
            let suffix = match options::values(args, &spec, &["-S", "--suffix"]).pop() {
                Some(v) => (v.text, dy(v.at)),
                None => ("$SIMPLE_BACKUP_SUFFIX".to_string(), true),
            };
            // rsync's own files: logs, batches, and folders it writes into.
            let own = [
                "--backup-dir",
                "--log-file",
                "--write-batch",
                "--only-write-batch",
                "--temp-dir",
                "-T",
                "--partial-dir",
            ];
            if name == "rsync" {
                for v in options::values(args, &spec, &own) {
                    out.push(Target::new(&v.text, dy(v.at)));
                }
            }
            let backups: Vec<Target> = if backup {
                dests
                    .iter()
                    .flat_map(|d| {
                        let mut named =
                            Target::new(&format!("{}{}", d.raw, suffix.0), d.dynamic || suffix.1);
                        named.link = false;
                        let inside = sources.iter().map(|&s| {
                            let mut t = Target::new(&d.raw, d.dynamic || suffix.1 || dy(s));
                            t.from = Some(format!("{}{}", args[s], suffix.0));
                            t
                        });
                        std::iter::once(named).chain(inside).collect::<Vec<_>>()
                    })
                    .collect()
            } else {
                Vec::new()
            };
            out.extend(backups);
            for d in dests {
                if name == "rsync" && d.raw.contains(':') {
                    continue;
                }
                for &s in &sources {
                    let src = args[s].as_str();
                    let mut t = d.clone();
                    t.from = Some(src.to_string());
                    t.link = name == "ln";
                    t.dynamic |= dy(s);
                    t.contents = name != "ln"
                        && (no_target_dir
                            || src == "."
                            || src.ends_with("/.")
                            || (name == "rsync" && src.ends_with('/')));
                    out.push(t);
                }
                let mut t = d;
                t.link = name == "ln";
                out.push(t);
            }
            if name == "ln" {
                // A link's target counts like a target: `ln -s ~/.bashrc x`.
                for &s in &sources {
                    push(&mut out, s);
                }
            }
        }
        "git" => {
            // `git --work-tree=DIR checkout …`: the work tree is DIR, and the
            // files git writes there are named by the repository.
            let globals = options::scan(args, 0, &crate::caps::GIT).start;
            let work_trees = options::values(&args[..globals], &crate::caps::GIT, &["--work-tree"]);
            let sub = args.get(globals).map(String::as_str).unwrap_or("");
            let writes_tree = matches!(
                sub,
                "checkout"
                    | "checkout-index"
                    | "restore"
                    | "reset"
                    | "stash"
                    | "read-tree"
                    | "switch"
                    | "merge"
                    | "pull"
                    | "rebase"
                    | "cherry-pick"
                    | "revert"
                    | "apply"
                    | "am"
                    | "clean"
                    | "rm"
                    | "mv"
                    | "worktree"
            );
            if writes_tree {
                for v in &work_trees {
                    let mut t = Target::new(&v.text, dy(v.at));
                    t.contents = true;
                    out.push(t);
                }
            }
            if sub == "checkout-index" {
                // `--prefix=DIR/` puts the files under DIR.
                for (k, a) in args.iter().enumerate().skip(globals) {
                    if let Some(p) = a.strip_prefix("--prefix=") {
                        let mut t = Target::new(if p.is_empty() { "." } else { p }, dy(k));
                        t.contents = true;
                        out.push(t);
                    }
                }
            }
            // `git config --file FILE …` writes FILE.
            if let Some(("config", rest)) = crate::caps::git_subcommand(core) {
                let spec = known(
                    "f",
                    &["--file", "--blob", "--default", "--type", "--comment"],
                );
                for v in options::values(rest, &spec, &["-f", "--file"]) {
                    let at = core.len() - rest.len() + v.at;
                    out.push(Target::new(
                        &v.text,
                        dynamic.get(at).copied().unwrap_or(false),
                    ));
                }
            }
        }
        "gunzip" | "gzip" | "unxz" | "xz" | "bunzip2" | "bzip2" | "unzstd" | "zstd" | "unlzma"
        | "lzma" | "unlz4" | "lz4" | "uncompress" => {
            // Decompressing writes each file without its suffix (`gunzip
            // ~/.bashrc.gz` writes ~/.bashrc), unless to standard output.
            let spec = partial("So", &["--suffix", "--output"]);
            let decompress =
                matches!(
                    name.as_str(),
                    "gunzip" | "unxz" | "bunzip2" | "unzstd" | "unlzma" | "unlz4" | "uncompress"
                ) || options::flagged(args, &spec, &["-d", "--decompress", "--uncompress"]);
            let to_stdout = options::flagged(args, &spec, &["-c", "--stdout", "--to-stdout"]);
            for v in options::values(args, &spec, &["-o", "--output"]) {
                out.push(Target::new(&v.text, dy(v.at)));
            }
            if decompress && !to_stdout && options::flagged(args, &spec, &["-N", "--name"]) {
                // `gunzip -N`: the name stored in the archive.
                out.push(Target::new("$(name stored in the archive)", true));
            }
            if !to_stdout {
                let suffix = options::values(args, &spec, &["-S", "--suffix"]).pop();
                for k in options::operands(args, &spec) {
                    let f = args[k].as_str();
                    if !decompress {
                        let ext = match name.as_str() {
                            "gzip" => ".gz",
                            "xz" => ".xz",
                            "bzip2" => ".bz2",
                            "zstd" => ".zst",
                            "lzma" => ".lzma",
                            _ => ".lz4",
                        };
                        let ext = suffix.as_ref().map_or(ext, |v| v.text.as_str());
                        out.push(Target::new(&format!("{f}{ext}"), dy(k)));
                        continue;
                    }
                    let stripped = [
                        ".gz", ".xz", ".bz2", ".zst", ".lzma", ".lz4", ".Z", ".tgz", ".z",
                    ]
                    .iter()
                    .chain(
                        suffix
                            .iter()
                            .map(|v| v.text.as_str())
                            .collect::<Vec<_>>()
                            .iter(),
                    )
                    .find_map(|x| f.strip_suffix(x).filter(|s| !s.is_empty()));
                    match stripped {
                        Some(s) => out.push(Target::new(s, dy(k))),
                        None => out.push(Target::new(f, dy(k))),
                    }
                }
            }
        }
        // The new names come from an expression or a substitution: where they
        // land is not read here.
        "rename" | "prename" | "file-rename" if args.iter().any(|a| !a.starts_with('-')) => {
            out.push(Target::new("$(rename: new names)", true));
        }
        "find" => {
            for (k, a) in args.iter().enumerate() {
                if matches!(a.as_str(), "-fprint" | "-fprint0" | "-fprintf" | "-fls")
                    && k + 1 < args.len()
                {
                    push(&mut out, k + 1);
                }
            }
        }
        "tee" | "touch" | "truncate" | "mkdir" | "mkfifo" | "mknod" => {
            let spec = match name.as_str() {
                "tee" => TEE,
                "touch" => TOUCH,
                "truncate" => TRUNCATE,
                _ => MKDIR,
            };
            for k in options::operands(args, &spec) {
                push(&mut out, k);
            }
        }
        "script" => {
            // The typescript (`typescript` unless named) and the logs.
            let logs = [
                "-B",
                "-I",
                "-O",
                "-T",
                "-t",
                "--log-io",
                "--log-in",
                "--log-out",
                "--log-timing",
            ];
            for v in options::values(args, &SCRIPT, &logs) {
                out.push(Target::new(&v.text, dy(v.at)));
            }
            for (k, a) in args.iter().enumerate() {
                if let Some(f) = a.strip_prefix("--timing=") {
                    out.push(Target::new(f, dy(k)));
                }
            }
            match options::operands(args, &SCRIPT).first() {
                Some(&k) => push(&mut out, k),
                None => out.push(Target::new("typescript", false)),
            }
        }
        "patch" => {
            // The file it patches (when named), `-o`, the rejects, and backups
            // named by a suffix or prefix (`-b -z rc ~/.bash x`). Files named
            // only inside the patch are not read here.
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
                push(&mut out, k);
            }
            for v in options::values(args, &spec, &["-o", "--output", "-r", "--reject-file"]) {
                out.push(Target::new(&v.text, dy(v.at)));
            }
            let prefixed =
                !options::values(args, &spec, &["-B", "--prefix", "-Y", "--basename-prefix"])
                    .is_empty();
            let backup =
                prefixed || options::flagged(args, &spec, &["-b", "--backup", "-z", "--suffix"]);
            if let (true, Some(&k)) = (backup, ops.first()) {
                match options::values(args, &spec, &["-z", "--suffix"]).pop() {
                    Some(v) if !prefixed => out.push(Target::new(
                        &format!("{}{}", args[k], v.text),
                        dy(k) || dy(v.at),
                    )),
                    _ => out.push(Target::new(
                        &format!("{}$SIMPLE_BACKUP_SUFFIX", args[k]),
                        true,
                    )),
                }
            }
        }
        "perl" => {
            // `perl -i[EXT] -pe CODE FILES`: the files, and their backups.
            let spec = known("eEIx", &[]);
            let end = options::scan(args, 0, &spec).start;
            let ext = args[..end].iter().find_map(|a| {
                let body = a.strip_prefix('-').filter(|b| !b.starts_with('-'))?;
                let at = body.find('i')?;
                // Letters before `-i` must not have taken the rest as a value.
                (!body[..at].contains(['e', 'E', 'I', 'x', 'M', 'm']))
                    .then(|| body[at + 1..].to_string())
            });
            if let Some(ext) = ext {
                let has_code = !options::values(args, &spec, &["-e", "-E"]).is_empty();
                let files = options::operands(args, &spec)
                    .into_iter()
                    .skip(usize::from(!has_code));
                for k in files {
                    push(&mut out, k);
                    if !ext.is_empty() {
                        let file = args[k].as_str();
                        // perl puts the whole file name for each `*`.
                        let backup = if ext.contains('*') {
                            ext.replace('*', file)
                        } else {
                            format!("{file}{ext}")
                        };
                        out.push(Target::new(&backup, dy(k)));
                    }
                }
            }
        }
        "split" | "csplit" => {
            // The pieces are PREFIX (the second operand; `-f PREFIX` for csplit)
            // followed by a suffix: `split -n13 -a1 x ~/.bashr` writes ~/.bashrc.
            let spec = if name == "split" {
                SPLIT
            } else {
                known("bfn", &["--suffix-format", "--prefix", "--digits"])
            };
            let prefix = if name == "split" {
                options::operands(args, &spec)
                    .get(1)
                    .map(|&k| (args[k].clone(), dy(k)))
            } else {
                options::values(args, &spec, &["-f", "--prefix"])
                    .pop()
                    .map(|v| (v.text, dy(v.at)))
            };
            if let Some((p, _)) = prefix {
                out.push(Target::new(&format!("{p}$(suffix)"), true));
            }
        }
        "dd" => {
            for (k, a) in args.iter().enumerate() {
                if let Some(v) = a.strip_prefix("of=").filter(|v| !v.is_empty()) {
                    out.push(Target::new(v, dy(k)));
                }
            }
        }
        "sort" => {
            for v in options::values(args, &SORT, &["-o", "--output"]) {
                out.push(Target::new(&v.text, dy(v.at)));
            }
        }
        "curl" => {
            let written = [
                "-o",
                "--output",
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
            ];
            for v in options::values(args, &CURL, &written[2..]) {
                out.push(Target::new(&v.text, dy(v.at)));
            }
            // `--output-dir DIR` holds what `-o` names.
            let out_dir = options::values(args, &CURL, &["--output-dir"]).pop();
            for v in options::values(args, &CURL, &written[..2]) {
                match &out_dir {
                    Some(d) if !v.text.starts_with('/') => out.push(Target::new(
                        &format!("{}/{}", d.text, v.text),
                        dy(v.at) || dy(d.at),
                    )),
                    _ => out.push(Target::new(&v.text, dy(v.at))),
                }
            }
            // `-w '%output{FILE}…'` (curl 8.3) writes FILE: where is not read here.
            if options::values(args, &CURL, &["-w", "--write-out"])
                .iter()
                .any(|v| v.text.contains("%output{"))
            {
                out.push(Target::new("$(curl --write-out %output)", true));
            }
            let remote_name =
                options::flagged(args, &CURL, &["-O", "--remote-name", "--remote-name-all"]);
            if remote_name {
                let dir = options::values(args, &CURL, &["--output-dir"])
                    .into_iter()
                    .next()
                    .map(|v| v.text);
                for (k, a) in args.iter().enumerate() {
                    if a.contains("://") {
                        if let Some(b) = url_basename(a) {
                            let p = match &dir {
                                Some(d) => format!("{d}/{b}"),
                                None => b,
                            };
                            out.push(Target::new(&p, dy(k)));
                        }
                    }
                }
            }
        }
        "wget" => {
            let explicit = options::values(args, &WGET, &["-O", "--output-document"]);
            for v in &explicit {
                out.push(Target::new(&v.text, dy(v.at)));
            }
            if explicit.is_empty() {
                let dir = options::values(args, &WGET, &["-P", "--directory-prefix"])
                    .into_iter()
                    .next()
                    .map(|v| v.text);
                for (k, a) in args.iter().enumerate() {
                    if a.contains("://") {
                        if let Some(b) = url_basename(a) {
                            let p = match &dir {
                                Some(d) => format!("{d}/{b}"),
                                None => b,
                            };
                            out.push(Target::new(&p, dy(k)));
                        }
                    }
                }
            }
            let logs = [
                "-o",
                "-a",
                "--output-file",
                "--append-output",
                "--save-cookies",
                "--warc-file",
                "--rejected-log",
                "--hsts-file",
            ];
            for v in options::values(args, &WGET, &logs) {
                out.push(Target::new(&v.text, dy(v.at)));
            }
            // `-e COMMAND` sets any wgetrc setting (`output_document=…`,
            // `dir_prefix=…`); `-x`/`-r` make the URL's folders locally
            // (`-nH`: without the host). Where they write is not read here.
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
        "cc" | "gcc" | "clang" | "g++" | "c++" | "clang++" | "ld" | "rustc" | "go" => {
            // Compilers read no clusters: `-o F`, `-oF`, `--output F`.
            for (k, a) in args.iter().enumerate() {
                if matches!(a.as_str(), "-o" | "--out" | "--output" | "-MF") && k + 1 < args.len() {
                    push(&mut out, k + 1);
                } else if let Some(v) = a
                    .strip_prefix("-o")
                    .or_else(|| a.strip_prefix("--output="))
                    .or_else(|| a.strip_prefix("--out="))
                    .or_else(|| a.strip_prefix("-MF"))
                    .filter(|v| !v.is_empty())
                {
                    out.push(Target::new(v, dy(k)));
                } else if let Some(list) = a.strip_prefix("-Wl,") {
                    // The linker's own `-o FILE` (`-Wl,-o,FILE`).
                    let parts: Vec<&str> = list.split(',').collect();
                    for (p, w) in parts.iter().enumerate() {
                        if let Some(f) = parts.get(p + 1).filter(|_| *w == "-o" || *w == "--output")
                        {
                            out.push(Target::new(f, dy(k)));
                        } else if let Some(f) = w.strip_prefix("--output=") {
                            out.push(Target::new(f, dy(k)));
                        }
                    }
                }
            }
        }
        "sed" | "gsed" => {
            let in_place = args.iter().any(|a| {
                let long = a.split('=').next().unwrap_or(a);
                a.starts_with("-i")
                    || (long.len() > 4 && "--in-place".starts_with(long))
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
            });
            if in_place {
                let scripts = options::values(args, &SED, &["-e", "-f", "--expression", "--file"]);
                let pos = options::operands(args, &SED);
                // Without -e/-f the first operand is the script.
                let files = if scripts.is_empty() {
                    pos.into_iter().skip(1).collect::<Vec<_>>()
                } else {
                    pos
                };
                // `-iSUFFIX`, `--in-place=SUFFIX`: a backup beside each file, or
                // where the suffix says when it holds `*` (the file's name) —
                // `-i'.git/hooks/*'` backs `pre-commit` up into .git/hooks.
                let mut suffixes: Vec<(String, bool)> = options::values(args, &SED, &["-i"])
                    .into_iter()
                    .map(|v| (v.text, dy(v.at)))
                    .collect();
                for (k, a) in args.iter().enumerate() {
                    // `--in-place=SUFFIX`, or a GNU abbreviation (`--in-pl=rc`).
                    let given = a
                        .split_once('=')
                        .filter(|(n, _)| n.len() > 2 && "--in-place".starts_with(n))
                        .map(|(_, v)| v);
                    if let Some(v) = given.filter(|v| !v.is_empty()) {
                        suffixes.push((v.to_string(), dy(k)));
                    }
                }
                for k in files {
                    push(&mut out, k);
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
                        out.push(Target::new(&backup, *dynamic || dy(k)));
                    }
                }
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
        "tar" | "gtar" | "bsdtar" | "unzip" | "7z" => {
            if name != "unzip" && name != "7z" {
                // What tar writes besides extracted files: the archive it creates
                // or appends to (`-cf FILE`), and its own records.
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
                for v in options::values(args, &TAR, &wanted) {
                    out.push(Target::new(&v.text, dy(v.at)));
                }
                for (k, a) in args.iter().enumerate() {
                    for p in ["--index-file=", "--one-top-level="] {
                        if let Some(v) = a.strip_prefix(p) {
                            out.push(Target::new(v, dy(k)));
                        }
                    }
                }
                if writes_archive {
                    if let Some(first) = old_style {
                        // `tar cf FILE …`: each value letter takes the next word.
                        let valued = first.chars().filter(|c| TAR.short_value.contains(*c));
                        for (next, c) in (1..).zip(valued) {
                            if let Some(f) = args.get(next).filter(|_| c == 'f') {
                                out.push(Target::new(f, dy(next)));
                            }
                        }
                    }
                }
            }
            let extract = if name == "unzip" {
                // -l, -v, -t, -Z list or test; -p extracts to standard output.
                !args.iter().any(|a| {
                    a.starts_with('-')
                        && !a.starts_with("--")
                        && a.contains(['l', 'v', 't', 'Z', 'p'])
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
                let dirs: Vec<(usize, String)> = match name.as_str() {
                    "unzip" => options::values(args, &UNZIP, &["-d"])
                        .into_iter()
                        .map(|v| (v.at, v.text))
                        .collect(),
                    // `7z x a.7z -oDIR`: attached only.
                    "7z" => args
                        .iter()
                        .enumerate()
                        .filter_map(|(k, a)| Some((k, a.strip_prefix("-o")?.to_string())))
                        .collect(),
                    _ => tar_dirs(args),
                };
                let mut found = Vec::new();
                if dirs.is_empty() {
                    found.push(Target::new(".", false));
                }
                // Members named on the command line land in the destination
                // (`tar -C ~ -xf a.tar .bashrc`, `unzip x.zip .bashrc -d ~`).
                let members: Vec<usize> = match name.as_str() {
                    "unzip" => options::operands(args, &UNZIP)
                        .into_iter()
                        .skip(1)
                        .collect(),
                    "tar" | "gtar" | "bsdtar" => {
                        let old_style = args.first().is_some_and(|a| !a.starts_with('-'));
                        let archive: Vec<usize> = options::values(args, &TAR, &["-f", "--file"])
                            .iter()
                            .map(|v| v.at)
                            .collect();
                        options::operands(args, &TAR)
                            .into_iter()
                            .filter(|k| !archive.contains(k) && (*k > 0 || !old_style))
                            .collect()
                    }
                    _ => Vec::new(),
                };
                for (k, v) in &dirs {
                    found.push(Target::new(v, dy(*k)));
                }
                // `tar -P` keeps absolute names: anywhere.
                if name != "unzip" && options::flagged(args, &TAR, &["-P", "--absolute-names"]) {
                    found.push(Target::new("$(absolute names in the archive)", true));
                }
                let places: Vec<(String, bool)> = if dirs.is_empty() {
                    vec![(".".to_string(), false)]
                } else {
                    dirs.iter().map(|(k, v)| (v.clone(), dy(*k))).collect()
                };
                for &m in &members {
                    for (d, dd) in &places {
                        let member = args[m].trim_start_matches("./");
                        found.push(Target::new(&format!("{d}/{member}"), *dd || dy(m)));
                    }
                }
                // The archive's names are not known; the destination is judged
                // (the kernel sandbox keeps protected files read-only).
                out.extend(found);
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<String> {
        let core: Vec<String> = s.split_whitespace().map(String::from).collect();
        let d = vec![false; core.len()];
        targets(&core, &d, &[])
            .into_iter()
            .map(|t| match t.from {
                Some(f) => format!("{}<{f}", t.raw),
                None => t.raw,
            })
            .collect()
    }

    #[test]
    fn write_targets() {
        assert_eq!(t("cp .bashrc /home/u"), ["/home/u<.bashrc", "/home/u"]);
        assert_eq!(t("cp -r x/.decode ."), [".<x/.decode", "."]);
        assert_eq!(
            t("dd if=/dev/zero of=.decode/settings.json"),
            [".decode/settings.json"]
        );
        assert_eq!(
            t("sort -o.decode/settings.json x"),
            [".decode/settings.json"]
        );
        assert_eq!(t("tee -a a b"), ["a", "b"]);
        assert_eq!(t("sed -i s/a/b/ f g"), ["f", "g"]);
        assert_eq!(t("curl -O https://x.y/a/.bashrc"), [".bashrc"]);
        assert_eq!(t("tar -xzf a.tgz -C out"), ["out"]);
        assert_eq!(
            t("ln -s /home/u/.bashrc x"),
            ["x</home/u/.bashrc", "x", "/home/u/.bashrc"]
        );
        assert_eq!(t("gcc -o bin/a a.c"), ["bin/a"]);
        assert!(t("cat x").is_empty());
    }
}
