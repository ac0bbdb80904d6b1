//! `decode key set PROVIDER` / `decode key delete PROVIDER`: API keys in the system
//! keyring (Secret Service on Linux; service `decode`, user = provider name).
//!
//! `set` reads the key from stdin: typed without echo on a terminal, or one line from a
//! pipe (`echo "$KEY" | decode key set openai`). The key is never printed or logged.
//! Without a usable keyring the error is one sentence pointing to the environment
//! variables (`GEMINI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `DECODE_API_KEY`).
//!
//! Exit codes: 0 done; 1 the keyring failed; 2 a usage error (unknown provider, no key
//! given).

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use decode_engine::config::{ApiKey, KeyringStore, SecretStore};
use decode_engine::providers::ProviderKind;

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
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("decode: could not read the key from stdin: {e}"))?;
        line
    };
    let key = ApiKey::new(text);
    if key.is_empty() {
        return Err("decode: no key was given (type it, or pipe it on stdin)".into());
    }
    Ok(key)
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
