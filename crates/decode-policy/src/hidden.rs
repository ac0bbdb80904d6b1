//! Characters a person cannot see, or that change how the text around them reads:
//! controls, bidirectional overrides and isolates, zero-width and other default-ignorable
//! characters, unusual spaces, tag characters and variation selectors.
//!
//! This is the one table. The gate makes a command holding one opaque
//! (docs/permissions.md), the terminal, native dialogs and the tray escape them, and the
//! window's escaping (`ui/src/lib/gen/hidden.ts`) is generated from it, so what a
//! person approves reads the same everywhere (docs/window.md, "What you see is what
//! runs"). Tab and newline are not in it: they are visible as layout.

/// Inclusive ranges of code points, sorted and disjoint.
pub const HIDDEN_RANGES: &[(u32, u32)] = &[
    // C0 controls but tab and newline; DEL and the C1 controls.
    (0x0000, 0x0008),
    (0x000B, 0x001F),
    (0x007F, 0x009F),
    // No-break space, soft hyphen, combining grapheme joiner, Arabic letter mark.
    (0x00A0, 0x00A0),
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    // Hangul fillers, Ogham space mark, Khmer inherent vowels, Mongolian selectors.
    (0x115F, 0x1160),
    (0x1680, 0x1680),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    // Spaces of every width, zero-width space/joiners, LRM/RLM.
    (0x2000, 0x200F),
    // Line and paragraph separators, embeddings and overrides, narrow no-break space.
    (0x2028, 0x202F),
    // Medium math space, word joiner, invisible operators, isolates, deprecated formats.
    (0x205F, 0x206F),
    // Braille blank, ideographic space, Hangul filler.
    (0x2800, 0x2800),
    (0x3000, 0x3000),
    (0x3164, 0x3164),
    // Variation selectors, byte order mark, halfwidth Hangul filler.
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    // Unassigned specials and interlinear annotation.
    (0xFFF0, 0xFFFB),
    // Shorthand format controls, musical formatting.
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    // Tag characters, variation selectors supplement and the rest of that plane's
    // default-ignorables.
    (0xE0000, 0xE0FFF),
    // Supplementary private use planes (nothing to show).
    (0xF0000, 0x10FFFF),
];

/// Whether `c` is hidden (see the module docs).
pub fn is_hidden(c: char) -> bool {
    let c = c as u32;
    HIDDEN_RANGES
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// The first hidden character of `s`.
pub fn hidden_char(s: &str) -> Option<char> {
    s.chars().find(|&c| is_hidden(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranges_are_sorted_and_disjoint() {
        for w in HIDDEN_RANGES.windows(2) {
            assert!(w[0].0 <= w[0].1 && w[0].1 < w[1].0, "{w:?}");
        }
    }

    #[test]
    fn what_is_hidden_and_what_is_not() {
        for c in [
            '\0',
            '\r',
            '\x1b',
            '\x7f',
            '\u{9b}',
            '\u{a0}',
            '\u{ad}',
            '\u{200b}',
            '\u{200d}',
            '\u{202e}',
            '\u{2066}',
            '\u{2069}',
            '\u{feff}',
            '\u{fe0f}',
            '\u{e0041}',
            '\u{e0100}',
            '\u{3164}',
            '\u{10fffd}',
        ] {
            assert!(is_hidden(c), "{:x}", c as u32);
        }
        for c in [
            '\t', '\n', ' ', 'a', 'é', '€', '中', '🙂', '\u{2010}', '\u{e000}',
        ] {
            assert!(!is_hidden(c), "{:x}", c as u32);
        }
        assert_eq!(hidden_char("ls\u{202e}x"), Some('\u{202e}'));
        assert_eq!(hidden_char("ls -la\tx\n"), None);
    }
}
