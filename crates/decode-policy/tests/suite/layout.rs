//! The crate's shape stays reviewable: no module imports a module that
//! imports it back (directly or around a circle), and no function is longer
//! than 150 lines. Read from the source files (comments, strings and the
//! `#[cfg(test)] mod tests` of each file left out).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const LONGEST_FUNCTION: usize = 150;

type Module = Vec<String>;

/// Every source file, by module path (`shell::words`), its text cleaned.
fn modules() -> BTreeMap<Module, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(&src).expect("under src").with_extension("");
            let mut m: Module = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(m.last().map(String::as_str), Some("mod" | "lib")) {
                m.pop();
            }
            let text = std::fs::read_to_string(&p).expect("read");
            out.insert(m, clean(strip_tests(&text)));
        }
    }
    out
}

fn strip_tests(t: &str) -> &str {
    match t.find("#[cfg(test)]\nmod tests") {
        Some(k) => &t[..k],
        None => t,
    }
}

/// The text with comments, string and char literals blanked (line breaks
/// kept), so braces and paths in them do not count.
fn clean(t: &str) -> String {
    let b = t.as_bytes();
    let mut out = String::with_capacity(t.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if t[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if c == b'r' && !ident_before && matches!(b.get(i + 1), Some(b'"' | b'#')) {
            let hashes = t[i + 1..].bytes().take_while(|&x| x == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                let end = format!("\"{}", "#".repeat(hashes));
                let from = i + 2 + hashes;
                let stop = t[from..]
                    .find(&end)
                    .map_or(b.len(), |k| from + k + end.len());
                out.push_str("\"\"");
                out.extend(std::iter::repeat_n('\n', t[i..stop].matches('\n').count()));
                i = stop;
                continue;
            }
        }
        if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            out.extend(std::iter::repeat_n(
                '\n',
                t[i..j.min(b.len())].matches('\n').count(),
            ));
            i = j + 1;
            continue;
        }
        if c == b'\'' {
            // A char literal (`'{'`, `'\n'`), not a lifetime.
            let len = if b.get(i + 1) == Some(&b'\\') {
                t[i + 2..].find('\'').map(|k| k + 3)
            } else {
                t[i + 1..]
                    .chars()
                    .next()
                    .filter(|ch| t[i + 1 + ch.len_utf8()..].starts_with('\''))
                    .map(|ch| ch.len_utf8() + 2)
            };
            if let Some(n) = len {
                out.push_str("' '");
                i += n;
                continue;
            }
        }
        let ch = t[i..].chars().next().expect("char");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The module a path (`crate::a::b::Item`, `super::x`, `self::y`) names from
/// module `cur`: the longest prefix that is a module.
fn resolve(cur: &Module, segs: &[&str], all: &BTreeMap<Module, String>) -> Option<Module> {
    let (mut base, rest): (Module, &[&str]) = match *segs.first()? {
        "crate" => (Vec::new(), &segs[1..]),
        "self" => (cur.clone(), &segs[1..]),
        "super" => {
            let mut b = cur.clone();
            let mut k = 0;
            while segs.get(k) == Some(&"super") {
                b.pop();
                k += 1;
            }
            (b, &segs[k..])
        }
        _ => return None,
    };
    for s in rest {
        base.push((*s).to_string());
        if !all.contains_key(&base) {
            base.pop();
            break;
        }
    }
    Some(base)
}

/// The paths of a `use` tree (`a::{b, c::{d, e}}` is `a::b`, `a::c::d`, `a::c::e`).
fn use_paths(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.to_string()];
    };
    let head = &tree[..open];
    let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for ch in body.chars() {
        match ch {
            ',' if depth == 0 => parts.push(std::mem::take(&mut cur)),
            '{' => {
                depth += 1;
                cur.push(ch);
            }
            '}' => {
                depth -= 1;
                cur.push(ch);
            }
            _ => cur.push(ch),
        }
    }
    parts.push(cur);
    let mut out = Vec::new();
    for p in parts {
        let p = p.trim();
        if p.is_empty() {
            continue;
        }
        if p == "self" {
            out.push(head.trim_end_matches(':').to_string());
        } else {
            out.extend(use_paths(&format!("{head}{p}")));
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The modules each module refers to: `use` trees and inline paths
/// (`crate::…`, `super::…`, `child::…`).
fn edges(all: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut out = BTreeMap::new();
    for (m, text) in all {
        let mut to = BTreeSet::new();
        let mut rest = String::new();
        for stmt in text.split_inclusive(';') {
            let s = stmt.trim_start();
            let s = s
                .strip_prefix("pub(crate) ")
                .or_else(|| s.strip_prefix("pub(super) "))
                .or_else(|| s.strip_prefix("pub "))
                .unwrap_or(s);
            if let Some(tree) = s.strip_prefix("use ") {
                for p in use_paths(tree.trim_end_matches(';')) {
                    let segs: Vec<&str> = p.split("::").map(|x| x.trim()).collect();
                    let segs: Vec<&str> = segs
                        .iter()
                        .map(|x| x.split(" as ").next().unwrap_or(x).trim())
                        .collect();
                    let target = if matches!(segs[0], "crate" | "super" | "self") {
                        resolve(m, &segs, all)
                    } else {
                        let mut child = m.clone();
                        child.push(segs[0].to_string());
                        let mut path = vec!["self"];
                        path.extend(segs.iter().copied());
                        all.contains_key(&child)
                            .then(|| resolve(m, &path, all))
                            .flatten()
                    };
                    to.extend(target);
                }
            } else {
                rest.push_str(stmt);
            }
        }
        // Inline paths.
        let b: Vec<char> = rest.chars().collect();
        let mut i = 0;
        while i < b.len() {
            if !is_ident(b[i]) || (i > 0 && (is_ident(b[i - 1]) || b[i - 1] == ':')) {
                i += 1;
                continue;
            }
            let mut j = i;
            let mut segs = Vec::new();
            loop {
                let s = j;
                while j < b.len() && is_ident(b[j]) {
                    j += 1;
                }
                segs.push(b[s..j].iter().collect::<String>());
                if j + 2 < b.len() && b[j] == ':' && b[j + 1] == ':' && is_ident(b[j + 2]) {
                    j += 2;
                } else {
                    break;
                }
            }
            i = j.max(i + 1);
            if segs.len() < 2 {
                continue;
            }
            let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
            let target = if matches!(segs[0], "crate" | "super" | "self") {
                resolve(m, &segs, all)
            } else {
                let mut child = m.clone();
                child.push(segs[0].to_string());
                let mut path = vec!["self"];
                path.extend(segs.iter().copied());
                all.contains_key(&child)
                    .then(|| resolve(m, &path, all))
                    .flatten()
            };
            to.extend(target);
        }
        to.remove(m);
        out.insert(m.clone(), to);
    }
    out
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "lib".into()
    } else {
        m.join("::")
    }
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let all = modules();
    let graph = edges(&all);
    // Every module from which a module reaches itself lies on a circle.
    let mut circles = Vec::new();
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<(Module, Vec<Module>)> = graph[start]
            .iter()
            .map(|n| (n.clone(), vec![start.clone(), n.clone()]))
            .collect();
        while let Some((at, path)) = stack.pop() {
            if &at == start {
                circles.push(path.iter().map(name).collect::<Vec<_>>().join(" → "));
                break;
            }
            if !seen.insert(at.clone()) {
                continue;
            }
            for n in graph.get(&at).into_iter().flatten() {
                let mut p = path.clone();
                p.push(n.clone());
                stack.push((n.clone(), p));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn no_function_is_longer_than_150_lines() {
    let mut long = Vec::new();
    for (m, text) in modules() {
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            let t = t
                .strip_prefix("pub(crate) ")
                .or_else(|| t.strip_prefix("pub(super) "))
                .or_else(|| t.strip_prefix("pub "))
                .unwrap_or(t);
            let t = t.strip_prefix("const ").unwrap_or(t);
            let Some(rest) = t.strip_prefix("fn ") else {
                continue;
            };
            let fname: String = rest.chars().take_while(|&c| is_ident(c)).collect();
            let (mut depth, mut started) = (0i64, false);
            let mut end = i;
            'scan: for (k, l2) in lines.iter().enumerate().skip(i) {
                for ch in l2.chars() {
                    match ch {
                        '{' => {
                            depth += 1;
                            started = true;
                        }
                        '}' => depth -= 1,
                        ';' if !started => {
                            end = k;
                            break 'scan;
                        }
                        _ => {}
                    }
                    if started && depth == 0 {
                        end = k;
                        break 'scan;
                    }
                }
            }
            let n = end - i + 1;
            if n > LONGEST_FUNCTION {
                long.push(format!("{}::{fname}: {n} lines", name(&m)));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LONGEST_FUNCTION} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_reader_sees_circles_and_long_functions() {
    let mut all = BTreeMap::new();
    all.insert(
        vec!["a".to_string()],
        clean("use super::b::X;\nfn f() { \"}\" }"),
    );
    all.insert(
        vec!["b".to_string()],
        clean("pub(crate) use crate::a::{self, Y};"),
    );
    let g = edges(&all);
    assert!(g[&vec!["a".to_string()]].contains(&vec!["b".to_string()]));
    assert!(g[&vec!["b".to_string()]].contains(&vec!["a".to_string()]));
    assert_eq!(clean("let c = '{'; // }"), "let c = ' '; ");
}
