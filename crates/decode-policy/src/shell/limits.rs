//! The budgets a command's judgement stays within (docs/permissions.md,
//! "Fail closed"): past one, the command is opaque (and asks even in
//! bypass). They count work, never time.

/// Longest re-reading (brace-expanded or `$IFS`-split text) judged.
pub(super) const MAX_REINTERPRETED: usize = 4 * 1024;

/// Reserved words that never name a command.
pub(super) const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "{", "}", "[[", "]]",
];

/// Words one simple command may hold, brace expansion included, before it
/// is opaque.
pub(super) const MAX_WORDS: usize = 4096;

/// Pipe operators one command may hold before it is opaque.
pub(super) const MAX_PIPES: usize = 256;

/// `|` and `|&` operators (not `||`), quoted or not.
pub(super) fn pipe_count(src: &str) -> usize {
    let b = src.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b'|' && b.get(i + 1) != Some(&b'|') && (i == 0 || b[i - 1] != b'|'))
        .count()
}

/// Commands longer than this many characters are opaque.
pub const MAX_COMMAND_CHARS: usize = 10_000;

/// Tree depth the walker descends before the command counts as unanalysable.
pub(super) const MAX_NODE_DEPTH: usize = 400;

/// How deep `bash -c '…'` strings are re-parsed.
pub(super) const MAX_REPARSE_DEPTH: usize = 12;

/// Derived commands (`xargs CMD`, `find -exec CMD`, `bash -c STRING`, `eval`…)
/// judged per command, all kinds together.
pub(super) const MAX_DERIVED: usize = 512;

/// How deeply derived commands may nest (a derived command's derived command…).
pub(super) const MAX_DERIVED_DEPTH: usize = 24;

/// Nesting (open brackets and compound keywords, `second::nesting`) a
/// source text may reach before it is parsed: tree-sitter's work grows
/// faster than the text past it (`${ ${ ${ …`), and brush-parser recurses
/// once per level.
pub(super) const MAX_PARSE_NESTING: usize = 48;

/// Here-document operators one source text may hold before it is parsed:
/// tree-sitter-bash's scanner carries every pending one from token to token.
pub(super) const MAX_HEREDOCS: usize = 32;

/// How many here-document operators (`<<`, `<<-`, not `<<<`) `src` holds.
pub(super) fn heredoc_operators(src: &str) -> usize {
    let b = src.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'<' && b[i + 1] == b'<' {
            let mut j = i;
            while j < b.len() && b[j] == b'<' {
                j += 1;
            }
            if j - i == 2 {
                n += 1;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    n
}
