//! A small server-sent-events parser (the `text/event-stream` format every provider
//! streams in). Bytes go in as they arrive; complete events come out.
//!
//! Lines end with `\n` or `\r\n` (a `\r\n` split across two chunks is fine). `data:`
//! lines of one event are joined with `\n`; `event:` names it; lines starting with `:`
//! are comments; a blank line ends the event. At the end of the body an event whose
//! last line was complete is still delivered (some servers omit the final blank line);
//! a partial line means the stream was cut mid-event.

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when present.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental parser.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
}

/// How the body ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseEnd {
    /// Every line was complete.
    Clean,
    /// The body stopped in the middle of a line.
    MidLine,
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Feeds bytes; complete events are appended to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        for &b in bytes {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.line_done(&line, out);
            } else {
                self.line.push(b);
            }
        }
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            "event" => self.event = Some(value.to_string()),
            _ => {} // id, retry and unknown fields: not needed
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if let Some(data) = self.data.take() {
            out.push(SseEvent { event, data });
        }
    }

    /// The body ended: delivers a pending event whose lines were complete and says
    /// whether the body stopped mid-line.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> SseEnd {
        if !self.line.is_empty() {
            self.line.clear();
            self.event = None;
            self.data = None;
            return SseEnd::MidLine;
        }
        self.dispatch(out);
        SseEnd::Clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> (Vec<SseEvent>, SseEnd) {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out);
        }
        let end = p.finish(&mut out);
        (out, end)
    }

    #[test]
    fn events_split_anywhere() {
        let body = b"event: message_start\r\ndata: {\"a\":1}\r\n\r\n: ping\n\ndata: x\ndata: y\n\n";
        for split in 0..body.len() {
            let (events, end) = parse_chunks(&[&body[..split], &body[split..]]);
            assert_eq!(end, SseEnd::Clean);
            assert_eq!(
                events,
                vec![
                    SseEvent {
                        event: Some("message_start".into()),
                        data: "{\"a\":1}".into()
                    },
                    SseEvent {
                        event: None,
                        data: "x\ny".into()
                    }
                ]
            );
        }
    }

    #[test]
    fn missing_final_blank_line_still_delivers() {
        let (events, end) = parse_chunks(&[b"data: [DONE]\n"]);
        assert_eq!(end, SseEnd::Clean);
        assert_eq!(events[0].data, "[DONE]");
    }

    #[test]
    fn cut_mid_line_is_reported() {
        let (events, end) = parse_chunks(&[b"data: {\"a\":1}\n\ndata: {\"cho"]);
        assert_eq!(events.len(), 1);
        assert_eq!(end, SseEnd::MidLine);
    }
}
