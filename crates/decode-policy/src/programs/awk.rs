//! awk and its kin: a program text that can run commands (`system(…)`,
//! `print | CMD`, `CMD | getline`, `|&` co-processes), write files (`print >
//! FILE`, `printf … >> FILE`), or load code (`-f FILE`, `@include`,
//! `@load`, `-l LIB`). Running or loading makes the command opaque (the
//! commands it names in plain strings still meet deny rules and caps);
//! redirections are write targets, dynamic when not a plain string
//! (docs/permissions.md, "Fail closed").

use super::schema::{Argv, Ctx, Hooks, Node, Program};
use crate::options::{self, OptionSpec};
use crate::shell::model::{Analysis, Derived, Role, Target};

/// The options of awk, gawk, mawk and busybox awk (`-d`, `-D`, `-o`, `-p`,
/// `-L` take a value only attached).
const AWK: OptionSpec<'static> = OptionSpec {
    short_value: "fvFeilEW",
    glued: "dDopL",
    value: &[
        "--file",
        "--assign",
        "--field-separator",
        "--source",
        "--include",
        "--load",
        "--exec",
    ],
    flags: &[
        "--version",
        "--help",
        "-b",
        "-c",
        "-C",
        "-g",
        "-M",
        "-n",
        "-N",
        "-O",
        "-P",
        "-r",
        "-s",
        "-S",
        "-t",
        "-V",
    ],
    complete: false,
};

/// Options whose value is a file of awk code or a library to load.
const CODE_FROM: &[&str] = &[
    "-f",
    "--file",
    "-i",
    "--include",
    "-l",
    "--load",
    "-E",
    "--exec",
];

/// Options whose value is program text.
const SOURCE: &[&str] = &["-e", "--source"];

pub(crate) const PROGRAMS: &[Program] = &[Program {
    names: &[
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "busybox-awk",
        "original-awk",
        "goawk",
        "frawk",
    ],
    node: Node {
        options: AWK,
        hooks: Hooks {
            see: Some(awk),
            writes: Some(awk_writes),
            ..Hooks::NONE
        },
        ..Node::NONE
    },
    generic_verbs: false,
    examples: &[
        ("awk '{ print $1 }' f", "plain"),
        ("awk -F: '$3 > 100 { print $1 }' f", "plain"),
        ("awk '/a|b/ { n++ } END { print n }' f", "plain"),
        ("awk 'BEGIN { system(\"rm x\") }'", "opaque; runs 'rm x'"),
        ("awk '{ c = \"sh\"; print | c }' f", "opaque"),
        ("awk '{ print > \"out.txt\" }' f", "writes out.txt"),
        ("awk -f prog.awk f", "opaque"),
    ],
    ..Program::BASE
}];

/// The awk program texts a command gives (`-e`/`--source` values, else the
/// first operand), and whether one is only known when it runs.
fn programs<S: AsRef<str>>(args: &[S], dynamic: impl Fn(usize) -> bool) -> Vec<(String, bool)> {
    let given: Vec<(String, bool)> = options::values(args, &AWK, SOURCE)
        .into_iter()
        .map(|v| (v.text, dynamic(v.at)))
        .collect();
    if !given.is_empty() || !options::values(args, &AWK, CODE_FROM).is_empty() {
        return given;
    }
    options::operands(args, &AWK)
        .first()
        .map(|&k| (args[k].as_ref().to_string(), dynamic(k)))
        .into_iter()
        .collect()
}

/// Opaque when the program runs commands, loads code, or is only known when
/// it runs; the plain-string commands meet deny rules and caps.
fn awk(c: &Ctx<'_>, start: Option<usize>, a: &mut Analysis) -> Option<usize> {
    let args = &c.words[c.at.min(c.words.len())..];
    if !options::values(args, &AWK, CODE_FROM).is_empty() {
        a.dynamic = Some("the awk program is read from a file or loads code".into());
    }
    for (text, dynamic) in programs(args, |k| args[k].dynamic) {
        if dynamic {
            a.dynamic = Some("the awk program is only known when it runs".into());
            continue;
        }
        let scan = scan(&text);
        if scan.runs {
            a.dynamic = Some("the awk program runs shell commands or loads code".into());
            for cmd in scan.commands {
                a.derived.push(Derived::Source(cmd, Role::Checked));
            }
        }
    }
    start
}

/// The files an awk program's `print`/`printf` redirections write.
fn awk_writes(v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    for (text, dynamic) in programs(args, |k| v.dyn_arg(k)) {
        if dynamic {
            continue;
        }
        for w in scan(&text).writes {
            match w {
                Some(path) => out.push(Target::new(&path, false)),
                None => out.push(Target::new("$(awk expression)", true)),
            }
        }
    }
}

/// Whether an awk program can run commands or load code.
#[cfg(test)]
pub(crate) fn awk_runs_commands(prog: &str) -> bool {
    scan(prog).runs
}

/// What reading an awk program found.
#[derive(Debug, Default)]
struct Scan {
    /// It runs commands or loads code.
    runs: bool,
    /// Commands given as plain strings.
    commands: Vec<String>,
    /// Files its output redirections name (`None`: not a plain string).
    writes: Vec<Option<String>>,
}

/// Reads an awk program token by token: strings, regular expressions (a `/`
/// where an operand may start) and comments are skipped; `system(`, a lone
/// `|`, `@load`/`@include` run or load; `>`/`>>` at the top of a
/// `print`/`printf` statement redirect it.
fn scan(prog: &str) -> Scan {
    let b: Vec<char> = prog.chars().collect();
    let mut s = Scan::default();
    let (mut i, mut operand, mut in_print, mut depth) = (0, false, false, 0usize);
    let mut last_string: Option<String> = None;
    while i < b.len() {
        let ch = b[i];
        match ch {
            '"' => {
                let (lit, end) = string_at(&b, i);
                last_string = Some(lit);
                i = end;
                operand = true;
                continue;
            }
            '/' if !operand => {
                i = regex_end(&b, i);
                operand = true;
                continue;
            }
            '#' => {
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '@' => s.runs = true,
            '|' if b.get(i + 1) == Some(&'|') => {
                i += 2;
                operand = false;
                continue;
            }
            '|' => {
                s.runs = true;
                let next = string_after(&b, i + 1 + usize::from(b.get(i + 1) == Some(&'&')));
                if let Some(cmd) = if in_print { next } else { last_string.take() } {
                    s.commands.push(cmd);
                }
            }
            '>' if in_print && depth == 0 => {
                let at = i + 1 + usize::from(b.get(i + 1) == Some(&'>'));
                s.writes.push(string_after(&b, at));
                i = at;
                operand = false;
                continue;
            }
            // `x++ / 2`: a postfix `++`/`--` ends an operand, so the `/`
            // after it divides.
            '+' | '-' if operand && b.get(i + 1) == Some(&ch) => {
                i += 2;
                continue;
            }
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ';' | '\n' | '{' | '}' => in_print = false,
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                    i += 1;
                }
                let word: String = b[start..i].iter().collect();
                match word.as_str() {
                    "system" => {
                        s.runs = true;
                        let mut j = i;
                        while j < b.len() && b[j].is_whitespace() {
                            j += 1;
                        }
                        if b.get(j) == Some(&'(') {
                            s.commands.extend(string_after(&b, j + 1));
                        }
                    }
                    "print" | "printf" => {
                        in_print = true;
                        depth = 0;
                    }
                    _ => {}
                }
                operand = !matches!(
                    word.as_str(),
                    "print"
                        | "printf"
                        | "return"
                        | "in"
                        | "case"
                        | "if"
                        | "while"
                        | "for"
                        | "do"
                        | "else"
                        | "getline"
                        | "delete"
                        | "exit"
                );
                continue;
            }
            c if c.is_ascii_digit() || c == '$' => {
                operand = c != '$';
                i += 1;
                continue;
            }
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            _ => {}
        }
        operand = matches!(ch, ')' | ']');
        i += 1;
    }
    s
}

/// The string literal starting at `b[i] == '"'` (escapes kept as written)
/// and the index after it.
fn string_at(b: &[char], i: usize) -> (String, usize) {
    let mut j = i + 1;
    let mut out = String::new();
    while j < b.len() && b[j] != '"' {
        if b[j] == '\\' && j + 1 < b.len() {
            out.push(b[j + 1]);
            j += 2;
            continue;
        }
        out.push(b[j]);
        j += 1;
    }
    (out, (j + 1).min(b.len()))
}

/// A plain string literal standing alone from `i` (blanks skipped) up to a
/// `)`, `;`, `}` or the end: `"cmd"` in `print | "cmd"`, not `"a" x`.
fn string_after(b: &[char], mut i: usize) -> Option<String> {
    while i < b.len() && b[i].is_whitespace() {
        i += 1;
    }
    if b.get(i) != Some(&'"') {
        return None;
    }
    let (lit, mut j) = string_at(b, i);
    while j < b.len() && matches!(b[j], ' ' | '\t') {
        j += 1;
    }
    (j >= b.len() || matches!(b[j], ')' | ';' | '}' | '\n')).then_some(lit)
}

/// The index after the regular expression starting at `b[i] == '/'`
/// (escapes and bracket expressions skipped).
fn regex_end(b: &[char], i: usize) -> usize {
    let mut j = i + 1;
    let mut bracket = false;
    while j < b.len() {
        match b[j] {
            '\\' => j += 1,
            '[' => bracket = true,
            ']' => bracket = false,
            '/' if !bracket => return j + 1,
            '\n' => return j,
            _ => {}
        }
        j += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn runs_writes_and_guards() {
        assert!(scan("BEGIN { system(\"rm x\") }").runs);
        assert_eq!(scan("BEGIN { system(\"rm x\") }").commands, ["rm x"]);
        assert!(scan("{ print | \"sh\" }").runs);
        assert_eq!(scan("{ print | \"sh\" }").commands, ["sh"]);
        assert_eq!(scan("BEGIN { \"id\" | getline x }").commands, ["id"]);
        assert!(scan("{ print |& \"sh\" }").runs);
        assert!(scan("@load \"x\"; { print }").runs);
        assert!(!scan("{ print $1 }").runs);
        assert!(!scan("/a|b/ { n++ }").runs);
        assert!(!scan("$1 == \"a|b\" || $2 > 3").runs);
        assert!(scan("{ x++ /system(\"id\")/ 1 }").runs);
        assert!(scan("{ x-- /system(\"id\")/ 1 }").runs);
        assert!(!scan("{ x++ } /a|b/ { n++ }").runs);
        assert!(scan("$1 > 3 { print }").writes.is_empty());
        assert!(scan("{ print ($1 > 3) }").writes.is_empty());
        assert_eq!(scan("{ print > \"o\" }").writes, [Some("o".to_string())]);
        assert_eq!(
            scan("{ printf \"%s\", $1 >> \"o\" }").writes,
            [Some("o".to_string())]
        );
        assert_eq!(scan("{ print > ENVIRON[\"HOME\"] \"/x\" }").writes, [None]);
        assert_eq!(scan("{ print > $2 }").writes, [None]);
    }
}
