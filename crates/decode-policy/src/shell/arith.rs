//! Text that bash evaluates arithmetically (docs/permissions.md, "Fail
//! closed"). Bash runs the command substitutions in such text even where
//! they look quoted (`$(( 'a[$(rm -rf x)]' ))` runs `rm`: the subscript is
//! expanded again when it is evaluated), and it evaluates the *value* of
//! every variable named there as arithmetic too. So: every substitution in
//! the text is a fragment, and every variable is judged by the text the
//! command assigned to it — unknown text (from the environment, a
//! substitution, `read`) makes the command opaque.

use std::collections::HashMap;

use tree_sitter::Node;

use super::words::{is_dynamic_kind, norm_word, slice};

/// What a variable may hold, from every assignment in the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Val {
    /// Only numbers (results of arithmetic).
    Numeric,
    /// Only these static texts (or numbers).
    Text(Vec<String>),
    /// Names of files matching these globs (`for f in src/*.rs`): where they
    /// lie is known, what they are called is not.
    Paths(Vec<String>),
    /// Something only known when the command runs.
    Unknown,
}

pub(crate) type Vars = HashMap<String, Val>;

/// Variables bash sets to numbers (or that are empty in a fresh shell).
const SAFE: &[&str] = &[
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "BASHPID",
    "PPID",
    "UID",
    "EUID",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "HISTCMD",
    "OPTIND",
    "BASH_SUBSHELL",
    "BASH_LINENO",
    "PIPESTATUS",
    "BASH_ARGC",
    "COLUMNS",
    "LINES",
    "SHLVL",
];

/// Whether a variable named in arithmetic needs no look-up: a special
/// parameter, a positional one, or a numeric shell variable.
pub(crate) fn is_safe_name(n: &str) -> bool {
    n.is_empty()
        || n.chars().all(|c| c.is_ascii_digit())
        || matches!(n, "?" | "#" | "$" | "!" | "-" | "@" | "*")
        || SAFE.contains(&n)
}

fn merge(vars: &mut Vars, name: &str, v: Val) {
    let e = vars.entry(name.to_string()).or_insert(Val::Numeric);
    *e = match (std::mem::replace(e, Val::Unknown), v) {
        (Val::Unknown, _) | (_, Val::Unknown) => Val::Unknown,
        (Val::Numeric, x) | (x, Val::Numeric) => x,
        (Val::Text(mut a), Val::Text(b)) => {
            for t in b {
                if !a.contains(&t) && a.len() < 64 {
                    a.push(t);
                }
            }
            Val::Text(a)
        }
        (Val::Text(mut a) | Val::Paths(mut a), Val::Paths(b) | Val::Text(b)) => {
            for t in b {
                if !a.contains(&t) && a.len() < 64 {
                    a.push(t);
                }
            }
            Val::Paths(a)
        }
    };
}

/// What an assignment's value node can hold.
fn classify(value: Option<Node<'_>>, src: &str) -> Val {
    let Some(v) = value else {
        return Val::Text(vec![String::new()]);
    };
    if v.kind() == "arithmetic_expansion" {
        return Val::Numeric;
    }
    if v.kind() == "array" {
        // One text, the elements joined: `"${a[@]}"` run as a command is
        // judged as all of them.
        let mut texts = Vec::new();
        let mut cursor = v.walk();
        for c in v.named_children(&mut cursor) {
            let w = norm_word(c, src);
            if w.dynamic {
                return Val::Unknown;
            }
            texts.push(w.text);
        }
        return Val::Text(vec![texts.join(" ")]);
    }
    if is_dynamic_kind(v.kind()) || has_dynamic(v, 0) {
        return Val::Unknown;
    }
    Val::Text(vec![norm_word(v, src).text])
}

fn has_dynamic(n: Node<'_>, depth: usize) -> bool {
    if depth > 32 {
        return true;
    }
    let mut cursor = n.walk();
    let kids: Vec<Node<'_>> = n.children(&mut cursor).collect();
    kids.into_iter()
        .any(|c| is_dynamic_kind(c.kind()) || has_dynamic(c, depth + 1))
}

/// Records every variable the command assigns, anywhere (loops may run a
/// later assignment before an earlier use, so order is not trusted).
pub(crate) fn collect(root: Node<'_>, src: &str, vars: &mut Vars) {
    let mut stack = vec![root];
    let mut budget = 100_000usize;
    while let Some(n) = stack.pop() {
        budget = match budget.checked_sub(1) {
            Some(b) => b,
            None => return,
        };
        match n.kind() {
            "variable_assignment" => {
                if let Some(name) = n.child_by_field_name("name") {
                    let name = if name.kind() == "subscript" {
                        name.child_by_field_name("name").unwrap_or(name)
                    } else {
                        name
                    };
                    let v = classify(n.child_by_field_name("value"), src);
                    merge(vars, slice(src, name.byte_range()), v);
                }
            }
            "for_statement" => {
                if let Some(var) = n.child_by_field_name("variable") {
                    let mut cursor = n.walk();
                    let values: Vec<Node<'_>> =
                        n.children_by_field_name("value", &mut cursor).collect();
                    let v = if values.is_empty() {
                        Val::Unknown
                    } else {
                        let mut texts = Vec::new();
                        let mut unknown = false;
                        let mut globs = false;
                        for value in values {
                            let w = norm_word(value, src);
                            unknown |= w.dynamic || w.brace;
                            globs |= w.glob;
                            texts.push(w.text);
                        }
                        if unknown {
                            Val::Unknown
                        } else if globs {
                            Val::Paths(texts)
                        } else {
                            Val::Text(texts)
                        }
                    };
                    merge(vars, slice(src, var.byte_range()), v);
                }
            }
            "command" => {
                let words: Vec<String> = {
                    let mut cursor = n.walk();
                    n.named_children(&mut cursor)
                        .filter(|c| !matches!(c.kind(), "variable_assignment" | "file_redirect"))
                        .map(|c| norm_word(c, src).text)
                        .collect()
                };
                match words.first().map(String::as_str) {
                    Some("read" | "mapfile" | "readarray" | "getopts") => {
                        for w in &words[1..] {
                            if is_identifier(w) {
                                merge(vars, w, Val::Unknown);
                            }
                        }
                    }
                    Some("printf") => {
                        if let Some(i) = words.iter().position(|w| w == "-v") {
                            if let Some(name) = words.get(i + 1) {
                                merge(vars, name_of(name), Val::Unknown);
                            }
                        }
                    }
                    Some("let") => {
                        for w in &words[1..] {
                            for name in assigned_in(w) {
                                merge(vars, &name, Val::Numeric);
                            }
                        }
                    }
                    _ => {}
                }
            }
            "compound_statement" | "c_style_for_statement"
                if slice(src, n.byte_range()).starts_with("((")
                    || n.kind() == "c_style_for_statement" =>
            {
                for name in assigned_in(slice(src, n.byte_range())) {
                    merge(vars, &name, Val::Numeric);
                }
            }
            "arithmetic_expansion" => {
                for name in assigned_in(slice(src, n.byte_range())) {
                    merge(vars, &name, Val::Numeric);
                }
            }
            _ => {}
        }
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            stack.push(c);
        }
    }
}

/// Names given the integer attribute anywhere in the command
/// (`declare -i`, `typeset -ai`, `local -i`): bash evaluates every value
/// assigned to them as arithmetic.
pub(crate) fn integer_names(
    root: Node<'_>,
    src: &str,
    out: &mut std::collections::HashSet<String>,
) {
    let mut stack = vec![root];
    let mut budget = 100_000usize;
    while let Some(n) = stack.pop() {
        budget = match budget.checked_sub(1) {
            Some(b) => b,
            None => return,
        };
        if matches!(n.kind(), "declaration_command" | "command") {
            let mut cursor = n.walk();
            let words: Vec<String> = n
                .children(&mut cursor)
                .filter(|c| {
                    !matches!(
                        c.kind(),
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect"
                    )
                })
                .map(|c| norm_word(c, src).text)
                .collect();
            if let Some(k) = words
                .iter()
                .position(|w| matches!(w.as_str(), "declare" | "typeset" | "local"))
            {
                let args = &words[k + 1..];
                let integer = args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('i'));
                if integer {
                    for a in args.iter().filter(|a| !a.starts_with(['-', '+'])) {
                        let name = name_of(a.split(['=', '+']).next().unwrap_or(a));
                        if is_identifier(name) {
                            out.insert(name.to_string());
                        }
                    }
                }
            }
        }
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            stack.push(c);
        }
    }
}

fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `name[…]` → `name`.
pub(crate) fn name_of(s: &str) -> &str {
    s.split('[').next().unwrap_or(s)
}

/// Names assigned by arithmetic text (`x=…`, `x+=…`, `x++`, `--x`).
fn assigned_in(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if (b[i].is_ascii_alphabetic() || b[i] == b'_')
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let name = &text[start..i];
            let rest = text[i..].trim_start();
            let before = text[..start].trim_end();
            let assigns = (rest.starts_with('=') && !rest.starts_with("=="))
                || [
                    "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--",
                ]
                .iter()
                .any(|op| rest.starts_with(op))
                || before.ends_with("++")
                || before.ends_with("--");
            if assigns && !out.iter().any(|o| o == name) {
                out.push(name.to_string());
            }
            continue;
        }
        i += 1;
    }
    out
}

/// `text` with every `$name` / `${name}` replaced by each static value the
/// command assigns to it (at most `limit` results); `None` when it holds
/// anything else only known when it runs.
pub(crate) fn substitute(text: &str, vars: &Vars, limit: usize) -> Option<Vec<String>> {
    substitute_with(text, vars, limit, false)
}

/// [`substitute`], keeping values that hold `$` or `` ` `` literally (for
/// names bash evaluates, and command words judged again).
pub(crate) fn substitute_literal(text: &str, vars: &Vars, limit: usize) -> Option<Vec<String>> {
    substitute_with(text, vars, limit, true)
}

fn substitute_with(text: &str, vars: &Vars, limit: usize, literal: bool) -> Option<Vec<String>> {
    let mut results = vec![String::new()];
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' || (b[i] == b'$' && matches!(b.get(i + 1), Some(b'(') | None)) {
            return None;
        }
        if b[i] != b'$' {
            let start = i;
            while i < b.len() && b[i] != b'$' && b[i] != b'`' {
                i += 1;
            }
            for r in &mut results {
                r.push_str(&text[start..i]);
            }
            continue;
        }
        let braced = b.get(i + 1) == Some(&b'{');
        let s = if braced { i + 2 } else { i + 1 };
        let mut e = s;
        while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
            e += 1;
        }
        if e == s || !is_identifier(&text[s..e]) {
            return None;
        }
        let name = &text[s..e];
        if braced {
            // `${a[@]}`, `${a[*]}`, `${a[0]}`: the array's joined text.
            if b.get(e) == Some(&b'[') {
                let close = text[e..].find(']')? + e;
                let sub = &text[e + 1..close];
                if !(sub == "@" || sub == "*" || sub.chars().all(|c| c.is_ascii_digit())) {
                    return None;
                }
                e = close + 1;
            }
            if b.get(e) != Some(&b'}') {
                return None;
            }
            e += 1;
        }
        let (Some(Val::Text(values)) | Some(Val::Paths(values))) = vars.get(name) else {
            return None;
        };
        if !literal && values.iter().any(|v| v.contains(['$', '`'])) {
            return None;
        }
        let mut next = Vec::new();
        for r in &results {
            for v in values {
                next.push(format!("{r}{v}"));
                if next.len() > limit {
                    return None;
                }
            }
        }
        results = next;
        i = e;
    }
    Some(results)
}

/// What arithmetic text refers to: the command substitutions in it (found
/// whatever the quoting) and the variables it names.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub subs: Vec<String>,
    pub names: Vec<String>,
}

pub(crate) fn scan(text: &str) -> Found {
    let mut f = Found::default();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'`' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'`' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(b.len());
                f.subs.push(slice(text, start..end).to_string());
                i = end + 1;
            }
            b'$' if b.get(i + 1) == Some(&b'(') && b.get(i + 2) != Some(&b'(') => {
                let start = i + 2;
                let mut depth = 1usize;
                let mut j = start;
                while j < b.len() {
                    match b[j] {
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
                let end = j.min(b.len());
                f.subs.push(slice(text, start..end).to_string());
                i = end + 1;
            }
            b'$' => {
                i += 1;
                let braced = b.get(i) == Some(&b'{');
                if braced {
                    i += 1;
                    // `${#…}` is a length: a number.
                    if b.get(i) == Some(&b'#') && b.get(i + 1) != Some(&b'}') {
                        i += 1;
                        let s = i;
                        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                            i += 1;
                        }
                        let _ = s;
                        continue;
                    }
                    if b.get(i) == Some(&b'!') {
                        // Indirection: the name is only known when it runs.
                        f.names.push("!indirect".to_string());
                    }
                }
                let s = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if i > s {
                    let name = &text[s..i];
                    // `$1x` is `$1` then `x`.
                    let name = if name.starts_with(|c: char| c.is_ascii_digit()) && !braced {
                        &name[..1]
                    } else {
                        name
                    };
                    if !f.names.iter().any(|n| n == name) {
                        f.names.push(name.to_string());
                    }
                } else if i < b.len() {
                    if matches!(b[i], b'@' | b'*')
                        && !f.names.iter().any(|n| n.as_bytes() == [b[i]])
                    {
                        f.names.push((b[i] as char).to_string());
                    }
                    i += 1; // `$?`, `$#`…
                }
            }
            c if c.is_ascii_digit() => {
                // A number: `10`, `0x1f`, `16#ff`, `2#101`.
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'#')
                {
                    i += 1;
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let s = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let name = &text[s..i];
                if !f.names.iter().any(|n| n == name) {
                    f.names.push(name.to_string());
                }
            }
            _ => i += 1,
        }
    }
    f
}

/// `NAME[SUB]…` (a name argument of `declare`, `read`, `printf -v`, `unset`,
/// `test -v`): the subscript, which bash evaluates arithmetically.
pub(crate) fn name_subscript(word: &str) -> Option<&str> {
    let open = word.find('[')?;
    if !is_identifier(&word[..open]) {
        return None;
    }
    let rest = &word[open + 1..];
    let mut depth = 1usize;
    for (k, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&rest[..k]);
                }
            }
            _ => {}
        }
    }
    Some(rest)
}

/// The parts of a `${…}` expansion bash evaluates arithmetically: the
/// subscript of `${a[SUB]}` and the offset and length of `${x:OFF:LEN}`.
pub(crate) fn expansion_parts(text: &str) -> Vec<&str> {
    let Some(inner) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) else {
        return Vec::new();
    };
    let inner = inner.trim_start_matches(['#', '!']);
    // `${@:x}`, `${*:x:1}`: a slice of the positional parameters.
    let name_end = if inner.starts_with(['@', '*']) {
        1
    } else {
        inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len())
    };
    let mut out = Vec::new();
    let mut rest = &inner[name_end..];
    if rest.starts_with('[') {
        if let Some(sub) = name_subscript(inner) {
            out.push(sub);
            rest = &rest[(sub.len() + 2).min(rest.len())..];
        }
    }
    if let Some(r) = rest.strip_prefix(':') {
        if !r.starts_with(['-', '=', '?', '+']) {
            out.extend(r.splitn(2, ':'));
        }
    }
    out
}

/// The bodies of the arithmetic expansions (`$((…))`, `$[…]`) written
/// inside a `${…}` expansion's text (`${v:-$((x))}`): tree-sitter reads
/// some of them as a command substitution of a subshell.
pub(crate) fn nested_arith(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        // Bytes, not `text[i..]`: `i` walks bytes and may stand inside a character.
        let (open, close, skip) = if b[i..].starts_with(b"$((") {
            (b'(', b')', 3)
        } else if b[i..].starts_with(b"$[") {
            (b'[', b']', 2)
        } else {
            i += 1;
            continue;
        };
        let start = i + skip;
        let mut depth = 1usize;
        let mut j = start;
        while j < b.len() && depth > 0 {
            if b[j] == open {
                depth += 1;
            } else if b[j] == close {
                depth -= 1;
            }
            j += 1;
        }
        // `j` is past the closing bracket (or the text's end).
        let end = if depth == 0 { j - 1 } else { j };
        out.push(&text[start..end]);
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_arithmetic_is_found_between_any_characters() {
        assert_eq!(nested_arith("*=j@\u{11667}$((x))\u{2e0d}"), ["x"]);
        assert!(nested_arith("\u{11667}\u{1cf35}%x").is_empty());
        assert_eq!(nested_arith("${v:-$[a[$(id)]]}"), ["a[$(id)]"]);
    }

    #[test]
    fn scanning() {
        let f = scan("'a[$(rm -rf build)]' + `id` + $x + ${y[0]} + z * 0x1f + 16#ff + $1");
        assert_eq!(f.subs, ["rm -rf build", "id"]);
        assert_eq!(f.names, ["a", "x", "y", "z", "1"]);
        assert_eq!(scan("${#arr[@]} - 1").names, Vec::<String>::new());
        assert_eq!(assigned_in("i=0; i<3; i++"), ["i"]);
        assert_eq!(assigned_in("a == b"), Vec::<String>::new());
        assert_eq!(name_subscript("a[$(x)]=1"), Some("$(x)"));
        assert_eq!(name_subscript("-v"), None);
        assert_eq!(expansion_parts("${a[i+1]}"), ["i+1"]);
        assert_eq!(expansion_parts("${x:1:n}"), ["1", "n"]);
        assert_eq!(expansion_parts("${x:-default}"), Vec::<&str>::new());
        assert_eq!(expansion_parts("${@:x:1}"), ["x", "1"]);
        assert_eq!(expansion_parts("${*:n}"), ["n"]);
        assert_eq!(nested_arith("${v:-$((x))}"), ["x"]);
        assert_eq!(nested_arith("${v:-$((a+(b)))}"), ["a+(b)"]);
        assert_eq!(nested_arith("${v:-$[y]}"), ["y"]);
        let mut vars = Vars::new();
        vars.insert("t".into(), Val::Text(vec!["a".into(), "b".into()]));
        vars.insert("u".into(), Val::Unknown);
        assert_eq!(
            substitute("/tmp/orig_$t", &vars, 8),
            Some(vec!["/tmp/orig_a".into(), "/tmp/orig_b".into()])
        );
        assert_eq!(
            substitute("${t}.x", &vars, 8),
            Some(vec!["a.x".into(), "b.x".into()])
        );
        assert_eq!(substitute("$u/x", &vars, 8), None);
        assert_eq!(substitute("$(id)", &vars, 8), None);
        assert_eq!(substitute("$HOME/x", &vars, 8), None);
    }
}
