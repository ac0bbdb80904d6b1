//! The fifth outside attack and the peer agents' suites (issue 28, "Gate round
//! 3"): fifteen ways the gate was misled, fixed as classes (docs/permissions.md,
//! "Fail closed"). Each test holds the named spellings and others of the same
//! class; the guards keep ordinary commands allowed.

use crate::common;

use common::{run, Proj};

/// F14: budgets count work, never time — the same command gets the same
/// verdict on a busy machine.
#[test]
fn f14_verdicts_do_not_depend_on_load() {
    let p = Proj::new();
    let g = p.gate(&[], &[], &[]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hogs: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
                x
            })
        })
        .collect();
    let cases: Vec<_> = (0..40)
        .map(|_| ("auto", "bash", "bash -lc 'git status'", "allow"))
        .collect();
    run(&p, &g, &cases);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in hogs {
        let _ = h.join();
    }
}
