//! What an MCP server returns, made into a tool result (docs/mcp.md). Everything a
//! server sends is untrusted text:
//!
//! - text, embedded text resources and structured content go to the model as text,
//!   with control characters and escape sequences shown escaped (`\x1b[…`) and
//!   invisible or reordering characters too, capped at [`MAX_RESULT_CHARS`] (the
//!   head is kept; a line says how much was left out);
//! - images (PNG, JPEG, GIF, WebP only: never SVG, which can hold scripts) go to the
//!   window as images, base64 data in [`ToolImage`]s — never as HTML — and the model
//!   reads a line saying an image was shown; at most [`MAX_IMAGES`] of at most
//!   [`MAX_IMAGE_BYTES`] each;
//! - audio and binary resources are named, not passed;
//! - `isError` makes the result a tool error.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::tools::{ToolImage, ToolResult};

/// The most characters of one result the model reads (as for bash).
pub const MAX_RESULT_CHARS: usize = crate::tools::MAX_OUTPUT_CHARS;
/// The most images of one result shown.
pub const MAX_IMAGES: usize = 8;
/// The largest image shown (its base64 text).
pub const MAX_IMAGE_BYTES: usize = 5 << 20;
/// The image types shown.
pub const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// `text` with control characters, escape sequences and invisible characters shown
/// escaped; newlines and tabs kept.
pub fn escape_text(text: &str) -> String {
    decode_core::display::sanitize(text).into_owned()
}

fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / f64::from(1u32 << 20))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

/// Whether `data` reads as base64 (the window builds a `data:` URL of it).
fn is_base64(data: &str) -> bool {
    let d: Vec<u8> = data.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    !d.is_empty()
        && d.len().is_multiple_of(4)
        && d.iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/' || *b == b'=')
}

/// The tool result of a call (see the module docs).
pub fn convert(result: CallToolResult) -> ToolResult {
    let mut parts: Vec<String> = Vec::new();
    let mut images: Vec<ToolImage> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    for block in &result.content {
        if let ContentBlock::Text(t) = block {
            texts.push(&t.text);
        }
    }
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(img) => {
                let mime = img.mime_type.trim().to_ascii_lowercase();
                let bytes = img.data.len();
                if !IMAGE_TYPES.contains(&mime.as_str()) {
                    parts.push(format!(
                        "[an image of type {} was not shown: only PNG, JPEG, GIF and WebP images are]",
                        escape_text(&mime)
                    ));
                } else if bytes > MAX_IMAGE_BYTES {
                    parts.push(format!(
                        "[an image ({mime}, {}) was not shown: larger than {}]",
                        size(bytes),
                        size(MAX_IMAGE_BYTES)
                    ));
                } else if images.len() >= MAX_IMAGES {
                    parts.push(format!(
                        "[an image was not shown: at most {MAX_IMAGES} are shown per result]"
                    ));
                } else if !is_base64(&img.data) {
                    parts.push("[an image was not shown: its data is not base64]".into());
                } else {
                    images.push(ToolImage {
                        mime_type: mime.clone(),
                        data: img
                            .data
                            .chars()
                            .filter(|c| !c.is_ascii_whitespace())
                            .collect(),
                    });
                    parts.push(format!(
                        "[image {}: {mime}, {} — shown to the person]",
                        images.len(),
                        size(bytes * 3 / 4)
                    ));
                }
            }
            ContentBlock::Audio(a) => parts.push(format!(
                "[audio ({}, {}) — not passed on]",
                escape_text(&a.mime_type),
                size(a.data.len() * 3 / 4)
            )),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    parts.push(format!("[resource {uri}]\n{text}"))
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => parts.push(format!(
                    "[resource {uri}: {}, {} of binary data — not passed on]",
                    mime_type.as_deref().unwrap_or("unknown type"),
                    size(blob.len() * 3 / 4)
                )),
                #[allow(unreachable_patterns)]
                _ => parts.push("[a resource of an unknown kind]".into()),
            },
            ContentBlock::ResourceLink(l) => {
                parts.push(format!("[resource link: {} {}]", l.name, l.uri))
            }
            #[allow(unreachable_patterns)]
            _ => parts.push("[content of an unknown kind]".into()),
        }
    }
    if let Some(s) = &result.structured_content {
        let compact = s.to_string();
        // Servers usually send the same JSON as text too: not twice.
        let already = texts.iter().any(|t| {
            serde_json::from_str::<serde_json::Value>(t).is_ok_and(|v| v == *s)
                || t.trim() == compact
        });
        if !already {
            let pretty = serde_json::to_string_pretty(s).unwrap_or(compact);
            parts.push(format!("[structured content]\n{pretty}"));
        }
    }
    let is_error = result.is_error == Some(true);
    let mut text = parts.join("\n");
    if text.trim().is_empty() {
        text = if is_error {
            "the tool reported an error without a message".into()
        } else {
            "(no output)".into()
        };
    }
    let text = cap(&escape_text(&text));
    ToolResult {
        content: text,
        is_error,
        images,
        ..ToolResult::default()
    }
}

/// The head of `text`, at most [`MAX_RESULT_CHARS`] characters, with a line saying
/// how much was left out.
pub fn cap(text: &str) -> String {
    match text.char_indices().nth(MAX_RESULT_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => {
            let left = text[cut..].chars().count();
            format!(
                "{}\n[output truncated: the last {left} characters were left out; the first {MAX_RESULT_CHARS} are above]",
                &text[..cut]
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock};

    fn result(content: Vec<ContentBlock>) -> CallToolResult {
        let mut r = CallToolResult::default();
        r.content = content;
        r
    }

    #[test]
    fn text_is_escaped_and_capped() {
        let r = convert(result(vec![ContentBlock::text(
            "ok\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}evil\nnext",
        )]));
        assert!(!r.content.contains('\u{1b}'), "{}", r.content);
        assert!(!r.content.contains('\u{202e}'), "{}", r.content);
        assert!(r.content.contains("\\x1b]0;pwned"), "{}", r.content);
        assert!(r.content.contains("\nnext"));
        let big = "é".repeat(MAX_RESULT_CHARS * 3);
        let r = convert(result(vec![ContentBlock::text(big)]));
        assert!(r.content.chars().count() < MAX_RESULT_CHARS + 200);
        assert!(
            r.content.contains("output truncated"),
            "{}",
            &r.content[r.content.len() - 200..]
        );
    }

    #[test]
    fn images_are_data_never_markup() {
        let png = "iVBORw0KGgo=";
        let r = convert(result(vec![
            ContentBlock::image(png, "image/png"),
            ContentBlock::image("PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+", "image/svg+xml"),
            ContentBlock::image("<img src=x onerror=alert(1)>", "image/png"),
        ]));
        assert_eq!(r.images.len(), 1);
        assert_eq!(r.images[0].mime_type, "image/png");
        assert_eq!(r.images[0].data, png);
        assert!(r.content.contains("shown to the person"));
        assert!(r.content.contains("svg+xml was not shown"), "{}", r.content);
        assert!(r.content.contains("not base64"), "{}", r.content);
    }

    #[test]
    fn errors_and_structured_content() {
        let mut r = result(vec![]);
        r.is_error = Some(true);
        let t = convert(r);
        assert!(t.is_error);
        assert!(t.content.contains("error"));
        let mut r = result(vec![ContentBlock::text(r#"{"a":1}"#)]);
        r.structured_content = Some(serde_json::json!({"a": 1}));
        assert_eq!(convert(r).content, r#"{"a":1}"#);
        let mut r = result(vec![]);
        r.structured_content = Some(serde_json::json!({"b": "\u{1b}[31m"}));
        let c = convert(r).content;
        assert!(c.starts_with("[structured content]"), "{c}");
        assert!(!c.contains('\u{1b}'));
    }
}
