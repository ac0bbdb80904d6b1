//! Which project servers the person approved (docs/mcp.md): recorded in Decode's
//! data folder (`mcp-approvals.json`), by the project's canonical path and the
//! server's name, bound to the server's whole entry ([`ServerConfig::fingerprint`]).
//! A changed command line, argument, environment variable, URL or header is a new
//! server: it asks again. The person's own servers need no approval.
//!
//! The file is Decode's own (the sandbox keeps the data folder out of every command's
//! reach); a malformed one approves nothing and is reported, and is never overwritten
//! while it cannot be read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::config::ServerConfig;

/// The file name in the data folder.
pub const FILE: &str = "mcp-approvals.json";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    projects: BTreeMap<String, BTreeMap<String, Record>>,
}

/// What the person said about one server of one project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The entry's fingerprint when the person answered.
    pub fingerprint: String,
    /// The command line they saw.
    pub command_line: String,
    /// Approved (`true`) or refused (`false`: the server stays off, and is not asked
    /// about again until its entry changes).
    pub approved: bool,
}

/// Where a project server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Approved with exactly this entry.
    Approved,
    /// Refused with exactly this entry.
    Refused,
    /// Never answered, or answered for another entry (a changed command line).
    Unanswered { changed: bool },
}

/// The approvals in one data folder.
#[derive(Debug, Clone)]
pub struct Approvals {
    path: PathBuf,
}

/// Why the record could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("{path}: {message} (the file was left as it is)")]
    Malformed { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn key(project_root: &Path) -> String {
    std::fs::canonicalize(project_root)
        .unwrap_or_else(|_| project_root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

impl Approvals {
    /// The approvals kept in `data_dir`.
    pub fn open(data_dir: &Path) -> Approvals {
        Approvals {
            path: data_dir.join(FILE),
        }
    }

    /// The record's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<File, ApprovalError> {
        let malformed = |message: String| ApprovalError::Malformed {
            path: self.path.clone(),
            message,
        };
        match decode_core::mcp::read_json_file(&self.path, false) {
            Ok(None) => Ok(File::default()),
            Ok(Some(v)) => serde_json::from_value(v).map_err(|e| malformed(e.to_string())),
            Err(w) => Err(malformed(w.message)),
        }
    }

    /// Where `server` of `project_root` stands. A record that cannot be read approves
    /// nothing.
    pub fn status(&self, project_root: &Path, server: &ServerConfig) -> Approval {
        let file = match self.read() {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(error = %e, "MCP approvals cannot be read: no project server is approved");
                return Approval::Unanswered { changed: false };
            }
        };
        match file
            .projects
            .get(&key(project_root))
            .and_then(|p| p.get(&server.name))
        {
            Some(r) if r.fingerprint == server.fingerprint() => {
                if r.approved {
                    Approval::Approved
                } else {
                    Approval::Refused
                }
            }
            Some(_) => Approval::Unanswered { changed: true },
            None => Approval::Unanswered { changed: false },
        }
    }

    /// Records the person's answer for `server` as configured now.
    pub fn record(
        &self,
        project_root: &Path,
        server: &ServerConfig,
        approved: bool,
    ) -> Result<(), ApprovalError> {
        let io = |source| ApprovalError::Io {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let _lock =
            decode_core::fsutil::FileLock::acquire(&decode_core::fsutil::lock_path_for(&self.path))
                .map_err(io)?;
        let mut file = self.read()?;
        file.projects.entry(key(project_root)).or_default().insert(
            server.name.clone(),
            Record {
                fingerprint: server.fingerprint(),
                command_line: server.command_line(),
                approved,
            },
        );
        let text = serde_json::to_string_pretty(&file).unwrap_or_default();
        decode_core::fsutil::atomic_write(&self.path, text.as_bytes()).map_err(io)
    }

    /// Forgets the answer for a server (after `decode mcp remove`).
    pub fn forget(&self, project_root: &Path, name: &str) -> Result<(), ApprovalError> {
        let io = |source| ApprovalError::Io {
            path: self.path.clone(),
            source,
        };
        if !self.path.exists() {
            return Ok(());
        }
        let _lock =
            decode_core::fsutil::FileLock::acquire(&decode_core::fsutil::lock_path_for(&self.path))
                .map_err(io)?;
        let mut file = self.read()?;
        if let Some(p) = file.projects.get_mut(&key(project_root)) {
            p.remove(name);
        }
        let text = serde_json::to_string_pretty(&file).unwrap_or_default();
        decode_core::fsutil::atomic_write(&self.path, text.as_bytes()).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::{parse_entry, Scope};
    use super::*;

    fn server(args: &[&str]) -> ServerConfig {
        parse_entry(
            "git",
            &serde_json::json!({"command": "uvx", "args": args}),
            Scope::Project {
                file: PathBuf::from("/p/.mcp.json"),
            },
        )
        .unwrap()
    }

    #[test]
    fn an_approval_holds_for_exactly_that_command_line() {
        let data = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let a = Approvals::open(data.path());
        let s = server(&["mcp-server-git"]);
        assert_eq!(
            a.status(proj.path(), &s),
            Approval::Unanswered { changed: false }
        );
        a.record(proj.path(), &s, true).unwrap();
        assert_eq!(a.status(proj.path(), &s), Approval::Approved);
        let changed = server(&["mcp-server-git", "--evil"]);
        assert_eq!(
            a.status(proj.path(), &changed),
            Approval::Unanswered { changed: true }
        );
        let other = tempfile::tempdir().unwrap();
        assert_eq!(
            a.status(other.path(), &s),
            Approval::Unanswered { changed: false }
        );
        a.record(proj.path(), &changed, false).unwrap();
        assert_eq!(a.status(proj.path(), &changed), Approval::Refused);
        a.forget(proj.path(), "git").unwrap();
        assert_eq!(
            a.status(proj.path(), &changed),
            Approval::Unanswered { changed: false }
        );
    }

    #[test]
    fn a_malformed_record_approves_nothing_and_is_not_overwritten() {
        let data = tempfile::tempdir().unwrap();
        let proj = tempfile::tempdir().unwrap();
        let a = Approvals::open(data.path());
        std::fs::write(a.path(), "{not json").unwrap();
        let s = server(&["x"]);
        assert_eq!(
            a.status(proj.path(), &s),
            Approval::Unanswered { changed: false }
        );
        assert!(a.record(proj.path(), &s, true).is_err());
        assert_eq!(std::fs::read_to_string(a.path()).unwrap(), "{not json");
    }
}
