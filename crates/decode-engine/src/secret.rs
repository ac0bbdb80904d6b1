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
}
