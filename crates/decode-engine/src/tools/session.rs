//! What one conversation (session) keeps between tool calls:
//!
//! - the shell's working folder: `bash` starts there and records where the command
//!   ended (a `cd` persists across calls, as in a terminal);
//! - what the agent read and what the file looked like then, so `edit` (and `write`)
//!   can refuse to change a file that changed on disk since the agent last saw it;
//! - the agent's todo list (`todo_write`), which the UI observes.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// Where a todo item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on now.
    #[serde(alias = "in-progress", alias = "inprogress", alias = "active")]
    InProgress,
    /// Finished (Claude Code's `completed` is accepted too).
    #[serde(alias = "completed", alias = "complete", alias = "finished")]
    Done,
}

impl TodoStatus {
    /// The snake_case name.
    pub fn name(self) -> &'static str {
        decode_policy::serde_name(&self)
    }
}

/// One item of the agent's checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    /// What is to be done.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

/// What a file looked like when the agent last read (or wrote) it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// Its length in bytes.
    pub len: u64,
    /// Its modification time, when the platform reports one.
    pub modified: Option<SystemTime>,
    /// A hash of its whole contents (absent for files too big to hash on read).
    pub hash: Option<u64>,
}

impl FileStamp {
    /// The stamp of `bytes`, the whole contents of a file whose metadata is `meta`.
    pub fn of_contents(bytes: &[u8], meta: &std::fs::Metadata) -> FileStamp {
        FileStamp {
            len: bytes.len() as u64,
            modified: meta.modified().ok(),
            hash: Some(content_hash(bytes)),
        }
    }

    /// Whether a file now holding `bytes` (metadata `meta`) is the one stamped.
    /// With a hash the contents decide (a touch that changes nothing is not a
    /// change); without one, the length and modification time do.
    pub fn matches(&self, bytes: &[u8], meta: &std::fs::Metadata) -> bool {
        if self.len != bytes.len() as u64 {
            return false;
        }
        match self.hash {
            Some(h) => h == content_hash(bytes),
            None => self.modified.is_some() && self.modified == meta.modified().ok(),
        }
    }
}

/// A hash of file contents, for staleness checks (not for security).
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

/// A streaming form of [`content_hash`]: feeding the same bytes in any chunks gives
/// the same result (SipHash's `write` is chunking-independent).
pub(crate) struct StreamHasher {
    inner: std::collections::hash_map::DefaultHasher,
}

impl StreamHasher {
    pub(crate) fn new() -> StreamHasher {
        StreamHasher {
            inner: std::collections::hash_map::DefaultHasher::new(),
        }
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.inner.write(bytes);
    }

    pub(crate) fn finish(self) -> u64 {
        self.inner.finish()
    }
}

/// Identifies a todo observer for [`SessionState::unsubscribe_todos`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TodoSubscription(u64);

/// An observer of the todo list.
pub type TodoObserver = Box<dyn Fn(&[TodoItem]) + Send + Sync>;

type SharedTodoObserver = Arc<dyn Fn(&[TodoItem]) + Send + Sync>;

/// Per-session tool state (see the module docs). `Send + Sync`; share it as
/// `Arc<SessionState>` in every [`ToolContext`](super::ToolContext) of one session.
pub struct SessionState {
    project_root: PathBuf,
    cwd: Mutex<PathBuf>,
    reads: Mutex<HashMap<PathBuf, FileStamp>>,
    require_read_before_edit: AtomicBool,
    todos: Mutex<Vec<TodoItem>>,
    observers: Mutex<Vec<(u64, SharedTodoObserver)>>,
    next_subscription: AtomicU64,
    /// Serialises todo updates with their delivery so observers see them in order.
    todo_delivery: Mutex<()>,
    /// The sandbox's last walk of the project (see [`SessionState::sandbox_scan`]).
    scan: Arc<tokio::sync::Mutex<Option<Arc<crate::sandbox::Scan>>>>,
}

impl fmt::Debug for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionState")
            .field("project_root", &self.project_root)
            .field("cwd", &*lock(&self.cwd))
            .field("reads", &lock(&self.reads).len())
            .field("todos", &lock(&self.todos).len())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SessionState {
    /// A new session: the shell starts in the project root, nothing was read, the
    /// todo list is empty, and `edit` requires a prior read of the file.
    pub fn new(project_root: impl AsRef<Path>) -> SessionState {
        let project_root = project_root.as_ref();
        SessionState {
            project_root: project_root.to_path_buf(),
            cwd: Mutex::new(project_root.to_path_buf()),
            reads: Mutex::new(HashMap::new()),
            require_read_before_edit: AtomicBool::new(true),
            todos: Mutex::new(Vec::new()),
            observers: Mutex::new(Vec::new()),
            next_subscription: AtomicU64::new(1),
            todo_delivery: Mutex::new(()),
            scan: Arc::new(tokio::sync::Mutex::new(None)),
        }
    }

    /// The project's protected names as they stand now, for the bash sandbox: the
    /// walk made after the last command (waiting for it if it is still running),
    /// or a new one — also when the `read` deny rules changed since that walk.
    pub(crate) async fn sandbox_scan(
        &self,
        deny: &crate::sandbox::ReadDeny,
        extra: &[PathBuf],
    ) -> Arc<crate::sandbox::Scan> {
        let mut guard = self.scan.lock().await;
        if let Some(s) = guard.as_ref() {
            if s.deny_rules == deny.rules && s.extra_roots == extra {
                return s.clone();
            }
        }
        let root = self.project_root.clone();
        let deny = deny.clone();
        let extra = extra.to_vec();
        let s = Arc::new(
            tokio::task::spawn_blocking(move || {
                crate::sandbox::scan_all(&root, &extra, Some(&deny))
            })
            .await
            .unwrap_or_default(),
        );
        *guard = Some(s.clone());
        s
    }

    /// Walks the project again after a command (the next command uses this walk),
    /// and disarms the repositories the command created (see
    /// `sandbox::new_repos`): returns what was taken away, one note each.
    /// `started` is when the command started.
    pub(crate) async fn rescan_for_sandbox(
        &self,
        deny: crate::sandbox::ReadDeny,
        extra: Vec<PathBuf>,
        started: std::time::SystemTime,
    ) -> Vec<String> {
        let mut guard = self.scan.lock().await;
        let root = self.project_root.clone();
        let before = guard.clone();
        let walked = tokio::task::spawn_blocking(move || {
            let mut s = crate::sandbox::scan_all(&root, &extra, Some(&deny));
            let mut notes = Vec::new();
            if let Some(b) = &before {
                // What the command hid from the walk behind `chmod 000` is walked
                // (folders inside folders: a few rounds).
                for _ in 0..8 {
                    let reopened = crate::sandbox::new_repos::reopen(b, &s);
                    if reopened.is_empty() {
                        break;
                    }
                    notes.extend(reopened);
                    s = crate::sandbox::scan_all(&root, &extra, Some(&deny));
                }
                notes.extend(crate::sandbox::new_repos::disarm_created(b, &s, started));
            }
            (s, notes)
        })
        .await;
        match walked {
            Ok((s, notes)) => {
                *guard = Some(Arc::new(s));
                notes
            }
            Err(e) => {
                // The next command walks again.
                tracing::warn!(error = %e, "the walk after a command failed");
                *guard = None;
                Vec::new()
            }
        }
    }

    /// A session for one call with no conversation before it (`decode tool`): `edit`
    /// does not require the file to have been read first, since there is no earlier
    /// call that could have read it. A file read in the session is still checked.
    pub fn one_shot(project_root: impl AsRef<Path>) -> SessionState {
        let s = SessionState::new(project_root);
        s.set_require_read_before_edit(false);
        s
    }

    /// The project root the session was opened on.
    pub fn project_root(&self) -> &Path {
        &self.project_root
    }

    /// Where the next `bash` call starts.
    pub fn cwd(&self) -> PathBuf {
        lock(&self.cwd).clone()
    }

    /// Sets where the next `bash` call starts.
    pub fn set_cwd(&self, dir: PathBuf) {
        *lock(&self.cwd) = dir;
    }

    /// Whether `edit` refuses a file that was never read in this session.
    pub fn require_read_before_edit(&self) -> bool {
        self.require_read_before_edit.load(Ordering::Relaxed)
    }

    /// See [`SessionState::require_read_before_edit`].
    pub fn set_require_read_before_edit(&self, on: bool) {
        self.require_read_before_edit.store(on, Ordering::Relaxed);
    }

    /// Records that the agent saw `path` (absolute, resolved) as `stamp`.
    pub fn record_read(&self, path: &Path, stamp: FileStamp) {
        lock(&self.reads).insert(path.to_path_buf(), stamp);
    }

    /// What `path` looked like when last read or written in this session.
    pub fn last_read(&self, path: &Path) -> Option<FileStamp> {
        lock(&self.reads).get(path).copied()
    }

    /// Forgets what was read of `path`.
    pub fn forget_read(&self, path: &Path) {
        lock(&self.reads).remove(path);
    }

    /// The todo list now.
    pub fn todos(&self) -> Vec<TodoItem> {
        lock(&self.todos).clone()
    }

    /// Replaces the todo list and tells every observer (when it changed).
    pub fn set_todos(&self, items: Vec<TodoItem>) {
        let _order = lock(&self.todo_delivery);
        {
            let mut todos = lock(&self.todos);
            if *todos == items {
                return;
            }
            *todos = items.clone();
        }
        let observers: Vec<SharedTodoObserver> = lock(&self.observers)
            .iter()
            .map(|(_, o)| Arc::clone(o))
            .collect();
        for observer in observers {
            let call = std::panic::AssertUnwindSafe(|| observer(&items));
            if std::panic::catch_unwind(call).is_err() {
                tracing::error!("a todo observer panicked");
            }
        }
    }

    /// Registers an observer of the todo list, called with the new list on every
    /// change, in change order. Observers must not call [`SessionState::set_todos`].
    pub fn subscribe_todos(&self, observer: TodoObserver) -> TodoSubscription {
        let id = self.next_subscription.fetch_add(1, Ordering::Relaxed);
        lock(&self.observers).push((id, Arc::from(observer)));
        TodoSubscription(id)
    }

    /// Removes a todo observer; returns whether it was registered.
    pub fn unsubscribe_todos(&self, id: TodoSubscription) -> bool {
        let mut observers = lock(&self.observers);
        let before = observers.len();
        observers.retain(|(i, _)| *i != id.0);
        observers.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_hash_equals_whole_hash() {
        let text: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        for split in [0, 1, 7, 8, 9, 4096, 9_999, 10_000] {
            let mut s = StreamHasher::new();
            s.update(&text[..split]);
            s.update(&text[split..]);
            assert_eq!(s.finish(), content_hash(&text), "split at {split}");
        }
    }

    #[test]
    fn todo_observers_see_changes_once() {
        let s = SessionState::new(Path::new("/p"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = Arc::clone(&seen);
        let id = s.subscribe_todos(Box::new(move |items| {
            seen2.lock().unwrap().push(items.len());
        }));
        let item = TodoItem {
            content: "a".into(),
            status: TodoStatus::Pending,
        };
        s.set_todos(vec![item.clone()]);
        s.set_todos(vec![item.clone()]);
        s.set_todos(vec![item.clone(), item]);
        assert!(s.unsubscribe_todos(id));
        s.set_todos(Vec::new());
        assert_eq!(*seen.lock().unwrap(), vec![1, 2]);
    }

    #[test]
    fn statuses_accept_claude_names() {
        let v: Vec<TodoStatus> =
            serde_json::from_str(r#"["pending","in_progress","done","completed"]"#).unwrap();
        assert_eq!(
            v,
            [
                TodoStatus::Pending,
                TodoStatus::InProgress,
                TodoStatus::Done,
                TodoStatus::Done
            ]
        );
    }
}
