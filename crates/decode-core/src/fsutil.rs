//! Small filesystem helpers shared by the settings and trust stores: an atomic
//! replace-by-rename write and an exclusive cross-process lock on a sidecar file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Reads a regular file of at most `max` bytes: opened without blocking (a FIFO
/// or a device put in its place neither hangs the reader nor is read), and an
/// error — never a silent cut — when it is something else or bigger.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bigger than {max} bytes"),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bigger than {max} bytes"),
        ));
    }
    Ok(bytes)
}

/// Writes `contents` to `path` atomically: a temporary file in the same folder is
/// written, flushed to disk, given the permissions of the file it replaces (when there
/// is one), renamed over `path`, and the folder is synced so the rename is durable.
///
/// Readers never see a half-written file: they see the old contents or the new ones.
/// On any error the temporary file is removed and `path` is left as it was.
pub fn atomic_write(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = parent_dir(path);
    let file_name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name"))?;
    let existing_permissions = match fs::metadata(path) {
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };

    let tmp = temp_path(&dir, file_name);
    let result = (|| {
        let mut file = create_new(&tmp)?;
        file.write_all(contents)?;
        if let Some(perms) = &existing_permissions {
            file.set_permissions(perms.clone())?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)?;
        sync_dir(&dir)
    })();
    if result.is_err() {
        // Best effort: the temp file may not exist (create failed) or already be renamed.
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// An exclusive lock held on a sidecar lock file until dropped.
///
/// The lock is taken on a separate file (`<name>.lock`) rather than on the data file
/// itself, because [`atomic_write`] swaps the data file's inode on every write.
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    /// Blocks until the exclusive lock on `lock_path` is held (creating the file if
    /// needed).
    pub fn acquire(lock_path: &Path) -> io::Result<FileLock> {
        use std::os::unix::fs::OpenOptionsExt;
        // Never through a link: a dangling one would create its target anywhere.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(lock_path)?;
        file.lock()?;
        Ok(FileLock {
            file,
            path: lock_path.to_path_buf(),
        })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        if let Err(e) = self.file.unlock() {
            tracing::warn!(path = %self.path.display(), error = %e, "could not release a file lock");
        }
    }
}

/// The sidecar lock path for a data file: `settings.json` → `settings.json.lock`.
pub fn lock_path_for(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".lock");
    parent_dir(path).join(name)
}

/// The folder holding `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn temp_path(dir: &Path, file_name: &std::ffi::OsStr) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut name = std::ffi::OsString::from(".");
    name.push(file_name);
    name.push(format!(".tmp.{}.{n}.{nanos}", std::process::id()));
    dir.join(name)
}

#[cfg(unix)]
fn create_new(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // 0o666 filtered by the umask, like any newly created file.
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(path)
}

#[cfg(not(unix))]
fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_new_file_and_replaces_existing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        atomic_write(&p, b"one").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"one");
        atomic_write(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        // No temp files left behind.
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions_of_replaced_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        fs::write(&p, b"x").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        atomic_write(&p, b"y").unwrap();
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn missing_folder_is_an_error_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("nope").join("a.json");
        assert!(atomic_write(&p, b"x").is_err());
        assert!(!p.exists());
    }

    #[test]
    fn lock_path_is_a_sidecar() {
        assert_eq!(
            lock_path_for(Path::new("/x/.decode/settings.json")),
            PathBuf::from("/x/.decode/settings.json.lock")
        );
        assert_eq!(
            lock_path_for(Path::new("t.json")),
            PathBuf::from("./t.json.lock")
        );
    }

    #[test]
    fn lock_is_exclusive_across_handles() {
        let dir = tempfile::tempdir().unwrap();
        let lp = dir.path().join("f.lock");
        let guard = FileLock::acquire(&lp).unwrap();
        let other = OpenOptions::new().write(true).open(&lp).unwrap();
        assert!(other.try_lock().is_err());
        drop(guard);
        assert!(other.try_lock().is_ok());
    }
}
