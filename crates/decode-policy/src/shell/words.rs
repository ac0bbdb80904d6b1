//! Word normalisation: quoting removed, escapes decoded, dynamic parts noted.

use tree_sitter::Node;

/// One shell word with its quoting removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Word {
    pub text: String,
    /// Holds an expansion or substitution (`$X`, `${X}`, `$(…)`, `` `…` ``).
    pub dynamic: bool,
    /// Holds an unquoted glob (`*`, `?`, `[…]`).
    pub glob: bool,
    /// Holds an unquoted brace expansion (`{a,b}`, `{1..3}`).
    pub brace: bool,
    /// Decoded (`$'…'`) a control or invisible character (other than tab
    /// and newline), or a NUL that cut the string short.
    pub ctrl: bool,
    /// The word re-quoted canonically: live (unquoted) text as written,
    /// literal text single-quoted when it holds anything but plain
    /// characters. Empty for words built from text ([`Word::raw`]).
    pub canon: String,
}

impl Word {
    pub(crate) fn raw(s: &str) -> Word {
        Word {
            text: s.to_string(),
            ..Word::default()
        }
    }

    /// The canonical (re-quoted) form; the text for words built from text.
    pub(crate) fn canon_text(&self) -> &str {
        if self.canon.is_empty() {
            &self.text
        } else {
            &self.canon
        }
    }
}

/// Characters that never need quoting.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '_' | '@' | '%' | '+' | '=' | ':' | ',' | '.' | '/' | '-')
}

/// Literal (quoted or escaped) text in canonical form.
pub(crate) fn push_lit(out: &mut String, s: &str) {
    if !s.is_empty() && s.chars().all(is_plain) {
        out.push_str(s);
        return;
    }
    out.push('\'');
    out.push_str(&s.replace('\'', "'\\''"));
    out.push('\'');
}

/// `src[range]`, or "" when the range is not on character boundaries.
pub(crate) fn slice(src: &str, range: std::ops::Range<usize>) -> &str {
    src.get(range).unwrap_or("")
}

pub(crate) fn is_dynamic_kind(kind: &str) -> bool {
    matches!(
        kind,
        "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
    )
}

/// Normalises a word-like node.
pub(crate) fn norm_word(node: Node<'_>, src: &str) -> Word {
    let mut w = Word::default();
    let mut unquoted = String::new();
    norm_into(node, src, &mut w, &mut unquoted, 0);
    if !unquoted.is_empty() {
        w.glob = has_glob(&unquoted);
        w.brace = has_brace(&unquoted);
    }
    w
}

/// `unquoted` collects the unquoted, unescaped characters (escaped ones are
/// replaced by a placeholder) so globs and braces are found only where live.
fn norm_into(node: Node<'_>, src: &str, w: &mut Word, unquoted: &mut String, depth: usize) {
    let text = slice(src, node.byte_range());
    if depth > 64 {
        w.text.push_str(text);
        w.canon.push_str(text);
        w.dynamic = true;
        return;
    }
    match node.kind() {
        "word" => unescape_unquoted(text, w, unquoted),
        "raw_string" => {
            let inner = text
                .strip_prefix('\'')
                .and_then(|t| t.strip_suffix('\''))
                .unwrap_or(text);
            w.text.push_str(inner);
            push_lit(&mut w.canon, inner);
            unquoted.push('\u{1}');
        }
        "string" | "translated_string" => {
            let start = node.start_byte();
            let end = node.end_byte();
            let mut pos = start;
            let mut cursor = node.walk();
            // Literal text gathered for the canonical form.
            let mut lit = String::new();
            let mut any = false;
            for c in node.children(&mut cursor) {
                if c.start_byte() > pos {
                    dq_unescape(slice(src, pos..c.start_byte()), &mut lit);
                }
                pos = c.end_byte();
                match c.kind() {
                    "\"" | "$\"" => {}
                    "string_content" => dq_unescape(slice(src, c.byte_range()), &mut lit),
                    k if is_dynamic_kind(k) => {
                        if !lit.is_empty() {
                            w.text.push_str(&lit);
                            push_lit(&mut w.canon, &lit);
                            lit.clear();
                        }
                        any = true;
                        push_dynamic(&mut w.text, k, slice(src, c.byte_range()));
                        w.canon.push('"');
                        push_dynamic(&mut w.canon, k, slice(src, c.byte_range()));
                        w.canon.push('"');
                        w.dynamic = true;
                    }
                    _ => lit.push_str(slice(src, c.byte_range())),
                }
            }
            if end > pos {
                dq_unescape(slice(src, pos..end), &mut lit);
            }
            if !lit.is_empty() || !any {
                w.text.push_str(&lit);
                push_lit(&mut w.canon, &lit);
            }
            unquoted.push('\u{1}');
        }
        "ansi_c_string" => {
            let mut decoded = String::new();
            w.ctrl |= ansi_c(text, &mut decoded);
            w.text.push_str(&decoded);
            push_lit(&mut w.canon, &decoded);
            unquoted.push('\u{1}');
        }
        "concatenation" | "command_name" => {
            let mut cursor = node.walk();
            for c in node.children(&mut cursor) {
                norm_into(c, src, w, unquoted, depth + 1);
            }
        }
        "variable_assignment" => {
            let mut cursor = node.walk();
            for c in node.children(&mut cursor) {
                match c.kind() {
                    "variable_name" | "subscript" | "=" | "+=" => {
                        w.text.push_str(slice(src, c.byte_range()));
                        w.canon.push_str(slice(src, c.byte_range()));
                    }
                    _ => {
                        let mut inner = Word::default();
                        let mut uq = String::new();
                        norm_into(c, src, &mut inner, &mut uq, depth + 1);
                        w.text.push_str(&inner.text);
                        w.canon.push_str(inner.canon_text());
                        w.dynamic |= inner.dynamic;
                        w.ctrl |= inner.ctrl;
                        w.brace |= has_brace(&uq);
                    }
                }
            }
        }
        k if is_dynamic_kind(k) => {
            push_dynamic(&mut w.text, k, text);
            push_dynamic(&mut w.canon, k, text);
            w.dynamic = true;
            unquoted.push('\u{1}');
        }
        "brace_expression" => {
            w.text.push_str(text);
            w.canon.push_str(text);
            unquoted.push_str(text);
        }
        _ => {
            w.text.push_str(text);
            w.canon.push_str(text);
            unquoted.push_str(text);
        }
    }
}

/// Substitutions longer than this are written `$(…)` in a word's text: the
/// commands inside are fragments of their own, and deep nesting would
/// otherwise copy the whole command into every level (quadratic).
const MAX_SUBSTITUTION_TEXT: usize = 1024;

fn push_dynamic(out: &mut String, kind: &str, text: &str) {
    if text.len() <= MAX_SUBSTITUTION_TEXT {
        out.push_str(text);
        return;
    }
    out.push_str(match kind {
        "command_substitution" if text.starts_with('`') => "`…`",
        "command_substitution" => "$(…)",
        "process_substitution" if text.starts_with('>') => ">(…)",
        "process_substitution" => "<(…)",
        "arithmetic_expansion" => "$((…))",
        _ => "${…}",
    });
}

/// Backslash escapes of unquoted text: `\x` is `x`, `\<newline>` vanishes.
fn unescape_unquoted(text: &str, w: &mut Word, unquoted: &mut String) {
    let mut chars = text.chars();
    let mut lit = String::new();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => {
                    w.text.push(n);
                    lit.push(n);
                    unquoted.push('\u{1}');
                }
            }
        } else {
            if !lit.is_empty() {
                push_lit(&mut w.canon, &lit);
                lit.clear();
            }
            w.text.push(c);
            w.canon.push(c);
            unquoted.push(c);
        }
    }
    if !lit.is_empty() {
        push_lit(&mut w.canon, &lit);
    }
}

/// Inside double quotes only `\$`, `` \` ``, `\"`, `\\` and `\<newline>` are escapes.
fn dq_unescape(text: &str, out: &mut String) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some(&n @ ('$' | '`' | '"' | '\\')) => {
                    out.push(n);
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
}

/// Decodes `$'…'`. Bash ends the string at a decoded NUL (the rest is
/// dropped). Returns whether a control or invisible character (other than
/// tab and newline) or a NUL was decoded.
fn ansi_c(text: &str, out: &mut String) -> bool {
    let start = out.len();
    ansi_c_raw(text, out);
    let decoded = &out[start..];
    let mut ctrl = decoded.chars().any(super::is_hidden);
    if let Some(nul) = decoded.find('\0') {
        out.truncate(start + nul);
        ctrl = true;
    }
    ctrl
}

fn ansi_c_raw(text: &str, out: &mut String) {
    let inner = text
        .strip_prefix("$'")
        .and_then(|t| t.strip_suffix('\''))
        .unwrap_or(text);
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'c' => {
                if let Some(x) = chars.next() {
                    out.push(char::from((x as u32 as u8) & 0x1f));
                }
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                let mut n = 0;
                while n < max {
                    match chars.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v.wrapping_mul(16).wrapping_add(d);
                            chars.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
                }
            }
            '0'..='7' => {
                let mut v: u32 = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v & 0xff).unwrap_or('\u{FFFD}'));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
}

/// `*`, `?`, or a `[` closed later by `]`.
fn has_glob(s: &str) -> bool {
    if s.contains(['*', '?']) {
        return true;
    }
    match s.find('[') {
        Some(i) => s[i + 1..].contains(']'),
        None => false,
    }
}

/// `{…,…}` or `{a..b}`.
fn has_brace(s: &str) -> bool {
    let Some(open) = s.find('{') else {
        return false;
    };
    let Some(close) = s[open..].rfind('}') else {
        return false;
    };
    let inner = &s[open + 1..open + close];
    inner.contains(',') || inner.contains("..")
}

/// Removes quotes from a simple token (here-document delimiters).
pub(crate) fn unquote_simple(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {}
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Bash brace expansion of `s` (comma lists and `{a..b}` ranges), at most
/// `limit` results.
pub(crate) fn brace_expand(s: &str, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    expand_rec(s, limit, &mut out, 0);
    if out.is_empty() {
        out.push(s.to_string());
    }
    out
}

fn expand_rec(s: &str, limit: usize, out: &mut Vec<String>, depth: usize) {
    if out.len() >= limit {
        return;
    }
    if depth > 8 || s.len() > 64 * 1024 {
        out.push(s.to_string());
        return;
    }
    // Matching braces in one pass; the first pair (by its `{`) holding a
    // top-level comma or `..` is expanded. At most 64 pairs are examined.
    let bytes = s.as_bytes();
    let mut stack = Vec::new();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'{' => stack.push(i),
            b'}' => {
                if let Some(o) = stack.pop() {
                    pairs.push((o, i));
                }
            }
            _ => {}
        }
    }
    pairs.sort_unstable();
    for &(open, close) in pairs.iter().take(64) {
        let mut level = 0usize;
        let mut commas = Vec::new();
        for (j, &b) in bytes.iter().enumerate().take(close).skip(open + 1) {
            match b {
                b'{' => level += 1,
                b'}' => level = level.saturating_sub(1),
                b',' if level == 0 => commas.push(j),
                _ => {}
            }
        }
        let pre = &s[..open];
        let post = &s[close + 1..];
        let inner = &s[open + 1..close];
        let alts: Vec<String> = if !commas.is_empty() {
            let mut v = Vec::new();
            let mut last = open + 1;
            for c in commas.iter().chain(std::iter::once(&close)) {
                v.push(s[last..*c].to_string());
                last = c + 1;
            }
            v
        } else if let Some((a, b)) = inner.split_once("..") {
            match (a.parse::<i64>(), b.parse::<i64>()) {
                (Ok(x), Ok(y)) if x.abs_diff(y) < 64 => {
                    if x <= y {
                        (x..=y).map(|n| n.to_string()).collect()
                    } else {
                        (y..=x).rev().map(|n| n.to_string()).collect()
                    }
                }
                _ => {
                    let (ac, bc) = (a.chars().next(), b.chars().next());
                    match (ac, bc) {
                        (Some(x), Some(y))
                            if a.len() == 1 && b.len() == 1 && x.is_ascii() && y.is_ascii() =>
                        {
                            let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
                            (lo..=hi).map(|c| c.to_string()).collect()
                        }
                        _ => continue,
                    }
                }
            }
        } else {
            continue;
        };
        for alt in alts {
            if out.len() >= limit {
                return;
            }
            expand_rec(&format!("{pre}{alt}{post}"), limit, out, depth + 1);
        }
        return;
    }
    out.push(s.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces() {
        assert_eq!(brace_expand("{rm,-rf,/}", 10), ["rm", "-rf", "/"]);
        assert_eq!(brace_expand("a{1..3}", 10), ["a1", "a2", "a3"]);
        assert_eq!(brace_expand("plain", 10), ["plain"]);
        assert_eq!(brace_expand("{a,{b,c}}", 10), ["a", "b", "c"]);
        assert_eq!(brace_expand("x{}y{1,2}", 10), ["x{}y1", "x{}y2"]);
        let t = std::time::Instant::now();
        let _ = brace_expand(&"{{{,}".repeat(5000), 64);
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        assert!(has_brace("{a,b}"));
        assert!(!has_brace("{}"));
    }

    #[test]
    fn ansi() {
        let mut s = String::new();
        ansi_c("$'a\\tb\\x41\\u00e9\\047'", &mut s);
        assert_eq!(s, "a\tbAé'");
    }
}
