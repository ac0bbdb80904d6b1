//! `web_fetch`: fetches an http(s) URL; HTML comes back as Markdown (`htmd`), text
//! types (text/*, JSON, XML, …) as they are, anything else is refused.
//!
//! Every redirect is judged by the permission gate before it is followed (at most
//! 10): one the gate allows in the current mode is followed, any other is reported
//! back so the model fetches that URL in a new call — which the gate
//! judges again (`web_fetch(domain:…)` rules would be dodged otherwise).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use decode_policy::{Call, Tool, Verdict};
use reqwest::redirect::Policy;
use reqwest::Url;
use serde::Deserialize;
use serde_json::json;

use super::files::{looks_binary, parse_input, truncate_chars};
use super::{ToolContext, ToolHandler, ToolResult};
use crate::net::Pins;

/// The most bytes read from a response; the rest is not downloaded.
pub const WEB_FETCH_MAX_BYTES: usize = 5 * 1024 * 1024;
/// Redirects followed at most.
pub const WEB_FETCH_MAX_REDIRECTS: usize = 10;
/// The whole request (connect, redirects, body) must finish within this.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Connecting must succeed within this.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The result keeps at most this many characters.
const MAX_RESULT_CHARS: usize = 100_000;

#[derive(Debug, Deserialize)]
struct FetchInput {
    url: String,
}

fn parse_url(raw: &str) -> Result<Url, String> {
    let url =
        Url::parse(raw.trim()).map_err(|e| format!("web_fetch: `url` is not a valid URL ({e})"))?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(format!(
                "web_fetch: only http and https URLs can be fetched, not `{other}:`"
            ))
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("web_fetch: the URL has no host".into());
    }
    Ok(url)
}

/// The `web_fetch` tool.
pub struct WebFetchTool {
    timeout: Duration,
}

impl Default for WebFetchTool {
    fn default() -> Self {
        WebFetchTool::new()
    }
}

impl WebFetchTool {
    /// The tool with the default timeout (30 s for the whole request).
    pub fn new() -> WebFetchTool {
        WebFetchTool::with_timeout(DEFAULT_TIMEOUT)
    }

    /// The tool with another timeout for the whole request.
    pub fn with_timeout(timeout: Duration) -> WebFetchTool {
        WebFetchTool { timeout }
    }

    /// A client for one call: names resolve only to the addresses pinned in
    /// `pins`, the ones the gate judged (docs/network.md).
    fn client(&self, pins: Pins) -> Result<reqwest::Client, String> {
        reqwest::Client::builder()
            // Redirects are followed by hand, each judged by the gate.
            .redirect(Policy::none())
            .timeout(self.timeout)
            .connect_timeout(CONNECT_TIMEOUT.min(self.timeout))
            .dns_resolver(Arc::new(pins))
            .user_agent(concat!(
                "Decode/",
                env!("CARGO_PKG_VERSION"),
                " (web_fetch)"
            ))
            .build()
            .map_err(|e| format!("web_fetch: cannot set up the HTTP client: {e}"))
    }
}

/// The host of a URL when it is a name (not an address).
fn host_name(url: &Url) -> Option<String> {
    let h = url.host_str()?;
    if h.starts_with('[') || h.parse::<IpAddr>().is_ok() {
        return None;
    }
    Some(h.to_string())
}

/// What the gate says of fetching `url`, its host resolved once (the addresses
/// are pinned when it allows).
enum Judged {
    Allow,
    Deny(String),
    Ask(String),
    Unresolved(String),
}

async fn judge(url: &Url, ctx: &ToolContext, pins: &Pins) -> Judged {
    // By the host's name first: a name the policy refuses or asks about is never
    // looked up (docs/network.md, "Judged by name first").
    let call = Call::new(Tool::WebFetch, url.as_str());
    let judged = crate::net::decide_host(&ctx.active, call, &ctx.resolver).await;
    let d = judged.decision;
    match (d.verdict, judged.resolved) {
        (Verdict::Allow, Some(Err(e))) => Judged::Unresolved(e),
        (Verdict::Allow, resolved) => {
            if let (Some(Ok(r)), Some(host)) = (resolved, host_name(url)) {
                pins.pin(&host, r.addrs);
            }
            Judged::Allow
        }
        (Verdict::Deny, _) => Judged::Deny(d.reason),
        (Verdict::Ask, _) => Judged::Ask(d.reason),
    }
}

/// The URL the person approved when its name was asked about (an ask rule, say): it
/// was not resolved before the ask, so it is resolved now, and only a private,
/// loopback or metadata address it turns out to have — something the person was not
/// shown — still stops it.
async fn judge_approved(url: &Url, ctx: &ToolContext, pins: &Pins) -> Judged {
    let Some(host) = host_name(url) else {
        return Judged::Allow;
    };
    let r = match ctx.resolver.resolve(&host).await {
        Ok(r) => r,
        Err(e) => return Judged::Unresolved(e),
    };
    if crate::net::reaches_private(&host, &r.judged) {
        let d = ctx
            .active
            .decide(&Call::new(Tool::WebFetch, url.as_str()).with_addrs(r.judged.clone()));
        if d.verdict != Verdict::Allow {
            return Judged::Ask(d.reason);
        }
    }
    pins.pin(&host, r.addrs);
    Judged::Allow
}

/// What a content type says the body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    /// Unknown or generic: decided by looking at the bytes.
    Sniff,
    Other,
}

fn kind_of(mime: &str) -> Kind {
    let m = mime.trim().to_ascii_lowercase();
    let essence = m.split(';').next().unwrap_or("").trim().to_string();
    match essence.as_str() {
        "" | "application/octet-stream" | "binary/octet-stream" => Kind::Sniff,
        "text/html" | "application/xhtml+xml" => Kind::Html,
        e if e.starts_with("text/") => Kind::Text,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-toml"
        | "application/x-sh"
        | "application/sql"
        | "application/graphql"
        | "application/x-ndjson"
        | "application/jsonl"
        | "application/x-www-form-urlencoded"
        | "application/rss+xml"
        | "application/atom+xml" => Kind::Text,
        e if e.ends_with("+json") || e.ends_with("+xml") => Kind::Text,
        _ => Kind::Other,
    }
}

fn looks_html(text: &str) -> bool {
    let head: String = text
        .trim_start()
        .chars()
        .take(256)
        .collect::<String>()
        .to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.contains("<head>")
}

/// HTML to Markdown with `htmd`, without scripts, styles and other non-content.
fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "iframe", "svg", "canvas", "head",
        ])
        .build();
    match converter.convert(html) {
        Ok(md) => md.trim().to_string(),
        Err(e) => {
            tracing::warn!(error = %e, "HTML to Markdown failed; returning the raw HTML");
            html.to_string()
        }
    }
}

#[async_trait]
impl ToolHandler for WebFetchTool {
    fn tool(&self) -> Tool {
        Tool::WebFetch
    }

    fn description(&self) -> &'static str {
        "Fetches an http(s) URL and returns its content: HTML pages as Markdown, text, JSON \
         and XML as they are. Other content (images, PDFs, archives) is refused. At most 5 MB \
         are downloaded; the result is capped at 100,000 characters. A redirect the \
         permission gate would ask about is not followed: the result names the new URL to \
         fetch instead."
    }

    fn input_schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The http:// or https:// URL to fetch."}
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }

    fn validate(&self, input: &serde_json::Value) -> Result<(), String> {
        let i: FetchInput = parse_input("web_fetch", input)?;
        parse_url(&i.url).map(|_| ())
    }

    async fn execute(&self, input: serde_json::Value, ctx: &ToolContext) -> ToolResult {
        let input: FetchInput = match parse_input("web_fetch", &input) {
            Ok(i) => i,
            Err(e) => return ToolResult::error(e),
        };
        let url = match parse_url(&input.url) {
            Ok(u) => u,
            Err(e) => return ToolResult::error(e),
        };
        // Fetched as the gate's rules saw it (user info dropped, host normalised).
        let url = decode_policy::normalize_url(url.as_str()).unwrap_or(url);
        // The host as the gate judged it (resolved once, before the ask), or,
        // when the call did not come through the gate's path with its host,
        // resolved and judged now.
        let pins = Pins::default();
        if let Some(host) = host_name(&url) {
            match &ctx.judged_host {
                Some((h, addrs)) if *h == host => pins.pin(&host, addrs.clone()),
                _ if ctx.approved_by_person => match judge_approved(&url, ctx, &pins).await {
                    Judged::Allow => {}
                    Judged::Deny(reason) | Judged::Ask(reason) => {
                        return ToolResult::error(format!(
                            "web_fetch: {url}: the permission gate asks before fetching it ({reason}); not fetched"
                        ))
                    }
                    Judged::Unresolved(e) => {
                        return ToolResult::error(format!("web_fetch: {url}: {e}"))
                    }
                },
                _ => match judge(&url, ctx, &pins).await {
                    Judged::Allow => {}
                    Judged::Deny(reason) => {
                        return ToolResult::error(format!(
                            "web_fetch: {url}: denied by the permission gate: {reason}"
                        ))
                    }
                    Judged::Ask(reason) => {
                        return ToolResult::error(format!(
                            "web_fetch: {url}: the permission gate asks before fetching it ({reason}); not fetched"
                        ))
                    }
                    Judged::Unresolved(e) => {
                        return ToolResult::error(format!("web_fetch: {url}: {e}"))
                    }
                },
            }
        }
        let client = match self.client(pins.clone()) {
            Ok(c) => c,
            Err(e) => return ToolResult::error(e),
        };
        tokio::select! {
            r = fetch(&client, &pins, url.clone(), self.timeout, ctx) => r,
            _ = ctx.cancel.cancelled() => ToolResult::error(format!("web_fetch of {url} was cancelled")),
        }
    }
}

fn request_error(url: &Url, e: &reqwest::Error, timeout: Duration) -> String {
    if e.is_redirect() {
        format!("web_fetch: {url}: too many redirects (more than {WEB_FETCH_MAX_REDIRECTS}); the URL redirects in a loop")
    } else if e.is_timeout() {
        format!(
            "web_fetch: {url}: timed out after {} s",
            timeout.as_secs_f64()
        )
    } else if e.is_connect() {
        format!("web_fetch: {url}: cannot connect ({})", root_cause(e))
    } else {
        format!("web_fetch: {url}: {}", root_cause(e))
    }
}

fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cause = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        cause = c.to_string();
        cur = c.source();
    }
    cause
}

async fn fetch(
    client: &reqwest::Client,
    pins: &Pins,
    url: Url,
    timeout: Duration,
    ctx: &ToolContext,
) -> ToolResult {
    match follow_redirects(client, pins, &url, timeout, ctx).await {
        Ok(response) => read_page(response, timeout).await,
        Err(ended) => ended,
    }
}

/// The types asked for, web pages and text first.
const ACCEPT: &str = "text/html,application/xhtml+xml,text/markdown,text/plain,application/json,application/xml;q=0.9,*/*;q=0.5";

/// Requests `url` and every redirect the gate allows, all within `timeout`: the
/// final response, or the result for the model when the chain ends before it.
async fn follow_redirects(
    client: &reqwest::Client,
    pins: &Pins,
    url: &Url,
    timeout: Duration,
    ctx: &ToolContext,
) -> Result<reqwest::Response, ToolResult> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut current = url.clone();
    let mut seen: Vec<Url> = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let response = client
            .get(current.clone())
            .timeout(left)
            .header(reqwest::header::ACCEPT, ACCEPT)
            .send()
            .await
            .map_err(|e| ToolResult::error(request_error(&current, &e, timeout)))?;
        let status = response.status();
        if !status.is_redirection() {
            return Ok(response);
        }
        let next =
            redirect_target(url, &current, &response, &mut seen).map_err(ToolResult::error)?;
        // Every redirect is judged like a new call before it is followed, its
        // host resolved once and pinned.
        judge_redirect(&current, &next, status, ctx, pins).await?;
        current = next;
    }
}

/// Where a redirect from `current` leads (normalised as the gate sees it), unless
/// it has no usable Location, loops, goes on too long or leaves http(s).
fn redirect_target(
    url: &Url,
    current: &Url,
    response: &reqwest::Response,
    seen: &mut Vec<Url>,
) -> Result<Url, String> {
    let status = response.status();
    let Some(next) = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|l| current.join(l).ok())
    else {
        return Err(format!(
            "web_fetch: {current} answered {status} without a usable Location"
        ));
    };
    let next = decode_policy::normalize_url(next.as_str()).unwrap_or(next);
    seen.push(current.clone());
    if seen.len() > WEB_FETCH_MAX_REDIRECTS || seen.contains(&next) {
        return Err(format!(
            "web_fetch: {url}: too many redirects (more than {WEB_FETCH_MAX_REDIRECTS}); the URL redirects in a loop"
        ));
    }
    if !matches!(next.scheme(), "http" | "https") {
        return Err(format!(
            "web_fetch: {current} redirects to {next}, which is not an http or https URL"
        ));
    }
    Ok(next)
}

/// Follows the redirect to `next` only when the gate allows it; otherwise the
/// result says why not (an ask tells the model to fetch `next` in a new call).
async fn judge_redirect(
    current: &Url,
    next: &Url,
    status: reqwest::StatusCode,
    ctx: &ToolContext,
    pins: &Pins,
) -> Result<(), ToolResult> {
    match judge(next, ctx, pins).await {
        Judged::Allow => Ok(()),
        Judged::Deny(reason) => Err(ToolResult::error(format!(
            "web_fetch: {current} redirects ({}) to {next}, which the permission gate denies: {reason}",
            status.as_u16(),
        ))),
        Judged::Ask(reason) => Err(ToolResult::ok(format!(
            "{current} redirects ({}) to {next}. The permission gate asks before fetching that URL ({reason}): to read it, call web_fetch again with url \"{next}\".",
            status.as_u16(),
        ))),
        Judged::Unresolved(e) => Err(ToolResult::error(format!(
            "web_fetch: {current} redirects ({}) to {next}: {e}",
            status.as_u16(),
        ))),
    }
}

/// The final response as the model reads it: a page or text, never other types.
async fn read_page(response: reqwest::Response, timeout: Duration) -> ToolResult {
    let status = response.status();
    let final_url = response.url().clone();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let kind = kind_of(&content_type);
    if kind == Kind::Other {
        let size = response
            .content_length()
            .map(|n| format!(", {n} bytes"))
            .unwrap_or_default();
        return ToolResult::error(format!(
            "web_fetch: {final_url} is `{}`{size}: web_fetch reads web pages and text (HTML, text/*, JSON, XML), not this type",
            content_type.split(';').next().unwrap_or("").trim()
        ));
    }
    let (body, truncated) = match read_body(response).await {
        Ok(b) => b,
        Err(e) => return ToolResult::error(request_error(&final_url, &e, timeout)),
    };
    let content = match body_text(&final_url, &body, kind, &content_type) {
        Ok(c) => c,
        Err(binary) => return ToolResult::error(binary),
    };
    page_result(&final_url, status, &content_type, content, truncated)
}

/// Streams the body, stopping at the cap; whether anything was left unread.
async fn read_body(mut response: reqwest::Response) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body: Vec<u8> = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response.chunk().await? {
        let room = WEB_FETCH_MAX_BYTES - body.len();
        if chunk.len() >= room {
            body.extend_from_slice(&chunk[..room]);
            truncated = chunk.len() > room
                || response
                    .content_length()
                    .is_some_and(|n| n as usize > WEB_FETCH_MAX_BYTES);
            if !truncated {
                // Exactly at the cap: see whether anything follows.
                truncated = matches!(response.chunk().await, Ok(Some(c)) if !c.is_empty());
            }
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, truncated))
}

/// The body as text (HTML as Markdown); an error for binary data of no declared
/// type.
fn body_text(
    final_url: &Url,
    body: &[u8],
    mut kind: Kind,
    content_type: &str,
) -> Result<String, String> {
    if kind == Kind::Sniff {
        if looks_binary(body) {
            return Err(format!(
                "web_fetch: {final_url} is binary data{}: web_fetch reads web pages and text only",
                if content_type.is_empty() {
                    String::new()
                } else {
                    format!(" (`{content_type}`)")
                }
            ));
        }
        kind = Kind::Text;
    }
    let text = String::from_utf8_lossy(body).into_owned();
    if kind == Kind::Text && content_type.is_empty() && looks_html(&text) {
        kind = Kind::Html;
    }
    Ok(if kind == Kind::Html {
        html_to_markdown(&text)
    } else {
        text
    })
}

/// The result: the URL, the type, the status when it is not a success, the content
/// (cut at [`MAX_RESULT_CHARS`]) and notes on what was cut.
fn page_result(
    final_url: &Url,
    status: reqwest::StatusCode,
    content_type: &str,
    mut content: String,
    truncated: bool,
) -> ToolResult {
    let mut notes = Vec::new();
    if truncated {
        notes.push(format!(
            "[the response is larger than {} MB; only the first {} MB were downloaded]",
            WEB_FETCH_MAX_BYTES / (1024 * 1024),
            WEB_FETCH_MAX_BYTES / (1024 * 1024)
        ));
    }
    if truncate_chars(&mut content, MAX_RESULT_CHARS) {
        notes.push(format!("[content cut at {MAX_RESULT_CHARS} characters]"));
    }
    let mut out = format!("URL: {final_url}\n");
    if !content_type.is_empty() {
        out.push_str(&format!("Content-Type: {content_type}\n"));
    }
    if !status.is_success() {
        out.push_str(&format!("Status: {status}\n"));
    }
    out.push('\n');
    out.push_str(&content);
    for n in notes {
        out.push('\n');
        out.push_str(&n);
    }
    if status.is_success() {
        ToolResult::ok(out)
    } else {
        ToolResult::error(format!("web_fetch: {final_url} answered {status}\n{out}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(kind_of("text/html; charset=utf-8"), Kind::Html);
        assert_eq!(kind_of("text/plain"), Kind::Text);
        assert_eq!(kind_of("application/json"), Kind::Text);
        assert_eq!(kind_of("application/vnd.api+json"), Kind::Text);
        assert_eq!(kind_of("image/png"), Kind::Other);
        assert_eq!(kind_of("application/pdf"), Kind::Other);
        assert_eq!(kind_of(""), Kind::Sniff);
    }

    #[test]
    fn urls() {
        assert!(parse_url("https://example.com/x").is_ok());
        assert!(parse_url("ftp://example.com/x").is_err());
        assert!(parse_url("file:///etc/passwd").is_err());
        assert!(parse_url("not a url").is_err());
    }

    #[test]
    fn markdown() {
        let md = html_to_markdown(
            "<html><head><title>T</title><script>x()</script></head><body><h1>Hello</h1><p>A <a href=\"/x\">link</a>.</p></body></html>",
        );
        assert!(md.contains("# Hello"), "{md}");
        assert!(md.contains("[link](/x)"), "{md}");
        assert!(!md.contains("x()"), "{md}");
    }
}
