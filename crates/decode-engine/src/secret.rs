//! [`ApiKey`]: a secret that never reaches a log, a transcript or the UI by accident.
//! Its own module so the providers (which send it) and the config (which finds it)
//! both use it without depending on each other.

use std::fmt;

/// A secret API key. Its `Debug` and `Display` never show it; only [`ApiKey::expose`]
/// does, for the one header that carries it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
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

/// Whether an environment variable may hold a secret, so that a command Decode starts
/// must not inherit it (docs/sandbox.md, "The environment"): the provider keys Decode
/// itself reads (`DECODE_API_KEY`, `GEMINI_API_KEY`, `ANTHROPIC_API_KEY`,
/// `OPENAI_API_KEY`, `GOOGLE_API_KEY`) and every variable whose name ends in `_KEY`,
/// `_TOKEN`, `_SECRET`, `_PASSWORD` or `_CREDENTIALS` (`GH_TOKEN`,
/// `AWS_SECRET_ACCESS_KEY`, …), whatever the case of its name.
pub fn is_secret_var(name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        // A name that is not UTF-8 names nothing a tool needs; keep it out.
        return true;
    };
    let upper = name.to_ascii_uppercase();
    const SUFFIXES: [&str; 5] = ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIALS"];
    matches!(
        upper.as_str(),
        "DECODE_API_KEY"
            | "GEMINI_API_KEY"
            | "ANTHROPIC_API_KEY"
            | "OPENAI_API_KEY"
            | "GOOGLE_API_KEY"
    ) || SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// The names of the variables of this process's environment that [`is_secret_var`]
/// keeps from the commands Decode starts.
pub fn secret_vars() -> Vec<std::ffi::OsString> {
    std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| is_secret_var(k))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn provider_keys_and_secret_shaped_names_are_kept_from_commands() {
        for name in [
            "DECODE_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
            "GH_TOKEN",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "NPM_TOKEN",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "my_secret",
            "stripe_key",
        ] {
            assert!(is_secret_var(OsStr::new(name)), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "CARGO_HOME",
            "KEYBOARD",
            "TOKENIZERS_PARALLELISM",
            "SSH_KEYS_DIR",
        ] {
            assert!(!is_secret_var(OsStr::new(name)), "{name}");
        }
    }
}
