//! A program the gate does not know (or knows only in part): it may start a
//! shell that reads standard input (`newgrp`, `fakeroot`, `setarch ARCH`),
//! or run a shell later on its line (`mise exec -- sh -c 'CMD'`). What that
//! shell runs meets the deny rules, ask rules and caps.

use super::schema::Ctx;
use super::shells::SHELLS;
use super::support::shell_stdin;
use crate::shell::model::{Analysis, Derived, Role};
use crate::shell::words::basename;

/// Programs that start a shell when given no command.
const STARTS_SHELL: &[&str] = &["newgrp", "fakeroot", "linux32", "linux64"];

/// What a program the gate does not read may run: a shell reading standard
/// input (its own, or one later on its line: `perf stat bash <<< …`), and a
/// shell with `-c` later on its line.
pub(crate) fn see(c: &Ctx<'_>, a: &mut Analysis) {
    let (n, words) = (c.name, c.words);
    if super::shells::foreign_shell(n) {
        // A shell by its shape (`oksh`, `zsh-5.9`): what it runs from a
        // string the gate does not read.
        super::shells::foreign(c, None, a);
        return;
    }
    let starts_shell = STARTS_SHELL.contains(&n) || (n == "setarch" && words.len() <= c.i + 2);
    let fed = c.redirs.iter().any(|r| r.feed.is_some());
    let shell_at = |k: usize| {
        let name = basename(&words[k].text);
        !words[k].dynamic && (SHELLS.contains(&name) || super::shells::is_foreign(name))
    };
    let with_c = |k: usize| {
        words
            .get(k + 1)
            .is_some_and(|o| o.text.starts_with('-') && o.text[1..].contains('c'))
    };
    let later_stdin_shell = fed && (c.i + 1..words.len()).any(|k| shell_at(k) && !with_c(k));
    if starts_shell || later_stdin_shell {
        shell_stdin(n, c.redirs, Role::Checked, false, a);
    }
    let shells = (c.i + 1..words.len()).filter(|&k| shell_at(k) && with_c(k));
    for k in shells.take(4) {
        a.derived
            .push(Derived::Words(words[k..].to_vec(), Role::Checked));
    }
}
