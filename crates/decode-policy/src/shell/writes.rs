//! Where a simple command writes (docs/permissions.md, "Fail closed"):
//! redirect targets, and the targets of the commands that write, copy, move
//! or link files. A target the gate cannot place — only known when the
//! command runs, relative to a folder only known then, or through a link the
//! same command made — counts as naming a protected file.

use super::Redir;

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

/// sed scripts: the `-e`/`--expression` values, else the first positional
/// word; `None` when a script comes from a file (`-f`).
fn sed_scripts(args: &[String]) -> Option<Vec<String>> {
    let mut scripts = Vec::new();
    let mut i = 0;
    let mut first_positional = None;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-f"
            || a == "--file"
            || a.starts_with("--file=")
            || (a.starts_with("-f") && a.len() > 2 && !a.starts_with("--"))
        {
            return None;
        }
        if a == "-e" || a == "--expression" {
            scripts.extend(args.get(i + 1).cloned());
            i += 2;
            continue;
        }
        if let Some(v) = a.strip_prefix("--expression=") {
            scripts.push(v.to_string());
        } else if let Some(v) = a
            .strip_prefix("-e")
            .filter(|v| !v.is_empty() && !a.starts_with("--"))
        {
            scripts.push(v.to_string());
        } else if matches!(a, "-l" | "--line-length") {
            i += 1;
        } else if (!a.starts_with('-') || a == "-") && first_positional.is_none() {
            first_positional = Some(a.to_string());
        }
        i += 1;
    }
    if scripts.is_empty() {
        scripts.extend(first_positional);
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

/// Positional words of `args` (indexes), skipping options; `with_value`
/// options (`-x`, `--long`) take the next word unless attached.
fn positionals(args: &[String], with_value: &[&str]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut done = false;
    while i < args.len() {
        let a = args[i].as_str();
        if !done && a == "--" {
            done = true;
            i += 1;
            continue;
        }
        if !done && a.starts_with('-') && a.len() > 1 {
            i += if with_value.contains(&a) { 2 } else { 1 };
            continue;
        }
        out.push(i);
        i += 1;
    }
    out
}

/// The value of an option (`-o F`, `-oF`, `--output F`, `--output=F`).
fn option_values(args: &[String], short: &[&str], long: &[&str]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if short.contains(&a) || long.contains(&a) {
            if i + 1 < args.len() {
                out.push(i + 1);
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    out
}

/// Attached option values: `-oFILE`, `--output=FILE`, `of=FILE`.
fn attached(args: &[String], prefixes: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        for p in prefixes {
            if let Some(v) = a.strip_prefix(p) {
                if !v.is_empty() {
                    out.push((i, v.to_string()));
                }
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
            let with_value: &[&str] = match name.as_str() {
                "cp" => &["-S", "--suffix", "-t", "--target-directory"],
                "mv" => &["-S", "--suffix", "-t", "--target-directory"],
                "install" => &[
                    "-m",
                    "--mode",
                    "-o",
                    "--owner",
                    "-g",
                    "--group",
                    "-S",
                    "-t",
                    "--target-directory",
                ],
                "ln" => &["-S", "--suffix", "-t", "--target-directory"],
                _ => &[
                    "-e",
                    "--rsh",
                    "--rsync-path",
                    "--exclude",
                    "--include",
                    "-f",
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
                    "-T",
                    "--temp-dir",
                ],
            };
            let pos = positionals(args, with_value);
            let mut dir = option_values(args, &["-t"], &["--target-directory"])
                .first()
                .copied();
            let attached_dir = attached(args, &["--target-directory="]);
            let mut sources: Vec<usize> = pos.clone();
            if dir.is_none() && attached_dir.is_empty() {
                if name == "install" && args.iter().any(|a| a == "-d" || a == "--directory") {
                    for &k in &pos {
                        push(&mut out, k);
                    }
                    return out;
                }
                if pos.len() >= 2 || (name != "ln" && !pos.is_empty()) {
                    dir = sources.pop();
                }
            }
            let dests: Vec<Target> = match (dir, attached_dir.first()) {
                (Some(k), _) => vec![Target::new(&args[k], dy(k))],
                (None, Some((k, v))) => vec![Target::new(v, dy(*k))],
                // `ln -s TARGET`: the link is made in the current folder.
                (None, None) if name == "ln" => vec![Target::new(".", false)],
                (None, None) => Vec::new(),
            };
            // `cp -T`, `mv -T`: the source's contents land in the target;
            // so do `x/.` and, for rsync, `x/`.
            let no_target_dir = name != "rsync"
                && args.iter().any(|a| {
                    a == "--no-target-directory"
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('T'))
                });
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
        "tee" => {
            for k in positionals(args, &["--output-error"]) {
                push(&mut out, k);
            }
        }
        "touch" | "truncate" | "mkdir" | "mkfifo" | "mknod" => {
            let with_value: &[&str] = &[
                "-d",
                "--date",
                "-r",
                "--reference",
                "-t",
                "-s",
                "--size",
                "-m",
                "--mode",
                "-o",
            ];
            for k in positionals(args, with_value) {
                push(&mut out, k);
            }
        }
        "dd" => {
            for (k, v) in attached(args, &["of="]) {
                out.push(Target::new(&v, dy(k)));
            }
        }
        "sort" => {
            for k in option_values(args, &["-o"], &["--output"]) {
                push(&mut out, k);
            }
            for (k, v) in attached(args, &["--output=", "-o"]) {
                out.push(Target::new(&v, dy(k)));
            }
        }
        "curl" => {
            for k in option_values(
                args,
                &["-o", "-D", "-c"],
                &[
                    "--output",
                    "--dump-header",
                    "--cookie-jar",
                    "--trace",
                    "--trace-ascii",
                    "--stderr",
                ],
            ) {
                push(&mut out, k);
            }
            for (k, v) in attached(args, &["--output=", "--dump-header=", "--cookie-jar="]) {
                out.push(Target::new(&v, dy(k)));
            }
            let remote_name = args
                .iter()
                .any(|a| a == "-O" || a == "--remote-name" || a == "--remote-name-all");
            if remote_name {
                let dir = option_values(args, &[], &["--output-dir"])
                    .first()
                    .map(|&k| args[k].clone());
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
            let explicit = option_values(args, &["-O"], &["--output-document"]);
            let attached_o = attached(args, &["--output-document=", "-O"]);
            for &k in &explicit {
                push(&mut out, k);
            }
            for (k, v) in &attached_o {
                out.push(Target::new(v, dy(*k)));
            }
            if explicit.is_empty() && attached_o.is_empty() {
                let dir = option_values(args, &["-P"], &["--directory-prefix"])
                    .first()
                    .map(|&k| args[k].clone());
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
            for k in option_values(args, &["-o", "-a"], &["--output-file", "--append-output"]) {
                push(&mut out, k);
            }
        }
        "cc" | "gcc" | "clang" | "g++" | "c++" | "clang++" | "ld" | "rustc" | "go" => {
            for k in option_values(args, &["-o"], &["--out", "--output"]) {
                push(&mut out, k);
            }
            for (k, v) in attached(args, &["-o"]) {
                out.push(Target::new(&v, dy(k)));
            }
        }
        "sed" | "gsed" => {
            let in_place = args.iter().any(|a| {
                a.starts_with("-i")
                    || a.starts_with("--in-place")
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
            });
            if in_place {
                let scripts = option_values(args, &["-e", "-f"], &["--expression", "--file"]);
                let pos = positionals(
                    args,
                    &["-e", "-f", "--expression", "--file", "-l", "--line-length"],
                );
                // Without -e/-f the first positional is the script.
                let files =
                    if scripts.is_empty() && !args.iter().any(|a| a.starts_with("--expression=")) {
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
                let dirs = if name == "unzip" {
                    option_values(args, &["-d"], &[])
                } else {
                    option_values(args, &["-C"], &["--directory"])
                };
                let attached_dirs = attached(args, &["--directory="]);
                let mut found = Vec::new();
                if dirs.is_empty() && attached_dirs.is_empty() {
                    found.push(Target::new(".", false));
                }
                for k in dirs {
                    found.push(Target::new(&args[k], dy(k)));
                }
                for (k, v) in attached_dirs {
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
