//! The app's config (`$XDG_CONFIG_HOME/decode/config.json`, else
//! `~/.config/decode/config.json`) and API keys (README, "Providers, config and keys").
//!
//! ```json
//! {"provider": "openai", "model": "qwen2.5-coder:7b",
//!  "baseUrl": "http://localhost:11434/v1", "maxTurns": 50, "contextTokens": 32768}
//! ```
//!
//! Every key is optional. The file is only ever read: a malformed one is a clear error
//! naming the line and column, never rewritten. Unknown keys are ignored with a warning.
//!
//! API keys are never in this file. They come from, in order: the provider's usual
//! environment variable (`GEMINI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`), then
//! `DECODE_API_KEY`, then the OS keyring (service `decode`, user = provider name, as
//! stored by `decode key set PROVIDER`). An OpenAI-compatible server on this machine
//! (Ollama, llama.cpp, LM Studio, vLLM) needs no key: for it the keyring is not
//! consulted and a missing key is fine. A key lives in an [`ApiKey`], whose `Debug` and
//! `Display` print `[redacted]`, so it cannot reach a log or a transcript by accident.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::providers::{is_local_url, ProviderKind, ProviderSettings, RetryPolicy};
pub use crate::secret::ApiKey;

/// The config file name inside the config folder.
pub const CONFIG_FILE: &str = "config.json";
/// `maxTurns` when the config does not set it.
pub const DEFAULT_MAX_TURNS: u32 = 50;
/// The keyring service name.
pub const KEYRING_SERVICE: &str = "decode";
/// The provider-independent key variable.
pub const DECODE_API_KEY: &str = "DECODE_API_KEY";

// ---------------------------------------------------------------------------------
// The config file

/// The config file's contents.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    /// `gemini`, `anthropic`, `openai` or `script`.
    #[serde(default, deserialize_with = "provider_opt")]
    pub provider: Option<ProviderKind>,
    /// The model name.
    #[serde(default)]
    pub model: Option<String>,
    /// The base URL, API version included (`http://localhost:11434/v1`).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The most model turns one prompt may take (default 50).
    #[serde(default)]
    pub max_turns: Option<u32>,
    /// The model's context size in tokens (default: a per-model estimate).
    #[serde(default)]
    pub context_tokens: Option<usize>,
    /// The script file for the script provider.
    #[serde(default)]
    pub script: Option<PathBuf>,
    /// Whether closing the window keeps Decode in the tray (the default) or
    /// quits it.
    #[serde(default)]
    pub close_to_tray: Option<bool>,
    /// The host each provider's stored key was last confirmed for (`{"openai":
    /// "api.openai.com"}`; a provider not named: its default host). Saving a base URL
    /// on another host asks first, so a key never follows a changed URL silently.
    #[serde(default)]
    pub key_hosts: std::collections::BTreeMap<String, String>,
    /// Keys Decode does not know (ignored, reported as warnings).
    #[serde(flatten)]
    pub unknown: Map<String, Value>,
}

fn provider_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ProviderKind>, D::Error> {
    let s: Option<String> = Option::deserialize(d)?;
    s.map(|s| s.parse::<ProviderKind>().map_err(serde::de::Error::custom))
        .transpose()
}

/// The config could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not valid JSON, or a value of the wrong type.
    #[error("{}:{line}:{column}: {message} (the file was left as it is)", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// The file exists but cannot be read.
    #[error("could not read {}: {message}", path.display())]
    Unreadable { path: PathBuf, message: String },
}

impl Config {
    /// The config file path inside a config folder.
    pub fn path_in(config_dir: &Path) -> PathBuf {
        config_dir.join(CONFIG_FILE)
    }

    /// Loads `config.json` from the config folder. A missing file is the empty config.
    /// Returns the warnings (unknown keys) too.
    pub fn load(config_dir: &Path) -> Result<(Config, Vec<String>), ConfigError> {
        let path = Config::path_in(config_dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Config::default(), vec![])),
            Err(e) => Err(ConfigError::Unreadable {
                path,
                message: e.to_string(),
            }),
        }
    }

    /// Parses config file contents (`path` is for messages).
    pub fn parse(path: &Path, text: &str) -> Result<(Config, Vec<String>), ConfigError> {
        if text.trim().is_empty() {
            return Ok((Config::default(), vec![]));
        }
        let config: Config = serde_json::from_str(text).map_err(|e| ConfigError::Malformed {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        })?;
        let warnings = config
            .unknown
            .keys()
            .map(|k| format!("{}: unknown key `{k}` ignored", path.display()))
            .collect();
        Ok((config, warnings))
    }
}

/// serde_json's message without its trailing " at line L column C".
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

// ---------------------------------------------------------------------------------
// The keyring

/// A key could not be read from, or written to, the OS keyring.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No Secret Service (no D-Bus session, or the keyring is locked or absent).
    #[error("the system keyring is not available ({detail}): set {var} (or DECODE_API_KEY) in the environment instead")]
    Unavailable { var: String, detail: String },
    /// Any other keyring failure.
    #[error("the system keyring failed ({detail}): set {var} (or DECODE_API_KEY) in the environment instead")]
    Failed { var: String, detail: String },
}

fn key_var(kind: ProviderKind) -> String {
    kind.env_var().unwrap_or(DECODE_API_KEY).to_string()
}

fn map_keyring_error(kind: ProviderKind, e: keyring::Error) -> KeyError {
    let var = key_var(kind);
    match e {
        keyring::Error::PlatformFailure(inner) => KeyError::Unavailable {
            var,
            detail: one_line(&inner.to_string()),
        },
        keyring::Error::NoStorageAccess(inner) => KeyError::Unavailable {
            var,
            detail: format!(
                "it is locked or has no default collection: {}",
                one_line(&inner.to_string())
            ),
        },
        other => KeyError::Failed {
            var,
            detail: one_line(&other.to_string()),
        },
    }
}

fn one_line(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

/// Where API keys are stored.
pub trait SecretStore: Send + Sync {
    /// The stored key for a provider, if any.
    fn get(&self, kind: ProviderKind) -> Result<Option<ApiKey>, KeyError>;
    /// Stores (or replaces) a provider's key.
    fn set(&self, kind: ProviderKind, key: &ApiKey) -> Result<(), KeyError>;
    /// Deletes a provider's key; returns whether there was one.
    fn delete(&self, kind: ProviderKind) -> Result<bool, KeyError>;
}

/// The OS keyring through the `keyring` crate (Secret Service on Linux). Tests install
/// keyring's mock credential builder instead of the real store.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyringStore;

impl KeyringStore {
    /// The keyring entry of a provider: service `decode`, user = provider name.
    pub fn entry(kind: ProviderKind) -> Result<keyring::Entry, KeyError> {
        keyring::Entry::new(KEYRING_SERVICE, kind.name()).map_err(|e| map_keyring_error(kind, e))
    }

    /// Reads a key from an entry (`None` when it holds none).
    pub fn get_from(
        kind: ProviderKind,
        entry: &keyring::Entry,
    ) -> Result<Option<ApiKey>, KeyError> {
        match entry.get_password() {
            Ok(p) => {
                let key = ApiKey::new(p);
                Ok((!key.is_empty()).then_some(key))
            }
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_keyring_error(kind, e)),
        }
    }

    /// Stores a key in an entry.
    pub fn set_on(
        kind: ProviderKind,
        entry: &keyring::Entry,
        key: &ApiKey,
    ) -> Result<(), KeyError> {
        entry
            .set_password(key.expose())
            .map_err(|e| map_keyring_error(kind, e))
    }

    /// Deletes an entry's key; returns whether there was one.
    pub fn delete_on(kind: ProviderKind, entry: &keyring::Entry) -> Result<bool, KeyError> {
        match entry.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(map_keyring_error(kind, e)),
        }
    }
}

impl SecretStore for KeyringStore {
    fn get(&self, kind: ProviderKind) -> Result<Option<ApiKey>, KeyError> {
        KeyringStore::get_from(kind, &KeyringStore::entry(kind)?)
    }

    fn set(&self, kind: ProviderKind, key: &ApiKey) -> Result<(), KeyError> {
        KeyringStore::set_on(kind, &KeyringStore::entry(kind)?, key)
    }

    fn delete(&self, kind: ProviderKind) -> Result<bool, KeyError> {
        KeyringStore::delete_on(kind, &KeyringStore::entry(kind)?)
    }
}

// ---------------------------------------------------------------------------------
// Resolving what a run uses

/// Command-line flags that override the config for one run.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub script: Option<PathBuf>,
    pub max_turns: Option<u32>,
}

/// Where the key came from (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyOrigin {
    /// An environment variable (its name).
    Env(String),
    /// The OS keyring.
    Keyring,
    /// No key needed (script provider, local server).
    None,
}

/// What a run uses: the provider settings and the turn limit.
#[derive(Debug, Clone)]
pub struct RunSetup {
    pub provider: ProviderSettings,
    pub max_turns: u32,
    pub key_origin: KeyOrigin,
}

/// The setup is incomplete; one sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("no model provider is configured: pass --provider (gemini, anthropic, openai or script) or set \"provider\" in {config}")]
    NoProvider { config: String },
    #[error("no model is set for the OpenAI-compatible server at {base_url}: pass --model or set \"model\" in {config}")]
    NoModel { base_url: String, config: String },
    #[error("no API key for {provider}: set {var} (or DECODE_API_KEY), or store one with `decode key set {provider}`{extra}")]
    NoKey {
        provider: String,
        var: String,
        extra: String,
    },
}

/// Combines the config, the flags, the environment and the key store into what a run
/// uses. `env` looks a variable up (tests pass a map); `config_path` is for messages.
pub fn resolve(
    config: &Config,
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    store: &dyn SecretStore,
    config_path: &Path,
) -> Result<RunSetup, SetupError> {
    let nonempty = |var: &str| env(var).filter(|v| !v.trim().is_empty());
    let kind = overrides
        .provider
        .or(config.provider)
        .or_else(|| {
            [
                ProviderKind::Anthropic,
                ProviderKind::Gemini,
                ProviderKind::Openai,
            ]
            .into_iter()
            .find(|k| k.env_var().is_some_and(|v| nonempty(v).is_some()))
        })
        .ok_or_else(|| SetupError::NoProvider {
            config: config_path.display().to_string(),
        })?;
    // The config's model and base URL belong to the config's provider: a --provider
    // flag naming another one starts from that provider's defaults.
    let config_applies = config.provider.is_none() || config.provider == Some(kind);
    let mut settings = ProviderSettings::new(kind);
    settings.base_url = overrides
        .base_url
        .clone()
        .or_else(|| config.base_url.clone().filter(|_| config_applies))
        .unwrap_or_else(|| kind.default_base_url().to_string());
    let explicit_model = overrides
        .model
        .clone()
        .or_else(|| config.model.clone().filter(|_| config_applies));
    let local = kind == ProviderKind::Openai && is_local_url(&settings.base_url);
    settings.model = match explicit_model {
        Some(m) => m,
        None if kind == ProviderKind::Openai && settings.base_url != kind.default_base_url() => {
            return Err(SetupError::NoModel {
                base_url: settings.base_url.clone(),
                config: config_path.display().to_string(),
            })
        }
        None => kind.default_model().unwrap_or_default().to_string(),
    };
    settings.script = overrides.script.clone().or_else(|| config.script.clone());
    settings.context_tokens = config.context_tokens;
    settings.retry = RetryPolicy::default();

    let mut key_origin = KeyOrigin::None;
    if kind != ProviderKind::Script {
        let var = kind.env_var().unwrap_or(DECODE_API_KEY);
        if let Some(k) = nonempty(var) {
            settings.api_key = Some(ApiKey::new(k));
            key_origin = KeyOrigin::Env(var.to_string());
        } else if let Some(k) = nonempty(DECODE_API_KEY) {
            settings.api_key = Some(ApiKey::new(k));
            key_origin = KeyOrigin::Env(DECODE_API_KEY.to_string());
        } else if !local {
            match store.get(kind) {
                Ok(Some(k)) => {
                    settings.api_key = Some(k);
                    key_origin = KeyOrigin::Keyring;
                }
                Ok(None) => {
                    return Err(SetupError::NoKey {
                        provider: kind.name().to_string(),
                        var: var.to_string(),
                        extra: String::new(),
                    })
                }
                Err(e) => {
                    let detail = match e {
                        KeyError::Unavailable { detail, .. } | KeyError::Failed { detail, .. } => {
                            detail
                        }
                    };
                    return Err(SetupError::NoKey {
                        provider: kind.name().to_string(),
                        var: var.to_string(),
                        extra: format!(" (the system keyring could not be read: {detail})"),
                    });
                }
            }
        }
    }
    Ok(RunSetup {
        provider: settings,
        max_turns: overrides
            .max_turns
            .or(config.max_turns)
            .unwrap_or(DEFAULT_MAX_TURNS)
            .max(1),
        key_origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_redacted() {
        let k = ApiKey::new(" sk-secret \n");
        assert_eq!(k.expose(), "sk-secret");
        assert_eq!(format!("{k}"), "[redacted]");
        assert!(!format!("{k:?}").contains("secret"));
    }

    #[test]
    fn position_is_stripped_from_messages() {
        assert_eq!(
            strip_position("expected `:` at line 2 column 5"),
            "expected `:`"
        );
    }
}
