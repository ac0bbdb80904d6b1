//! The entries' examples, read back, and the table's lints.

use super::registry;
use super::schema::{Node, Program, Runs, Sub, Writes};
use crate::options::OptionSpec;
use crate::shell::config::ShellConfig;
use crate::shell::model::{Derived, Role, Workdir};
use crate::shell::words::Word;

/// Splits a command line at blanks; `'…'` and `"…"` group words (quotes
/// removed). Enough for the examples: every word is static text.
fn split_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// How the gate reads a command line, in one line: `opaque`, what it runs
/// (`` runs `CMD` `` for a command seen through or given as words, `runs
/// 'LINE'` for a line a shell runs), where (`cwd DIR`, `cwd ?`), what it
/// writes and removes, `external WHAT`, `privilege`, `read-only`; `plain`
/// when none of these.
pub(crate) fn reading(line: &str) -> String {
    let words: Vec<Word> = split_line(line).iter().map(|w| Word::raw(w)).collect();
    let a = super::see::analyse(&[], &words, &[], Role::Full, &ShellConfig::default());
    let mut parts: Vec<String> = Vec::new();
    if a.dynamic.is_some() || a.over_budget.is_some() {
        parts.push("opaque".into());
    }
    if a.levels.len() > 1 {
        parts.push(format!("runs `{}`", a.core.join(" ")));
    }
    for d in &a.derived {
        let r = match d {
            Derived::Words(ws, _) => {
                let t: Vec<&str> = ws.iter().map(|w| w.text.as_str()).collect();
                format!("runs `{}`", t.join(" "))
            }
            Derived::Source(s, _) => format!("runs '{s}'"),
            Derived::Typed(s) => format!("types '{s}'"),
            Derived::Find(ws, _, roots) => {
                let t: Vec<&str> = ws.iter().map(|w| w.text.as_str()).collect();
                let r: Vec<&str> = roots.iter().map(|r| r.as_deref().unwrap_or("?")).collect();
                format!("runs `{}` under {}", t.join(" "), r.join(", "))
            }
        };
        if !parts.contains(&r) {
            parts.push(r);
        }
    }
    match &a.chdir {
        Some(Workdir::At(d)) => parts.push(format!("cwd {d}")),
        Some(Workdir::Unknown) => parts.push("cwd ?".into()),
        None => {}
    }
    let mut written: Vec<String> = a.own_writes.iter().map(|t| t.raw.clone()).collect();
    for t in super::writes::targets(&a.core, &a.core_dyn, &[]) {
        let shown = match &t.from {
            Some(f) if !t.contents => {
                let base = f.trim_end_matches('/');
                let name = base.rsplit('/').next().unwrap_or(base);
                format!("{}/{name}", t.raw.trim_end_matches('/'))
            }
            _ => t.raw.clone(),
        };
        written.push(shown);
    }
    if !written.is_empty() {
        parts.push(format!("writes {}", written.join(", ")));
    }
    let removed = super::writes::removal_targets(&a.core);
    if !removed.is_empty() {
        parts.push(format!("removes {}", removed.join(", ")));
    }
    if let Some(r) = super::effects::external_effect(&a.core, &a.core_dyn, &a.chain) {
        match r.strip_suffix(" has external effects: asks every time") {
            Some(what) => parts.push(format!("external {what}")),
            None => parts.push("privilege".into()),
        }
    }
    let read_only = super::read_only::read_only(&a.core).is_some();
    if parts.is_empty() && read_only {
        parts.push("read-only".into());
    }
    if parts.is_empty() {
        "plain".into()
    } else {
        parts.join("; ")
    }
}

#[test]
fn every_entry_reads_its_examples() {
    let mut failures = Vec::new();
    let mut count = 0;
    for p in registry::all() {
        if p.examples.is_empty() {
            failures.push(format!("{:?} has no example", p.names));
        }
        for &(line, want) in p.examples {
            count += 1;
            let got = reading(line);
            if got != want {
                failures.push(format!("{line:?}\n    want {want:?}\n    got  {got:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} examples read differently:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn no_name_is_listed_twice() {
    let mut seen: Vec<&str> = Vec::new();
    for p in registry::all() {
        for n in p.names {
            assert!(!seen.contains(n), "{n} has two entries");
            seen.push(n);
        }
    }
}

/// An option name: starts with `-`, holds no `=` and no blank.
fn well_formed(o: &str) -> bool {
    o.starts_with('-') && !o.contains(['=', ' ', '\t'])
}

/// Whether `spec` reads `opt` as taking a value.
fn takes_value(spec: &OptionSpec<'_>, opt: &str) -> bool {
    spec.value.contains(&opt)
        || (opt.len() == 2 && opt.starts_with('-') && spec.short_value.contains(&opt[1..]))
        || (opt.len() == 2 && opt.starts_with('-') && spec.glued.contains(&opt[1..]))
}

fn lint_node(where_: &str, n: &Node, errors: &mut Vec<String>) {
    let spec = &n.options;
    for o in spec.value.iter().chain(spec.flags) {
        if !well_formed(o) {
            errors.push(format!("{where_}: option `{o}` is not a plain option name"));
        }
    }
    for c in spec.short_value.chars() {
        if spec.flags.contains(&format!("-{c}").as_str()) {
            errors.push(format!("{where_}: `-{c}` both takes a value and is a flag"));
        }
    }
    let mut named: Vec<&str> = Vec::new();
    for r in n.runs {
        match r {
            Runs::OptionLine(o) | Runs::OptionCommand(o) => named.extend(o.iter()),
            _ => {}
        }
    }
    for w in n.writes {
        if let Writes::OptionValue(o) = w {
            named.extend(o.iter());
        }
        if let Writes::Copy { target_dir, .. } = w {
            named.extend(target_dir.iter());
        }
    }
    named.extend(n.moves.to.iter());
    for o in named {
        if !takes_value(spec, o) {
            errors.push(format!(
                "{where_}: `{o}` is named as taking a value, but the options do not say it takes one"
            ));
        }
    }
}

fn lint_subs(where_: &str, subs: &[Sub], errors: &mut Vec<String>) {
    let mut seen: Vec<&str> = Vec::new();
    for s in subs {
        if s.names.is_empty() {
            errors.push(format!("{where_}: a sub-command without a name"));
        }
        for n in s.names {
            if seen.contains(n) {
                errors.push(format!("{where_}: sub-command `{n}` listed twice"));
            }
            seen.push(n);
        }
        let here = format!("{where_} {}", s.names.first().copied().unwrap_or("?"));
        lint_node(&here, &s.node, errors);
        lint_subs(&here, s.subs, errors);
    }
}

#[test]
fn the_table_is_well_formed() {
    let mut errors = Vec::new();
    for p in registry::all() {
        let p: &Program = p;
        let name = p.names.first().copied().unwrap_or("?");
        lint_node(name, &p.node, &mut errors);
        lint_subs(name, p.subs, &mut errors);
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn a_line_splits_like_the_examples_need() {
    assert_eq!(split_line("a 'b c' \"d\" ''"), ["a", "b c", "d", ""]);
}

#[test]
fn wrappers_are_seen_through_with_every_form() {
    let ws = |s: &str| -> Vec<Word> { s.split(' ').map(Word::raw).collect() };
    let config = ShellConfig::default();
    let a = super::see::analyse(
        &[],
        &ws("env X=1 /usr/bin/sudo -u x rm -rf /"),
        &[],
        Role::Full,
        &config,
    );
    assert_eq!(a.core, ["rm", "-rf", "/"]);
    assert_eq!(a.chain, ["env", "sudo", "rm"]);
    assert!(a.check_forms.contains(&"sudo -u x rm -rf /".to_string()));
    assert!(a.check_forms.contains(&"rm -rf /".to_string()));
    assert_eq!(a.allow_forms, ["env X=1 /usr/bin/sudo -u x rm -rf /"]);
    let a = super::see::analyse(
        &[],
        &ws("timeout 30 nice -n 5 /usr/bin/npm test"),
        &[],
        Role::Full,
        &config,
    );
    assert!(a.allow_forms.contains(&"npm test".to_string()));
    assert!(a.allow_forms.contains(&"/usr/bin/npm test".to_string()));
}

#[test]
fn scripts_that_run_commands() {
    use super::awk::awk_runs_commands;
    use super::coreutils::sed_runs_commands;
    for yes in [
        "s/a/b/e",
        "1e rm -rf x",
        "s/x/y/ge",
        "1els",
        "$e id",
        "/x/e touch y",
        "\\%x%e id",
        "2~3e id",
        "1,/x/!e id",
        "0,/re/e id",
        "/a/,+2{e id\n}",
        "p;e id",
        "s|a|b|pe",
        "s/a\\/b/c/e",
        "y/abc/xyz/;e id",
    ] {
        assert!(sed_runs_commands(yes), "{yes}");
    }
    for no in [
        "s/a/b/g",
        "s/e/f/",
        "/etc/passwd",
        "/error/d",
        "1,5p",
        "s/x/y/w out.e",
        "a\\\nhello e",
        "$a extra",
        "y/e/E/",
        "/begin/,/end/d",
        "s/old/new/3",
        "# e comment\np",
    ] {
        assert!(!sed_runs_commands(no), "{no}");
    }
    assert!(awk_runs_commands("BEGIN { system(\"rm x\") }"));
    assert!(awk_runs_commands("{ print | \"sh\" }"));
    assert!(!awk_runs_commands("{ print $1 }"));
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

#[test]
fn write_targets() {
    let t = |s: &str| -> Vec<String> {
        let core = words(s);
        let d = vec![false; core.len()];
        super::writes::targets(&core, &d, &[])
            .into_iter()
            .map(|t| match t.from {
                Some(f) => format!("{}<{f}", t.raw),
                None => t.raw,
            })
            .collect()
    };
    assert_eq!(t("cp .bashrc /home/u"), ["/home/u<.bashrc", "/home/u"]);
    assert_eq!(t("cp -r x/.decode ."), [".<x/.decode", "."]);
    assert_eq!(
        t("dd if=/dev/zero of=.decode/settings.json"),
        [".decode/settings.json"]
    );
    assert_eq!(
        t("sort -o.decode/settings.json x"),
        [".decode/settings.json"]
    );
    assert_eq!(t("tee -a a b"), ["a", "b"]);
    assert_eq!(t("sed -i s/a/b/ f g"), ["f", "g"]);
    assert_eq!(t("curl -O https://x.y/a/.bashrc"), [".bashrc"]);
    assert_eq!(t("tar -xzf a.tgz -C out"), ["out"]);
    assert_eq!(
        t("ln -s /home/u/.bashrc x"),
        ["x</home/u/.bashrc", "x", "/home/u/.bashrc"]
    );
    assert_eq!(t("gcc -o bin/a a.c"), ["bin/a"]);
    assert!(t("cat x").is_empty());
}

#[test]
fn containers() {
    use super::cloud::container_removal;
    assert!(container_removal(&words("docker rm x")).is_some());
    assert!(container_removal(&words("docker container rm x")).is_some());
    assert!(container_removal(&words("docker compose down -v")).is_some());
    assert!(container_removal(&words("docker compose down")).is_none());
    assert!(container_removal(&words("docker-compose down --volumes")).is_some());
    assert!(container_removal(&words("docker ps")).is_none());
}

#[test]
fn externals() {
    use super::effects::external_effect;
    let ext = |s: &str| {
        let c: Vec<String> = words(s)
            .into_iter()
            .map(|w| w.trim_start_matches("./").to_string())
            .collect();
        external_effect(&c, &vec![false; c.len()], &[]).is_some()
    };
    for yes in [
        "git -C x -c a=b push",
        "git --shallow-file x push",
        "gh pr new",
        "gh -R o/r pr create",
        "npm --tag beta publish",
        "kubectl -o yaml apply -f x",
        "hg push",
        "hg -R r push",
        "poetry publish",
        "uv publish",
        "mvn clean deploy",
        "./gradlew publish",
        "jj git push",
        "git lfs push",
        "dotnet nuget push x.nupkg",
        "mkdocs gh-deploy",
        "glab mr merge",
        "serverless deploy",
        "cdk deploy",
        "vercel",
        "vercel --prod",
        "gcloud app deploy",
        "docker compose push",
        "docker buildx build --push .",
        "sudoedit /etc/hosts",
        "cargo +nightly publish",
        "twine upload dist/*",
    ] {
        assert!(ext(yes), "{yes}");
    }
    for no in [
        "git status",
        "git commit -m push",
        "make deploy",
        "npm run deploy",
        "gh pr view",
        "kubectl get pods -o yaml",
        "ls deploy",
        "cd upload",
        "cargo test",
        "vercel ls",
        "docker build .",
        "python deploy.py",
    ] {
        assert!(!ext(no), "{no}");
    }
    assert!(external_effect(&words("rm x"), &[false, false], &words("sudo rm")).is_some());
    // A subcommand only known when it runs could be `push`.
    assert!(external_effect(&words("git $x"), &[false, true], &[]).is_some());
    assert!(external_effect(&words("wc -l $f"), &[false, false, true], &[]).is_none());
}
