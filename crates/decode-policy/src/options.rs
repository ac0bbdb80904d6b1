//! Where a program's options end: the one option scanner behind the
//! sub-command caps (`git push` after `git -C dir`), the wrappers (`sudo -u
//! root CMD`) and the runners (`uv run --with x CMD`).
//!
//! A program's options are described by an [`OptionSpec`]: which take a
//! value, which take none, and whether those lists are complete. When they
//! are not, an option the gate does not know may or may not take the next
//! word as its value; the scanner says so ([`Step::Option::unsure`]) and each
//! caller reads both ways in its own fashion — every reading is a candidate
//! sub-command ([`candidates`]), or the other reading's command is judged too
//! ([`scan`]'s `alternatives`). An option the gate does not know never hides
//! a command. See docs/permissions.md ("Wrappers and runners").

/// What the gate knows of a program's options.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OptionSpec<'a> {
    /// Short options that take a value, attached (`-C.`) or the next word
    /// (`-C .`).
    pub(crate) short_value: &'a str,
    /// Short options whose value is optional and can only be attached
    /// (`xargs -i{}`, `-eEOF`): the rest of the cluster is the value.
    pub(crate) glued: &'a str,
    /// Options that take a value: long ones (`--opt v`, `--opt=v`, or a
    /// GNU abbreviation of one) and whole short words (`-H`, the same as
    /// `H` in `short_value`).
    pub(crate) value: &'a [&'a str],
    /// Options known to take no value (`-y` also names the letter `y` in a
    /// cluster).
    pub(crate) flags: &'a [&'a str],
    /// The value lists are complete: any other option takes no value. When
    /// false, any other option is read both ways.
    pub(crate) complete: bool,
}

/// What one word is, read as an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Not an option: the operands start here.
    Operand,
    /// `--`: the operands start at the next word.
    EndOfOptions,
    /// An option spanning `width` words (1, or 2 with its value). `unsure`:
    /// the gate does not know the option, so the next word may be its value
    /// (a width of 2) as well.
    Option { width: usize, unsure: bool },
}

impl OptionSpec<'static> {
    /// A program whose options the gate does not know: each is read both ways.
    pub(crate) const NONE: OptionSpec<'static> = OptionSpec {
        short_value: "",
        glued: "",
        value: &[],
        flags: &[],
        complete: false,
    };

    /// A program none of whose options takes a separate value (`rm`).
    pub(crate) const FLAGS_ONLY: OptionSpec<'static> = OptionSpec {
        short_value: "",
        glued: "",
        value: &[],
        flags: &[],
        complete: true,
    };
}

impl OptionSpec<'_> {
    /// How `word` reads as an option of this program.
    pub(crate) fn step(&self, word: &str) -> Step {
        if word == "--" {
            return Step::EndOfOptions;
        }
        if !word.starts_with('-') || word == "-" {
            return Step::Operand;
        }
        let sure = |width| Step::Option {
            width,
            unsure: false,
        };
        let unknown = Step::Option {
            width: 1,
            unsure: !self.complete,
        };
        if word.starts_with("--") {
            // A value list is more specific than the common flags: it wins.
            return if word.contains('=') {
                sure(1)
            } else if self.value.contains(&word) {
                sure(2)
            } else if self.flags.contains(&word) {
                sure(1)
            } else if abbreviates(word, self.value) && self.complete {
                sure(2)
            } else {
                // Unknown, or an abbreviation that may be an option of its own
                // the spec does not list (`--backup` beside `--backup-dir`).
                unknown
            };
        }
        if self.value.contains(&word) {
            return sure(2);
        }
        if self.flags.contains(&word) {
            return sure(1);
        }
        // A cluster of short options (`-la`, `-vC dir`): a letter taking a
        // value ends it, with the rest of the word or the next word.
        let body = &word[1..];
        for (pos, c) in body.char_indices() {
            if self.glued.contains(c) {
                return sure(1);
            }
            if self.takes_value(c) {
                let last = pos + c.len_utf8() == body.len();
                return sure(if last { 2 } else { 1 });
            }
            if !self.complete && !self.is_flag_letter(c) {
                // An unknown letter (or a value glued to an optional-value
                // letter, `nsenter -m/proc/1/ns/mnt`): the rest is not read.
                return unknown;
            }
        }
        sure(1)
    }

    fn takes_value(&self, c: char) -> bool {
        self.short_value.contains(c) || self.value.iter().any(|w| is_short(w, c))
    }

    fn is_flag_letter(&self, c: char) -> bool {
        self.flags.iter().any(|w| is_short(w, c))
    }
}

/// `-c`: the short option `c`.
fn is_short(word: &str, c: char) -> bool {
    let mut chars = word.chars();
    chars.next() == Some('-') && chars.next() == Some(c) && chars.next().is_none()
}

/// Whether `--x` is a GNU abbreviation of one of `long` (getopt accepts any
/// unique prefix; an ambiguous one is an error, so nothing runs either way).
pub(crate) fn abbreviates(word: &str, long: &[&str]) -> bool {
    word.len() > 2
        && word.starts_with("--")
        && long
            .iter()
            .any(|l| l.len() > word.len() && l.starts_with(word))
}

/// One reading of the options from `from`: each option the gate does not
/// know is read as taking no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    /// The first operand (`words.len()` when there is none).
    pub(crate) start: usize,
    /// Where the operands would start had an unknown option taken the next
    /// word as its value, in order.
    pub(crate) alternatives: Vec<usize>,
    /// The options ended with `--`: every word from `start` is an operand.
    pub(crate) ended: bool,
}

/// Reads the options of `words` from `from`.
pub(crate) fn scan<S: AsRef<str>>(words: &[S], from: usize, spec: &OptionSpec<'_>) -> Scan {
    let mut j = from;
    let mut alternatives = Vec::new();
    let mut ended = false;
    while j < words.len() {
        match spec.step(words[j].as_ref()) {
            Step::Operand => break,
            Step::EndOfOptions => {
                j += 1;
                ended = true;
                break;
            }
            Step::Option { width, unsure } => {
                if unsure {
                    alternatives.push(j + 2);
                }
                j += width;
            }
        }
    }
    Scan {
        start: j.min(words.len()),
        alternatives,
        ended,
    }
}

/// Every operand of `args` (indexes, in order), GNU style: options may
/// stand anywhere before `--`. An option the gate does not know is read as
/// taking no value.
pub(crate) fn operands<S: AsRef<str>>(args: &[S], spec: &OptionSpec<'_>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut j = 0;
    while j < args.len() {
        let s = scan(args, j, spec);
        if s.ended {
            out.extend(s.start..args.len());
            break;
        }
        if s.start < args.len() {
            out.push(s.start);
        }
        j = s.start + 1;
    }
    out
}

/// A value given to an option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OptValue {
    /// The word holding the value: the option's own (`-oF`, `--output=F`)
    /// or the next.
    pub(crate) at: usize,
    pub(crate) text: String,
}

/// Every value given to the options in `wanted` (`-o`, `--output`, or a GNU
/// abbreviation of it), GNU style: options may stand anywhere before `--`.
/// Fail closed: a short cluster is read past letters the spec does not
/// know, so `-sSo F` gives `-o` the value `F` whatever `-s` and `-S` are.
pub(crate) fn values<S: AsRef<str>>(
    args: &[S],
    spec: &OptionSpec<'_>,
    wanted: &[&str],
) -> Vec<OptValue> {
    let mut out = Vec::new();
    walk(args, spec, |name, value| {
        if let Some((at, text)) = value.filter(|_| wanted.contains(&name)) {
            out.push(OptValue {
                at,
                text: text.to_string(),
            });
        }
    });
    out
}

/// Whether any option in `wanted` (`-O`, `--remote-name`) is given, read
/// like [`values`] (a cluster past letters the spec does not know).
pub(crate) fn flagged<S: AsRef<str>>(args: &[S], spec: &OptionSpec<'_>, wanted: &[&str]) -> bool {
    let mut found = false;
    walk(args, spec, |name, _| {
        found |= wanted.contains(&name) || (name.starts_with("--") && abbreviates(name, wanted));
    });
    found
}

/// Calls `seen` with each option given before `--` (each letter of a short
/// cluster on its own, `-x`), and with its value (the index of the word
/// holding it, and its text) when it takes one. A long option that
/// abbreviates one of the spec's is named in full.
fn walk<'a, S: AsRef<str>>(
    args: &'a [S],
    spec: &OptionSpec<'a>,
    mut seen: impl FnMut(&str, Option<(usize, &'a str)>),
) {
    let mut j = 0;
    while j < args.len() {
        let w = args[j].as_ref();
        let next = args.get(j + 1).map(|n| (j + 1, n.as_ref()));
        let width = match spec.step(w) {
            Step::EndOfOptions => break,
            Step::Operand => 1,
            Step::Option { .. } if w.starts_with("--") => {
                let (name, attached) = match w.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (w, None),
                };
                let exact = spec.value.contains(&name);
                if !exact && spec.flags.contains(&name) {
                    // A flag spelled in full is no abbreviation of a value
                    // option (`--start` beside `--startas`).
                    seen(name, None);
                    j += 1;
                    continue;
                }
                let full = if exact {
                    Some(name)
                } else {
                    spec.value.iter().copied().find(|l| abbreviates(name, &[l]))
                };
                match (full, attached) {
                    (Some(f), Some(v)) => {
                        seen(f, Some((j, v)));
                        1
                    }
                    (Some(f), None) if exact || spec.complete => {
                        seen(f, next);
                        2
                    }
                    (Some(f), None) => {
                        // An abbreviation, or an option of its own the spec does
                        // not list: both (the next word is read on as well).
                        seen(name, None);
                        seen(f, next);
                        1
                    }
                    (None, _) => {
                        seen(name, None);
                        1
                    }
                }
            }
            // A whole word the spec lists (`-fprint FILE`, `-TT CMD`).
            Step::Option { .. } if spec.value.contains(&w) => {
                seen(w, next);
                2
            }
            Step::Option { .. } if w.len() > 2 && spec.flags.contains(&w) => {
                seen(w, None);
                1
            }
            Step::Option { .. } => {
                let body = &w[1..];
                let mut width = 1;
                for (pos, c) in body.char_indices() {
                    let name = format!("-{c}");
                    let rest = &body[pos + c.len_utf8()..];
                    if spec.glued.contains(c) {
                        seen(&name, (!rest.is_empty()).then_some((j, rest)));
                        break;
                    }
                    if spec.takes_value(c) {
                        if rest.is_empty() {
                            seen(&name, next);
                            width = 2;
                        } else {
                            seen(&name, Some((j, rest)));
                        }
                        break;
                    }
                    seen(&name, None);
                }
                width
            }
        };
        j += width;
    }
}

/// Every index of `args` where an operand (a sub-command) may stand, reading
/// each option the gate does not know both ways, so a sub-command cannot hide
/// behind an option's value (`npm --tag beta publish`). In order, at most 8.
pub(crate) fn candidates<S: AsRef<str>>(args: &[S], spec: &OptionSpec<'_>) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at: Vec<usize> = vec![0];
    // The indexes read already (a plain list: hashing costs more).
    let mut seen = vec![false; args.len()];
    while let Some(i) = at.pop() {
        if i >= args.len() || std::mem::replace(&mut seen[i], true) || out.len() >= 8 {
            continue;
        }
        let next = match spec.step(args[i].as_ref()) {
            Step::Operand => {
                if !out.contains(&i) {
                    out.push(i);
                }
                continue;
            }
            Step::EndOfOptions => {
                if i + 1 < args.len() && !out.contains(&(i + 1)) {
                    out.push(i + 1);
                }
                continue;
            }
            Step::Option { width, unsure } => {
                if unsure {
                    at.push(i + 2);
                }
                i + width
            }
        };
        at.push(next);
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIT: OptionSpec<'static> = OptionSpec {
        short_value: "",
        glued: "",
        value: &["-C", "-c", "--git-dir"],
        flags: &["-p", "--no-pager"],
        complete: false,
    };

    #[test]
    fn reads_values_flags_and_unknown_options() {
        assert_eq!(GIT.step("status"), Step::Operand);
        assert_eq!(GIT.step("-"), Step::Operand);
        assert_eq!(GIT.step("--"), Step::EndOfOptions);
        let opt = |width, unsure| Step::Option { width, unsure };
        assert_eq!(GIT.step("-C"), opt(2, false));
        assert_eq!(GIT.step("-C.."), opt(1, false));
        assert_eq!(GIT.step("-pC"), opt(2, false));
        assert_eq!(GIT.step("--git-dir"), opt(2, false));
        assert_eq!(
            GIT.step("--git-d"),
            opt(1, true),
            "an abbreviation, or an option the spec does not list"
        );
        assert_eq!(GIT.step("--git-dir=x"), opt(1, false));
        assert_eq!(GIT.step("--no-pager"), opt(1, false));
        assert_eq!(GIT.step("--bare"), opt(1, true));
        assert_eq!(GIT.step("-x"), opt(1, true));
        assert_eq!(GIT.step("-px"), opt(1, true));
        let complete = OptionSpec {
            complete: true,
            ..GIT
        };
        assert_eq!(complete.step("--bare"), opt(1, false));
        assert_eq!(complete.step("-xC"), opt(2, false), "x is a flag");
        assert_eq!(
            complete.step("--git-d"),
            opt(2, false),
            "a GNU abbreviation"
        );
    }

    #[test]
    fn a_glued_letter_takes_the_rest_of_the_cluster() {
        let xargs = OptionSpec {
            short_value: "n",
            glued: "i",
            complete: true,
            ..OptionSpec::default()
        };
        assert_eq!(
            xargs.step("-i{}"),
            Step::Option {
                width: 1,
                unsure: false
            }
        );
        assert_eq!(scan(&["-i", "rm", "{}"], 0, &xargs).start, 1);
        assert_eq!(scan(&["-n", "1", "rm"], 0, &xargs).start, 2);
    }

    #[test]
    fn one_reading_notes_where_an_unknown_option_could_end() {
        let s = scan(&["--bare", "x", "push"], 0, &GIT);
        assert_eq!(s.start, 1);
        assert_eq!(s.alternatives, vec![2]);
        let s = scan(&["-C", "dir", "--", "-x"], 0, &GIT);
        assert_eq!(s.start, 3);
        assert!(s.alternatives.is_empty());
        assert_eq!(scan(&["-C"], 0, &GIT).start, 1, "never past the end");
    }

    #[test]
    fn operands_may_stand_between_options() {
        let cp = OptionSpec {
            value: &["-t", "--target-directory"],
            complete: true,
            ..OptionSpec::default()
        };
        let args = ["-v", "a", "-t", "dir", "b", "--", "-c"];
        assert_eq!(operands(&args, &cp), vec![1, 4, 6]);
        assert_eq!(operands(&["-vt", "dir", "x"], &cp), vec![2]);
        assert_eq!(
            operands(&["-", "--", "--"], &OptionSpec::FLAGS_ONLY),
            vec![0, 2]
        );
    }

    #[test]
    fn values_are_found_in_clusters_and_long_forms() {
        let curl = OptionSpec {
            short_value: "oX",
            value: &["--output", "--request"],
            ..OptionSpec::default()
        };
        let got = |args: &[&str]| -> Vec<(usize, String)> {
            values(args, &curl, &["-o", "--output"])
                .into_iter()
                .map(|v| (v.at, v.text))
                .collect()
        };
        assert_eq!(got(&["-sSLo", "f", "u"]), [(1, "f".to_string())]);
        assert_eq!(got(&["-of", "u"]), [(0, "f".to_string())]);
        assert_eq!(got(&["-Xo", "u"]), [], "o is -X's value");
        assert_eq!(got(&["u", "--out=f"]), [(1, "f".to_string())]);
        assert_eq!(
            got(&["--output", "f", "--", "-o", "g"]),
            [(1, "f".to_string())]
        );
        assert_eq!(got(&["-X", "-o", "u"]), [], "-o is -X's value");
        assert!(flagged(&["-sO", "u"], &curl, &["-O"]));
        assert!(flagged(&["--remote-n", "u"], &curl, &["--remote-name"]));
        assert!(!flagged(&["-XO", "u"], &curl, &["-O"]));
        assert!(!flagged(&["--", "-O"], &curl, &["-O"]));
    }

    #[test]
    fn every_reading_is_a_candidate() {
        assert_eq!(candidates(&["--bare", "x", "push"], &GIT), vec![1, 2]);
        assert_eq!(candidates(&["-C", "dir", "push"], &GIT), vec![2]);
        assert_eq!(candidates(&["--", "-x"], &GIT), vec![1]);
        let many: Vec<String> = (0..30).map(|k| format!("--o{k}")).collect();
        assert!(candidates(&many, &GIT).len() <= 8);
    }
}
