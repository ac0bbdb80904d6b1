//! Where a simple command writes (docs/permissions.md, "Fail closed"):
//! redirect targets, and what each program's entry says it writes. A target
//! the gate cannot place — only known when the command runs, relative to a
//! folder only known then, or through a link the same command made — counts
//! as naming a protected file.

use super::registry;
use super::schema::{Argv, Copy, Node, Writes};
use crate::options;
use crate::shell::model::{Redir, Target};

/// Where the command `core` (program first, seen through) writes, and its
/// write redirections. `dynamic[k]`: `core[k]` is only known when it runs.
pub(crate) fn targets(core: &[String], dynamic: &[bool], redirs: &[Redir]) -> Vec<Target> {
    let mut out = Vec::new();
    for r in redirs {
        if let (true, Some(p)) = (r.write, &r.path) {
            out.push(Target::new(p, r.dynamic));
        }
    }
    let Some(p) = core.first().and_then(|n| registry::find(n)) else {
        return out;
    };
    let v = Argv {
        words: core,
        dynamic,
    };
    node_writes(&p.node, &v, &mut out);
    // What a runner runs writes too (`python -m pip install --user x`).
    if let Some(inner) = super::packages::runner_target(core) {
        let k = core.len() - inner.len();
        if k > 0 {
            out.extend(targets(&inner, dynamic.get(k..).unwrap_or(&[]), &[]));
        }
    }
    out
}

/// What one node's `writes` (and its hook) say.
fn node_writes(node: &Node, v: &Argv<'_>, out: &mut Vec<Target>) {
    let args = v.args();
    for w in node.writes {
        match *w {
            Writes::Operands => {
                for k in options::operands(args, &node.options) {
                    out.push(Target::new(&args[k], v.dyn_arg(k)));
                }
            }
            Writes::OptionValue(opts) => {
                for o in options::values(args, &node.options, opts) {
                    out.push(Target::new(&o.text, v.dyn_arg(o.at)));
                }
            }
            Writes::Prefixed(prefixes) => {
                for (k, a) in args.iter().enumerate() {
                    for p in prefixes {
                        if let Some(x) = a.strip_prefix(p).filter(|x| !x.is_empty()) {
                            out.push(Target::new(x, v.dyn_arg(k)));
                        }
                    }
                }
            }
            Writes::Into {
                options: opts,
                flags,
            } => {
                let mut into = |raw: &str, dynamic: bool| {
                    let mut t = Target::new(raw, dynamic);
                    t.contents = true;
                    out.push(t);
                };
                for o in options::values(args, &node.options, opts) {
                    into(&o.text, v.dyn_arg(o.at));
                }
                for &(flag, folder) in flags {
                    if options::flagged(args, &node.options, &[flag]) {
                        into(folder, false);
                    }
                }
            }
            Writes::Copy {
                kind,
                target_dir,
                no_target_dir,
            } => copies(node, v, kind, target_dir, no_target_dir, out),
        }
    }
    if let Some(hook) = node.hooks.writes {
        hook(v, out);
    }
}

/// `cp`, `mv`, `install`, `ln`, `rsync`: the destination (the last operand
/// or the target-folder option), each source landing in it, backups named
/// by a suffix, and for `ln` the links' targets.
fn copies(
    node: &Node,
    v: &Argv<'_>,
    kind: Copy,
    target_dir: &[&str],
    no_target_dir: &[&str],
    out: &mut Vec<Target>,
) {
    let (args, spec) = (v.args(), &node.options);
    let pos = options::operands(args, spec);
    let given_dir = options::values(args, spec, target_dir).into_iter().next();
    let mut dir = None;
    let mut sources: Vec<usize> = pos.clone();
    if given_dir.is_none() {
        if kind == Copy::Install && options::flagged(args, spec, &["-d", "--directory"]) {
            for &k in &pos {
                out.push(Target::new(&args[k], v.dyn_arg(k)));
            }
            return;
        }
        if pos.len() >= 2 || (kind != Copy::Link && !pos.is_empty()) {
            dir = sources.pop();
        }
    }
    let dests: Vec<Target> = match (dir, given_dir) {
        (Some(k), _) => vec![Target::new(&args[k], v.dyn_arg(k))],
        (None, Some(o)) => vec![Target::new(&o.text, v.dyn_arg(o.at))],
        // `ln -s TARGET`: the link is made in the current folder.
        (None, None) if kind == Copy::Link => vec![Target::new(".", false)],
        (None, None) => Vec::new(),
    };
    // `cp -T`, `mv -T`: the source's contents land in the target; so do
    // `x/.` and, for rsync, `x/`.
    let whole = !no_target_dir.is_empty() && options::flagged(args, spec, no_target_dir);
    out.extend(backups(v, spec, &dests, &sources));
    for d in dests {
        if kind == Copy::Sync && d.raw.contains(':') {
            continue;
        }
        for &s in &sources {
            let src = args[s].as_str();
            let mut t = d.clone();
            t.from = Some(src.to_string());
            t.link = kind == Copy::Link;
            t.dynamic |= v.dyn_arg(s);
            t.contents = kind != Copy::Link
                && (whole
                    || src == "."
                    || src.ends_with("/.")
                    || (kind == Copy::Sync && src.ends_with('/')));
            out.push(t);
        }
        let mut t = d;
        t.link = kind == Copy::Link;
        out.push(t);
    }
    if kind == Copy::Link {
        // A link's target counts like a target: `ln -s ~/.bashrc x`.
        for &s in &sources {
            out.push(Target::new(&args[s], v.dyn_arg(s)));
        }
    }
}

/// A backup of what is overwritten, named by a suffix (`-b -S rc` turns
/// `~/.bash` into `~/.bashrc`); without `-S` the suffix may come from the
/// environment (SIMPLE_BACKUP_SUFFIX).
fn backups(
    v: &Argv<'_>,
    spec: &options::OptionSpec<'_>,
    dests: &[Target],
    sources: &[usize],
) -> Vec<Target> {
    let args = v.args();
    if !options::flagged(args, spec, &["-b", "--backup", "-S", "--suffix"]) {
        return Vec::new();
    }
    let suffix = match options::values(args, spec, &["-S", "--suffix"]).pop() {
        Some(o) => (o.text, v.dyn_arg(o.at)),
        None => ("$SIMPLE_BACKUP_SUFFIX".to_string(), true),
    };
    dests
        .iter()
        .flat_map(|d| {
            let named = Target::new(&format!("{}{}", d.raw, suffix.0), d.dynamic || suffix.1);
            let inside = sources.iter().map(|&s| {
                let mut t = Target::new(&d.raw, d.dynamic || suffix.1 || v.dyn_arg(s));
                t.from = Some(format!("{}{}", args[s], suffix.0));
                t
            });
            std::iter::once(named).chain(inside).collect::<Vec<_>>()
        })
        .collect()
}

/// Words of `core` (indexes) that are search patterns, not paths: the
/// values of an entry's pattern options (`find -name`) and what its pattern
/// function finds (grep's pattern operand).
pub(crate) fn pattern_args(core: &[String]) -> Vec<usize> {
    let Some(p) = core.first().and_then(|n| registry::find(n)) else {
        return Vec::new();
    };
    let pats = &p.node.patterns;
    let mut out: Vec<usize> = (1..core.len())
        .filter(|&k| pats.options.contains(&core[k - 1].as_str()))
        .collect();
    if let Some(by) = pats.by {
        out.extend(by(core));
    }
    out
}

/// What the command `core` removes, empties or moves away: its entry's
/// `removes` (`rm`'s operands, `rmdir -p`'s parents too).
pub(crate) fn removal_targets(core: &[String]) -> Vec<&str> {
    let Some(p) = core.first().and_then(|n| registry::find(n)) else {
        return Vec::new();
    };
    let node = &p.node;
    let args = &core[1..];
    let mut out: Vec<&str> = Vec::new();
    for r in node.removes {
        match *r {
            super::schema::Removes::Operands => {
                out.extend(
                    options::operands(args, &node.options)
                        .into_iter()
                        .map(|k| args[k].as_str()),
                );
            }
            super::schema::Removes::Parents(opts) => {
                if !options::flagged(args, &node.options, opts) {
                    continue;
                }
                // `rmdir -p a/b/c` removes a/b and a too, when they are left empty.
                let mut parents = Vec::new();
                for t in &out {
                    let mut rest = t.trim_end_matches('/');
                    while let Some((up, _)) = rest.rsplit_once('/') {
                        if up.is_empty() {
                            break;
                        }
                        parents.push(up);
                        rest = up;
                    }
                }
                out.extend(parents);
            }
            super::schema::Removes::Sources(when, target_dir) => {
                if !when.is_empty() && !options::flagged(args, &node.options, when) {
                    continue;
                }
                let ops = options::operands(args, &node.options);
                let moved = if options::flagged(args, &node.options, target_dir) {
                    &ops[..]
                } else {
                    &ops[..ops.len().saturating_sub(1)]
                };
                out.extend(moved.iter().map(|&k| args[k].as_str()));
            }
            super::schema::Removes::Last(when) => {
                if options::flagged(args, &node.options, when) {
                    let ops = options::operands(args, &node.options);
                    out.extend(ops.last().map(|&k| args[k].as_str()));
                }
            }
            super::schema::Removes::OperandsWith(when) => {
                if options::flagged(args, &node.options, when) {
                    out.extend(
                        options::operands(args, &node.options)
                            .into_iter()
                            .map(|k| args[k].as_str()),
                    );
                }
            }
            super::schema::Removes::By(f) => out.extend(f(core)),
        }
    }
    out
}
