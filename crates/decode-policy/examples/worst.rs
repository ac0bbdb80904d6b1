//! Bounded work: the slowest decisions on hostile commands up to the length
//! limit (each must stay under 100 ms). Prints the time of each family.
//! `cargo run --release -p decode-policy --example worst`
#![allow(clippy::print_stdout)]

use std::time::Instant;

use decode_policy::{Call, Gate, Mode, PolicyInput, Tool};

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join(".git")).expect("mkdir");
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/work\n").expect("HEAD");
    let mut input = PolicyInput::new(&root, dir.path().join("home"));
    input.project_rules.allow = vec!["bash(git *)".into(), "bash(ls *)".into()];
    input.project_rules.ask = vec!["bash(curl *)".into()];
    input.project_rules.deny = (0..200).map(|i| format!("bash(tool{i} * --x*)")).collect();
    let (gate, _) = Gate::new(input);
    let fit = |s: String| -> String { s.chars().take(9_990).collect() };
    let families: Vec<(&str, String)> = vec![
        ("line continuations", fit("x\\\n".repeat(3_300))),
        (
            "glob paths",
            fit(format!("ls {}", "/*/*/*/* ".repeat(1_100))),
        ),
        (
            "one deep glob path",
            fit(format!("ls {}", "/*".repeat(4_990))),
        ),
        ("dotdot path", fit(format!("cat {}", "../".repeat(3_300)))),
        ("braces", fit(format!("echo {}", "{a,b}".repeat(1_900)))),
        (
            "unmatched braces",
            fit(format!("echo {}a,b}}", "{".repeat(9_900))),
        ),
        (
            "nested braces",
            fit(format!(
                "echo {}x{}",
                "{a,".repeat(1_200),
                "}".repeat(1_200)
            )),
        ),
        ("substitutions", fit("$(echo ${x:-$(y)}) ".repeat(450))),
        ("backticks", fit("`a` ".repeat(2_400))),
        (
            "nested substitutions",
            fit(format!(
                "echo {}x{}",
                "$( ".repeat(1_600),
                " )".repeat(1_600)
            )),
        ),
        (
            "subshells",
            fit(format!("{}x{}", "( ".repeat(3_300), " )".repeat(3_300))),
        ),
        (
            "groups",
            fit(format!("{}x{}", "{ ".repeat(2_400), "; }".repeat(2_400))),
        ),
        (
            "ifs",
            fit(format!(
                "{}x{}",
                "if true; then ".repeat(600),
                "; fi".repeat(600)
            )),
        ),
        ("pipes", fit("a | ".repeat(2_400))),
        ("and chains", fit("git status && ".repeat(700))),
        (
            "arithmetic",
            fit(format!("x=1; echo $(({}x))", "x+".repeat(4_900))),
        ),
        (
            "arith vars",
            fit((0..700)
                .map(|i| format!("v{i}=v{}; ", i + 1))
                .collect::<String>()
                + "echo $((v0))"),
        ),
        ("dynamic words", fit(format!("git {}", "$x ".repeat(3_300)))),
        ("xargs chain", fit("xargs ".repeat(1_600) + "rm x")),
        ("eval chain", fit("eval ".repeat(1_900) + "x")),
        ("bash -c nesting", {
            let mut c = "rm -rf x".to_string();
            for _ in 0..9 {
                c = format!("bash -c '{}'", c.replace('\'', "'\\''"));
            }
            fit(c)
        }),
        ("heredocs", fit("cat <<E\n$(x)\nE\n".repeat(700))),
        ("words", fit(format!("rm {}", "f ".repeat(4_990)))),
        (
            "unknown program tails",
            fit(format!("foo {}", "curl ".repeat(1_990))),
        ),
        (
            "runner options",
            fit(format!("npx {}x", "--a ".repeat(2_400))),
        ),
        ("ansi-c", fit(format!("echo {}", "$'\\\\' ".repeat(1_400)))),
        (
            "cd chain then removals",
            fit("cd a;".repeat(1_000) + &"rm x ".repeat(1_000)),
        ),
        ("cd chain", fit("cd a/a;".repeat(1_420))),
        ("cd lines", fit("cd a\n".repeat(1_990))),
        ("pushd chain", fit("pushd a;".repeat(1_240))),
        (
            "cd chain then writes",
            fit("cd a;".repeat(1_000) + &"echo > x;".repeat(500)),
        ),
        ("many fragments", fit("x;".repeat(4_900))),
        ("many lines", fit("x\n".repeat(4_990))),
        (
            "dynamic programs",
            fit(format!("c=rm; {}", "$c -rf x; ".repeat(900))),
        ),
        ("functions", fit("f() { cd /; }; ".repeat(600) + "rm x")),
        // Inputs where tree-sitter's work grows faster than the text: cut
        // by the structural limits and the parse work budget.
        ("open expansions", fit("${ ".repeat(3300))),
        ("heredoc operators", fit("<<E ".repeat(2400))),
        ("bodiless functions", fit("f() ".repeat(2400))),
        ("keywords as commands", fit("then fi ".repeat(1200))),
        ("open subscripts", fit("$[".repeat(4900))),
        ("array words", fit("a[1] ".repeat(1900))),
        ("open arrays", fit("a=( ".repeat(2400))),
        ("quotes mix", fit("a \" b ' ".repeat(1200))),
        ("open backticks", fit("`a ".repeat(3300))),
        ("redirections", fit("> ".repeat(4900))),
    ];
    let only = std::env::args().nth(1);
    let mut worst = 0f64;
    for (name, cmd) in &families {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let t = Instant::now();
        let d = gate.decide(&Call::new(Tool::Bash, cmd.clone()), Mode::Default);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        worst = worst.max(ms);
        println!(
            "{name:24} {:6} chars {ms:8.2} ms  {}",
            cmd.chars().count(),
            d.verdict
        );
    }
    println!("slowest: {worst:.2} ms (limit 100 ms)");
}
