//! The trust store (docs/permissions.md, "Rules"): which project folders the person has trusted, kept in
//! `<data dir>/trust.json`, keyed by canonical path:
//!
//! ```json
//! {"version": 1, "projects": {"/home/me/src/app": {"trustedAt": 1767225600}}}
//! ```
//!
//! A malformed store is reported and never emptied or overwritten; while it is
//! malformed nothing is trusted. Writes re-read the file under an exclusive lock on
//! `trust.json.lock` and replace it atomically, so the app and `decode trust` can run
//! at the same time without losing entries.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::fsutil;

/// The trust store file name inside the data folder.
pub const TRUST_FILE: &str = "trust.json";

/// Why the trust store could not be read or changed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TrustError {
    /// The folder to trust does not exist (or cannot be resolved).
    #[error("cannot resolve the folder {}: {message}", path.display())]
    BadPath {
        /// The folder as given.
        path: PathBuf,
        /// Why it cannot be resolved.
        message: String,
    },
    /// The store file is not what Decode writes; nothing is trusted until it is fixed.
    #[error("the trust store {} is malformed ({message}); nothing is trusted until it is fixed or removed", path.display())]
    Malformed {
        /// The store file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Reading, locking or writing the store failed.
    #[error("could not {action} the trust store {}: {message}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        message: String,
    },
}

/// The set of trusted project folders.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
    /// Canonical paths of trusted folders, in file order.
    trusted: Vec<PathBuf>,
    problem: Option<TrustError>,
}

impl TrustStore {
    /// Opens the store in `data_dir` (the file need not exist). Never fails: a
    /// malformed or unreadable store is kept as [`TrustStore::problem`], and nothing
    /// is trusted while it lasts.
    pub fn open(data_dir: &Path) -> TrustStore {
        let path = data_dir.join(TRUST_FILE);
        let (trusted, problem) = match read_store(&path) {
            Ok(doc) => (doc.paths(), None),
            Err(e) => {
                tracing::warn!(error = %e, "trust store unusable; trusting nothing");
                (Vec::new(), Some(e))
            }
        };
        TrustStore {
            path,
            trusted,
            problem,
        }
    }

    /// The store file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the store is unusable, if it is (malformed or unreadable).
    pub fn problem(&self) -> Option<&TrustError> {
        self.problem.as_ref()
    }

    /// Whether `dir` (canonicalised) is trusted. A folder that cannot be resolved, or
    /// any folder while the store is malformed, is not trusted.
    pub fn is_trusted(&self, dir: &Path) -> bool {
        if self.problem.is_some() {
            return false;
        }
        match dir.canonicalize() {
            Ok(c) => self.trusted.iter().any(|t| t == &c),
            Err(_) => false,
        }
    }

    /// The trusted folders (canonical paths).
    pub fn trusted(&self) -> &[PathBuf] {
        &self.trusted
    }

    /// Re-reads the store from disk.
    pub fn reload(&mut self) {
        *self = TrustStore::open(fsutil::parent_dir(&self.path).as_path());
    }

    /// Marks `dir` trusted; returns its canonical path. The folder must exist.
    pub fn trust(&mut self, dir: &Path) -> Result<PathBuf, TrustError> {
        let canonical = canonical(dir)?;
        let key = path_key(&canonical)?;
        self.modify(|projects| {
            if !projects.contains_key(&key) {
                let mut entry = Map::new();
                entry.insert("trustedAt".into(), Value::from(unix_now()));
                projects.insert(key.clone(), Value::Object(entry));
                true
            } else {
                false
            }
        })?;
        tracing::info!(path = %canonical.display(), "project trusted");
        Ok(canonical)
    }

    /// Revokes trust in `dir`; returns whether it was trusted. A folder that no
    /// longer exists can be revoked by the absolute path it was trusted under.
    pub fn revoke(&mut self, dir: &Path) -> Result<bool, TrustError> {
        let target = match canonical(dir) {
            Ok(c) => c,
            Err(e) => {
                if dir.is_absolute() {
                    dir.to_path_buf()
                } else {
                    return Err(e);
                }
            }
        };
        let key = path_key(&target)?;
        let mut removed = false;
        self.modify(|projects| {
            removed = projects.shift_remove(&key).is_some();
            removed
        })?;
        tracing::info!(path = %target.display(), removed, "project trust revoked");
        Ok(removed)
    }

    /// Re-reads the store under the lock, applies `change` to its `projects` map and
    /// writes it back when `change` reports a modification.
    fn modify(
        &mut self,
        change: impl FnOnce(&mut Map<String, Value>) -> bool,
    ) -> Result<(), TrustError> {
        let dir = fsutil::parent_dir(&self.path);
        std::fs::create_dir_all(&dir)
            .map_err(|e| io_err("create the folder of", &self.path, &e))?;
        let lock_path = fsutil::lock_path_for(&self.path);
        let _lock =
            fsutil::FileLock::acquire(&lock_path).map_err(|e| io_err("lock", &lock_path, &e))?;
        let mut doc = match read_store(&self.path) {
            Ok(doc) => doc,
            Err(e) => {
                self.problem = Some(e.clone());
                self.trusted.clear();
                return Err(e);
            }
        };
        let changed = change(doc.projects_mut());
        if changed {
            let mut text = serde_json::to_string_pretty(&doc.0)
                .map_err(|e| io_err("serialise", &self.path, &io::Error::other(e)))?;
            text.push('\n');
            fsutil::atomic_write(&self.path, text.as_bytes())
                .map_err(|e| io_err("write", &self.path, &e))?;
        }
        self.trusted = doc.paths();
        self.problem = None;
        Ok(())
    }
}

/// The store document: a JSON object with a `projects` object (other keys kept).
struct StoreDoc(Value);

impl StoreDoc {
    fn new() -> StoreDoc {
        let mut root = Map::new();
        root.insert("version".into(), Value::from(1));
        root.insert("projects".into(), Value::Object(Map::new()));
        StoreDoc(Value::Object(root))
    }

    fn projects_mut(&mut self) -> &mut Map<String, Value> {
        // Validated by `read_store`: the root is an object and `projects` an object.
        let root = self.0.as_object_mut().expect("validated trust store root");
        let projects = root
            .entry("projects")
            .or_insert_with(|| Value::Object(Map::new()));
        projects
            .as_object_mut()
            .expect("validated trust store projects")
    }

    fn paths(&self) -> Vec<PathBuf> {
        self.0
            .get("projects")
            .and_then(Value::as_object)
            .map(|m| m.keys().map(PathBuf::from).collect())
            .unwrap_or_default()
    }
}

/// The biggest trust store read (a store of 100,000 projects is ~15 MB).
const MAX_STORE_BYTES: u64 = 64 * 1024 * 1024;

fn read_store(path: &Path) -> Result<StoreDoc, TrustError> {
    let bytes = match crate::fsutil::read_regular(path, MAX_STORE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(StoreDoc::new()),
        Err(e) => return Err(io_err("read", path, &e)),
    };
    let malformed = |message: String| TrustError::Malformed {
        path: path.to_path_buf(),
        message,
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| malformed(e.to_string()))?;
    let Some(root) = value.as_object() else {
        return Err(malformed("the top level is not a JSON object".into()));
    };
    match root.get("projects") {
        None => {}
        Some(Value::Object(projects)) => {
            if let Some(bad) = projects.keys().find(|k| !Path::new(k).is_absolute()) {
                return Err(malformed(format!("`{bad}` is not an absolute path")));
            }
        }
        Some(_) => return Err(malformed("`projects` is not a JSON object".into())),
    }
    Ok(StoreDoc(value))
}

fn canonical(dir: &Path) -> Result<PathBuf, TrustError> {
    let c = dir.canonicalize().map_err(|e| TrustError::BadPath {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    if !c.is_dir() {
        return Err(TrustError::BadPath {
            path: dir.to_path_buf(),
            message: "it is not a folder".into(),
        });
    }
    Ok(c)
}

fn path_key(path: &Path) -> Result<String, TrustError> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| TrustError::BadPath {
            path: path.to_path_buf(),
            message: "the path is not valid UTF-8".into(),
        })
}

fn io_err(action: &'static str, path: &Path, e: &io::Error) -> TrustError {
    TrustError::Io {
        action,
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_and_revoke_round_trip() {
        let data = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let mut store = TrustStore::open(data.path());
        assert!(!store.is_trusted(proj.path()));
        let c = store.trust(proj.path()).unwrap();
        assert_eq!(c, proj.path().canonicalize().unwrap());
        assert!(store.is_trusted(proj.path()));
        // A fresh handle sees it.
        assert!(TrustStore::open(data.path()).is_trusted(proj.path()));
        // Trusting twice is a no-op.
        store.trust(proj.path()).unwrap();
        assert_eq!(store.trusted().len(), 1);
        assert!(store.revoke(proj.path()).unwrap());
        assert!(!store.is_trusted(proj.path()));
        assert!(!store.revoke(proj.path()).unwrap());
        assert!(!TrustStore::open(data.path()).is_trusted(proj.path()));
    }

    #[test]
    fn a_fifo_in_place_of_the_store_is_a_problem_not_a_hang() {
        let data = tempfile::tempdir().unwrap();
        let path = data.path().join(TRUST_FILE);
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let store = TrustStore::open(data.path());
        let problem = store.problem().expect("a FIFO is not a store").to_string();
        assert!(problem.contains("not a regular file"), "{problem}");
        assert!(store.trusted().is_empty());
    }

    #[test]
    fn keyed_by_canonical_path() {
        let data = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        std::fs::create_dir(proj.path().join("sub")).unwrap();
        let mut store = TrustStore::open(data.path());
        store.trust(&proj.path().join("sub").join("..")).unwrap();
        assert!(store.is_trusted(proj.path()));
        let text = std::fs::read_to_string(data.path().join(TRUST_FILE)).unwrap();
        let key = proj.path().canonicalize().unwrap();
        assert!(text.contains(key.to_str().unwrap()), "{text}");
    }

    #[cfg(unix)]
    #[test]
    fn symlink_and_target_are_the_same_project() {
        let data = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let links = tempfile::tempdir().unwrap();
        let link = links.path().join("link");
        std::os::unix::fs::symlink(proj.path(), &link).unwrap();
        let mut store = TrustStore::open(data.path());
        store.trust(&link).unwrap();
        assert!(store.is_trusted(proj.path()));
    }

    #[test]
    fn missing_folder_is_an_error() {
        let data = tempfile::tempdir().unwrap();
        let mut store = TrustStore::open(data.path());
        let err = store
            .trust(Path::new("/definitely/not/here/xyz"))
            .unwrap_err();
        assert!(matches!(err, TrustError::BadPath { .. }));
        assert!(err.to_string().contains("/definitely/not/here/xyz"));
        assert!(!data.path().join(TRUST_FILE).exists());
    }

    #[test]
    fn malformed_store_trusts_nothing_and_is_never_overwritten() {
        let data = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let file = data.path().join(TRUST_FILE);
        let key = proj.path().canonicalize().unwrap();
        let bad = format!("{{\"projects\": {{\"{}\": {{}}}}", key.display()); // missing brace
        std::fs::write(&file, &bad).unwrap();
        let mut store = TrustStore::open(data.path());
        assert!(matches!(
            store.problem(),
            Some(TrustError::Malformed { .. })
        ));
        assert!(!store.is_trusted(proj.path()));
        let err = store.trust(proj.path()).unwrap_err();
        assert!(err.to_string().contains("malformed"), "{err}");
        assert!(store.revoke(proj.path()).is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), bad);
    }

    #[test]
    fn wrong_shapes_are_malformed() {
        for text in [
            "[]",
            "{\"projects\": []}",
            "{\"projects\": {\"relative/path\": {}}}",
        ] {
            let data = tempfile::tempdir().unwrap();
            std::fs::write(data.path().join(TRUST_FILE), text).unwrap();
            let store = TrustStore::open(data.path());
            assert!(store.problem().is_some(), "{text}");
        }
    }

    #[test]
    fn unknown_keys_survive_a_write() {
        let data = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let file = data.path().join(TRUST_FILE);
        std::fs::write(&file, r#"{"version":1,"note":"keep me","projects":{}}"#).unwrap();
        let mut store = TrustStore::open(data.path());
        store.trust(proj.path()).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("keep me"));
    }

    #[test]
    fn revoke_a_deleted_folder_by_absolute_path() {
        let data = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let dir = proj.path().join("gone");
        std::fs::create_dir(&dir).unwrap();
        let mut store = TrustStore::open(data.path());
        let c = store.trust(&dir).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        assert!(store.revoke(&c).unwrap());
        assert!(store.trusted().is_empty());
    }
}
