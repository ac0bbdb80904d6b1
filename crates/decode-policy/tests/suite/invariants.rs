//! Gate invariants, checked with proptest.

use crate::common;

use common::{decide, Proj};
use decode_policy::{Call, Gate, Mode, Tool, Verdict};
use proptest::prelude::*;
use std::sync::OnceLock;

/// Single-quotes `s` for the shell.
fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Double-quotes `s` for the shell.
fn dq(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '$' | '`' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Ways to spell a command word that a shell runs as the same program.
fn spell(word: &str, how: u8) -> String {
    match how % 7 {
        0 => word.to_string(),
        1 => sq(word),
        2 => dq(word),
        3 => format!("\\{word}"),
        4 => format!("/usr/bin/{word}"),
        5 => {
            let (a, b) = word.split_at(1);
            format!("{a}''{b}")
        }
        _ => format!("/bin/{word}"),
    }
}

/// Wraps a command in one more layer that still runs it.
fn wrap(cmd: &str, how: u8) -> String {
    match how % 25 {
        0 => format!("env X=1 {cmd}"),
        1 => format!("sudo -u root {cmd}"),
        2 => format!("timeout 5 {cmd}"),
        3 => format!("nice -n 3 {cmd}"),
        4 => format!("nohup {cmd}"),
        5 => format!("command {cmd}"),
        6 => format!("exec {cmd}"),
        7 => format!("time -p {cmd}"),
        8 => format!("bash -c {}", sq(cmd)),
        9 => format!("sh -c {}", dq(cmd)),
        10 => format!("echo $( {cmd} )"),
        11 => format!("( {cmd} )"),
        12 => format!("{{ {cmd}; }}"),
        13 => format!("eval {}", sq(cmd)),
        14 => format!("A=1 B=2 {cmd}"),
        15 => format!("doas {cmd}"),
        16 => format!("if true; then {cmd}; fi"),
        // Inside backquotes inside double quotes, `\`, `` ` `` and `"` need a
        // backslash to stay what they are.
        17 => format!(
            "echo \"`{}`\"",
            cmd.replace('\\', "\\\\")
                .replace('`', "\\`")
                .replace('"', "\\\"")
        ),
        18 => format!("stdbuf -oL {cmd}"),
        19 => format!("cat <(true) <({cmd})"),
        20 => format!("su -c {}", sq(cmd)),
        21 => format!("find . -maxdepth 0 -exec sh -c {} \\;", sq(cmd)),
        22 => format!("echo x | xargs -I{{}} sh -c {}", sq(cmd)),
        23 => format!("nohup sh -c {} &", dq(cmd)),
        _ => format!("timeout 9 bash -lc {}", sq(cmd)),
    }
}

/// A last dressing that changes only the spelling: a here-document with an
/// unquoted delimiter, or line continuations between words.
fn finish(cmd: String, how: u8, at: usize) -> String {
    match how % 4 {
        0 => format!("cat <<EOF\n$( {cmd} )\nEOF"),
        1 => {
            let spaces: Vec<usize> = cmd.match_indices(' ').map(|(i, _)| i).collect();
            if spaces.is_empty() {
                return cmd;
            }
            let i = spaces[at % spaces.len()];
            format!("{} \\\n{}", &cmd[..i], &cmd[i + 1..])
        }
        _ => cmd,
    }
}

const SEPS: [&str; 6] = [" && ", " || ", "; ", " | ", " & ", "\n"];
const BENIGN: [&str; 6] = [
    "ls -la",
    "git status",
    "echo hi",
    "true",
    "cat README.md",
    "npm test",
];
const MODES: [Mode; 5] = [
    Mode::Default,
    Mode::Edit,
    Mode::Plan,
    Mode::Auto,
    Mode::Bypass,
];

/// One project for all cases (gates are compiled per property).
fn proj() -> &'static Proj {
    static P: OnceLock<Proj> = OnceLock::new();
    P.get_or_init(|| {
        let p = Proj::with_git("main");
        std::fs::create_dir_all(p.root.join(".decode")).unwrap();
        p
    })
}

fn gate(allow: &[&str], ask: &[&str], deny: &[&str]) -> Gate {
    proj().gate(allow, ask, deny)
}

fn chain(parts: &[String], seps: &[u8]) -> String {
    let mut s = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            s.push_str(SEPS[seps[i % seps.len()] as usize % SEPS.len()]);
        }
        s.push_str(p);
    }
    s
}

/// A fragment dressed up: spelled, wrapped several times, put among benign
/// fragments at a random position.
fn dressed(core: &'static str) -> impl Strategy<Value = String> {
    (
        any::<u8>(),
        prop::collection::vec(any::<u8>(), 0..4),
        prop::collection::vec(0usize..BENIGN.len(), 0..6),
        any::<usize>(),
        prop::collection::vec(any::<u8>(), 1..8),
        any::<u8>(),
    )
        .prop_map(move |(sp, wraps, benign, pos, seps, fin)| {
            let (word, rest) = core.split_once(' ').unwrap_or((core, ""));
            let mut cmd = format!("{} {rest}", spell(word, sp)).trim_end().to_string();
            // Prefix wrappers (env, sudo, …) only wrap simple commands; a
            // compound one is handed to `bash -c` first, as a person would.
            let mut simple = true;
            for w in wraps {
                let prefix = matches!(w % 25, 0..=7 | 14 | 15 | 18);
                if prefix && !simple {
                    cmd = format!("bash -c {}", sq(&cmd));
                }
                cmd = wrap(&cmd, w);
                simple = !matches!(w % 25, 11 | 12 | 14 | 16 | 23);
            }
            let cmd = finish(cmd, fin, pos);
            let mut parts: Vec<String> = benign.iter().map(|&i| BENIGN[i].to_string()).collect();
            let at = pos % (parts.len() + 1);
            parts.insert(at, cmd);
            chain(&parts, &seps)
        })
}

proptest! {
    // 400 cases each by default; `PROPTEST_CASES=N` runs more.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
    ))]

    /// A matching deny always wins, whatever wraps it and in every mode.
    #[test]
    fn deny_always_wins(
        cmd in prop_oneof![dressed("rm -rf build"), dressed("curl evil.sh"), dressed("git push origin")],
        mode in 0usize..5,
    ) {
        let g = gate(&["bash", "bash(rm *)", "bash(curl *)", "bash(git *)"], &[], &["bash(rm *)", "bash(curl *)", "bash(git push*)"]);
        let d = g.decide(&Call::new(Tool::Bash, cmd.clone()), MODES[mode]);
        prop_assert_eq!(d.verdict, Verdict::Deny, "{:?} in {}: {}", cmd, MODES[mode], d.reason);
    }

    /// A fragment no allow rule covers is never allowed by rules outside auto/bypass.
    #[test]
    fn uncovered_is_never_allowed_by_rules(
        cmd in prop_oneof![dressed("wget y"), dressed("python3 z.py"), dressed("curl x")],
        mode in 0usize..3,
    ) {
        let g = gate(&["bash(ls *)", "bash(git *)", "bash(echo *)", "bash(true)", "bash(cat *)", "bash(npm *)"], &[], &[]);
        let d = g.decide(&Call::new(Tool::Bash, cmd.clone()), MODES[mode]);
        prop_assert_ne!(d.verdict, Verdict::Allow, "{:?} in {}: {}", cmd, MODES[mode], d.reason);
    }

    /// A capped fragment is never allowed outside bypass, not even by `bash`.
    #[test]
    fn capped_is_never_allowed_outside_bypass(
        cmd in prop_oneof![
            dressed("git push"),
            dressed("sudo ls"),
            dressed("npm publish"),
            dressed("docker system prune -af"),
            dressed("kubectl apply -f x.yml"),
            dressed("tee ~/.ssh/authorized_keys"),
            dressed("cp x .decode/settings.json"),
            dressed("git merge feature"),
            dressed("rm -rf /"),
        ],
        mode in 0usize..4,
    ) {
        let g = gate(&["bash"], &[], &[]);
        let d = g.decide(&Call::new(Tool::Bash, cmd.clone()), MODES[mode]);
        prop_assert_ne!(d.verdict, Verdict::Allow, "{:?} in {}: {}", cmd, MODES[mode], d.reason);
    }

    /// Critical removal asks even in bypass.
    #[test]
    fn critical_removal_never_allowed(
        cmd in prop_oneof![dressed("rm -rf /"), dressed("rm -rf ~"), dressed("rm -rf /usr"), dressed("rm -rf .."), dressed("rmdir /home")],
        mode in 0usize..5,
    ) {
        let g = gate(&["bash"], &[], &[]);
        let d = g.decide(&Call::new(Tool::Bash, cmd.clone()), MODES[mode]);
        prop_assert_ne!(d.verdict, Verdict::Allow, "{:?} in {}: {}", cmd, MODES[mode], d.reason);
    }

    /// Auto mode never lifts deny or ask rules.
    #[test]
    fn auto_never_lifts_rules(
        cmd in prop_oneof![dressed("terraform plan"), dressed("make clean")],
    ) {
        let g = gate(&["bash"], &["bash(terraform *)"], &["bash(make clean*)"]);
        let d = g.decide(&Call::new(Tool::Bash, cmd.clone()), Mode::Auto);
        prop_assert_ne!(d.verdict, Verdict::Allow, "{:?}: {}", cmd, d.reason);
    }

    /// Adding allow rules never turns a deny into anything else.
    #[test]
    fn allow_rules_never_undo_a_deny(
        cmd in prop_oneof![dressed("rm -rf build"), dressed("curl evil.sh"), "[a-z ;|&$()'\"-]{0,40}".prop_map(String::from)],
        extra in prop::collection::vec(prop_oneof![
            Just("bash"), Just("bash(*)"), Just("bash(rm *)"), Just("bash(curl *)"), Just("bash(sudo *)"),
            Just("bash(env *)"), Just("bash(echo *)"), Just("bash(bash *)"),
        ], 0..5),
        mode in 0usize..5,
    ) {
        let deny = ["bash(rm *)", "bash(curl *)"];
        let base = gate(&[], &[], &deny);
        let d0 = base.decide(&Call::new(Tool::Bash, cmd.clone()), MODES[mode]);
        if d0.verdict == Verdict::Deny {
            let more = gate(&extra, &[], &deny);
            let d1 = more.decide(&Call::new(Tool::Bash, cmd.clone()), MODES[mode]);
            prop_assert_eq!(d1.verdict, Verdict::Deny, "{:?} with {:?}", cmd, extra);
        }
    }

    /// Deny on file paths wins however the path is spelled.
    #[test]
    fn file_deny_wins(
        prefix in prop_oneof![Just(""), Just("./"), Just("src/../"), Just("{root}/"), Just("./src/./../")],
        tool in prop_oneof![Just("read"), Just("write"), Just("edit"), Just("grep"), Just("glob")],
        mode in 0usize..5,
    ) {
        let p = proj();
        let g = p.gate(&["read", "edit"], &[], &["read(.env)", "edit(.env)"]);
        let subject = p.fill(&format!("{prefix}.env"));
        let d = decide(&g, tool, &subject, &MODES[mode].to_string());
        prop_assert_eq!(d.verdict, Verdict::Deny, "{} {}", tool, subject);
    }

    /// Arbitrary input never panics and always explains itself in one line.
    #[test]
    fn never_panics(cmd in "\\PC{0,200}", tool in 0usize..12, mode in 0usize..5) {
        let g = gate(&["bash(git *)", "read(src/**)"], &["bash(ls *)"], &["bash(rm *)"]);
        if let Ok(f) = std::env::var("LAST_INPUT_FILE") {
            std::fs::write(f, &cmd).unwrap();
        }
        let d = g.decide(&Call::new(Tool::ALL[tool], cmd), MODES[mode]);
        prop_assert!(!d.reason.is_empty());
        prop_assert!(!d.trace.is_empty());
    }
}
