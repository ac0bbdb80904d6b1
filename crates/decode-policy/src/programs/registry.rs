//! Every program entry, by name (docs/architecture.md, "Where to add a
//! program"): the families' tables joined, looked up once per word.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use super::schema::Program;
use super::{
    archives, awk, build, cloud, coreutils, forges, launchers, net, packages, privilege, shells,
    vcs, viewers, wrappers,
};

/// Every family's entries.
pub(crate) const FAMILIES: &[&[Program]] = &[
    wrappers::PROGRAMS,
    privilege::PROGRAMS,
    packages::PROGRAMS,
    build::PROGRAMS,
    vcs::PROGRAMS,
    forges::PROGRAMS,
    archives::PROGRAMS,
    coreutils::PROGRAMS,
    awk::PROGRAMS,
    net::PROGRAMS,
    cloud::PROGRAMS,
    shells::PROGRAMS,
    launchers::PROGRAMS,
    viewers::PROGRAMS,
];

/// Every entry.
pub(crate) fn all() -> impl Iterator<Item = &'static Program> {
    FAMILIES.iter().flat_map(|f| f.iter())
}

/// FNV-1a: program names are short and fixed (no one chooses them to collide),
/// and every word of every command is looked up: the default hasher costs more
/// than the lookup.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

struct Index {
    exact: HashMap<&'static str, &'static Program, BuildHasherDefault<Fnv>>,
    /// Names ending in `*`: the prefix and the entry.
    prefixes: Vec<(&'static str, &'static Program)>,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut exact = HashMap::default();
        let mut prefixes = Vec::new();
        for p in all() {
            for n in p.names {
                match n.strip_suffix('*') {
                    Some(prefix) => prefixes.push((prefix, p)),
                    None => {
                        exact.entry(*n).or_insert(p);
                    }
                }
            }
        }
        Index { exact, prefixes }
    })
}

/// The entry for a program run by this (base) name.
pub(crate) fn find(name: &str) -> Option<&'static Program> {
    let ix = index();
    ix.exact.get(name).copied().or_else(|| {
        ix.prefixes
            .iter()
            .find(|(p, _)| name.starts_with(p))
            .map(|&(_, e)| e)
    })
}
