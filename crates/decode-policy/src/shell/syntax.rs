//! From tree-sitter's nodes to words and redirections, and the textual
//! tests the walker makes of a source text (where bash and tree-sitter read
//! a text differently, or a text changes what later words mean).

use std::path::Path;

use tree_sitter::Node;

use super::limits::{MAX_WORDS, RESERVED};
use super::model::Redir;
use super::parse::{fielded_children, translation_mark};
use super::words::{self, is_dynamic_kind, norm_word, slice, Word};
use crate::paths;

pub(super) fn first_kind<'t>(node: Node<'t>) -> Option<&'static str> {
    node.child(0).map(|c| c.kind())
}

/// Assignments, words and redirections of a `command` node.
pub(super) fn collect_command(node: Node<'_>, src: &str) -> Command {
    let mut c = Command::default();
    let kids = fielded_children(node);
    for (i, &(k, field)) in kids.iter().enumerate() {
        // Anonymous nodes are words too when they stand as arguments
        // (tree-sitter reads a plain `==` or `=~` as an operator).
        if !k.is_named() && field != Some("argument") {
            continue;
        }
        if translation_mark(&kids, i) {
            continue;
        }
        match k.kind() {
            "variable_assignment" => c.assigns.push(norm_word(k, src)),
            "comment" => {}
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                c.redirs.extend(redirects(k, src));
            }
            _ => {
                let left = MAX_WORDS.saturating_sub(c.words.len());
                match words::norm_words(k, src, left) {
                    Some(ws) => c.words.extend(ws),
                    None => {
                        c.overflow = true;
                        c.words.push(norm_word(k, src));
                    }
                }
            }
        }
    }
    c
}

/// An argument that tree-sitter tokenised as a `$` holding more text than the
/// `$` itself (`-r$` before `"x"`): a word it split where bash does not.
pub(super) fn split_translated_word(command: Node<'_>) -> bool {
    let mut cursor = command.walk();
    let found = command
        .children(&mut cursor)
        .any(|k| !k.is_named() && k.kind() == "$" && k.byte_range().len() > 1);
    found
}

/// The parts of one simple command.
#[derive(Default)]
pub(super) struct Command {
    pub(super) assigns: Vec<Word>,
    pub(super) words: Vec<Word>,
    pub(super) redirs: Vec<Redir>,
    /// Brace expansion made more words than [`MAX_WORDS`].
    pub(super) overflow: bool,
}

/// Words of a test / declaration / arithmetic command, in order.
pub(super) fn flatten_words(node: Node<'_>, src: &str, out: &mut Vec<Word>, depth: usize) {
    if depth > 64 {
        out.push(Word::raw(slice(src, node.byte_range())));
        return;
    }
    let mut cursor = node.walk();
    for c in node.children(&mut cursor) {
        match c.kind() {
            "word"
            | "string"
            | "raw_string"
            | "ansi_c_string"
            | "translated_string"
            | "concatenation"
            | "number"
            | "variable_assignment"
            | "variable_name"
            | "test_operator"
            | "regex"
            | "extglob_pattern" => out.push(norm_word(c, src)),
            k if is_dynamic_kind(k) => out.push(norm_word(c, src)),
            "comment" => {}
            _ if c.child_count() == 0 => out.push(Word::raw(slice(src, c.byte_range()))),
            _ => flatten_words(c, src, out, depth + 1),
        }
    }
}

/// A redirection node's redirections: its own, and those tree-sitter puts
/// inside a here-document's (`cat <<'EOF' > .decode/settings.json`).
pub(super) fn redirects(node: Node<'_>, src: &str) -> Vec<Redir> {
    let mut out: Vec<Redir> = redirect(node, src).into_iter().collect();
    if node.kind() == "heredoc_redirect" {
        let mut cursor = node.walk();
        for c in node.named_children(&mut cursor) {
            if matches!(c.kind(), "file_redirect" | "herestring_redirect") {
                out.extend(redirect(c, src));
            }
        }
    }
    out
}

/// A redirection node → its rendered text and the path it names.
pub(super) fn redirect(node: Node<'_>, src: &str) -> Option<Redir> {
    match node.kind() {
        "file_redirect" => {
            let mut fd = String::new();
            let mut op = String::new();
            let mut target: Option<Word> = None;
            for (c, field) in fielded_children(node) {
                match field {
                    Some("descriptor") => fd = slice(src, c.byte_range()).to_string(),
                    Some("destination") => {
                        let w = norm_word(c, src);
                        target = Some(match target {
                            None => w,
                            Some(mut t) => {
                                let c = format!("{} {}", t.canon_text(), w.canon_text());
                                t.text.push(' ');
                                t.text.push_str(&w.text);
                                t.canon = c;
                                t
                            }
                        });
                    }
                    _ if !c.is_named() => op.push_str(slice(src, c.byte_range())),
                    _ => {}
                }
            }
            let target = target.unwrap_or_else(|| Word::raw(""));
            let dup = (op == ">&" || op == "<&")
                && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()));
            let text = if dup {
                format!("{fd}{op}{}", target.text)
            } else {
                format!("{fd}{op} {}", target.text)
            };
            let canon = if dup {
                text.clone()
            } else {
                format!("{fd}{op} {}", target.canon_text())
            };
            let write = !dup && op.contains('>');
            let dynamic = target.dynamic;
            let path = if dup || target.text.is_empty() {
                None
            } else {
                Some(target.text)
            };
            Some(Redir {
                text,
                path,
                ctrl: target.ctrl,
                canon,
                write,
                dynamic,
                feed: None,
                piped: None,
            })
        }
        "herestring_redirect" => {
            let mut parts = Vec::new();
            let mut cparts = Vec::new();
            let mut dynamic = false;
            let mut cursor = node.walk();
            for c in node.named_children(&mut cursor) {
                let w = norm_word(c, src);
                cparts.push(w.canon_text().to_string());
                dynamic |= w.dynamic;
                parts.push(w.text);
            }
            let text = parts.join(" ");
            Some(Redir {
                text: format!("<<< {text}"),
                path: None,
                ctrl: false,
                canon: format!("<<< {}", cparts.join(" ")),
                write: false,
                dynamic: false,
                feed: Some((!dynamic).then_some(text)),
                piped: None,
            })
        }
        "heredoc_redirect" => {
            let mut op = "<<".to_string();
            let mut delim = String::new();
            let mut quoted = false;
            let mut body = String::new();
            let mut cursor = node.walk();
            for c in node.children(&mut cursor) {
                match c.kind() {
                    "<<-" => op = "<<-".into(),
                    "heredoc_start" => {
                        let raw = slice(src, c.byte_range());
                        quoted = raw.contains(['\'', '"', '\\']);
                        delim = words::unquote_simple(raw);
                    }
                    "heredoc_body" => body = slice(src, c.byte_range()).to_string(),
                    _ => {}
                }
            }
            if op == "<<-" {
                body = body
                    .lines()
                    .map(|l| l.trim_start_matches('\t'))
                    .collect::<Vec<_>>()
                    .join("\n");
            }
            let dynamic = !quoted && body.contains(['$', '`', '\\']);
            Some(Redir {
                text: format!("{op} {delim}"),
                path: None,
                ctrl: false,
                canon: format!("{op} {delim}"),
                write: false,
                dynamic: false,
                feed: Some((!dynamic).then_some(body)),
                piped: None,
            })
        }
        _ => None,
    }
}

/// A process substitution with no blank or operator between it and the word
/// before or after it (`a<(x)`, `<(x)b`); `--opt=<(x)` and `x=<(x)` are the
/// usual spellings and read the same in both parsers.
pub(super) fn procsub_glued(src: &str, range: std::ops::Range<usize>) -> bool {
    let b = src.as_bytes();
    let before = range.start.checked_sub(1).and_then(|i| b.get(i));
    let after = b.get(range.end);
    let sep = |c: &u8| {
        matches!(
            c,
            b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b'(' | b')' | b'<' | b'>'
        )
    };
    before.is_some_and(|c| !sep(c) && *c != b'=') || after.is_some_and(|c| !sep(c))
}

/// Only words and blanks: letters, digits, spaces, tabs and `._/:,+@%=-`,
/// starting with a letter, digit, `.` or `/` (never `-`, `=`, or a reserved word).
pub(crate) fn plain_words(text: &str) -> bool {
    let first = text.split([' ', '\t']).find(|w| !w.is_empty());
    first.is_some_and(|w| {
        w.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.' || c == '/')
            && !w.contains('=')
            && !RESERVED.contains(&w)
            && !matches!(w, "time" | "coproc")
    }) && text.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b' ' | b'\t' | b'.' | b'_' | b'/' | b':' | b',' | b'+' | b'@' | b'%' | b'=' | b'-'
            )
    })
}

/// `>&-` or `<&-` with no blank or operator after it, or `<& -WORD` (bash
/// closes the descriptor and reads `WORD` as a word of its own).
pub(super) fn closes_into_word(text: &str) -> bool {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(1)).any(|i| {
        if !matches!(&b[i..i + 2], b">&" | b"<&") {
            return false;
        }
        // `<& -push` too: bash reads the word after the blanks the same way.
        let mut j = i + 2;
        while j < b.len() && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
        b.get(j) == Some(&b'-')
            && b.get(j + 1).is_some_and(|c| {
                !matches!(
                    c,
                    b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b')' | b'(' | b'<' | b'>'
                )
            })
    })
}

/// Whether the command may give the positional parameters text of its own
/// (it defines a function or runs `set`).
pub(super) fn sets_positional(text: &str) -> bool {
    text.contains("()")
        || text
            .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
            .any(|w| matches!(w, "set" | "function"))
}

/// Whether the command changes what `cd`, `~` and the known variables
/// follow: it names `HOME`, `PWD`, `TMPDIR`, `CDPATH` or `OLDPWD` other than to
/// expand them (`PWD=/`, `unset TMPDIR`, `read PWD`), or turns on `cdable_vars`.
pub(super) fn changes_cd_state(text: &str) -> Option<&'static str> {
    if text.contains("cdable_vars") {
        return Some("`cdable_vars` lets `cd` follow a variable, so the folder is not known");
    }
    // Every name is in capitals: most commands hold none.
    if !text.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for name in ["HOME", "PWD", "TMPDIR", "CDPATH", "OLDPWD"] {
        let mut from = 0;
        while let Some(k) = text[from..].find(name) {
            let at = from + k;
            let end = at + name.len();
            let bounded = !text[..at].chars().next_back().is_some_and(ident)
                && !text[end..].chars().next().is_some_and(ident);
            let expanded = text[..at].ends_with('$') || text[..at].ends_with("${");
            if bounded && !expanded {
                return Some(
                    "the command changes HOME, PWD, TMPDIR, CDPATH or OLDPWD, which `cd`, `~` and paths follow",
                );
            }
            from = end;
        }
    }
    None
}

/// The variable `${!name…}` takes a name from (not `${!prefix*}`,
/// `${!prefix@}` or `${!a[@]}`, which list names or keys).
pub(super) fn indirect_name(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("${!")?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(end);
    if name.is_empty() || after.starts_with(['*', '@', '[']) {
        return None;
    }
    Some(name)
}

/// Whether a script file on disk names no command that could move the
/// shell's folder or branch, or run other code in it (comments apart).
pub(super) fn sourced_file_is_inert(path: &Path) -> bool {
    let Ok(text) = paths::read_small_file(path, 256 * 1024) else {
        return false;
    };
    let code: String = text
        .lines()
        .map(|l| {
            let l = l.trim_start();
            if l.starts_with('#') {
                ""
            } else {
                l.split(" #").next().unwrap_or(l)
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    !code
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`' | '"' | '\''
                )
        })
        .any(|w| {
            matches!(
                w,
                "cd" | "pushd"
                    | "popd"
                    | "source"
                    | "."
                    | "eval"
                    | "exec"
                    | "trap"
                    | "git"
                    | "builtin"
                    | "command"
                    | "alias"
                    | "enable"
                    | "CDPATH"
                    | "HOME"
            ) || w.starts_with("$(")
        })
        && !code.contains("hash -p")
}

/// `git -C DIR`, `--git-dir`, `--work-tree`: git works on the repository
/// there, which may be this one or another.
pub(super) fn git_names_repository(core: &[String]) -> bool {
    let end = crate::programs::git_subcommand(core)
        .map_or(core.len(), |(_, rest)| core.len() - rest.len());
    core[1..end]
        .iter()
        .any(|a| a == "-C" || a.starts_with("--git-dir") || a.starts_with("--work-tree"))
}

/// What a pipeline stage visibly writes to the next one: `echo WORDS` (its
/// words joined), `printf FORMAT ARGS` (the format and each argument),
/// `cat` fed a static here-string or here-document — all static, with no
/// assignments or other redirections. Each text is judged as a script the
/// next command may run (`echo 'rm -rf ~' | sh`).
pub(super) fn visible_output(node: Node<'_>, src: &str) -> Option<Vec<String>> {
    if node.kind() != "command" {
        return None;
    }
    let c = collect_command(node, src);
    if !c.assigns.is_empty() || c.overflow || c.words.iter().any(|w| w.dynamic) {
        return None;
    }
    let words: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
    let fed: Vec<&Redir> = c.redirs.iter().filter(|r| r.feed.is_some()).collect();
    if fed.len() != c.redirs.len() {
        return None;
    }
    match words.as_slice() {
        ["cat"] => match fed.as_slice() {
            [r] => r.feed.clone().flatten().map(|t| vec![t]),
            _ => None,
        },
        ["echo", rest @ ..] if fed.is_empty() => {
            let args: Vec<&str> = rest
                .iter()
                .copied()
                .skip_while(|a| matches!(*a, "-n" | "-e" | "-E" | "-ne" | "-en"))
                .collect();
            Some(vec![args.join(" ")])
        }
        ["printf", format, rest @ ..] if fed.is_empty() && !format.starts_with('-') => {
            let mut out = vec![format.replace("\\n", "\n")];
            out.extend(rest.iter().map(|a| a.to_string()));
            Some(out)
        }
        _ => None,
    }
}
