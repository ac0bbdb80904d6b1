//! Errors as they cross to the UI: one [`ErrorKind`] enum (the UI matches kinds, never
//! message strings) and [`IpcError`] `{kind, message}`.

use std::fmt;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Every kind of failure a surface may be told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    // The provider (after its retries).
    /// 401/403 or an invalid key.
    Auth,
    /// 404: unknown model or wrong base URL.
    NotFound,
    /// 429 after every retry.
    RateLimited,
    /// 5xx (or the provider's "overloaded") after every retry.
    Server,
    /// 400 and other client errors.
    BadRequest,
    /// The server could not be reached.
    Connect,
    /// The server stopped answering.
    Timeout,
    /// The stream broke in the middle of the answer.
    StreamCut,
    /// The response could not be read.
    BadResponse,
    /// Missing key, bad base URL, unreadable script: fixed by the person's setup.
    Config,
    /// The script provider ran out of turns or replayed an error turn.
    Script,

    // Setup and state.
    /// No model provider is configured.
    NoProvider,
    /// No agent of that name.
    UnknownAgent,
    /// No mode of that name.
    UnknownMode,
    /// The project folder cannot be used.
    Project,
    /// The session transcript cannot be opened or written.
    Session,

    // The window.
    /// A prompt is already running.
    Busy,
    /// The decision was already answered (or never existed).
    AlreadyAnswered,
    /// The decision waits in the queue but is not the one shown yet, or the answer does
    /// not fit the request (a plan mode the dialog does not offer): refused.
    NotShown,

    /// An answer or input that cannot be used (an empty prompt, an empty command).
    InvalidInput,
    /// The page is not connected to a backend (UI only).
    NotConnected,
    /// Anything else.
    #[serde(other)]
    Other,
}

impl ErrorKind {
    /// The snake_case name, as serialised.
    pub fn name(self) -> &'static str {
        decode_policy::serde_name(&self)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error as the UI receives it: `{kind, message}`; the message is one sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct IpcError {
    pub kind: ErrorKind,
    pub message: String,
}

impl IpcError {
    pub fn new(kind: ErrorKind, message: impl fmt::Display) -> IpcError {
        IpcError {
            kind,
            message: message.to_string(),
        }
    }
}

impl fmt::Display for IpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for IpcError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serialised_names() {
        for k in [
            ErrorKind::Auth,
            ErrorKind::StreamCut,
            ErrorKind::NoProvider,
            ErrorKind::AlreadyAnswered,
            ErrorKind::Other,
        ] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
        let e = IpcError::new(ErrorKind::Busy, "a prompt is running");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"kind": "busy", "message": "a prompt is running"})
        );
    }
}
