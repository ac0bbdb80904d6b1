//! Reading a source text with tree-sitter-bash (one parser per thread,
//! reused), and the repairs where tree-sitter reads differently from bash
//! (docs/permissions.md, "Fail closed").

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree};

use super::words::slice;

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn new_parser() -> Option<Parser> {
    let mut p = Parser::new();
    match p.set_language(&tree_sitter_bash::LANGUAGE.into()) {
        Ok(()) => Some(p),
        Err(e) => {
            tracing::error!("cannot load the bash grammar: {e}");
            None
        }
    }
}

/// tree-sitter-bash 0.25's scanner calls `isdigit()` on the character after
/// `{` (and after `{N..`), which reads out of bounds — and crashes — for
/// large code points. The parser gets a copy where each non-ASCII character
/// right after `{` or `.` is replaced by as many `x` bytes: a word character
/// to both, so the tree is the same and its byte ranges fit `src`.
fn scanner_safe(src: &str) -> Option<String> {
    let mut out: Option<String> = None;
    let mut prev = '\0';
    for (i, c) in src.char_indices() {
        if !c.is_ascii() && (prev == '{' || prev == '.') {
            let o = out.get_or_insert_with(|| src.to_string());
            o.replace_range(i..i + c.len_utf8(), &"x".repeat(c.len_utf8()));
        }
        prev = c;
    }
    out
}

/// Work all tree-sitter parses of one command may do together, counted two
/// ways: tree-sitter's progress checks (one per 100 parse operations) and
/// the chunks of text its lexer reads (256 bytes each: a lexer that backs up
/// and reads again pays again). Past either the command is opaque (and asks
/// even in bypass): tree-sitter's error recovery is superlinear on some
/// inputs. Work, never time: the same command gets the same verdict on any
/// machine under any load.
pub(crate) const PARSE_OPS_BUDGET: u64 = 2_000;
pub(crate) const PARSE_READS_BUDGET: u64 = 5_000;
/// The bytes the lexer gets per read.
const READ_CHUNK: usize = 256;

thread_local! {
    /// Progress checks and reads this command's parses made (`None`: no budget).
    static WORK: std::cell::Cell<Option<(u64, u64)>> = const { std::cell::Cell::new(None) };
    /// How many texts this thread has parsed (the tests bound the work a command costs).
    static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn spent() -> bool {
    WORK.with(|w| {
        w.get()
            .is_some_and(|(ops, reads)| ops >= PARSE_OPS_BUDGET || reads >= PARSE_READS_BUDGET)
    })
}

/// Counts one unit of work (`op`: a progress check, else a read).
fn count(op: bool) {
    WORK.with(|w| {
        if let Some((ops, reads)) = w.get() {
            w.set(Some(if op {
                (ops + 1, reads)
            } else {
                (ops, reads + 1)
            }));
        }
    });
}

/// Parses with this thread's parser (created on first use, then reused);
/// `None` when it cannot, or when the command's parse budget is spent.
pub(crate) fn parse_tree(src: &str) -> Option<Tree> {
    PARSES.with(|n| n.set(n.get() + 1));
    let safe = scanner_safe(src);
    let src = safe.as_deref().unwrap_or(src);
    if spent() {
        return None;
    }
    let bytes = src.as_bytes();
    let run = |p: &mut Parser| {
        let mut read = |i: usize, _: tree_sitter::Point| -> &[u8] {
            count(false);
            if spent() {
                // The text ends here for the parser: it stops at once, and
                // the parse is thrown away below.
                return &[];
            }
            bytes
                .get(i..(i + READ_CHUNK).min(bytes.len()))
                .unwrap_or(&[])
        };
        let mut expired = |_: &tree_sitter::ParseState| -> bool {
            count(true);
            spent()
        };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut expired);
        p.parse_with_options(&mut read, None, Some(options))
    };
    PARSER
        .with(|cell| match cell.try_borrow_mut() {
            Ok(mut slot) => {
                if slot.is_none() {
                    *slot = new_parser();
                }
                let p = slot.as_mut()?;
                let tree = run(p);
                if tree.is_none() {
                    p.reset();
                }
                tree
            }
            // Re-entered (never expected): use a throw-away parser.
            Err(_) => run(&mut new_parser()?),
        })
        .filter(|_| !spent())
}

/// Whether this command's parse budget is spent.
pub(crate) fn parse_budget_spent() -> bool {
    spent()
}

/// Parses, then repairs two places where tree-sitter reads differently from
/// bash, and parses again:
/// - a line continuation inside a word (`r\<newline>m` is `rm` to bash),
///   which tree-sitter takes for whitespace: removed;
/// - a newline that tree-sitter swallowed into a word (`ls\n\rm x` is two
///   commands to bash, one to tree-sitter): a space is put after it.
pub(crate) fn parse_source(src: &str) -> Option<(Tree, String)> {
    let mut text = src.to_string();
    for _ in 0..6 {
        let tree = parse_tree(&text)?;
        let root = tree.root_node();
        let bytes = text.as_bytes();
        // (position, kind): a continuation to remove, a newline to follow by a
        // space, a newline to precede by `;`, or a word tree-sitter dropped.
        let mut fixes: Vec<(usize, Fix)> = dropped_words(root, bytes);
        if fixes.is_empty() && !text.contains('\n') {
            return Some((tree, text));
        }
        for (i, &b) in bytes.iter().enumerate() {
            if b != b'\n' {
                continue;
            }
            let escaped = i > 0 && bytes[i - 1] == b'\\';
            if escaped {
                let c = i - 1;
                if is_gap(root, c) {
                    let before = c > 0 && !bytes[c - 1].is_ascii_whitespace();
                    let after = i + 1 < bytes.len() && !bytes[i + 1].is_ascii_whitespace();
                    if before && after {
                        fixes.push((c, Fix::Join));
                    }
                }
            } else {
                match root.descendant_for_byte_range(i, i + 1).map(|n| n.kind()) {
                    Some("word") => fixes.push((i, Fix::Space)),
                    // A simple command never spans an unescaped newline in bash.
                    Some("command") => fixes.push((i, Fix::End)),
                    _ => {}
                }
            }
        }
        if fixes.is_empty() {
            return Some((tree, text));
        }
        fixes.sort_by_key(|f| f.0);
        fixes.dedup_by_key(|f| f.0);
        let mut fixed = String::with_capacity(text.len() + fixes.len());
        let mut last = 0;
        for (pos, fix) in fixes {
            match fix {
                Fix::Join => {
                    fixed.push_str(&text[last..pos]);
                    last = pos + 2;
                }
                Fix::Space => {
                    fixed.push_str(&text[last..=pos]);
                    fixed.push(' ');
                    last = pos + 1;
                }
                Fix::End => {
                    fixed.push_str(&text[last..pos]);
                    fixed.push(';');
                    last = pos;
                }
                Fix::Quote(end) => {
                    fixed.push_str(&text[last..pos]);
                    fixed.push('\'');
                    fixed.push_str(&text[pos..end]);
                    fixed.push('\'');
                    last = end;
                }
            }
        }
        fixed.push_str(&text[last..]);
        text = fixed;
    }
    let tree = parse_tree(&text)?;
    Some((tree, text))
}

#[derive(Clone, Copy)]
enum Fix {
    Join,
    Space,
    End,
    /// A word tree-sitter dropped from the tree (a lone `-` before `2>&1` or
    /// `<<`): quoted, which it reads, and which means the same to bash.
    Quote(usize),
}

/// Runs of word characters between the leaves of the tree: text
/// tree-sitter read past without a node (bash reads them as words).
fn dropped_words(root: Node<'_>, bytes: &[u8]) -> Vec<(usize, Fix)> {
    let plain = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'/' | b'+' | b'=' | b',' | b':' | b'@' | b'%'
            )
    };
    let mut out = Vec::new();
    let gap = |from: usize, to: usize, out: &mut Vec<(usize, Fix)>| {
        let mut i = from;
        while i < to.min(bytes.len()) {
            if plain(bytes[i]) {
                let start = i;
                while i < to && plain(bytes[i]) {
                    i += 1;
                }
                out.push((start, Fix::Quote(i)));
                continue;
            }
            i += 1;
        }
    };
    let mut cursor = root.walk();
    let mut last_end = 0usize;
    let mut budget = 1_000_000usize;
    loop {
        let n = cursor.node();
        let leaf = n.child_count() == 0 || matches!(n.kind(), "heredoc_body" | "comment");
        if leaf {
            if n.start_byte() > last_end {
                gap(last_end, n.start_byte(), &mut out);
            }
            last_end = last_end.max(n.end_byte());
        } else if cursor.goto_first_child() {
            continue;
        }
        budget -= 1;
        if budget == 0 {
            return Vec::new();
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                if bytes.len() > last_end {
                    gap(last_end, bytes.len(), &mut out);
                }
                return out;
            }
        }
    }
}

/// True when byte `i` lies between tokens (tree-sitter skipped it as an extra):
/// the smallest node holding it has children, none of which holds it.
fn is_gap(root: Node<'_>, i: usize) -> bool {
    let Some(node) = root.descendant_for_byte_range(i, i + 1) else {
        return false;
    };
    node.child_count() > 0
        && !matches!(
            node.kind(),
            "string" | "raw_string" | "heredoc_body" | "ansi_c_string" | "translated_string"
        )
}

/// tree-sitter reads an argument `$"text"` as a `$` node followed by a
/// string: the `$` only marks the string for translation (bash reads it as
/// `"text"`), it is no word of its own.
pub(crate) fn translation_mark(kids: &[(Node<'_>, Option<&str>)], i: usize) -> bool {
    let (k, _) = kids[i];
    !k.is_named()
        && k.kind() == "$"
        && k.byte_range().len() == 1
        && kids
            .get(i + 1)
            .is_some_and(|(n, _)| n.kind() == "string" && n.start_byte() == k.end_byte())
}

/// The text of a backtick substitution as bash reads it: `\\`, `\``
/// and `\$` lose their backslash.
pub(crate) fn backtick_unescape(s: &str) -> String {
    backtick_unescape_in(s, false)
}

/// [`backtick_unescape`]; inside `"…"` (`in_dq`) `\"` loses its backslash too.
pub(crate) fn backtick_unescape_in(s: &str, in_dq: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some(&n @ ('\\' | '`' | '$')) => {
                    out.push(n);
                    chars.next();
                    continue;
                }
                Some('"') if in_dq => {
                    out.push('"');
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// The texts inside `$( … )` and `` `…` `` in `text`, skipping the byte
/// ranges in `skip` (already parsed) and `$(( … ))` arithmetic.
pub(crate) fn find_substitutions(text: &str, skip: &[std::ops::Range<usize>]) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(r) = skip.iter().find(|r| r.contains(&i)) {
            i = r.end.max(i + 1);
            continue;
        }
        match bytes[i] {
            b'\\' => i += 2,
            b'`' => {
                let start = i + 1;
                let mut j = start;
                while j < bytes.len() && bytes[j] != b'`' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(bytes.len());
                out.push(slice(text, start..end).to_string());
                i = end + 1;
            }
            b'$' if bytes.get(i + 1) == Some(&b'(') => {
                if bytes.get(i + 2) == Some(&b'(') {
                    i += 3;
                    continue;
                }
                let start = i + 2;
                let mut depth = 1usize;
                let mut j = start;
                while j < bytes.len() {
                    match bytes[j] {
                        b'\\' => j += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                let end = j.min(bytes.len());
                out.push(slice(text, start..end).to_string());
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// A node's children with their field names, in one pass (asking a node
/// for child `i`'s field walks its children from the first: quadratic).
pub(crate) fn fielded_children<'t>(node: Node<'t>) -> Vec<(Node<'t>, Option<&'static str>)> {
    let mut out = Vec::with_capacity(node.child_count());
    let mut c = node.walk();
    if c.goto_first_child() {
        loop {
            out.push((c.node(), c.field_name()));
            if !c.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// Runs `f` (judging one command) within that command's parse budget.
pub(crate) fn budgeted<T>(f: impl FnOnce() -> T) -> T {
    let outer = WORK.with(|w| w.replace(Some((0, 0))));
    let out = f();
    WORK.with(|w| w.set(outer));
    out
}

/// The parse work `f` did (progress checks, reads), and its result.
#[cfg(test)]
pub(crate) fn work_of<T>(f: impl FnOnce() -> T) -> ((u64, u64), T) {
    let outer = WORK.with(|w| w.replace(Some((0, 0))));
    let out = f();
    let n = WORK.with(|w| w.replace(outer)).unwrap_or((0, 0));
    (n, out)
}

/// How many texts this thread has parsed so far.
#[cfg(test)]
pub(crate) fn parse_count() -> usize {
    PARSES.with(|n| n.get())
}
