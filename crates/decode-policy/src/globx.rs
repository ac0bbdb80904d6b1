//! Whether two glob patterns can match a common string: a rule (globset
//! syntax: `*`, `**`, `?`, `[…]`, `{a,b}`, `\` escapes) and the pattern of a
//! fragment whose dynamic words are `*`. Deny rules, ask rules and
//! `caps.external` apply to a fragment when some value of its dynamic words
//! would match them (docs/permissions.md, "Fail closed").

use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// Any one character (`?`, and a class `[…]`, read generously).
    One,
    /// Any run of characters, `/` and spaces included.
    Any,
}

/// Most alternatives `{a,b}` may expand to before the answer is "yes".
const MAX_ALTERNATIVES: usize = 64;
/// Most cells the search may visit before the answer is "yes".
const MAX_CELLS: usize = 1 << 20;

fn tokens(p: &str, out: &mut Vec<Vec<Tok>>) -> bool {
    // Alternation first: expand the first top-level `{…,…}`.
    let chars: Vec<char> = p.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '[' => {
                // Skip a class: `]` right after `[` or `[!` is literal.
                let mut j = i + 1;
                if chars.get(j) == Some(&'!') || chars.get(j) == Some(&'^') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                i = j + 1;
            }
            '{' => {
                let mut depth = 0usize;
                let mut commas = Vec::new();
                let mut close = None;
                let mut j = i + 1;
                while j < chars.len() {
                    match chars[j] {
                        '\\' => j += 1,
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            close = Some(j);
                            break;
                        }
                        '}' => depth -= 1,
                        ',' if depth == 0 => commas.push(j),
                        _ => {}
                    }
                    j += 1;
                }
                let Some(close) = close else {
                    i += 1;
                    continue;
                };
                let pre: String = chars[..i].iter().collect();
                let post: String = chars[close + 1..].iter().collect();
                let mut last = i + 1;
                for c in commas.iter().copied().chain(std::iter::once(close)) {
                    let alt: String = chars[last..c].iter().collect();
                    if out.len() >= MAX_ALTERNATIVES || !tokens(&format!("{pre}{alt}{post}"), out) {
                        return false;
                    }
                    last = c + 1;
                }
                return true;
            }
            _ => i += 1,
        }
    }
    let mut v = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if let Some(&c) = chars.get(i + 1) {
                    v.push(Tok::Lit(c));
                }
                i += 2;
            }
            '*' => {
                if v.last() != Some(&Tok::Any) {
                    v.push(Tok::Any);
                }
                // `**/` also matches no folder at all (globset: `**/x` matches `x`):
                // the slash is part of what `**` may stand for.
                if chars.get(i + 1) == Some(&'*') && chars.get(i + 2) == Some(&'/') {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            '?' => {
                v.push(Tok::One);
                i += 1;
            }
            '[' => {
                let mut j = i + 1;
                if chars.get(j) == Some(&'!') || chars.get(j) == Some(&'^') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j < chars.len() {
                    v.push(Tok::One);
                    i = j + 1;
                } else {
                    v.push(Tok::Lit('['));
                    i += 1;
                }
            }
            c => {
                v.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    out.push(v);
    true
}

/// A glob read once (its alternatives expanded), to intersect many times.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    alts: Vec<Vec<Tok>>,
    /// Too large to expand: it intersects everything.
    any: bool,
}

impl Compiled {
    pub(crate) fn new(glob: &str) -> Compiled {
        let mut alts = Vec::new();
        let any = !tokens(glob, &mut alts);
        Compiled { alts, any }
    }

    /// The glob `F/tail`, where `F` is `folder` with its glob metacharacters
    /// escaped and its trailing slashes left out: the same as compiling that
    /// text, without writing it out (an escaped character only ever reads as
    /// itself, and leaves the reading of `tail` as it is alone).
    pub(crate) fn under(folder: &str, tail: &str) -> Compiled {
        let mut c = Compiled::new(tail);
        let prefix: Vec<Tok> = folder
            .trim_end_matches('/')
            .chars()
            .chain(std::iter::once('/'))
            .map(Tok::Lit)
            .collect();
        for alt in &mut c.alts {
            alt.splice(0..0, prefix.iter().cloned());
        }
        c
    }

    /// Whether some string matches both.
    pub(crate) fn intersects(&self, other: &Compiled) -> bool {
        if self.any || other.any {
            return true;
        }
        self.alts
            .iter()
            .any(|x| other.alts.iter().any(|y| intersect_toks(x, y)))
    }
}

/// Whether some string matches both globs. Errs towards "yes" when the
/// patterns are too large to decide within the budget.
#[cfg(test)]
pub(crate) fn intersect(a: &str, b: &str) -> bool {
    Compiled::new(a).intersects(&Compiled::new(b))
}

fn intersect_toks(a: &[Tok], b: &[Tok]) -> bool {
    // A literal matches exactly one character: where both start (or end) with
    // literals they must be the same ones, and the rest decides. A literal that
    // differs settles it at once, and most pairs of path globs part in their
    // literal folders before any wildcard.
    let (mut a, mut b) = (a, b);
    while let (Some(Tok::Lit(x)), Some(Tok::Lit(y))) = (a.first(), b.first()) {
        if x != y {
            return false;
        }
        (a, b) = (&a[1..], &b[1..]);
    }
    while let (Some(Tok::Lit(x)), Some(Tok::Lit(y))) = (a.last(), b.last()) {
        if x != y {
            return false;
        }
        (a, b) = (&a[..a.len() - 1], &b[..b.len() - 1]);
    }
    if a.is_empty() || b.is_empty() {
        // One side matches only the empty string now: so must the other.
        return a.iter().chain(b).all(|t| *t == Tok::Any);
    }
    // A side of wildcards only matches every string, and the other side matches
    // some string (every glob does).
    if a.iter().all(|t| *t == Tok::Any) || b.iter().all(|t| *t == Tok::Any) {
        return true;
    }
    // Cells visited: a dense grid when it fits the budget (no hashing),
    // else a set that stops at the budget.
    let cols = b.len() + 1;
    let cells = (a.len() + 1).saturating_mul(cols);
    let mut grid: Vec<bool> = if cells <= MAX_CELLS {
        vec![false; cells]
    } else {
        Vec::new()
    };
    let mut failed: HashSet<(usize, usize)> = HashSet::new();
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, j)) = stack.pop() {
        if i == a.len() && j == b.len() {
            return true;
        }
        if grid.is_empty() {
            if !failed.insert((i, j)) {
                continue;
            }
            if failed.len() > MAX_CELLS {
                return true;
            }
        } else {
            let cell = &mut grid[i * cols + j];
            if *cell {
                continue;
            }
            *cell = true;
        }
        let (x, y) = (a.get(i), b.get(j));
        if x == Some(&Tok::Any) {
            stack.push((i + 1, j));
            if j < b.len() {
                stack.push((i, j + 1));
            }
        }
        if y == Some(&Tok::Any) {
            stack.push((i, j + 1));
            if i < a.len() {
                stack.push((i + 1, j));
            }
        }
        if let (Some(x), Some(y)) = (x, y) {
            let fits = match (x, y) {
                (Tok::Lit(p), Tok::Lit(q)) => p == q,
                (Tok::Any, _) | (_, Tok::Any) => false,
                _ => true,
            };
            if fits {
                stack.push((i + 1, j + 1));
            }
        }
    }
    false
}

/// Compiles one glob with fnmatch semantics: `*` matches `/` and spaces,
/// backslash escapes on.
pub(crate) fn build_glob(
    pattern: &str,
    case_insensitive: bool,
) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .case_insensitive(case_insensitive)
        .empty_alternates(true)
        .build()
}

#[cfg(test)]
mod tests {
    use super::{intersect, Compiled};

    #[test]
    fn a_glob_under_a_folder_reads_as_the_escaped_folder_written_out() {
        for folder in [
            "/",
            "/p/src",
            "/p/src/",
            "src",
            "a*b/[x]/{c,d}/e\\f/(g)",
            "/tmp/.tmpX/proj",
        ] {
            for tail in [
                "*",
                "*.rs",
                "**/x",
                "{a,b}/*",
                "[ab]?",
                "x\\*",
                "a{b,{c,d}}",
                "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}",
            ] {
                let base = crate::rules::escape_glob(folder);
                let written = Compiled::new(&format!("{}/{tail}", base.trim_end_matches('/')));
                let under = Compiled::under(folder, tail);
                assert_eq!(under.alts, written.alts, "{folder} {tail}");
                assert_eq!(under.any, written.any, "{folder} {tail}");
            }
        }
    }

    #[test]
    fn literal_starts_and_ends_settle_it_or_are_set_aside() {
        assert!(!intersect("src/a*", "src/b*"));
        assert!(!intersect("*.rs", "*.md"));
        assert!(!intersect("a*b", "a*c"));
        assert!(!intersect("abc", "ab"));
        assert!(!intersect("", "a"));
        assert!(intersect("ab", "a*"));
        assert!(intersect("ab", "ab*"));
        assert!(intersect("src/module5/**", "src/*"));
        assert!(intersect("/p/src/*", "/p/src/x/y"));
        assert!(intersect("a", "a"));
        assert!(intersect("", "*"));
        assert!(intersect("", "**"));
        assert!(intersect("a?c", "abc"));
        assert!(!intersect("a?c", "abd"));
        assert!(intersect("x*y*z", "x*z"));
        assert!(!intersect("x*y", "x*z"));
    }

    #[test]
    fn intersections() {
        assert!(intersect("git push*", "git *"));
        assert!(intersect("git push*", "git*"));
        assert!(intersect("rm -rf *", "rm -rf*"));
        assert!(intersect("curl *", "*"));
        assert!(intersect("curl *", "* x"));
        assert!(!intersect("curl *", "git *"));
        assert!(!intersect("git push*", "git status"));
        assert!(intersect("git {push,fetch} *", "git fetch*"));
        assert!(intersect("npm publish", "npm p?blish"));
        assert!(intersect("a[bc]d", "a*"));
        assert!(!intersect("wc -l secret*", "wc -l src/*.rs"));
        assert!(intersect("echo \\*", "echo *"));
        assert!(!intersect("echo \\*", "echo x"));
        // `**/` may stand for no folder (as globset reads it).
        assert!(intersect("**/*", ".env"));
        assert!(intersect("src/**/*.rs", "src/main.rs"));
        assert!(intersect("**/.env", ".env"));
        assert!(!intersect("src/**/*.rs", "secrets/x"));
        let long = "x".repeat(5000);
        assert!(!intersect(&format!("{long}a"), &format!("{long}b")));
    }
}
