//! Session transcripts: every [`LoopEvent`] of a conversation, one JSON object a line,
//! in `<data>/sessions/<id>.jsonl` (the XDG data folder, see [`crate::dirs`]).
//!
//! - The first line is a header: `{"type":"session","version":1,"id",…,"project",…}`;
//!   every later line is a loop event (`{"type":"user_prompt",…}`, …) with a `ts`
//!   (Unix milliseconds).
//! - Each event is written with one `write` and flushed, so a `kill -9` loses nothing
//!   already reported; the file is fsynced at every turn end, so a power cut loses at
//!   most the turn in flight.
//! - Ids sort by time: `YYYYMMDD-HHMMSS-mmm-xxxx` (UTC, then 4 random hex digits).
//! - Reading is forgiving: a line that cannot be parsed (typically the last one, cut
//!   by a kill) is skipped with a warning, never fatal.
//! - [`SessionStore::open`] rebuilds the conversation the model sees when a session is
//!   resumed; tool calls that never got a result (the process died while they ran) get
//!   one saying so, so every provider accepts the conversation.
//! - While a process writes a session, it holds an exclusive lock on the file: a second
//!   `--resume` of the same session is refused instead of interleaving lines.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The biggest transcript read back (a FIFO or a device in its place is not read).
const MAX_TRANSCRIPT_BYTES: u64 = 1 << 30;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use decode_protocol::{LoopEvent, Message, ToolOutput};

/// The transcript format version written in the header.
pub const SESSION_FORMAT_VERSION: u32 = 1;

/// The header line of a transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHeader {
    pub id: String,
    pub version: u32,
    /// The project root.
    pub project: PathBuf,
    /// Unix milliseconds.
    pub created: u64,
    /// The agent and mode at the start.
    #[serde(default)]
    pub agent: String,
    #[serde(default)]
    pub mode: String,
    /// `provider/model` at the start.
    #[serde(default)]
    pub model: String,
}

/// What `list` shows of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionInfo {
    pub id: String,
    pub project: PathBuf,
    /// The first prompt (shortened to one line).
    pub first_prompt: String,
    /// Unix milliseconds of the last write.
    pub updated: u64,
    pub path: PathBuf,
    /// `provider/model` at the start.
    pub model: String,
    /// The transcript's size in bytes.
    pub bytes: u64,
}

/// A session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no session `{id}` in {}", dir.display())]
    NotFound { id: String, dir: PathBuf },
    #[error("`{id}` is not a session id (ids look like 20250101-120000-000-ab12)")]
    BadId { id: String },
    #[error("the session file {} has no valid header line", path.display())]
    NoHeader { path: PathBuf },
    #[error("session `{id}` is in use by another Decode process")]
    Busy { id: String },
    #[error("session file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The sessions folder.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

/// An open transcript, appended to.
#[derive(Debug)]
pub struct Session {
    header: SessionHeader,
    path: PathBuf,
    file: File,
    /// The inputs of the tool calls of the last model turn written, by call id: a
    /// `tool_call_started` of one of them is written without its input, which the
    /// turn already holds (a 5 MB argument is stored once).
    turn_inputs: HashMap<String, Value>,
    /// How much output of each running call was written as progress.
    progress_kept: HashMap<String, usize>,
    /// Streamed text not written yet: deltas go to the file in pieces of
    /// [`TEXT_PIECE`] (a 9 MB answer streamed word by word is not 4 million records).
    pending_text: String,
}

/// The text of the deltas written together in one `text_delta` record (at most; the
/// pending text is written before any other event).
pub const TEXT_PIECE: usize = 4 * 1024;

/// The most output of one call kept in the transcript as progress; the rest is not
/// written (the call's result holds what the model read, the end of it included).
pub const PROGRESS_KEPT: usize = 64 * 1024;

/// A session opened for resuming.
#[derive(Debug)]
pub struct ResumedSession {
    pub session: Session,
    /// The conversation the model sees.
    pub messages: Vec<Message>,
    /// Every event read (for showing the history).
    pub events: Vec<LoopEvent>,
    /// Problems met while reading (skipped lines), one sentence each.
    pub warnings: Vec<String>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// `(year, month, day)` of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A new time-sortable session id for the time `t`.
pub fn new_session_id(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = d.as_secs() as i64;
    let (y, mo, day) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}{mo:02}{day:02}-{:02}{:02}{:02}-{:03}-{:04x}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        d.subsec_millis(),
        fastrand::u16(..)
    )
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl SessionStore {
    /// The store in Decode's data folder (`<data>/sessions`).
    pub fn new(data_dir: &Path) -> SessionStore {
        SessionStore {
            dir: data_dir.join("sessions"),
        }
    }

    /// The sessions folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The transcript path of a session id.
    pub fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Starts a new session for `project` (`agent`, `mode`, `model` are recorded).
    pub fn create(
        &self,
        project: &Path,
        agent: &str,
        mode: &str,
        model: &str,
    ) -> Result<Session, SessionError> {
        std::fs::create_dir_all(&self.dir).map_err(|source| SessionError::Io {
            path: self.dir.clone(),
            source,
        })?;
        loop {
            let id = new_session_id(SystemTime::now());
            let path = self.path_of(&id);
            let file = match OpenOptions::new().append(true).create_new(true).open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(SessionError::Io { path, source }),
            };
            lock_session(&file, &id)?;
            let header = SessionHeader {
                id: id.clone(),
                version: SESSION_FORMAT_VERSION,
                project: project.to_path_buf(),
                created: now_ms(),
                agent: agent.to_string(),
                mode: mode.to_string(),
                model: model.to_string(),
            };
            let mut session = Session::with(header, path, file);
            let mut line = serde_json::to_value(&session.header).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut line {
                map.insert("type".into(), Value::String("session".into()));
            }
            session.write_line(&line)?;
            session.sync()?;
            tracing::info!(id = %id, "session started");
            return Ok(session);
        }
    }

    /// Reads a session without opening it for writing (nor locking it): its
    /// header, every readable event and where reading stopped and why.
    pub fn read(
        &self,
        id: &str,
    ) -> Result<(SessionHeader, Vec<LoopEvent>, Vec<String>), SessionError> {
        if !valid_id(id) {
            return Err(SessionError::BadId { id: id.to_string() });
        }
        let path = self.path_of(id);
        let bytes = match decode_core::fsutil::read_regular(&path, MAX_TRANSCRIPT_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(SessionError::NotFound {
                    id: id.to_string(),
                    dir: self.dir.clone(),
                })
            }
            Err(source) => return Err(SessionError::Io { path, source }),
        };
        let parsed = parse_transcript(&path, &bytes);
        let header = parsed.header.ok_or(SessionError::NoHeader { path })?;
        Ok((header, parsed.events, parsed.warnings))
    }

    /// Opens a session to resume it: reads every event, rebuilds the conversation and
    /// opens the file for appending.
    pub fn open(&self, id: &str) -> Result<ResumedSession, SessionError> {
        if !valid_id(id) {
            return Err(SessionError::BadId { id: id.to_string() });
        }
        let path = self.path_of(id);
        let mut file = match OpenOptions::new().read(true).append(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(SessionError::NotFound {
                    id: id.to_string(),
                    dir: self.dir.clone(),
                })
            }
            Err(source) => return Err(SessionError::Io { path, source }),
        };
        lock_session(&file, id)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|source| SessionError::Io {
                path: path.clone(),
                source,
            })?;
        let parsed = parse_transcript(&path, &bytes);
        let header = parsed
            .header
            .ok_or(SessionError::NoHeader { path: path.clone() })?;
        // A cut last line has no newline: end it so the next record starts cleanly.
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            file.seek(SeekFrom::End(0))
                .and_then(|_| file.write_all(b"\n"))
                .map_err(|source| SessionError::Io {
                    path: path.clone(),
                    source,
                })?;
        }
        for w in &parsed.warnings {
            tracing::warn!("{w}");
        }
        let messages = conversation(&parsed.events);
        Ok(ResumedSession {
            session: Session::with(header, path, file),
            messages,
            events: parsed.events,
            warnings: parsed.warnings,
        })
    }

    /// Every session, most recently updated first. Unreadable files are skipped.
    pub fn list(&self) -> Vec<SessionInfo> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut infos: Vec<SessionInfo> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
            .filter_map(|e| {
                let path = e.path();
                let bytes = decode_core::fsutil::read_regular(&path, MAX_TRANSCRIPT_BYTES).ok()?;
                let parsed = parse_transcript(&path, &bytes);
                let header = parsed.header?;
                let first_prompt = parsed
                    .events
                    .iter()
                    .find_map(|ev| match ev {
                        LoopEvent::UserPrompt { text } => Some(one_line(text, 80)),
                        _ => None,
                    })
                    .unwrap_or_default();
                let updated = e
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(header.created);
                Some(SessionInfo {
                    id: header.id,
                    project: header.project,
                    model: header.model,
                    bytes: bytes.len() as u64,
                    first_prompt,
                    updated,
                    path,
                })
            })
            .collect();
        infos.sort_by(|a, b| b.updated.cmp(&a.updated).then(b.id.cmp(&a.id)));
        infos
    }
}

fn lock_session(file: &File, id: &str) -> Result<(), SessionError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(SessionError::Busy { id: id.to_string() }),
        Err(std::fs::TryLockError::Error(e)) => {
            // Locks are advisory and some filesystems lack them: go on without.
            tracing::debug!(error = %e, "could not lock the session file");
            Ok(())
        }
    }
}

fn one_line(text: &str, max: usize) -> String {
    let s = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > max {
        format!("{}…", s.chars().take(max).collect::<String>())
    } else {
        s
    }
}

impl Session {
    fn with(header: SessionHeader, path: PathBuf, file: File) -> Session {
        Session {
            header,
            path,
            file,
            turn_inputs: HashMap::new(),
            progress_kept: HashMap::new(),
            pending_text: String::new(),
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// The header (project, agent, mode at the start).
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The transcript file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_line(&mut self, value: &Value) -> Result<(), SessionError> {
        let mut line = serde_json::to_vec(value).unwrap_or_default();
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|_| self.file.flush())
            .map_err(|source| SessionError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// Appends one event (one `write`, flushed). What the transcript already holds is
    /// not written twice: a started call's input that its model turn holds is left out
    /// (and put back when the transcript is read), a call's progress beyond
    /// [`PROGRESS_KEPT`] is not kept, and a result's diff (shown, never read by the
    /// model: a new 5 MB file's diff is the file again) is kept as the window shows it.
    pub fn append(&mut self, event: &LoopEvent) -> Result<(), SessionError> {
        if let LoopEvent::Subagent {
            parent_id,
            event: inner,
            ..
        } = event
        {
            // A subagent's steps are kept whole but for its streamed text (its
            // assistant message holds it) and its commands' output beyond the bound.
            match &**inner {
                LoopEvent::TextDelta { .. } => return Ok(()),
                LoopEvent::ToolProgress { id, text, .. } => {
                    let kept = self
                        .progress_kept
                        .entry(format!("{parent_id}/{id}"))
                        .or_insert(0);
                    if *kept >= PROGRESS_KEPT {
                        return Ok(());
                    }
                    *kept += text.len();
                }
                _ => {}
            }
            self.flush_text()?;
            return self.append_value(event, false);
        }
        if let LoopEvent::TextDelta { text } = event {
            self.pending_text.push_str(text);
            if self.pending_text.len() >= TEXT_PIECE {
                return self.flush_text();
            }
            return Ok(());
        }
        self.flush_text()?;
        let mut input_in_turn = false;
        if let LoopEvent::ToolResult { diff: Some(d), .. } = event {
            if d.len() > decode_protocol::page::PAGE_TEXT_MAX {
                return self.append_raw(&event.for_page_diff());
            }
        }
        match event {
            LoopEvent::AssistantMessage { tool_calls, .. } => {
                self.turn_inputs = tool_calls
                    .iter()
                    .map(|c| (c.id.clone(), c.input.clone()))
                    .collect();
                self.progress_kept.clear();
            }
            LoopEvent::ToolCallStarted { id, input, .. } => {
                input_in_turn = self.turn_inputs.get(id) == Some(input) && !input.is_null();
            }
            LoopEvent::ToolProgress { id, text, .. } => {
                let kept = self.progress_kept.entry(id.clone()).or_insert(0);
                if *kept >= PROGRESS_KEPT {
                    return Ok(());
                }
                *kept += text.len();
                if *kept >= PROGRESS_KEPT {
                    let mut value = serde_json::to_value(event).unwrap_or(Value::Null);
                    if let Value::Object(map) = &mut value {
                        map.insert("ts".into(), Value::from(now_ms()));
                    }
                    self.write_line(&value)?;
                    let note = LoopEvent::ToolProgress {
                        id: id.clone(),
                        stream: decode_protocol::ProgressStream::Note,
                        text: "\n… more output was not kept in the transcript (the result holds what the model read)\n".into(),
                    };
                    let mut value = serde_json::to_value(&note).unwrap_or(Value::Null);
                    if let Value::Object(map) = &mut value {
                        map.insert("ts".into(), Value::from(now_ms()));
                    }
                    return self.write_line(&value);
                }
            }
            _ => {}
        }
        self.append_value(event, input_in_turn)
    }

    /// Writes the streamed text not written yet, as one `text_delta`.
    fn flush_text(&mut self) -> Result<(), SessionError> {
        if self.pending_text.is_empty() {
            return Ok(());
        }
        let text = std::mem::take(&mut self.pending_text);
        self.append_value(&LoopEvent::TextDelta { text }, false)
    }

    fn append_raw(&mut self, event: &LoopEvent) -> Result<(), SessionError> {
        self.append_value(event, false)
    }

    fn append_value(&mut self, event: &LoopEvent, input_in_turn: bool) -> Result<(), SessionError> {
        let mut value = serde_json::to_value(event).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("ts".into(), Value::from(now_ms()));
            if input_in_turn {
                map.insert("input".into(), Value::Null);
                map.insert(INPUT_IN_TURN.into(), Value::Bool(true));
            }
        }
        self.write_line(&value)
    }

    /// Forces what was written to disk (called at every turn end).
    pub fn sync(&mut self) -> Result<(), SessionError> {
        self.flush_text()?;
        self.file.sync_data().map_err(|source| SessionError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // The streamed text of a run that ends here (stopped, failed) is kept too.
        let _ = self.flush_text();
    }
}

/// Marks a `tool_call_started` record written without its input: the input is that
/// of the call with the same id in the last `assistant_message` before it.
const INPUT_IN_TURN: &str = "input_in_turn";

struct Parsed {
    header: Option<SessionHeader>,
    events: Vec<LoopEvent>,
    warnings: Vec<String>,
}

fn parse_transcript(path: &Path, bytes: &[u8]) -> Parsed {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.split('\n').collect();
    let last_nonempty = lines.iter().rposition(|l| !l.trim().is_empty());
    let mut parsed = Parsed {
        header: None,
        events: Vec::new(),
        warnings: Vec::new(),
    };
    // The inputs of the last model turn's calls, for records written without theirs.
    let mut turn_inputs: HashMap<String, Value> = HashMap::new();
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Result<Value, _> = serde_json::from_str(line);
        let ok = match value {
            Ok(v) if v.get("type").and_then(Value::as_str) == Some("session") => {
                match serde_json::from_value::<SessionHeader>(v) {
                    Ok(h) if parsed.header.is_none() => {
                        parsed.header = Some(h);
                        true
                    }
                    Ok(_) => true,
                    Err(_) => false,
                }
            }
            Ok(mut v) => {
                if v.get(INPUT_IN_TURN) == Some(&Value::Bool(true)) {
                    let id = v.get("id").and_then(Value::as_str).unwrap_or_default();
                    let input = turn_inputs.get(id).cloned().unwrap_or(Value::Null);
                    v["input"] = input;
                }
                match serde_json::from_value::<LoopEvent>(v) {
                    Ok(e) => {
                        if let LoopEvent::AssistantMessage { tool_calls, .. } = &e {
                            turn_inputs = tool_calls
                                .iter()
                                .map(|c| (c.id.clone(), c.input.clone()))
                                .collect();
                        }
                        parsed.events.push(e);
                        true
                    }
                    Err(_) => false,
                }
            }
            Err(_) => false,
        };
        if !ok {
            let warning = if Some(n) == last_nonempty {
                format!(
                    "{}: the last line was cut off (the process was probably stopped while writing it) and was skipped",
                    path.display()
                )
            } else {
                format!(
                    "{}: line {} is not a valid record and was skipped",
                    path.display(),
                    n + 1
                )
            };
            parsed.warnings.push(warning);
        }
    }
    parsed
}

/// The text of the result given to tool calls that never finished.
pub const INTERRUPTED_RESULT: &str =
    "The tool call was interrupted: Decode stopped before it finished, so its result is unknown. Check the state before repeating it.";

/// Rebuilds the conversation the model sees from transcript events: prompts, the
/// model's turns and the tool results (in call order). Calls without a result get
/// [`INTERRUPTED_RESULT`].
pub fn conversation(events: &[LoopEvent]) -> Vec<Message> {
    let mut messages: Vec<Message> = Vec::new();
    // The calls of the last assistant message still waiting for their results.
    let mut open: Vec<(String, String)> = Vec::new();
    let mut results: HashMap<String, ToolOutput> = HashMap::new();

    fn close(
        messages: &mut Vec<Message>,
        open: &mut Vec<(String, String)>,
        results: &mut HashMap<String, ToolOutput>,
    ) {
        if open.is_empty() {
            return;
        }
        let outputs = open
            .drain(..)
            .map(|(id, name)| {
                results.remove(&id).unwrap_or(ToolOutput {
                    call_id: id,
                    name,
                    content: INTERRUPTED_RESULT.to_string(),
                    is_error: true,
                    shortened: false,
                })
            })
            .collect();
        results.clear();
        messages.push(Message::Tool { results: outputs });
    }

    for event in events {
        match event {
            LoopEvent::UserPrompt { text } => {
                close(&mut messages, &mut open, &mut results);
                messages.push(Message::User { text: text.clone() });
            }
            LoopEvent::AssistantMessage { text, tool_calls } => {
                close(&mut messages, &mut open, &mut results);
                open = tool_calls
                    .iter()
                    .map(|c| (c.id.clone(), c.name.clone()))
                    .collect();
                messages.push(Message::Assistant {
                    text: text.clone(),
                    tool_calls: tool_calls.clone(),
                });
            }
            LoopEvent::ToolResult {
                id,
                name,
                content,
                is_error,
                ..
            } if open.iter().any(|(i, _)| i == id) => {
                results.insert(
                    id.clone(),
                    ToolOutput {
                        call_id: id.clone(),
                        name: name.clone(),
                        content: content.clone(),
                        is_error: *is_error,
                        shortened: false,
                    },
                );
                if open.iter().all(|(i, _)| results.contains_key(i)) {
                    close(&mut messages, &mut open, &mut results);
                }
            }
            _ => {}
        }
    }
    close(&mut messages, &mut open, &mut results);
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_time_sortable() {
        let t = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        let id = new_session_id(t);
        assert!(id.starts_with("20231114-221320-123-"), "{id}");
        let later = new_session_id(t + Duration::from_secs(1));
        assert!(later > id);
        assert!(valid_id(&id));
        assert!(!valid_id("../etc/passwd"));
    }

    /// A started call's input is written once (in its model turn) and read back whole;
    /// progress beyond the bound is not kept.
    #[test]
    fn what_the_transcript_holds_is_written_once_and_read_back_whole() {
        use decode_protocol::{ProgressStream, ToolCall};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let file = File::create(&path).unwrap();
        let header = SessionHeader {
            id: "20260101-000000-000-abcd".into(),
            version: 1,
            project: "/p".into(),
            created: 0,
            agent: "build".into(),
            mode: "default".into(),
            model: "m".into(),
        };
        let mut s = Session::with(header, path.clone(), file);
        let big = serde_json::json!({"path": "a", "content": "z".repeat(300_000)});
        let call = ToolCall {
            id: "c1".into(),
            name: "write".into(),
            input: big.clone(),
            invalid_input: None,
            signature: None,
        };
        s.append(&LoopEvent::AssistantMessage {
            text: "t".into(),
            tool_calls: vec![call],
        })
        .unwrap();
        s.append(&LoopEvent::ToolCallStarted {
            id: "c1".into(),
            name: "write".into(),
            input: big.clone(),
            decision: None,
            title: None,
        })
        .unwrap();
        for _ in 0..40 {
            s.append(&LoopEvent::ToolProgress {
                id: "c1".into(),
                stream: ProgressStream::Stdout,
                text: "o".repeat(16_384),
            })
            .unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            bytes.len() < 300_000 + PROGRESS_KEPT + 20_000,
            "{}",
            bytes.len()
        );
        let parsed = parse_transcript(&path, &bytes);
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        let started = parsed
            .events
            .iter()
            .find_map(|e| match e {
                LoopEvent::ToolCallStarted { input, .. } => Some(input.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(started, big, "the input is read back from its turn");
        let progress: usize = parsed
            .events
            .iter()
            .filter_map(|e| match e {
                LoopEvent::ToolProgress {
                    text,
                    stream: ProgressStream::Stdout,
                    ..
                } => Some(text.len()),
                _ => None,
            })
            .sum();
        assert!(
            (PROGRESS_KEPT..PROGRESS_KEPT + 16_385).contains(&progress),
            "{progress}"
        );
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }
}
