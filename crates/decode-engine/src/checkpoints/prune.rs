//! Pruning: turns older than 30 days ([`super::KEEP_FOR`]) are forgotten, with the
//! stored contents nothing else holds (the index's and the remaining turns' are
//! kept); the store of a project unused that long is removed whole. It runs at most
//! once a day per store, when a turn first records, under the store's lock.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{now_ms, stores_dir, CheckpointError, Checkpoints};

/// What a prune removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    pub turns: usize,
    pub objects: usize,
    /// Stores of other projects removed whole.
    pub stores: usize,
}

/// How often a store is pruned.
const EVERY: Duration = Duration::from_secs(24 * 3600);

impl Checkpoints {
    /// Forgets turns last changed before `now - keep` and the contents only they
    /// held (taking the store's lock).
    pub fn prune(&self, keep: Duration) -> Result<PruneReport, CheckpointError> {
        let _lock = self.lock_wait()?;
        let cutoff = now_ms().saturating_sub(keep.as_millis() as u64);
        let mut report = PruneReport::default();
        let mut live = HashSet::new();
        for mut log in self.logs.all() {
            let before = log.turns.len();
            log.turns.retain(|t| t.updated >= cutoff);
            report.turns += before - log.turns.len();
            let err =
                || CheckpointError::io(format!("the checkpoint log of session {}", log.session));
            if log.turns.is_empty() {
                self.logs.remove(&log.session).map_err(err())?;
                continue;
            }
            if log.turns.len() != before {
                self.logs.save(&log).map_err(err())?;
            }
            for t in &log.turns {
                live.extend(t.oids());
            }
        }
        let index = self.take_index();
        live.extend(index.oids());
        self.put_index(index, false)?;
        for (oid, path) in self.objects.all() {
            if !live.contains(&oid) && std::fs::remove_file(&path).is_ok() {
                report.objects += 1;
            }
        }
        let _ = std::fs::write(self.dir.join("pruned"), now_ms().to_string());
        if report.turns > 0 || report.objects > 0 {
            tracing::info!(turns = report.turns, objects = report.objects, store = %self.dir.display(), "checkpoints pruned");
        }
        Ok(report)
    }

    /// Whether this store was pruned within the last day.
    fn pruned_lately(&self) -> bool {
        std::fs::metadata(self.dir.join("pruned"))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age < EVERY)
    }

    /// Prunes this store (and removes the stores of projects unused for
    /// [`super::KEEP_FOR`]) unless that was done within the last day.
    pub fn prune_if_due(&self, data_dir: &Path) {
        if self.pruned_lately() {
            return;
        }
        match self.prune(super::KEEP_FOR) {
            Ok(_) => {}
            Err(e) => tracing::warn!("pruning checkpoints failed: {e}"),
        }
        let removed = prune_unused_stores(data_dir, super::KEEP_FOR, Some(&self.dir));
        if removed > 0 {
            tracing::info!(
                stores = removed,
                "checkpoint stores of unused projects removed"
            );
        }
    }
}

/// The last time anything in a store changed: its index, its logs, its prune stamp.
fn last_used(store: &Path) -> Option<SystemTime> {
    let mut times = Vec::new();
    for p in [
        store.join("index"),
        store.join("turns"),
        store.join("project"),
    ] {
        if let Ok(t) = std::fs::metadata(&p).and_then(|m| m.modified()) {
            times.push(t);
        }
    }
    if let Ok(entries) = std::fs::read_dir(store.join("turns")) {
        for e in entries.flatten() {
            if let Ok(t) = e.metadata().and_then(|m| m.modified()) {
                times.push(t);
            }
        }
    }
    times.into_iter().max()
}

/// Removes the checkpoint stores in `data_dir` unused for `keep` (never `except`,
/// never one whose lock another process holds). Returns how many went.
pub fn prune_unused_stores(data_dir: &Path, keep: Duration, except: Option<&Path>) -> usize {
    let Ok(entries) = std::fs::read_dir(stores_dir(data_dir)) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let store = e.path();
        if Some(store.as_path()) == except || !store.join("objects").is_dir() {
            continue;
        }
        let old = last_used(&store)
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > keep);
        if !old {
            continue;
        }
        let Ok(lock) = std::fs::File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(store.join("lock"))
        else {
            continue;
        };
        if lock.try_lock().is_err() {
            continue;
        }
        match std::fs::remove_dir_all(&store) {
            Ok(()) => removed += 1,
            Err(err) => {
                tracing::warn!(store = %store.display(), "cannot remove an unused checkpoint store: {err}")
            }
        }
    }
    removed
}
