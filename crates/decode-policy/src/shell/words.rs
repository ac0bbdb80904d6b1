//! Word normalisation: quoting removed, escapes decoded, dynamic parts noted,
//! and the static expansions bash applies before running a command — brace
//! expansion and `$IFS` field splitting — applied (docs/permissions.md,
//! "Fail closed").

use tree_sitter::Node;

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// Unquoted, unescaped text: globs and braces in it are live.
    Live(String),
    /// Quoted or escaped text (decoded): always literal.
    Lit(String),
    /// An expansion or substitution, as written; `quoted` inside `"…"`.
    Dyn {
        text: String,
        kind: &'static str,
        quoted: bool,
    },
    /// An unquoted expansion of `IFS`: a field separator.
    Ifs,
}

/// One shell word with its quoting removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Word {
    pub text: String,
    /// Holds an expansion or substitution (`$X`, `${X}`, `$(…)`, `` `…` ``).
    pub dynamic: bool,
    /// Holds an unquoted glob (`*`, `?`, `[…]`).
    pub glob: bool,
    /// Holds an unquoted brace expansion (`{a,b}`, `{1..3}`) not yet expanded.
    pub brace: bool,
    /// Decoded (`$'…'`) a control or invisible character (other than tab
    /// and newline), or a NUL that cut the string short.
    pub ctrl: bool,
    /// Some part of it is quoted or escaped.
    pub quoted: bool,
    /// Was produced by brace expansion or `$IFS` splitting.
    pub expanded: bool,
    /// The word re-quoted canonically: live (unquoted) text as written,
    /// literal text single-quoted when it holds anything but plain
    /// characters. Empty for words built from text ([`Word::raw`]).
    pub canon: String,
    /// The pieces (empty for words built from text).
    pub segs: Vec<Seg>,
}

impl AsRef<str> for Word {
    fn as_ref(&self) -> &str {
        &self.text
    }
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

    /// A glob over what the word can become when bash runs it, `*` standing
    /// for every dynamic part (which may also be empty or several words).
    /// Literal `*` and `\` are escaped. With `tilde` (the bash oracle's reading:
    /// what bash may run, not what a rule names), a leading `~` (home) is dynamic
    /// too, and so is an unquoted glob (`/*` becomes every entry of `/`).
    pub(crate) fn pattern(&self, tilde: bool) -> String {
        let mut out = String::new();
        if self.segs.is_empty() {
            push_live(&mut out, &self.text, tilde);
            return out;
        }
        for (i, s) in self.segs.iter().enumerate() {
            match s {
                Seg::Live(t) if i == 0 && tilde && t.starts_with('~') => {
                    out.push('*');
                    let rest = t.find('/').map_or("", |k| &t[k..]);
                    push_live(&mut out, rest, true);
                }
                Seg::Live(t) if i == 0 && tilde && assignment_shaped(t) => {
                    // `NAME=~/x` (and `NAME=a:~/b`): bash expands these tildes in
                    // an argument that looks like an assignment too.
                    let eq = t.find('=').unwrap_or(0);
                    push_escaped(&mut out, &t[..=eq]);
                    for (k, part) in t[eq + 1..].split(':').enumerate() {
                        if k > 0 {
                            push_escaped(&mut out, ":");
                        }
                        if part.starts_with('~') {
                            if !out.ends_with('*') || out.ends_with("\\*") {
                                out.push('*');
                            }
                            push_live(&mut out, part.find('/').map_or("", |j| &part[j..]), true);
                        } else {
                            push_live(&mut out, part, true);
                        }
                    }
                }
                Seg::Live(t) => push_live(&mut out, t, tilde),
                Seg::Lit(t) => push_escaped(&mut out, t),
                Seg::Dyn { .. } | Seg::Ifs => {
                    if !out.ends_with('*') {
                        out.push('*');
                    }
                }
            }
        }
        out
    }

    /// The word's text when its only expansions are arithmetic (`$((…))`,
    /// always a number when it runs), each standing as `0`; `None` when
    /// another expansion could put any text there.
    pub(crate) fn numbers_only(&self) -> Option<String> {
        if !self.dynamic {
            return Some(self.text.clone());
        }
        let mut out = String::new();
        for s in &self.segs {
            match s {
                Seg::Live(t) | Seg::Lit(t) => out.push_str(t),
                Seg::Dyn {
                    kind: "arithmetic_expansion",
                    ..
                } => out.push('0'),
                Seg::Dyn { .. } | Seg::Ifs => return None,
            }
        }
        Some(out)
    }

    pub(crate) fn from_segs(segs: Vec<Seg>, ctrl: bool) -> Word {
        let mut w = Word {
            ctrl,
            ..Word::default()
        };
        // Live characters, with everything else as a placeholder, so globs
        // and braces are found only where bash would see them.
        let mut live = String::new();
        for s in &segs {
            match s {
                Seg::Live(t) => {
                    w.text.push_str(t);
                    w.canon.push_str(t);
                    live.push_str(t);
                }
                Seg::Lit(t) => {
                    w.text.push_str(t);
                    push_lit(&mut w.canon, t);
                    w.quoted = true;
                    live.push('\u{1}');
                }
                Seg::Dyn { text, kind, quoted } => {
                    push_dynamic(&mut w.text, kind, text);
                    if *quoted {
                        w.canon.push('"');
                        push_dynamic(&mut w.canon, kind, text);
                        w.canon.push('"');
                        w.quoted = true;
                    } else {
                        push_dynamic(&mut w.canon, kind, text);
                    }
                    w.dynamic = true;
                    live.push('\u{1}');
                }
                Seg::Ifs => {
                    w.text.push_str("$IFS");
                    w.canon.push_str("$IFS");
                    w.dynamic = true;
                    live.push('\u{1}');
                }
            }
        }
        if !live.is_empty() {
            w.glob = has_glob(&live);
            w.brace = has_brace(&live);
        }
        w.segs = segs;
        w
    }
}

/// Unquoted text: escaped as [`push_escaped`], or with `globs` its glob
/// characters (`*`, `?`, a closed `[...]`) as `*` (they may match several words).
/// `NAME=…` with a `~` after the `=` or a `:`: bash expands those tildes even
/// in an argument (outside POSIX mode).
fn assignment_shaped(t: &str) -> bool {
    let Some((name, value)) = t.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && value.split(':').any(|p| p.starts_with('~'))
}

fn push_live(out: &mut String, s: &str, globs: bool) {
    if !globs {
        push_escaped(out, s);
        return;
    }
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let closed = c == '[' && s[i + 1..].contains(']');
        if c == '*' || c == '?' || closed {
            if closed {
                for (_, d) in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                }
            }
            if !out.ends_with('*') || out.ends_with("\\*") {
                out.push('*');
            }
        } else {
            push_escaped(out, &c.to_string());
        }
    }
}

fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        if matches!(c, '*' | '\\' | '?' | '[' | ']' | '{' | '}') {
            out.push('\\');
        }
        out.push(c);
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

fn dyn_kind(kind: &str) -> &'static str {
    match kind {
        "simple_expansion" => "simple_expansion",
        "expansion" => "expansion",
        "command_substitution" => "command_substitution",
        "process_substitution" => "process_substitution",
        _ => "arithmetic_expansion",
    }
}

/// An expansion of the variable `IFS` (`$IFS`, `${IFS}`, `${IFS:0:1}`, `${IFS%?}`…).
fn is_ifs_expansion(text: &str) -> bool {
    let rest = text
        .strip_prefix("${")
        .or_else(|| text.strip_prefix('$'))
        .unwrap_or("");
    rest.strip_prefix("IFS")
        .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

/// Normalises a word-like node (no expansion applied).
pub(crate) fn norm_word(node: Node<'_>, src: &str) -> Word {
    let mut segs = Vec::new();
    let mut ctrl = false;
    collect_segs(node, src, &mut segs, &mut ctrl, false, 0);
    merge_segs(&mut segs);
    Word::from_segs(segs, ctrl)
}

/// Normalises a command word node into the words bash makes of it: unquoted
/// `$IFS` expansions split it, brace expansion multiplies it. At most
/// `limit` words come out; `None` when there would be more.
pub(crate) fn norm_words(node: Node<'_>, src: &str, limit: usize) -> Option<Vec<Word>> {
    let mut segs = Vec::new();
    let mut ctrl = false;
    collect_segs(node, src, &mut segs, &mut ctrl, false, 0);
    merge_segs(&mut segs);
    expand_segs(segs, ctrl, limit)
}

/// Splits at `$IFS` and brace-expands a word given as pieces.
pub(crate) fn expand_segs(segs: Vec<Seg>, ctrl: bool, limit: usize) -> Option<Vec<Word>> {
    let mut fields: Vec<Vec<Seg>> = vec![Vec::new()];
    for s in segs {
        if s == Seg::Ifs {
            fields.push(Vec::new());
        } else if let Some(last) = fields.last_mut() {
            last.push(s);
        }
    }
    let split = fields.len() > 1;
    let mut out = Vec::new();
    for f in fields {
        if f.is_empty() {
            continue;
        }
        let w = Word::from_segs(f.clone(), ctrl);
        if !w.brace {
            let mut w = w;
            w.expanded = split;
            out.push(w);
        } else {
            let results = brace_expand_segs(&f, limit.saturating_sub(out.len()) + 1)?;
            let many = results.len() > 1;
            for r in results {
                let mut w = Word::from_segs(r, ctrl);
                // An unquoted empty result is no word at all.
                if w.text.is_empty() && !w.quoted {
                    continue;
                }
                w.expanded = split || many;
                w.brace = false;
                out.push(w);
            }
        }
        if out.len() > limit {
            return None;
        }
    }
    Some(out)
}

fn merge_segs(segs: &mut Vec<Seg>) {
    let mut out: Vec<Seg> = Vec::with_capacity(segs.len());
    for s in segs.drain(..) {
        match (out.last_mut(), s) {
            (Some(Seg::Live(a)), Seg::Live(b)) => a.push_str(&b),
            (Some(Seg::Lit(a)), Seg::Lit(b)) => a.push_str(&b),
            (_, s) => out.push(s),
        }
    }
    *segs = out;
}

fn collect_segs(
    node: Node<'_>,
    src: &str,
    out: &mut Vec<Seg>,
    ctrl: &mut bool,
    in_dq: bool,
    depth: usize,
) {
    let text = slice(src, node.byte_range());
    if depth > 64 {
        out.push(Seg::Dyn {
            text: text.to_string(),
            kind: "expansion",
            quoted: in_dq,
        });
        return;
    }
    match node.kind() {
        "word" => unescape_unquoted(text, out),
        "raw_string" => {
            let inner = text
                .strip_prefix('\'')
                .and_then(|t| t.strip_suffix('\''))
                .unwrap_or(text);
            out.push(Seg::Lit(inner.to_string()));
        }
        "string" | "translated_string" => string_segs(node, src, out, ctrl, depth),
        "ansi_c_string" => {
            let mut decoded = String::new();
            *ctrl |= ansi_c(text, &mut decoded);
            out.push(Seg::Lit(decoded));
        }
        "concatenation" | "command_name" => {
            let mut cursor = node.walk();
            let mut pos = node.start_byte();
            let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
            for (k, &c) in kids.iter().enumerate() {
                // `$"text"` inside a word: the `$` marks a translated string.
                if !c.is_named()
                    && c.kind() == "$"
                    && kids
                        .get(k + 1)
                        .is_some_and(|n| n.kind() == "string" && n.start_byte() == c.end_byte())
                {
                    pos = c.end_byte();
                    continue;
                }
                if c.start_byte() > pos {
                    // Text tree-sitter left between pieces is part of the word.
                    unescape_unquoted(slice(src, pos..c.start_byte()), out);
                }
                collect_segs(c, src, out, ctrl, in_dq, depth + 1);
                pos = pos.max(c.end_byte());
            }
            if node.end_byte() > pos {
                unescape_unquoted(slice(src, pos..node.end_byte()), out);
            }
        }
        "variable_assignment" => {
            let mut cursor = node.walk();
            for c in node.children(&mut cursor) {
                match c.kind() {
                    "variable_name" | "subscript" | "=" | "+=" => {
                        out.push(Seg::Live(slice(src, c.byte_range()).to_string()));
                    }
                    _ => collect_segs(c, src, out, ctrl, in_dq, depth + 1),
                }
            }
        }
        // An empty command substitution: tree-sitter gives it as a token of
        // its own, bash expands it to nothing (`r``m` runs `rm`).
        "``" if !node.is_named() => out.push(Seg::Dyn {
            text: text.to_string(),
            kind: "command_substitution",
            quoted: in_dq,
        }),
        k if is_dynamic_kind(k) => {
            if !in_dq && matches!(k, "simple_expansion" | "expansion") && is_ifs_expansion(text) {
                out.push(Seg::Ifs);
            } else {
                out.push(Seg::Dyn {
                    text: text.to_string(),
                    kind: dyn_kind(k),
                    quoted: in_dq,
                });
            }
        }
        // `$$` (and the like) as an anonymous token: an expansion.
        "$" if !node.is_named() && text.len() > 1 => out.push(Seg::Dyn {
            text: text.to_string(),
            kind: "expansion",
            quoted: in_dq,
        }),
        _ => {
            if in_dq {
                out.push(Seg::Lit(text.to_string()));
            } else {
                out.push(Seg::Live(text.to_string()));
            }
        }
    }
}

/// The segments of a `"…"` (or `$"…"`) string: literal text with `\`
/// escapes applied, and each expansion inside it (quoted).
fn string_segs(node: Node<'_>, src: &str, out: &mut Vec<Seg>, ctrl: &mut bool, depth: usize) {
    let mut pos = node.start_byte();
    let end = node.end_byte();
    let mut cursor = node.walk();
    let mut lit = String::new();
    let mut any = false;
    for c in node.children(&mut cursor) {
        if c.start_byte() > pos {
            dq_unescape(slice(src, pos..c.start_byte()), &mut lit);
        }
        pos = pos.max(c.end_byte());
        match c.kind() {
            // A quote token may carry text of the string with it
            // (tree-sitter gives `" "` as `"` and ` "`): that text is
            // part of the word.
            "\"" | "$\"" => {
                let t = slice(src, c.byte_range());
                let t = if c.start_byte() == node.start_byte() {
                    t.strip_prefix(c.kind()).unwrap_or(t)
                } else {
                    t.strip_suffix('"').unwrap_or(t)
                };
                dq_unescape(t, &mut lit);
            }
            // The mark of `$"…"`; inside `"…"` a `$` is itself.
            "$" if node.kind() == "translated_string" => {}
            "$" => lit.push('$'),
            // `$"…"` holds a string node: read like `"…"`.
            "string" => {
                if !lit.is_empty() {
                    out.push(Seg::Lit(std::mem::take(&mut lit)));
                }
                any = true;
                collect_segs(c, src, out, ctrl, true, depth + 1);
            }
            "string_content" => dq_unescape(slice(src, c.byte_range()), &mut lit),
            k if is_dynamic_kind(k) => {
                if !lit.is_empty() {
                    out.push(Seg::Lit(std::mem::take(&mut lit)));
                }
                any = true;
                out.push(Seg::Dyn {
                    text: slice(src, c.byte_range()).to_string(),
                    kind: dyn_kind(k),
                    quoted: true,
                });
            }
            _ => lit.push_str(slice(src, c.byte_range())),
        }
    }
    if end > pos {
        let tail = slice(src, pos..end);
        let tail = tail.strip_suffix('"').unwrap_or(tail);
        dq_unescape(tail, &mut lit);
    }
    if !lit.is_empty() || !any {
        out.push(Seg::Lit(lit));
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

/// Backslash escapes of unquoted text: `\x` is the literal `x`, `\<newline>` vanishes.
fn unescape_unquoted(text: &str, out: &mut Vec<Seg>) {
    let mut live = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        // An expansion tree-sitter left as plain text (`a$$`, `$-`): bash expands
        // it, so it is dynamic.
        if c == '$' {
            if let Some(&n) = chars.peek() {
                if n.is_ascii_alphanumeric() || "_$!-?#@*{(".contains(n) {
                    if !live.is_empty() {
                        out.push(Seg::Live(std::mem::take(&mut live)));
                    }
                    let mut t = String::from("$");
                    t.extend(chars.by_ref());
                    out.push(Seg::Dyn {
                        text: t,
                        kind: "expansion",
                        quoted: false,
                    });
                    return;
                }
            }
        }
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => {
                    if !live.is_empty() {
                        out.push(Seg::Live(std::mem::take(&mut live)));
                    }
                    out.push(Seg::Lit(n.to_string()));
                }
            }
        } else {
            live.push(c);
        }
    }
    if !live.is_empty() {
        out.push(Seg::Live(live));
    }
}

/// One element of a word for brace expansion: a live character (syntax
/// when it is `{`, `,`, `}` or `.`), or an atom that is never syntax.
#[derive(Clone, Debug)]
enum P {
    C(char),
    A(Seg),
}

fn to_pieces(segs: &[Seg]) -> Vec<P> {
    let mut v = Vec::new();
    for s in segs {
        match s {
            Seg::Live(t) => v.extend(t.chars().map(P::C)),
            other => v.push(P::A(other.clone())),
        }
    }
    v
}

fn from_pieces(ps: &[P]) -> Vec<Seg> {
    let mut out: Vec<Seg> = Vec::new();
    for p in ps {
        match p {
            P::C(c) => match out.last_mut() {
                Some(Seg::Live(t)) => t.push(*c),
                _ => out.push(Seg::Live(c.to_string())),
            },
            P::A(s) => out.push(s.clone()),
        }
    }
    out
}

/// Bash brace expansion over a word's pieces; only live characters are
/// syntax. `None` when it makes more than `limit` words.
fn brace_expand_segs(segs: &[Seg], limit: usize) -> Option<Vec<Vec<Seg>>> {
    let mut out = Vec::new();
    let mut work = 0usize;
    if !expand_pieces(&to_pieces(segs), limit, &mut out, 0, &mut work) {
        return None;
    }
    Some(out.iter().map(|p| from_pieces(p)).collect())
}

fn is_c(p: &P, c: char) -> bool {
    matches!(p, P::C(x) if *x == c)
}

/// Returns false when the limit (results, or work) is exceeded.
fn expand_pieces(
    s: &[P],
    limit: usize,
    out: &mut Vec<Vec<P>>,
    depth: usize,
    work: &mut usize,
) -> bool {
    *work += s.len() + 1;
    if out.len() > limit || depth > 16 || *work > 1 << 20 {
        return false;
    }
    // The first `{` (not the `{` of `${`) whose matching `}` closes a
    // comma list or a sequence.
    let mut i = 0;
    while i < s.len() {
        if !is_c(&s[i], '{') {
            i += 1;
            continue;
        }
        // Find the matching close and top-level commas.
        let mut level = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (j, p) in s.iter().enumerate().skip(i + 1) {
            match p {
                P::C('{') => level += 1,
                P::C('}') if level == 0 => {
                    close = Some(j);
                    break;
                }
                P::C('}') => level -= 1,
                P::C(',') if level == 0 => commas.push(j),
                _ => {}
            }
        }
        let Some(close) = close else {
            // An unmatched `{`: bash looks for a brace after it (`g{{p,}`).
            *work += s.len() - i;
            if *work > 1 << 20 {
                return false;
            }
            i += 1;
            continue;
        };
        let alts: Vec<Vec<P>> = if !commas.is_empty() {
            let mut v = Vec::new();
            let mut last = i + 1;
            for &c in commas.iter().chain(std::iter::once(&close)) {
                v.push(s[last..c].to_vec());
                last = c + 1;
            }
            v
        } else {
            match sequence(&s[i + 1..close]) {
                Some(v) => v
                    .into_iter()
                    .map(|t| t.chars().map(P::C).collect())
                    .collect(),
                None => {
                    i += 1;
                    continue;
                }
            }
        };
        let pre = &s[..i];
        let post = &s[close + 1..];
        for alt in alts {
            let mut next = Vec::with_capacity(pre.len() + alt.len() + post.len());
            next.extend_from_slice(pre);
            next.extend(alt);
            next.extend_from_slice(post);
            if !expand_pieces(&next, limit, out, depth + 1, work) {
                return false;
            }
        }
        return true;
    }
    out.push(s.to_vec());
    out.len() <= limit
}

/// `a..b[..step]` of numbers or single letters, when every piece is live.
fn sequence(inner: &[P]) -> Option<Vec<String>> {
    let mut t = String::new();
    for p in inner {
        match p {
            P::C(c) => t.push(*c),
            P::A(_) => return None,
        }
    }
    let parts: Vec<&str> = t.split("..").collect();
    if parts.len() != 2 && parts.len() != 3 {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => s.parse::<i64>().ok()?.unsigned_abs().max(1) as i64,
        None => 1,
    };
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        if a.abs_diff(b) / step.unsigned_abs() > 4096 {
            // Far too many words: let the caller's limit refuse it.
            return Some(vec![String::new(); 4097]);
        }
        let mut v = Vec::new();
        let mut x = a;
        loop {
            v.push(x.to_string());
            if x == b || (a < b && x + step > b) || (a > b && x - step < b) {
                break;
            }
            x = if a < b { x + step } else { x - step };
        }
        return Some(v);
    }
    let (x, y) = (parts[0], parts[1]);
    let (Some(cx), Some(cy)) = (x.chars().next(), y.chars().next()) else {
        return None;
    };
    if x.chars().count() == 1
        && y.chars().count() == 1
        && cx.is_ascii_alphabetic()
        && cy.is_ascii_alphabetic()
    {
        let (lo, hi) = (cx as u8, cy as u8);
        let mut v = Vec::new();
        if lo <= hi {
            let mut c = lo;
            while c <= hi {
                v.push((c as char).to_string());
                c = c.saturating_add(step as u8);
                if step as u8 == 0 {
                    break;
                }
            }
        } else {
            let mut c = lo;
            while c >= hi {
                v.push((c as char).to_string());
                if c < step as u8 {
                    break;
                }
                c -= step as u8;
            }
        }
        return Some(v);
    }
    None
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
pub(crate) fn ansi_c(text: &str, out: &mut String) -> bool {
    let start = out.len();
    ansi_c_raw(text, out);
    let decoded = &out[start..];
    let mut ctrl = decoded.chars().any(is_hidden);
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

/// The first control (other than tab and newline) or invisible character.
pub(crate) fn hidden_char(s: &str) -> Option<char> {
    crate::hidden::hidden_char(s)
}

pub(crate) fn is_hidden(c: char) -> bool {
    crate::hidden::is_hidden(c)
}

/// The name a command word is judged by: its basename.
pub(crate) fn basename(s: &str) -> &str {
    match s.rfind('/') {
        Some(i) if i + 1 < s.len() => &s[i + 1..],
        _ => s,
    }
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
        // Bounded by its limit, however the braces nest.
        assert!(brace_expand(&"{{{,}".repeat(5000), 64).len() <= 64);
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
