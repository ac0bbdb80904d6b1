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

/// Whether `c` must not reach a terminal raw: the hidden characters of the gate's one
/// table (`decode_policy::hidden`), plus newline and tab, which [`sanitize`] keeps and
/// [`one_line`] escapes.
fn unsafe_char(c: char) -> bool {
    c == '\n' || c == '\t' || decode_policy::hidden::is_hidden(c)
}

/// Whether `text` holds a character a person cannot see or that reorders what they
/// see (a surface that shows it escaped also says so).
pub fn has_hidden(text: &str) -> bool {
    decode_policy::hidden::hidden_char(text).is_some()
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

    /// The cases the window's escaping (`ui/src/lib/display.ts`) checks too: both
    /// sides show hidden characters the same way.
    #[test]
    fn escapes_as_the_window_does() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../ui/src/test/escape-cases.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let cases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert!(cases.len() > 10);
        for case in cases {
            let (text, shown) = (
                case["text"].as_str().unwrap(),
                case["shown"].as_str().unwrap(),
            );
            assert_eq!(sanitize(text), shown, "{text:?}");
            assert_eq!(has_hidden(text), text != shown, "{text:?}");
        }
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
