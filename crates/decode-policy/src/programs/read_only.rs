//! Whether a seen-through command only reads (docs/permissions.md,
//! "Read-only commands"): its entry, or the sub-command its words select,
//! has the effect [`Effect::ReadOnly`], and none of its words is one with
//! which it writes or runs something ([`Reads`]). Anything the data do not
//! prove is not read-only.

use super::registry;
use super::schema::{Effect, Node, Reads, Sub};
use crate::options;

/// What a read-only command reads besides the paths it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadOnlyUse {
    /// With no operand naming a path it reads the folder it runs in.
    pub here: bool,
}

/// Whether `core` (the program by its base name, then its words, none only
/// known when it runs) only reads; `None` when the data cannot prove it.
pub(crate) fn read_only(core: &[String]) -> Option<ReadOnlyUse> {
    let (name, args) = core.split_first()?;
    let p = registry::find(name)?;
    if p.subs.is_empty() || p.node.effect == Effect::ReadOnly {
        return node_reads(&p.node, args).then_some(ReadOnlyUse {
            here: p.node.reads.here,
        });
    }
    // Every place a sub-command could stand must select a read-only one,
    // and the words before it must keep the program read-only.
    let cands = options::candidates(args, &p.node.options);
    if cands.is_empty() {
        return None;
    }
    let mut here = false;
    for k in cands {
        let sub = find_sub(p.subs, &args[k])?;
        if !words_read(&p.node.reads, &args[..k]) || !node_reads(&sub.node, &args[k + 1..]) {
            return None;
        }
        here |= sub.node.reads.here;
    }
    Some(ReadOnlyUse { here })
}

fn find_sub<'s>(subs: &'s [Sub], word: &str) -> Option<&'s Sub> {
    subs.iter().find(|s| s.names.contains(&word))
}

/// A node with these words after it only reads.
fn node_reads(node: &Node, args: &[String]) -> bool {
    if node.effect != Effect::ReadOnly || !words_read(&node.reads, args) {
        return false;
    }
    let r = &node.reads;
    if let Some(max) = r.max_operands {
        if options::operands(args, &node.options).len() > max {
            return false;
        }
    }
    r.by.is_none_or(|f| f(args))
}

/// None of `args` is an option of `r.unless`, and each is in `r.only`.
fn words_read(r: &Reads, args: &[String]) -> bool {
    if let Some(only) = r.only {
        if args.iter().any(|a| !only.contains(&a.as_str())) {
            return false;
        }
    }
    !args
        .iter()
        .any(|a| r.unless.iter().any(|opt| names_option(a, opt)))
}

/// Whether the word `a` gives the option `opt` (see [`Reads::unless`]):
/// `--output`, `--output=x` and `--out` give `--output`; `-uo` gives `-o`;
/// `-fprint0` gives `-fprint`.
pub(super) fn names_option(a: &str, opt: &str) -> bool {
    if let Some(long) = opt.strip_prefix("--") {
        let Some(body) = a.strip_prefix("--") else {
            return false;
        };
        let given = body.split('=').next().unwrap_or(body);
        return given == long || (given.len() >= 2 && long.starts_with(given));
    }
    let Some(letters) = opt.strip_prefix('-') else {
        return a == opt;
    };
    if a.starts_with("--") || !a.starts_with('-') {
        return false;
    }
    if letters.chars().count() == 1 {
        // A short letter anywhere in a cluster (a value glued after another
        // letter may hold it too: counted, failing closed).
        return a[1..].contains(letters);
    }
    a.starts_with(opt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_are_found_abbreviated_glued_and_in_clusters() {
        assert!(names_option("--output", "--output"));
        assert!(names_option("--output=x", "--output"));
        assert!(names_option("--outp", "--output"));
        assert!(!names_option("--output-indicator-new=x", "--output"));
        assert!(names_option("-uo", "-o"));
        assert!(names_option("-ox", "-o"));
        assert!(!names_option("--o", "-o"));
        assert!(names_option("-fprint0", "-fprint"));
        assert!(names_option("-exec", "-exec"));
        assert!(!names_option("exec", "-exec"));
    }

    #[test]
    fn reads_the_data() {
        for ok in [
            "cat a b",
            "ls -la",
            "sort -u x",
            "git status",
            "git log -p",
            "rg -n x src",
        ] {
            assert!(read_only(&argv(ok)).is_some(), "{ok}");
        }
        for no in [
            "sort -o x y",
            "rg --pre ./x y",
            "find . -delete",
            "git -c core.pager=x log",
            "git push",
            "git diff --output=x",
            "git branch new",
            "uniq a b",
            "tee x",
            "curl x",
        ] {
            assert!(read_only(&argv(no)).is_none(), "{no}");
        }
    }
}
