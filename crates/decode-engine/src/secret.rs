//! [`ApiKey`]: a secret that never reaches a log, a transcript or the UI by accident.
//! Its own module so the providers (which send it) and the config (which finds it)
//! both use it without depending on each other.

use std::fmt;

/// A secret API key. Its `Debug` and `Display` never show it; only [`ApiKey::expose`]
/// does, for the one header that carries it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

/// The longest API key accepted (provider keys are a few hundred bytes at most).
pub const MAX_KEY_BYTES: usize = 8 * 1024;

/// Why typed or piped text is not an API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyInputError {
    /// Nothing but whitespace.
    #[error("no key was given")]
    Empty,
    /// Longer than [`MAX_KEY_BYTES`].
    #[error("the key is longer than {} KiB: give only the key", MAX_KEY_BYTES / 1024)]
    TooLong,
    /// More than one line.
    #[error("the input holds {0} lines; an API key is one line: give only the key")]
    Lines(usize),
    /// A space, a tab or a control character inside the key.
    #[error(
        "the key holds a space or a control character (at character {0}); an API key has none"
    )]
    BadChar(usize),
}

impl ApiKey {
    /// The key in text a person typed or piped: surrounding whitespace removed, and
    /// refused when empty, longer than [`MAX_KEY_BYTES`], on several lines, or holding
    /// a space or a control character (nothing is kept silently from a bad paste).
    pub fn parse(text: &str) -> Result<ApiKey, KeyInputError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(KeyInputError::Empty);
        }
        if t.len() > MAX_KEY_BYTES {
            return Err(KeyInputError::TooLong);
        }
        let lines = t.lines().filter(|l| !l.trim().is_empty()).count();
        if t.contains(['\n', '\r']) {
            return Err(KeyInputError::Lines(lines.max(2)));
        }
        if let Some(i) = t.chars().position(|c| c.is_whitespace() || c.is_control()) {
            return Err(KeyInputError::BadChar(i + 1));
        }
        Ok(ApiKey(t.to_string()))
    }

    /// Wraps a key (surrounding whitespace removed).
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into().trim().to_string())
    }

    /// The key itself, to put in a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the key is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with this key masked wherever it shows: whole, percent-encoded or
    /// JSON-escaped, and any run of [`MASK_RUN`] or more of its bytes in a row (a
    /// provider that repeats the start of a key, or most of it). For the messages of
    /// a provider's errors, before they are shown, logged or saved.
    pub fn mask_in(&self, text: &str) -> String {
        mask_secret(text, &self.0)
    }
}

/// A run of this many bytes of a key is masked (shorter ones — `sk-ant-` — say
/// nothing about the key).
pub const MASK_RUN: usize = 12;

const MASKED: &str = "[redacted key]";

/// `text` with `secret` masked (see [`ApiKey::mask_in`]).
pub fn mask_secret(text: &str, secret: &str) -> String {
    if secret.is_empty() || text.is_empty() {
        return text.to_string();
    }
    let mut out = text.to_string();
    // The key in the spellings a server may echo it in.
    let encoded: String = secret
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let json = serde_json::to_string(secret).unwrap_or_default();
    let json = json.trim_matches('"').to_string();
    for form in [secret.to_string(), encoded, json] {
        if !form.is_empty() && out.contains(&form) {
            out = out.replace(&form, MASKED);
        }
    }
    // Any long enough run of the key's bytes.
    let key = secret.as_bytes();
    if key.len() < MASK_RUN {
        return out;
    }
    let windows: std::collections::HashSet<&[u8]> = key.windows(MASK_RUN).collect();
    let bytes = out.as_bytes();
    let mut hide = vec![false; bytes.len()];
    let mut any = false;
    for (i, w) in bytes.windows(MASK_RUN).enumerate() {
        if windows.contains(w) {
            hide[i..i + MASK_RUN].iter_mut().for_each(|h| *h = true);
            any = true;
        }
    }
    if !any {
        return out;
    }
    let mut masked = String::with_capacity(out.len());
    let mut in_run = false;
    for (i, c) in out.char_indices() {
        let h = hide[i..i + c.len_utf8()].iter().any(|&h| h);
        if h {
            if !in_run {
                masked.push_str(MASKED);
                in_run = true;
            }
        } else {
            in_run = false;
            masked.push(c);
        }
    }
    masked
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_refuses_what_is_not_one_key() {
        assert_eq!(ApiKey::parse("  sk-abc\n").unwrap().expose(), "sk-abc");
        assert_eq!(ApiKey::parse("sk-abc\r\n").unwrap().expose(), "sk-abc");
        assert_eq!(ApiKey::parse(" \n "), Err(KeyInputError::Empty));
        assert_eq!(ApiKey::parse("sk-a\nsk-b\n"), Err(KeyInputError::Lines(2)));
        assert_eq!(ApiKey::parse("sk-a\r\nx"), Err(KeyInputError::Lines(2)));
        assert_eq!(ApiKey::parse("sk a"), Err(KeyInputError::BadChar(3)));
        assert_eq!(ApiKey::parse("sk\u{1b}[2J"), Err(KeyInputError::BadChar(3)));
        assert_eq!(
            ApiKey::parse(&"k".repeat(MAX_KEY_BYTES + 1)),
            Err(KeyInputError::TooLong)
        );
        assert!(ApiKey::parse(&"k".repeat(MAX_KEY_BYTES)).is_ok());
    }

    #[test]
    fn a_key_is_masked_whole_encoded_or_in_part() {
        let k = ApiKey::new("sk-ant-api03-AbCdEfGhIjKlMnOp/qrs+tu==");
        let m = |t: &str| k.mask_in(t);
        assert_eq!(
            m("Invalid x-api-key: sk-ant-api03-AbCdEfGhIjKlMnOp/qrs+tu== (401)"),
            "Invalid x-api-key: [redacted key] (401)"
        );
        assert_eq!(
            m("key=sk-ant-api03-AbCdEfGhIjKlMnOp%2Fqrs%2Btu%3D%3D&x=1"),
            "key=[redacted key]&x=1"
        );
        // The start of the key, cut: masked; a short common prefix: kept.
        assert_eq!(m("got sk-ant-api03-AbCdEf…"), "got [redacted key]…");
        assert_eq!(
            m("keys start with sk-ant-api03"),
            "keys start with [redacted key]"
        );
        assert_eq!(m("keys start with sk-ant-"), "keys start with sk-ant-");
        assert_eq!(m("nothing here"), "nothing here");
        assert_eq!(m("é sk-ant-api03-AbCdEfGh é"), "é [redacted key] é");
    }
}
