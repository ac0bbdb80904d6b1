//! The store's object database: git's loose objects (zlib-compressed, named by the
//! SHA-1 of their contents), written and read with gitoxide's `gix-odb`. A content
//! is stored once however many checkpoints hold it; `git cat-file` reads it.

use std::io;
use std::path::{Path, PathBuf};

use gix_object::Write as _;

use super::state::Oid;

/// The loose object database of one checkpoint store.
pub(crate) struct Objects {
    store: gix_odb::loose::Store,
}

fn to_gix(oid: &Oid) -> gix_hash::ObjectId {
    gix_hash::ObjectId::Sha1(oid.0)
}

fn from_gix(id: &gix_hash::oid) -> Option<Oid> {
    let bytes: [u8; 20] = id.as_bytes().try_into().ok()?;
    Some(Oid(bytes))
}

fn odb_error(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

impl Objects {
    /// The database in `dir` (a git `objects` folder; created when missing).
    pub(crate) fn open(dir: &Path) -> io::Result<Objects> {
        std::fs::create_dir_all(dir)?;
        Ok(Objects {
            store: gix_odb::loose::Store::at(dir, gix_hash::Kind::Sha1),
        })
    }

    /// The id `bytes` have as a blob.
    pub(crate) fn id_of(bytes: &[u8]) -> io::Result<Oid> {
        let id = gix_object::compute_hash(gix_hash::Kind::Sha1, gix_object::Kind::Blob, bytes)
            .map_err(odb_error)?;
        from_gix(&id).ok_or_else(|| odb_error("not a SHA-1 id"))
    }

    /// Stores `bytes` as a blob (once: an id already there is not written again).
    pub(crate) fn put(&self, bytes: &[u8]) -> io::Result<Oid> {
        let oid = Objects::id_of(bytes)?;
        let id = to_gix(&oid);
        if !self.store.contains(&id) {
            self.store
                .write_buf_with_known_id(gix_object::Kind::Blob, bytes, id)
                .map_err(odb_error)?;
        }
        Ok(oid)
    }

    /// The contents of a blob, or an error when it is missing or damaged.
    pub(crate) fn get(&self, oid: &Oid) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        match self.store.try_find(&to_gix(oid), &mut buf) {
            Ok(Some(data)) if data.kind == gix_object::Kind::Blob => {
                let bytes = data.data.to_vec();
                // A damaged object must not be restored as a file's contents.
                if Objects::id_of(&bytes)? != *oid {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("the stored copy {} is damaged", oid.hex()),
                    ));
                }
                Ok(bytes)
            }
            Ok(Some(_)) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a blob", oid.hex()),
            )),
            Ok(None) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("the stored copy {} is missing (pruned?)", oid.hex()),
            )),
            Err(e) => Err(odb_error(e)),
        }
    }

    /// Every object id in the database with its file.
    pub(crate) fn all(&self) -> Vec<(Oid, PathBuf)> {
        self.store
            .iter()
            .filter_map(Result::ok)
            .filter_map(|id| {
                let path = self.store.object_path(&id);
                from_gix(&id).map(|o| (o, path))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_is_stored_once_and_read_back() {
        let t = tempfile::tempdir().unwrap();
        let o = Objects::open(&t.path().join("objects")).unwrap();
        let a = o.put(b"hello\n").unwrap();
        // git's id of the blob "hello\n".
        assert_eq!(a.hex(), "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(o.put(b"hello\n").unwrap(), a);
        assert_eq!(o.get(&a).unwrap(), b"hello\n");
        assert_eq!(o.all().len(), 1);
        assert!(o.get(&Oid([1; 20])).is_err());
    }
}
