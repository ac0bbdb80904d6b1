//! Text from a project, a model or the network shown where escape sequences
//! act: a terminal, a native dialog, a tray menu. Control characters and
//! escape sequences are shown escaped (`\x1b[2J`), never sent raw, so a name,
//! a command or a web page cannot set the window title (OSC 0), write the
//! clipboard (OSC 52), plant a link (OSC 8), move the cursor, clear the
//! screen, return to the start of the line (CR) or redraw a prompt. Bidi
//! overrides and zero-width characters are escaped too: they make text read
//! differently from what it is.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal raw. Newline and tab are kept by
/// [`sanitize`] and escaped by [`one_line`].
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c as u32,
            0x061C | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x2069 | 0xFEFF | 0xFFF9..=0xFFFB
            // Tag characters: invisible text a terminal shows as nothing.
            | 0xE0000..=0xE007F)
}

fn escape(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn clean(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let bad = |c: char| unsafe_char(c) && !(keep_lines && (c == '\n' || c == '\t'));
    if !text.chars().any(bad) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if bad(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text for a terminal or a native surface, newlines and tabs kept.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    clean(text, true)
}

/// Text that must stay on one line (a name, a file name, a menu item):
/// newlines and tabs escaped too.
pub fn one_line(text: &str) -> Cow<'_, str> {
    clean(text, false)
}

/// JSON text (already serialised) made safe for a terminal: characters JSON
/// leaves raw but a terminal may act on (C1 controls, bidi overrides) are
/// written as `\uXXXX` escapes, which JSON reads back unchanged.
pub fn json_line(json: &str) -> Cow<'_, str> {
    if !json.chars().any(unsafe_char) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if unsafe_char(c) && c != '\n' {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                let _ = write!(out, "\\u{:04x}", unit);
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_terminals_act_on() {
        let osc0 = "name\x1b]0;pwned\x07";
        assert_eq!(sanitize(osc0), "name\\x1b]0;pwned\\x07");
        let osc52 = "\x1b]52;c;ZWNobyBoaQ==\x07";
        assert_eq!(sanitize(osc52), "\\x1b]52;c;ZWNobyBoaQ==\\x07");
        let osc8 = "\x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\";
        assert!(!sanitize(osc8).contains('\x1b'));
        assert_eq!(sanitize("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(sanitize("rm -rf /\rls -la"), "rm -rf /\\rls -la");
        assert_eq!(sanitize("bell\x07"), "bell\\x07");
        assert_eq!(sanitize("c1\u{9b}31m"), "c1\\u{9b}31m");
        assert_eq!(sanitize("evil\u{202e}gnp.exe"), "evil\\u{202e}gnp.exe");
        assert_eq!(sanitize("hi\u{e0041}\u{e007f}"), "hi\\u{e0041}\\u{e007f}");
        assert_eq!(sanitize("two\nlines\tok"), "two\nlines\tok");
        assert_eq!(one_line("two\nlines"), "two\\nlines");
        assert!(matches!(sanitize("plain text é"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_stays_json() {
        let v = serde_json::json!({"t": "a\u{9b}b\u{202e}c\u{1b}"});
        let line = v.to_string();
        let safe = json_line(&line);
        assert!(!safe.contains('\u{9b}') && !safe.contains('\u{202e}') && !safe.contains('\x1b'));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
    }
}
