//! What one judgement learns of the file system, kept while it runs: a command's
//! folder is asked about by several stages, and each would walk the file system
//! again (and might, were it changing, get another answer). The next judgement
//! reads the file system again.

use std::any::Any;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// Paths resolved and labelled during the judgement running on this thread. A
/// handful per judgement: found by their bytes, without hashing.
struct Memo {
    root: PathBuf,
    resolved: Vec<(PathBuf, PathBuf)>,
    labels: Vec<(PathBuf, Option<&'static str>)>,
    /// Other answers about a path, each of the type its stage keeps (what `read`
    /// would say of it: the read-only proof asks about a command's folder for
    /// `cd` and again for what runs there).
    answers: Vec<(PathBuf, Box<dyn Any>)>,
}

thread_local! {
    static MEMO: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// While it lives, the thread's judgement (for the project at `root`) remembers
/// what it learns; the outermost judgement owns it, one nested inside shares it.
pub(super) struct OneJudgement {
    owner: bool,
}

impl OneJudgement {
    pub(super) fn begin(root: &Path) -> OneJudgement {
        MEMO.with(|memo| {
            let mut memo = memo.borrow_mut();
            if memo.is_some() {
                return OneJudgement { owner: false };
            }
            *memo = Some(Memo {
                root: root.to_path_buf(),
                resolved: Vec::new(),
                labels: Vec::new(),
                answers: Vec::new(),
            });
            OneJudgement { owner: true }
        })
    }
}

impl Drop for OneJudgement {
    fn drop(&mut self) {
        if self.owner {
            MEMO.with(|memo| *memo.borrow_mut() = None);
        }
    }
}

/// `p` resolved through links, by `resolve` the first time in a judgement.
pub(super) fn resolved(root: &Path, p: &Path, resolve: impl FnOnce() -> PathBuf) -> PathBuf {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let Some(m) = memo.as_mut().filter(|m| m.root == root) else {
            return resolve();
        };
        if let Some((_, r)) = m
            .resolved
            .iter()
            .find(|(q, _)| q.as_os_str() == p.as_os_str())
        {
            return r.clone();
        }
        let r = resolve();
        m.resolved.push((p.to_path_buf(), r.clone()));
        r
    })
}

/// What `p` is protected as, by `label` the first time in a judgement.
pub(super) fn label(
    root: &Path,
    p: &Path,
    label: impl FnOnce() -> Option<&'static str>,
) -> Option<&'static str> {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let Some(m) = memo.as_mut().filter(|m| m.root == root) else {
            return label();
        };
        if let Some((_, l)) = m
            .labels
            .iter()
            .find(|(q, _)| q.as_os_str() == p.as_os_str())
        {
            return *l;
        }
        let l = label();
        m.labels.push((p.to_path_buf(), l));
        l
    })
}

/// An answer of type `T` about `p`, by `judge` the first time in a judgement.
pub(super) fn answer<T: Clone + 'static>(root: &Path, p: &Path, judge: impl FnOnce() -> T) -> T {
    let known = MEMO.with(|memo| {
        let memo = memo.borrow();
        let m = memo.as_ref().filter(|m| m.root == root)?;
        m.answers
            .iter()
            .filter(|(q, _)| q.as_os_str() == p.as_os_str())
            .find_map(|(_, a)| a.downcast_ref::<T>())
            .cloned()
    });
    if let Some(a) = known {
        return a;
    }
    // Judged with the memo free: the judgement uses it too.
    let a = judge();
    MEMO.with(|memo| {
        if let Some(m) = memo.borrow_mut().as_mut().filter(|m| m.root == root) {
            m.answers.push((p.to_path_buf(), Box::new(a.clone())));
        }
    });
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_judged_once_per_judgement_and_kept_by_its_type() {
        let root = Path::new("/p");
        let p = Path::new("/p/src");
        let asked = std::cell::Cell::new(0);
        let judge = || {
            asked.set(asked.get() + 1);
            7u8
        };
        {
            let _one = OneJudgement::begin(root);
            assert_eq!(answer(root, p, judge), 7);
            assert_eq!(answer(root, p, judge), 7);
            assert_eq!(asked.get(), 1);
            // Another type of answer about the same path is its own.
            assert_eq!(answer(root, p, || "x".to_string()), "x");
            assert_eq!(answer(root, p, judge), 7);
            assert_eq!(asked.get(), 1);
        }
        let _next = OneJudgement::begin(root);
        answer(root, p, judge);
        assert_eq!(asked.get(), 2, "the next judgement asks again");
    }

    #[test]
    fn a_judgement_asks_once_and_the_next_asks_again() {
        let root = Path::new("/p");
        let p = Path::new("/p/a");
        let asked = std::cell::Cell::new(0);
        let resolve = || {
            asked.set(asked.get() + 1);
            PathBuf::from("/real/a")
        };
        {
            let _one = OneJudgement::begin(root);
            let _nested = OneJudgement::begin(root);
            assert_eq!(resolved(root, p, resolve), Path::new("/real/a"));
            assert_eq!(resolved(root, p, resolve), Path::new("/real/a"));
            assert_eq!(asked.get(), 1);
            // Another project's gate, inside this judgement, does not share it.
            resolved(Path::new("/q"), p, resolve);
            assert_eq!(asked.get(), 2);
        }
        resolved(root, p, resolve);
        let _next = OneJudgement::begin(root);
        resolved(root, p, resolve);
        assert_eq!(
            asked.get(),
            4,
            "no judgement, then a new one: asked each time"
        );
    }
}
