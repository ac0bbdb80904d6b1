//! The paths a simple command's arguments name (docs/permissions.md, "The
//! stages", path scope): non-option arguments, `--opt=VALUE` values, paths
//! glued to a short option, and absolute or home paths inside an argument.

use super::words::{self, Word};

/// Paths named by the arguments: non-option arguments, `--opt=VALUE` values
/// and absolute or home paths inside an argument after whitespace.
pub(super) fn collect_arg_paths(words: &[Word], patterns: &[usize], out: &mut Vec<String>) {
    let mut options_done = false;
    for (k, w) in words.iter().enumerate().skip(1) {
        if patterns.contains(&k) {
            continue;
        }
        let t = w.text.as_str();
        if !options_done && t == "--" {
            options_done = true;
            continue;
        }
        if options_done || !t.starts_with('-') || t == "-" {
            if t != "-" {
                push_path_candidates(t, w, out);
            }
        } else if let Some((_, v)) = t.split_once('=') {
            push_path_candidates(v, w, out);
        } else {
            // `-o/etc/x`, `-o.git/config`, `-vo.bashrc`: a short option with its
            // path attached, after any number of flag letters. Every tail that
            // starts like a path counts.
            if !t.starts_with("--") {
                // A tail starts right after an option letter.
                let tails = t
                    .char_indices()
                    .skip(2)
                    .filter(|&(k, c)| {
                        matches!(c, '/' | '~' | '.')
                            && t[..k]
                                .chars()
                                .last()
                                .is_some_and(|p| p.is_ascii_alphanumeric())
                    })
                    .take(8);
                for (k, _) in tails {
                    let v = &t[k..];
                    if v.len() > 1 && !out.iter().any(|o| o == v) {
                        out.push(v.to_string());
                    }
                }
            }
            embedded_paths(t, out);
        }
    }
}

pub(super) fn push_path_candidates(value: &str, w: &Word, out: &mut Vec<String>) {
    if value.is_empty() || is_url(value) {
        embedded_paths(value, out);
        return;
    }
    if w.brace {
        let expanded = words::brace_expand(value, 64);
        if expanded.len() > 1 {
            for e in expanded {
                if !is_url(&e) {
                    out.push(e.clone());
                }
                embedded_paths(&e, out);
            }
            return;
        }
    }
    out.push(value.to_string());
    embedded_paths(value, out);
}

/// `scheme://…` is a URL, not a path.
pub(crate) fn is_url(s: &str) -> bool {
    let Some(idx) = s.find("://") else {
        return false;
    };
    let scheme = &s[..idx];
    !scheme.is_empty()
        && scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

/// Absolute or home paths that start inside an argument after whitespace or
/// punctuation (`sed 'w /etc/x'`, `dd of=/dev/sda`, awk's `> "/tmp/x"`).
pub(super) fn embedded_paths(s: &str, out: &mut Vec<String>) {
    let bytes = s.as_bytes();
    for i in 1..bytes.len() {
        let prev = bytes[i - 1];
        if !matches!(
            prev,
            b' ' | b'\t' | b'\n' | b'>' | b'<' | b'"' | b'\'' | b'=' | b'(' | b',' | b';' | b':'
        ) {
            continue;
        }
        let c = bytes[i];
        let starts = c == b'/'
            || (c == b'~' && (i + 1 == bytes.len() || bytes[i + 1] == b'/'))
            || s[i..].starts_with("$HOME")
            || s[i..].starts_with("${HOME}");
        if !starts {
            continue;
        }
        if prev == b':' && i >= 2 && s[..i].ends_with("://") {
            continue;
        }
        let rest = &s[i..];
        let end = rest
            .find(|ch: char| {
                ch.is_whitespace()
                    || matches!(ch, '"' | '\'' | ';' | '|' | '&' | ')' | '<' | '>' | ',')
            })
            .unwrap_or(rest.len());
        let p = &rest[..end];
        // A lone `/` inside text ("a / b", "rm -rf /" in a message) is not a path.
        if (p.len() > 1 || p == "~") && !(prev == b':' && is_url(&s[..i + end])) {
            out.push(p.to_string());
        }
    }
}
