//! Shell commands judged fragment by fragment (docs/permissions.md, "Shell commands: fragments").
//!
//! A command is parsed once with tree-sitter-bash (one parser per thread) into
//! its simple commands, the *fragments*. Each fragment carries the forms the
//! rules match: as written, as allow rules may see it (harmless wrappers
//! removed) and as deny/ask rules and caps see it (every wrapper, assignment,
//! privilege wrapper and command path removed).

mod arg_paths;
mod arith;
pub(crate) mod config;
mod effects;
mod emit;
mod flow;
mod limits;
pub(crate) mod model;
pub(crate) mod parse;
mod second;
mod syntax;
mod walker;
pub(crate) mod words;

use std::path::Path;

pub(crate) use config::ShellConfig;
pub use limits::MAX_COMMAND_CHARS;
pub(crate) use model::{Fragment, Parsed, Role, Target as WriteTarget};
pub(crate) use words::brace_expand;

/// Parses `src` into fragments. `root` is the directory commands start in.
pub(crate) fn parse_command(src: &str, root: &Path, home: &Path, config: &ShellConfig) -> Parsed {
    parse::budgeted(|| walker::parse_command_inner(src, root, home, config))
}

/// The fragments of a bash command as the gate sees them: the text of each
/// simple command (quoting removed, wrappers kept) and, when the command is
/// opaque, why. For tools, the command line, fuzzing and the bash oracle.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fragments {
    pub texts: Vec<String>,
    pub opaque: Option<String>,
    /// The command is opaque in a way that asks even in bypass mode.
    pub strict: bool,
    /// For every fragment and see-through level: a glob (`*` the only
    /// wildcard, `\` escaping) over the words bash may run there, joined by
    /// spaces, the program by its base name. A command bash runs that no
    /// pattern matches is one the gate did not see.
    pub patterns: Vec<String>,
    /// The program names the gate saw (every wrapper level).
    pub names: Vec<String>,
}

/// Splits a bash command into its fragments (docs/permissions.md).
pub fn fragments(command: &str) -> Fragments {
    let p = parse_command(
        command,
        Path::new("/"),
        Path::new("/"),
        &ShellConfig::default(),
    );
    let mut patterns = Vec::new();
    let mut names = Vec::new();
    for f in &p.fragments {
        for pat in f.argv_patterns(true) {
            if !patterns.contains(&pat) {
                patterns.push(pat);
            }
        }
        for n in &f.chain {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    Fragments {
        texts: p.fragments.into_iter().map(|f| f.text).collect(),
        opaque: p.opaque,
        strict: p.strict,
        patterns,
        names,
    }
}

#[cfg(test)]
mod tests {
    use super::syntax::plain_words;
    use super::*;

    #[test]
    fn plain_words_are_words_and_blanks_only() {
        for t in [
            "git status",
            "ls -la src/",
            "cargo test -p x --lib",
            "./run.sh a:b,c+d@e%f=g",
            "/usr/bin/git log",
        ] {
            assert!(plain_words(t), "{t}");
        }
        for t in [
            "git status; rm x",
            "echo $x",
            "ls *",
            "a=1 ls",
            "-x y",
            "if x",
            "time ls",
            "ls 'a'",
            "ls a\\ b",
            "ls ~",
            "ls {a,b}",
            "ls # c",
            "ls\nrm",
            "echo a>b",
            "",
            "  ",
        ] {
            assert!(!plain_words(t), "{t:?}");
        }
    }

    fn frags(src: &str) -> Parsed {
        parse_command(
            src,
            Path::new("/proj"),
            Path::new("/home/u"),
            &ShellConfig::default(),
        )
    }

    fn texts(src: &str) -> Vec<String> {
        frags(src).fragments.into_iter().map(|f| f.text).collect()
    }

    #[test]
    fn separators() {
        assert_eq!(
            texts("a && b || c; d | e & f\ng"),
            ["a", "b", "c", "d", "e", "f", "g"]
        );
        assert_eq!(texts("echo \"$(curl x)\""), ["curl x", "echo $(curl x)"]);
        assert_eq!(texts("echo 'git push'"), ["echo git push"]);
        assert_eq!(texts("r\\\nm -rf /"), ["rm -rf /"]);
        assert_eq!(texts("ls -la\n\\rm x"), ["ls -la", "rm x"]);
        assert_eq!(texts("ls \\\n\\rm"), ["ls rm"]);
        assert_eq!(
            texts("ls && ls | ls | ls\nwget y && ls"),
            ["ls", "ls", "ls", "ls", "wget y", "ls"]
        );
    }

    #[test]
    fn heredocs() {
        assert_eq!(
            texts("cat <<EOF\n$(rm x) `id`\nEOF"),
            ["rm x", "id", "cat << EOF"]
        );
        assert_eq!(texts("cat <<'EOF'\n$(rm x) `id`\nEOF"), ["cat << EOF"]);
    }

    /// The texts parsed while `f` runs (on this thread).
    fn parses_of(f: impl FnOnce()) -> usize {
        let before = parse::parse_count();
        f();
        parse::parse_count() - before
    }

    #[test]
    fn rereadings_do_not_multiply() {
        // Found by the fuzzer: brace re-readings of re-readings grew 64-fold per
        // level. The work is counted (texts parsed), not timed.
        let n = parses_of(|| {
            let p = frags("r\u{0}\u{0}\u{0}=a,b}\u{5c}\u{a}m x; \u{b}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}{\u{a}m y; {,ab}; $IFS; e; $IFS; eval \u{22}x\u{22}");
            assert!(p.opaque.is_some());
        });
        assert!(n <= 32, "{n} parses");
        let many = "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}(".repeat(20);
        let n = parses_of(|| {
            let _ = frags(&many);
        });
        assert!(n <= 8, "{n} parses");
    }

    /// The parse work of one command: progress checks and reads.
    fn work(src: &str) -> (u64, u64) {
        parse::work_of(|| {
            walker::parse_command_inner(
                src,
                Path::new("/"),
                Path::new("/"),
                &ShellConfig::default(),
            )
        })
        .0
    }

    #[test]
    fn parse_work_is_counted_not_timed() {
        // Large ordinary commands stay far under the budget…
        for big in [
            "git status && ".repeat(700),
            "x\n".repeat(4_990),
            format!("rm {}", "f ".repeat(4_990)),
            "cat <<E\nx\nE\n".repeat(30),
        ] {
            let (ops, reads) = work(&big);
            assert!(ops < parse::PARSE_OPS_BUDGET / 3, "{ops} checks");
            assert!(reads < parse::PARSE_READS_BUDGET / 3, "{reads} reads");
        }
        // …and inputs where tree-sitter's work outgrows the text are cut by
        // counted work or by their shape, before the work is done.
        for bad in [
            "f() ".repeat(2_400),
            "a[1] ".repeat(1_900),
            "${ ".repeat(3_300),
            "<<E ".repeat(2_400),
            "$[".repeat(4_900),
        ] {
            let p = frags(&bad);
            assert!(p.strict, "{:?}", p.opaque);
            let (ops, reads) = work(&bad);
            assert!(
                ops <= parse::PARSE_OPS_BUDGET + 16 && reads <= parse::PARSE_READS_BUDGET + 16,
                "{ops} checks, {reads} reads"
            );
        }
        // The same command, the same reading, every time.
        let c = "f() ".repeat(2_400);
        assert_eq!(work(&c), work(&c));
    }

    #[test]
    fn nul_bytes() {
        let n = parses_of(|| {
            let p = frags(&format!("{}\nR{{,\0\0P\0}}}}\0{{\0,\0", "\0".repeat(200)));
            assert!(p.opaque.is_some());
        });
        assert!(n <= 8, "{n} parses");
        let p = frags("r\0m -rf x");
        assert!(p.fragments.iter().any(|f| f.text == "rm -rf x"));
        assert!(p.fragments.iter().any(|f| f.text == "r"));
    }

    #[test]
    fn scanner_crash_inputs() {
        // These crashed tree-sitter-bash's scanner (isdigit on a large code point).
        for s in [
            "{\u{E010E}",
            "{{{\u{E010E}",
            "{1..\u{42000}}",
            "{\u{10FFFF}x",
            "a.\u{E0100}",
        ] {
            let p = frags(s);
            assert!(p.opaque.is_some() || !p.fragments.is_empty());
        }
    }

    #[test]
    fn opaque() {
        assert!(frags("$CMD x").opaque.is_some());
        assert!(frags("cat${IFS}x").opaque.is_some());
        assert!(frags("eval 'rm x'").opaque.is_some());
        assert!(frags("ls\u{200b}").opaque.is_some());
        assert!(frags("ls (").opaque.is_some());
        assert!(frags("ls -la").opaque.is_none());
    }
}
