//! What Decode remembers about project folders, in `<data dir>/projects.json`, keyed
//! by canonical path (docs/window.md, "Projects"):
//!
//! ```json
//! {"version": 1, "projects": {"/home/me/src/app": {
//!    "opened": 1767225600000, "trustAsked": true, "alwaysAllowed": ["bash(make test)"]}}}
//! ```
//!
//! - `opened`: when the window last opened it (the recent-projects list);
//! - `trustAsked`: the person answered the trust dialog for it (it is shown once);
//! - `alwaysAllowed`: the rules an "always allow" answer saved to the project's
//!   settings file, so the settings screen can mark them and revoke them. The
//!   settings file itself keeps its shape.
//!
//! Like the trust store: a malformed file is reported and never overwritten (writes
//! are refused until it is fixed); writes re-read it under an exclusive lock on
//! `projects.json.lock` and replace it atomically.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use decode_protocol::RecentProject;
use serde_json::{Map, Value};

use crate::fsutil;

/// The store's file name inside the data folder.
pub const PROJECTS_FILE: &str = "projects.json";

/// How many folders the recent list keeps.
pub const RECENT_LIMIT: usize = 20;

/// The store could not be read or written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProjectsError {
    #[error("{} is malformed ({message}); Decode leaves it as it is: fix or remove it", path.display())]
    Malformed { path: PathBuf, message: String },
    #[error("could not {action} {}: {message}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        message: String,
    },
}

/// The projects store of one data folder.
#[derive(Debug, Clone)]
pub struct ProjectStore {
    path: PathBuf,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn key(dir: &Path) -> String {
    // Canonical when the folder exists; a missing one keeps the path it was recorded under.
    dir.canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}

impl ProjectStore {
    /// The store in `data_dir` (nothing is read or created yet).
    pub fn open(data_dir: &Path) -> ProjectStore {
        ProjectStore {
            path: data_dir.join(PROJECTS_FILE),
        }
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<Map<String, Value>, ProjectsError> {
        let bytes = match crate::fsutil::read_regular(&self.path, 64 * 1024 * 1024) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => {
                return Err(ProjectsError::Io {
                    action: "read",
                    path: self.path.clone(),
                    message: e.to_string(),
                })
            }
        };
        let malformed = |message: String| ProjectsError::Malformed {
            path: self.path.clone(),
            message,
        };
        let root: Value = serde_json::from_slice(&bytes).map_err(|e| malformed(e.to_string()))?;
        let Value::Object(mut root) = root else {
            return Err(malformed("not a JSON object".into()));
        };
        match root.remove("projects") {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(p)) => {
                if p.values().all(Value::is_object) {
                    Ok(p)
                } else {
                    Err(malformed("every project must be a JSON object".into()))
                }
            }
            Some(_) => Err(malformed("`projects` must be a JSON object".into())),
        }
    }

    /// Everything recorded, or nothing when the file is missing or malformed (a
    /// malformed file is logged).
    fn entries(&self) -> Map<String, Value> {
        self.read().unwrap_or_else(|e| {
            tracing::warn!("{e}");
            Map::new()
        })
    }

    /// Re-reads the store under its lock, applies `change` to the `projects` map and
    /// writes it back atomically (other keys of the file kept) when it changed something.
    fn modify(
        &self,
        change: impl FnOnce(&mut Map<String, Value>) -> bool,
    ) -> Result<(), ProjectsError> {
        let io_err = |action: &'static str, path: &Path, e: io::Error| ProjectsError::Io {
            action,
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let dir = fsutil::parent_dir(&self.path);
        std::fs::create_dir_all(&dir).map_err(|e| io_err("create the folder", &dir, e))?;
        let lock_path = fsutil::lock_path_for(&self.path);
        let _lock =
            fsutil::FileLock::acquire(&lock_path).map_err(|e| io_err("lock", &lock_path, e))?;
        let mut projects = self.read()?;
        if !change(&mut projects) {
            return Ok(());
        }
        let mut root = match crate::fsutil::read_regular(&self.path, 64 * 1024 * 1024)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        {
            Some(Value::Object(o)) => o,
            _ => Map::new(),
        };
        root.insert("version".into(), Value::from(1));
        root.insert("projects".into(), Value::Object(projects));
        let mut text = serde_json::to_string_pretty(&Value::Object(root))
            .map_err(|e| io_err("serialise", &self.path, io::Error::other(e)))?;
        text.push('\n');
        fsutil::atomic_write(&self.path, text.as_bytes())
            .map_err(|e| io_err("write", &self.path, e))
    }

    fn entry<'a>(projects: &'a mut Map<String, Value>, dir: &Path) -> &'a mut Map<String, Value> {
        let v = projects
            .entry(key(dir))
            .or_insert_with(|| Value::Object(Map::new()));
        if !v.is_object() {
            *v = Value::Object(Map::new());
        }
        v.as_object_mut().expect("just ensured an object")
    }

    /// Records that the window opened `dir` now.
    pub fn touch(&self, dir: &Path) -> Result<(), ProjectsError> {
        self.modify(|projects| {
            Self::entry(projects, dir).insert("opened".into(), Value::from(now_ms()));
            true
        })
    }

    /// The recently opened folders, most recent first, at most [`RECENT_LIMIT`]. A
    /// folder in the temp folder that is gone is left out (scratch folders would fill
    /// the list); any other missing folder is listed as missing.
    pub fn recent(&self) -> Vec<RecentProject> {
        let temp = std::env::temp_dir();
        let temp_canon = temp.canonicalize().unwrap_or_else(|_| temp.clone());
        let mut list: Vec<RecentProject> = self
            .entries()
            .into_iter()
            .filter_map(|(path, v)| {
                let opened = v.get("opened")?.as_u64()?;
                let exists = Path::new(&path).is_dir();
                let scratch = Path::new(&path).starts_with(&temp)
                    || Path::new(&path).starts_with(&temp_canon);
                if !exists && scratch {
                    return None;
                }
                Some(RecentProject {
                    exists,
                    path,
                    opened,
                })
            })
            .collect();
        list.sort_by(|a, b| b.opened.cmp(&a.opened).then(a.path.cmp(&b.path)));
        list.truncate(RECENT_LIMIT);
        list
    }

    /// Takes `dir` off the recent list (what else is recorded about it stays).
    pub fn forget(&self, dir: &Path) -> Result<bool, ProjectsError> {
        let mut removed = false;
        let k = key(dir);
        self.modify(|projects| {
            if let Some(Value::Object(e)) = projects.get_mut(&k) {
                removed = e.remove("opened").is_some();
                if e.is_empty() {
                    projects.shift_remove(&k);
                }
            }
            removed
        })?;
        Ok(removed)
    }

    /// Whether the person answered the trust dialog for `dir` before.
    pub fn trust_asked(&self, dir: &Path) -> bool {
        self.entries()
            .get(&key(dir))
            .and_then(|e| e.get("trustAsked"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// Records that the person answered the trust dialog for `dir`.
    pub fn mark_trust_asked(&self, dir: &Path) -> Result<(), ProjectsError> {
        self.modify(|projects| {
            let e = Self::entry(projects, dir);
            let changed = e.get("trustAsked") != Some(&Value::Bool(true));
            e.insert("trustAsked".into(), Value::Bool(true));
            changed
        })
    }

    /// The rules "always allow" saved for `dir`, in the order saved.
    pub fn always_allowed(&self, dir: &Path) -> Vec<String> {
        self.entries()
            .get(&key(dir))
            .and_then(|e| e.get("alwaysAllowed"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Records rules an "always allow" answer saved for `dir`.
    pub fn record_always_allowed(&self, dir: &Path, rules: &[String]) -> Result<(), ProjectsError> {
        self.modify(|projects| {
            let e = Self::entry(projects, dir);
            let list = e
                .entry("alwaysAllowed")
                .or_insert_with(|| Value::Array(Vec::new()));
            if !list.is_array() {
                *list = Value::Array(Vec::new());
            }
            let list = list.as_array_mut().expect("just ensured an array");
            let mut changed = false;
            for rule in rules {
                if !list.iter().any(|v| v.as_str() == Some(rule)) {
                    list.push(Value::String(rule.clone()));
                    changed = true;
                }
            }
            changed
        })
    }

    /// Forgets that `rule` was saved by "always allow" for `dir`.
    pub fn forget_always_allowed(&self, dir: &Path, rule: &str) -> Result<(), ProjectsError> {
        self.modify(|projects| {
            let Some(Value::Object(e)) = projects.get_mut(&key(dir)) else {
                return false;
            };
            let Some(Value::Array(list)) = e.get_mut("alwaysAllowed") else {
                return false;
            };
            let before = list.len();
            list.retain(|v| v.as_str() != Some(rule));
            list.len() != before
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_is_most_recent_first_and_marks_missing_folders() {
        let data = tempfile::tempdir().unwrap();
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let store = ProjectStore::open(data.path());
        store.touch(a.path()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        store.touch(b.path()).unwrap();
        let list = store.recent();
        assert_eq!(list.len(), 2);
        assert_eq!(Path::new(&list[0].path), b.path().canonicalize().unwrap());
        assert!(list.iter().all(|r| r.exists));

        // A scratch folder in the temp folder that is gone leaves the list…
        drop(a);
        assert_eq!(store.recent().len(), 1);
        // …any other missing folder stays, marked missing, until forgotten.
        let elsewhere = Path::new("/decode-test-nowhere/proj");
        store.touch(elsewhere).unwrap();
        let list = store.recent();
        let missing = list
            .iter()
            .find(|r| r.path.ends_with("nowhere/proj"))
            .unwrap();
        assert!(!missing.exists);
        assert!(store.forget(elsewhere).unwrap());
        assert_eq!(store.recent().len(), 1);
    }

    #[test]
    fn always_allowed_rules_are_recorded_and_forgotten() {
        let data = tempfile::tempdir().unwrap();
        let p = tempfile::tempdir().unwrap();
        let store = ProjectStore::open(data.path());
        store
            .record_always_allowed(p.path(), &["bash(make)".into(), "read".into()])
            .unwrap();
        store
            .record_always_allowed(p.path(), &["bash(make)".into()])
            .unwrap();
        assert_eq!(store.always_allowed(p.path()), vec!["bash(make)", "read"]);
        store.forget_always_allowed(p.path(), "bash(make)").unwrap();
        assert_eq!(store.always_allowed(p.path()), vec!["read"]);
        assert!(!store.trust_asked(p.path()));
        store.mark_trust_asked(p.path()).unwrap();
        assert!(store.trust_asked(p.path()));
    }

    #[test]
    fn a_malformed_store_is_never_overwritten() {
        let data = tempfile::tempdir().unwrap();
        let p = tempfile::tempdir().unwrap();
        let path = data.path().join(PROJECTS_FILE);
        std::fs::write(&path, "{not json").unwrap();
        let store = ProjectStore::open(data.path());
        assert!(store.recent().is_empty());
        let err = store.touch(p.path()).unwrap_err();
        assert!(err.to_string().contains("malformed"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }

    #[test]
    fn other_keys_of_the_file_are_kept() {
        let data = tempfile::tempdir().unwrap();
        let p = tempfile::tempdir().unwrap();
        let path = data.path().join(PROJECTS_FILE);
        std::fs::write(&path, r#"{"future": [1], "projects": {}}"#).unwrap();
        ProjectStore::open(data.path()).touch(p.path()).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["future"], serde_json::json!([1]));
    }
}
