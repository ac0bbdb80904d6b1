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
    fn new(raw: &str, dynamic: bool) -> Target {
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
const RSYNC: OptionSpec<'static> = partial(
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
                "-D",
                "-c",
                "--output",
                "--dump-header",
                "--cookie-jar",
                "--trace",
                "--trace-ascii",
                "--stderr",
            ];
            for v in options::values(args, &CURL, &written) {
                out.push(Target::new(&v.text, dy(v.at)));
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
            let logs = ["-o", "-a", "--output-file", "--append-output"];
            for v in options::values(args, &WGET, &logs) {
                out.push(Target::new(&v.text, dy(v.at)));
            }
        }
        "cc" | "gcc" | "clang" | "g++" | "c++" | "clang++" | "ld" | "rustc" | "go" => {
            // Compilers read no clusters: `-o F`, `-oF`, `--output F`.
            for (k, a) in args.iter().enumerate() {
                if matches!(a.as_str(), "-o" | "--out" | "--output") && k + 1 < args.len() {
                    push(&mut out, k + 1);
                } else if let Some(v) = a.strip_prefix("-o").filter(|v| !v.is_empty()) {
                    out.push(Target::new(v, dy(k)));
                }
            }
        }
        "sed" | "gsed" => {
            let in_place = args.iter().any(|a| {
                a.starts_with("-i")
                    || a.starts_with("--in-place")
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
                for k in files {
                    push(&mut out, k);
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
                for (k, v) in dirs {
                    found.push(Target::new(&v, dy(k)));
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
