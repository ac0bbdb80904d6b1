//! `decode key set PROVIDER` / `decode key delete PROVIDER`: API keys in the system
//! keyring (Secret Service on Linux; service `decode`, user = provider name).
//!
//! `set` reads the key from stdin: typed without echo on a terminal, or piped
//! (`printf %s "$KEY" | decode key set openai`). Input on several lines, over 8 KiB, or
//! with a space or a control character inside is refused with a clear line (nothing is
//! kept silently from a bad paste). The key is never printed or logged.
//! Without a usable keyring the error is one sentence pointing to the environment
//! variables (`GEMINI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `DECODE_API_KEY`).
//!
//! Exit codes: 0 done; 1 the keyring failed; 2 a usage error (unknown provider, no key
//! given).

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use decode_engine::config::{ApiKey, KeyringStore, SecretStore};
use decode_engine::providers::ProviderKind;
use decode_engine::secret::{KeyInputError, MAX_KEY_BYTES};

use crate::cli::{KeyAction, KeyArgs};
use crate::output;

fn provider(name: &str) -> Result<ProviderKind, String> {
    match name.parse::<ProviderKind>() {
        Ok(ProviderKind::Script) => {
            Err("decode: the script provider needs no key (keys: gemini, anthropic, openai)".into())
        }
        Ok(p) => Ok(p),
        Err(e) => Err(format!("decode: {e}")),
    }
}

fn read_key(kind: ProviderKind) -> Result<ApiKey, String> {
    let text = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("API key for {kind} (input hidden): "))
            .map_err(|e| format!("decode: could not read the key: {e}"))?
    } else {
        // Bounded: a little more than the longest key, so a longer input is seen as
        // such and refused (never cut to fit).
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_KEY_BYTES as u64 + 64)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("decode: could not read the key from stdin: {e}"))?;
        if bytes.len() > MAX_KEY_BYTES + 2 {
            return Err(format!(
                "decode: {} (the input on stdin is over {} KiB)",
                KeyInputError::TooLong,
                MAX_KEY_BYTES / 1024
            ));
        }
        String::from_utf8(bytes)
            .map_err(|_| "decode: the key on stdin is not UTF-8 text".to_string())?
    };
    ApiKey::parse(&text).map_err(|e| match e {
        KeyInputError::Empty => "decode: no key was given (type it, or pipe it on stdin)".into(),
        KeyInputError::Lines(_) => format!(
            "decode: {e} (e.g. `printf %s \"$KEY\" | decode key set {kind}`); nothing was stored"
        ),
        e => format!("decode: {e}; nothing was stored"),
    })
}

pub fn run(args: KeyArgs) -> ExitCode {
    match args.action {
        KeyAction::Set { provider: name } => {
            let kind = match provider(&name) {
                Ok(k) => k,
                Err(line) => return output::usage_error(&line),
            };
            let key = match read_key(kind) {
                Ok(k) => k,
                Err(line) => return output::usage_error(&line),
            };
            match KeyringStore.set(kind, &key) {
                Ok(()) => {
                    // The key is set up for the host the config names for this
                    // provider now: a later change of the base URL asks first.
                    if let Ok(config) = decode_core::dirs::config_dir() {
                        if let Err(e) = decode_engine::workspace::bind_key_host(&config, kind) {
                            tracing::warn!("could not record the key's host: {e}");
                        }
                    }
                    output::out(&format!(
                        "stored the {kind} API key in the system keyring (service `decode`, user `{kind}`)"
                    ));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    output::err(&format!("decode: could not store the key: {e}"));
                    ExitCode::FAILURE
                }
            }
        }
        KeyAction::Delete { provider: name } => {
            let kind = match provider(&name) {
                Ok(k) => k,
                Err(line) => return output::usage_error(&line),
            };
            match KeyringStore.delete(kind) {
                Ok(true) => {
                    output::out(&format!("deleted the stored {kind} API key"));
                    ExitCode::SUCCESS
                }
                Ok(false) => {
                    output::out(&format!("there was no stored {kind} API key"));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    output::err(&format!("decode: could not delete the key: {e}"));
                    ExitCode::FAILURE
                }
            }
        }
    }
}
