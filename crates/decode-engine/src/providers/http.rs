//! The HTTP driver shared by the Gemini, Anthropic and OpenAI-compatible providers:
//! send, check the status, stream the SSE body through the provider's [`Decoder`], and
//! retry what can be retried.
//!
//! Retry rule: 429, 408, 5xx (and Anthropic's 529 / `overloaded_error`), connection
//! failures, timeouts and cut streams are tried again — at most
//! [`RetryPolicy::max_tries`] tries in all, waiting `retry-after` when the server gives
//! one, else an exponential backoff with jitter — but only while nothing of the answer
//! (no text, no part of a tool call) has reached the loop. Once something has, a failure
//! is reported, never silently replayed: the person already saw half an answer, or a
//! tool call was half delivered.
//!
//! Keys: a redirect is followed only to the same server (same host and port, or the
//! same host moving from http to https); one to another server is refused, so no key
//! header — `Authorization`, `x-api-key`, `x-goog-api-key` alike — and no conversation
//! is ever sent there. A provider's error message that repeats the key is masked
//! before it leaves this module (shown, logged or saved in a transcript).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::retry::{parse_retry_after, RetryPolicy};
use super::sse::{SseEnd, SseEvent, SseParser};
use super::{
    default_context_tokens, ModelClient, ModelEvent, ModelInfo, ModelRequest, ModelStream,
    ProviderError, ProviderErrorKind, ProviderKind, ProviderSettings,
};

/// What a provider's wire format contributes to the driver.
pub(crate) trait Wire: Send + Sync + 'static {
    fn kind(&self) -> ProviderKind;
    fn model(&self) -> &str;
    fn base_url(&self) -> &str;
    /// How the provider is named in messages ("Anthropic", "the OpenAI-compatible
    /// server at …").
    fn label(&self) -> String;
    /// The request body for one turn.
    fn body(&self, request: &ModelRequest) -> Value;
    /// The HTTP request (URL, headers, body).
    fn request(&self, http: &reqwest::Client, body: &Value) -> reqwest::RequestBuilder;
    /// A fresh decoder for one response stream.
    fn decoder(&self) -> Box<dyn Decoder>;
    /// Whether an error status with this message is really a key problem (Gemini
    /// answers 400 `API_KEY_INVALID`).
    fn is_auth_error(&self, _status: u16, _detail: &str) -> bool {
        false
    }
    /// The key this provider sends, to mask it in error messages.
    fn api_key(&self) -> Option<&crate::secret::ApiKey>;
    /// What the person should do about a rejected key.
    fn key_hint(&self) -> String {
        let kind = self.kind();
        match kind.env_var() {
            Some(var) => format!(
                "store a valid key with `decode key set {}` or set {var}",
                kind.name()
            ),
            None => "check the key".to_string(),
        }
    }
}

/// Turns the SSE events of one response into model events.
pub(crate) trait Decoder: Send {
    /// One event; the model events it yields go to `out` (also when it fails).
    fn event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), Fault>;
    /// The body ended: `Ok` when the answer was complete (its stop event is pushed to
    /// `out` if not yet sent), else the fault.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), Fault>;
}

/// Why a stream could not be read to its end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fault {
    /// The body ended before the answer was complete.
    Cut(String),
    /// The provider reported an error inside the stream.
    Provider { retryable: bool, message: String },
    /// Data that could not be read.
    Malformed(String),
}

pub(crate) struct HttpClient<W: Wire> {
    wire: Arc<W>,
    http: reqwest::Client,
    policy: RetryPolicy,
    context_tokens: Option<usize>,
    /// What it was built from: a subagent asking for another model gets the same
    /// configuration with that model.
    settings: ProviderSettings,
}

impl<W: Wire> HttpClient<W> {
    pub(crate) fn new(wire: W, settings: &ProviderSettings) -> Result<Self, ProviderError> {
        let base = wire.base_url();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ProviderError::new(
                ProviderErrorKind::Config,
                format!("the base URL `{base}` is not an http:// or https:// URL"),
            ));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(settings.retry.connect_timeout)
            .redirect(redirect_policy())
            .build()
            .map_err(|e| {
                ProviderError::new(
                    ProviderErrorKind::Config,
                    format!("could not set up the HTTP client: {e}"),
                )
            })?;
        Ok(HttpClient {
            wire: Arc::new(wire),
            http,
            policy: settings.retry,
            context_tokens: settings.context_tokens,
            settings: settings.clone(),
        })
    }
}

impl<W: Wire + 'static> ModelClient for HttpClient<W> {
    fn single_try(&self) -> Option<Arc<dyn ModelClient>> {
        Some(Arc::new(HttpClient {
            wire: Arc::clone(&self.wire),
            http: self.http.clone(),
            policy: RetryPolicy {
                max_tries: 1,
                idle_timeout: self.policy.idle_timeout.min(Duration::from_secs(20)),
                ..self.policy
            },
            context_tokens: self.context_tokens,
            settings: self.settings.clone(),
        }))
    }

    fn for_subagent(&self, agent: &str, model: Option<&str>) -> Option<Arc<dyn ModelClient>> {
        let model = model.filter(|m| *m != self.wire.model())?;
        let settings = ProviderSettings {
            model: model.to_string(),
            // The configured size is the parent model's.
            context_tokens: None,
            ..self.settings.clone()
        };
        match super::connect(&settings) {
            Ok(client) => Some(client),
            Err(e) => {
                tracing::warn!(
                    agent,
                    model,
                    "the subagent's model cannot be used ({e}); it runs on the parent's"
                );
                None
            }
        }
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            provider: self.wire.kind(),
            model: self.wire.model().to_string(),
            base_url: self.wire.base_url().to_string(),
        }
    }

    fn context_tokens(&self) -> usize {
        self.context_tokens
            .unwrap_or_else(|| default_context_tokens(self.wire.kind(), self.wire.model()))
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> ModelStream {
        let (tx, rx) = mpsc::channel(256);
        let wire = Arc::clone(&self.wire);
        let http = self.http.clone();
        let policy = self.policy;
        tokio::spawn(async move {
            drive(wire, http, policy, request, cancel, tx).await;
        });
        ModelStream::from_receiver(rx)
    }
}

/// Redirects are followed only to the same server: reqwest drops `Authorization` on a
/// redirect to another host but keeps custom key headers (`x-api-key`,
/// `x-goog-api-key`), and a 307 re-sends the whole conversation. So for every
/// provider alike: another server is not followed at all (the 3xx comes back and is
/// reported), and neither is a move from https to http.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(prev) = attempt.previous().last().cloned() else {
            return attempt.follow();
        };
        if attempt.previous().len() > 5 {
            attempt.error("too many redirects")
        } else if same_server(&prev, attempt.url()) {
            attempt.follow()
        } else {
            tracing::warn!(from = %prev.origin().ascii_serialization(), to = %attempt.url().origin().ascii_serialization(), "a model server redirected to another server: not followed");
            attempt.stop()
        }
    })
}

/// Whether a redirect from `from` to `to` stays on the same server: the same host
/// and port, or the same host going from http to https on the default ports.
pub(crate) fn same_server(from: &reqwest::Url, to: &reqwest::Url) -> bool {
    if from.host_str().map(str::to_ascii_lowercase) != to.host_str().map(str::to_ascii_lowercase) {
        return false;
    }
    match (from.scheme(), to.scheme()) {
        (a, b) if a == b => from.port_or_known_default() == to.port_or_known_default(),
        ("http", "https") => from.port().is_none() && to.port().is_none(),
        _ => false,
    }
}

/// One failed try.
#[derive(Debug)]
struct Failure {
    kind: ProviderErrorKind,
    status: Option<u16>,
    retryable: bool,
    retry_after: Option<Duration>,
    /// Something of the answer already reached the loop.
    forwarded: bool,
    /// A short detail (the provider's own message, the I/O error).
    detail: String,
}

impl Failure {
    fn new(kind: ProviderErrorKind, retryable: bool, detail: impl Into<String>) -> Failure {
        Failure {
            kind,
            status: None,
            retryable,
            retry_after: None,
            forwarded: false,
            detail: detail.into(),
        }
    }
}

enum Attempt {
    Done,
    ReceiverGone,
    Failed(Failure),
}

async fn drive<W: Wire>(
    wire: Arc<W>,
    http: reqwest::Client,
    policy: RetryPolicy,
    request: ModelRequest,
    cancel: CancellationToken,
    tx: mpsc::Sender<ModelEvent>,
) {
    let body = wire.body(&request);
    let mut attempt: u32 = 0;
    loop {
        attempt += 1;
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => return,
            o = attempt_once(&*wire, &http, &policy, &body, &tx) => o,
        };
        let failure = match outcome {
            Attempt::Done | Attempt::ReceiverGone => return,
            Attempt::Failed(f) => f,
        };
        let too_long = failure
            .retry_after
            .is_some_and(|d| d > policy.max_retry_after);
        if !failure.retryable || failure.forwarded || too_long || attempt >= policy.max_tries {
            let mut error = final_error(&*wire, &policy, &failure, attempt);
            if let Some(key) = wire.api_key() {
                error.message = key.mask_in(&error.message);
            }
            tracing::warn!(
                provider = %wire.kind(),
                attempt,
                kind = error.error_kind().name(),
                "model request failed: {}",
                error.message
            );
            let _ = tx.send(ModelEvent::Error(error)).await;
            return;
        }
        let delay = failure
            .retry_after
            .unwrap_or_else(|| policy.backoff(attempt));
        let reason = match wire.api_key() {
            Some(key) => key.mask_in(&retry_reason(&failure)),
            None => retry_reason(&failure),
        };
        tracing::info!(
            provider = %wire.kind(),
            attempt,
            delay_ms = delay.as_millis() as u64,
            "retrying model request: {reason}"
        );
        let notice = ModelEvent::Retrying {
            attempt,
            delay_ms: delay.as_millis() as u64,
            reason,
        };
        if tx.send(notice).await.is_err() {
            return;
        }
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

fn retry_reason(f: &Failure) -> String {
    match (f.kind, f.status) {
        (ProviderErrorKind::RateLimited, _) => "rate limited (HTTP 429)".to_string(),
        (_, Some(s)) => format!("HTTP {s}"),
        (ProviderErrorKind::Connect, _) => format!("could not connect ({})", f.detail),
        (ProviderErrorKind::Timeout, _) => "no answer in time".to_string(),
        (ProviderErrorKind::StreamCut, _) => "the stream broke off".to_string(),
        _ => f.detail.clone(),
    }
}

fn with_detail(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

fn final_error<W: Wire>(
    wire: &W,
    policy: &RetryPolicy,
    f: &Failure,
    attempts: u32,
) -> ProviderError {
    let label = wire.label();
    let status = f.status.map(|s| s.to_string()).unwrap_or_default();
    let tries = if attempts > 1 {
        format!(" (tried {attempts} times)")
    } else {
        String::new()
    };
    let message = match f.kind {
        ProviderErrorKind::Auth => format!(
            "the API key was rejected by {label} (HTTP {status}{}): {}",
            with_detail(&f.detail),
            wire.key_hint()
        ),
        ProviderErrorKind::NotFound => format!(
            "{label} answered 404 Not Found for the model `{}` (check the model name, and that the base URL {} is right{}){}",
            wire.model(),
            wire.base_url(),
            if wire.kind() == ProviderKind::Openai {
                "; OpenAI-compatible servers usually end in /v1"
            } else {
                ""
            },
            with_detail(&f.detail)
        ),
        ProviderErrorKind::RateLimited => match f.retry_after {
            Some(d) if d > policy.max_retry_after => format!(
                "{label} is rate-limiting requests (HTTP 429) and asked to wait {} s: try again later",
                d.as_secs()
            ),
            _ => format!(
                "{label} is rate-limiting requests (HTTP 429) and still was after {attempts} tries: wait a little and try again"
            ),
        },
        ProviderErrorKind::Server => format!(
            "{label} failed with a server error (HTTP {status}{}){tries}: try again later",
            with_detail(&f.detail)
        ),
        ProviderErrorKind::BadRequest => format!(
            "{label} rejected the request (HTTP {status}{})",
            with_detail(&f.detail)
        ),
        ProviderErrorKind::Connect => format!(
            "could not reach {}: is the server running?",
            wire.base_url()
        ),
        ProviderErrorKind::Timeout => format!(
            "{label} did not answer within {} s{tries}",
            policy.idle_timeout.as_secs_f64().ceil() as u64
        ),
        ProviderErrorKind::StreamCut => {
            if f.forwarded {
                format!(
                    "the connection to {label} broke off in the middle of the answer ({}); the partial answer was kept",
                    f.detail
                )
            } else {
                format!(
                    "the connection to {label} broke off before the answer was complete ({}){tries}",
                    f.detail
                )
            }
        }
        ProviderErrorKind::BadResponse => format!(
            "{label} sent an answer Decode could not read ({})",
            f.detail
        ),
        ProviderErrorKind::Config | ProviderErrorKind::Script => f.detail.clone(),
    };
    ProviderError {
        kind: f.kind,
        status: f.status,
        message,
    }
}

async fn attempt_once<W: Wire>(
    wire: &W,
    http: &reqwest::Client,
    policy: &RetryPolicy,
    body: &Value,
    tx: &mpsc::Sender<ModelEvent>,
) -> Attempt {
    let send = wire.request(http, body).send();
    let mut response = match tokio::time::timeout(policy.idle_timeout, send).await {
        Err(_) => {
            return Attempt::Failed(Failure::new(
                ProviderErrorKind::Timeout,
                true,
                "no response",
            ))
        }
        Ok(Err(e)) => return Attempt::Failed(request_error(&e)),
        Ok(Ok(r)) => r,
    };

    let status = response.status();
    if status.is_redirection() {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| response.url().join(l).ok())
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|| "an address it did not give".into());
        let mut f = Failure::new(
            ProviderErrorKind::Config,
            false,
            format!(
                "{} redirected the request (HTTP {}) to another server, {to}; Decode does not send the key or the conversation there: set the base URL to that server if you trust it",
                wire.label(),
                status.as_u16()
            ),
        );
        f.status = Some(status.as_u16());
        return Attempt::Failed(f);
    }
    if !status.is_success() {
        return Attempt::Failed(status_failure(wire, policy, response).await);
    }
    let is_json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"));
    if is_json {
        // The server ignored `stream: true` or answered an error with status 200.
        let text = match tokio::time::timeout(policy.idle_timeout, response.text()).await {
            Ok(Ok(t)) => t,
            _ => String::new(),
        };
        return Attempt::Failed(Failure::new(
            ProviderErrorKind::BadResponse,
            false,
            format!(
                "it answered with plain JSON instead of a stream{}",
                with_detail(&error_detail(&text))
            ),
        ));
    }

    let mut parser = SseParser::new();
    let mut decoder = wire.decoder();
    let mut forwarded = false;
    let mut events = Vec::new();
    let mut out = Vec::new();
    loop {
        let chunk = match tokio::time::timeout(policy.idle_timeout, response.chunk()).await {
            Err(_) => {
                let mut f = Failure::new(ProviderErrorKind::Timeout, true, "the stream stalled");
                f.forwarded = forwarded;
                return Attempt::Failed(f);
            }
            Ok(Err(e)) => {
                let mut f = Failure::new(ProviderErrorKind::StreamCut, true, short_io(&e));
                f.forwarded = forwarded;
                return Attempt::Failed(f);
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(bytes))) => bytes,
        };
        parser.feed(&chunk, &mut events);
        for event in events.drain(..) {
            let result = decoder.event(event, &mut out);
            match forward(&mut out, tx, &mut forwarded).await {
                Ok(()) => {}
                Err(()) => return Attempt::ReceiverGone,
            }
            if let Err(fault) = result {
                return Attempt::Failed(fault_failure(fault, forwarded));
            }
        }
    }
    let end = parser.finish(&mut events);
    for event in events.drain(..) {
        let result = decoder.event(event, &mut out);
        if forward(&mut out, tx, &mut forwarded).await.is_err() {
            return Attempt::ReceiverGone;
        }
        if let Err(fault) = result {
            return Attempt::Failed(fault_failure(fault, forwarded));
        }
    }
    if end == SseEnd::MidLine {
        return Attempt::Failed(fault_failure(
            Fault::Cut("the stream ended in the middle of an event".into()),
            forwarded,
        ));
    }
    let result = decoder.finish(&mut out);
    if forward(&mut out, tx, &mut forwarded).await.is_err() {
        return Attempt::ReceiverGone;
    }
    match result {
        Ok(()) => Attempt::Done,
        Err(fault) => Attempt::Failed(fault_failure(fault, forwarded)),
    }
}

async fn forward(
    out: &mut Vec<ModelEvent>,
    tx: &mpsc::Sender<ModelEvent>,
    forwarded: &mut bool,
) -> Result<(), ()> {
    for event in out.drain(..) {
        if matches!(
            event,
            ModelEvent::TextDelta { .. }
                | ModelEvent::ToolCallStart { .. }
                | ModelEvent::ToolCallDelta { .. }
                | ModelEvent::ToolCallEnd { .. }
        ) {
            *forwarded = true;
        }
        tx.send(event).await.map_err(|_| ())?;
    }
    Ok(())
}

fn fault_failure(fault: Fault, forwarded: bool) -> Failure {
    let mut f = match fault {
        Fault::Cut(detail) => Failure::new(ProviderErrorKind::StreamCut, true, detail),
        Fault::Provider { retryable, message } => Failure::new(
            if retryable {
                ProviderErrorKind::Server
            } else {
                ProviderErrorKind::BadRequest
            },
            retryable,
            message,
        ),
        Fault::Malformed(detail) => Failure::new(ProviderErrorKind::BadResponse, false, detail),
    };
    f.forwarded = forwarded;
    f
}

fn request_error(e: &reqwest::Error) -> Failure {
    if e.is_timeout() {
        return Failure::new(ProviderErrorKind::Timeout, true, "no response");
    }
    // Connection refused, DNS failure, TLS failure, reset before the answer: the
    // server was not reached.
    Failure::new(ProviderErrorKind::Connect, true, short_io(e))
}

/// The innermost cause of an error, in one short line.
fn short_io(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

async fn status_failure<W: Wire>(
    wire: &W,
    policy: &RetryPolicy,
    response: reqwest::Response,
) -> Failure {
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, SystemTime::now()))
        .or_else(|| {
            response
                .headers()
                .get("retry-after-ms")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_millis)
        });
    let text = match tokio::time::timeout(policy.idle_timeout, response.text()).await {
        Ok(Ok(t)) => t,
        _ => String::new(),
    };
    let detail = error_detail(&text);
    let (kind, retryable) = if wire.is_auth_error(status, &detail) {
        (ProviderErrorKind::Auth, false)
    } else {
        match status {
            401 | 403 => (ProviderErrorKind::Auth, false),
            404 => (ProviderErrorKind::NotFound, false),
            408 => (ProviderErrorKind::Timeout, true),
            429 => (ProviderErrorKind::RateLimited, true),
            500..=599 => (ProviderErrorKind::Server, true),
            _ => (ProviderErrorKind::BadRequest, false),
        }
    };
    Failure {
        kind,
        status: Some(status),
        retryable,
        retry_after,
        forwarded: false,
        detail,
    }
}

/// The provider's own error message from an error body (`{"error":{"message":…}}` in
/// all three APIs), else the start of the body, on one line.
pub(crate) fn error_detail(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let v = match v {
            Value::Array(mut a) if !a.is_empty() => a.swap_remove(0),
            v => v,
        };
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let text = from_json.unwrap_or_else(|| body.to_string());
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = one_line.trim_end_matches('.');
    if trimmed.chars().count() > 200 {
        let cut: String = trimmed.chars().take(200).collect();
        format!("{cut}…")
    } else {
        trimmed.to_string()
    }
}

/// Joins a base URL and a path with exactly one slash.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_details() {
        assert_eq!(
            error_detail(r#"{"error":{"message":"Invalid API key.\n Try again."}}"#),
            "Invalid API key. Try again"
        );
        assert_eq!(
            error_detail(r#"[{"error":{"code":400,"message":"API key not valid"}}]"#),
            "API key not valid"
        );
        assert_eq!(
            error_detail(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_detail("Bad Gateway"), "Bad Gateway");
        assert_eq!(error_detail(""), "");
    }

    #[test]
    fn redirects_stay_on_the_same_server() {
        let u = |s: &str| reqwest::Url::parse(s).unwrap();
        assert!(same_server(
            &u("https://api.x.com/v1"),
            &u("https://API.x.com/v2")
        ));
        assert!(same_server(
            &u("http://api.x.com/v1"),
            &u("https://api.x.com/v1")
        ));
        assert!(same_server(
            &u("http://127.0.0.1:8080/a"),
            &u("http://127.0.0.1:8080/b")
        ));
        assert!(!same_server(
            &u("https://api.x.com/"),
            &u("https://evil.example/")
        ));
        assert!(!same_server(
            &u("https://api.x.com/"),
            &u("https://api.x.com.evil.example/")
        ));
        assert!(!same_server(
            &u("http://127.0.0.1:8080/"),
            &u("http://127.0.0.1:9090/")
        ));
        assert!(!same_server(
            &u("https://api.x.com/"),
            &u("http://api.x.com/")
        ));
        assert!(!same_server(
            &u("http://api.x.com:8080/"),
            &u("https://api.x.com/")
        ));
    }

    #[test]
    fn urls_join() {
        assert_eq!(join_url("http://x/v1/", "/chat"), "http://x/v1/chat");
        assert_eq!(join_url("http://x/v1", "chat"), "http://x/v1/chat");
    }
}
