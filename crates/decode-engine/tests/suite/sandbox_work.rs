//! Ordinary work inside the bounds of the sandbox (docs/sandbox.md): builds and
//! tests that fill a fresh toolchain cache, a virtualenv, make, git with a local
//! remote, a formatter — each run sandboxed, in auto mode, with no network (local
//! registries and packages stand in for the usual ones).

use std::path::{Path, PathBuf};
use std::process::Command;

use decode_engine::tools::{ToolContext, ToolResult};
use decode_policy::{Mode, Tool};
use serde_json::json;

use crate::suite::sandbox_bounds::enforced;
use crate::tools_support::{exec, Project};

/// Runs `command` sandboxed (auto mode) with a long timeout; it must succeed.
async fn work(ctx: &ToolContext, command: &str) -> ToolResult {
    let r = exec(
        ctx,
        Tool::Bash,
        json!({ "command": command, "timeout_s": 300 }),
    )
    .await;
    assert_eq!(r.sandboxed, Some(true), "{command}");
    assert!(!r.is_error, "{command}:\n{}", r.content);
    r
}

/// Whether `program` is on `PATH`.
fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(dir: &Path, program: &str, args: &[&str]) {
    let o = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn cargo_builds_and_tests_with_a_fresh_registry_cache() {
    enforced();
    assert!(have("cargo"), "this test needs cargo");
    let p = Project::new();
    // A local registry (no network) with one crate, packaged outside.
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path().canonicalize().unwrap();
    write(
        &o.join("dep/Cargo.toml"),
        "[package]\nname = \"tinydep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(&o.join("dep/src/lib.rs"), "pub fn answer() -> u32 { 42 }\n");
    let packaged = Command::new("cargo")
        .args(["package", "--offline", "--no-verify", "--allow-dirty", "-q"])
        .current_dir(o.join("dep"))
        .env("CARGO_TARGET_DIR", o.join("dep/target"))
        .status()
        .unwrap();
    assert!(packaged.success());
    let reg = o.join("reg");
    std::fs::create_dir_all(reg.join("index/ti/ny")).unwrap();
    let krate = reg.join("tinydep-0.1.0.crate");
    std::fs::copy(o.join("dep/target/package/tinydep-0.1.0.crate"), &krate).unwrap();
    let sum = Command::new("sha256sum").arg(&krate).output().unwrap();
    let sum = String::from_utf8_lossy(&sum.stdout);
    let sum = sum.split_whitespace().next().unwrap();
    write(
        &reg.join("index/ti/ny/tinydep"),
        &format!(
            "{{\"name\":\"tinydep\",\"vers\":\"0.1.0\",\"deps\":[],\"cksum\":\"{sum}\",\"features\":{{}},\"yanked\":false}}\n"
        ),
    );
    p.write(
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\ntinydep = \"0.1\"\n",
    );
    p.write(
        "src/lib.rs",
        "pub fn f() -> u32 { tinydep::answer() }\n#[cfg(test)]\nmod t {\n    #[test]\n    fn answers() { assert_eq!(super::f(), 42); }\n}\n",
    );
    p.write(
        ".cargo/config.toml",
        &format!(
            "[source.crates-io]\nreplace-with = \"local\"\n[source.local]\nlocal-registry = \"{}\"\n",
            reg.display()
        ),
    );
    // The home's cargo folder: fresh, its registry cache made by Decode (cargo
    // is installed), the rest read-only.
    let cargo_home = p.home.join(".cargo");
    let ctx = p.ctx(Mode::Auto);
    let r = work(
        &ctx,
        &format!(
            "CARGO_HOME={} CARGO_TARGET_DIR=target cargo build --offline -q && \
             CARGO_HOME={} CARGO_TARGET_DIR=target cargo test --offline -q 2>&1",
            cargo_home.display(),
            cargo_home.display()
        ),
    )
    .await;
    assert!(
        r.content.contains("test result: ok. 1 passed"),
        "{}",
        r.content
    );
    // The crate went into the home's registry cache.
    let src = std::fs::read_dir(cargo_home.join("registry/src"))
        .unwrap()
        .flatten()
        .any(|e| e.path().join("tinydep-0.1.0/src/lib.rs").is_file());
    assert!(src, "the registry cache was not filled");
}

#[tokio::test]
async fn npm_ci_and_test_from_a_local_tarball() {
    enforced();
    assert!(have("npm") && have("node"), "this test needs node and npm");
    let p = Project::new();
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path().canonicalize().unwrap();
    write(
        &o.join("dep/package.json"),
        r#"{"name": "dep", "version": "1.0.0", "main": "index.js"}"#,
    );
    write(&o.join("dep/index.js"), "module.exports = () => 42;\n");
    run(&o.join("dep"), "npm", &["pack", "--silent"]);
    std::fs::copy(o.join("dep/dep-1.0.0.tgz"), p.path("dep-1.0.0.tgz")).unwrap();
    p.write(
        "package.json",
        r#"{"name": "app", "version": "1.0.0", "private": true,
            "dependencies": {"dep": "file:dep-1.0.0.tgz"},
            "scripts": {"test": "node -e \"if (require('dep')() !== 42) process.exit(1); console.log('npm test ok')\""}}"#,
    );
    // The lock file, made once outside (as a repository would hold it).
    run(
        &p.root,
        "npm",
        &[
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--silent",
        ],
    );
    std::fs::remove_dir_all(p.path("node_modules")).unwrap();
    let ctx = p.ctx(Mode::Auto);
    let r = work(&ctx, "npm ci --offline --no-audit --no-fund && npm test").await;
    assert!(r.content.contains("npm test ok"), "{}", r.content);
    assert!(p.path("node_modules/dep/index.js").is_file());
}

/// A wheel of one module, made by hand (no build tool, no network).
fn wheel(dir: &Path) -> PathBuf {
    let path = dir.join("localpkg-0.1-py3-none-any.whl");
    let script = format!(
        r#"
import base64, hashlib, zipfile
files = {{
    "localpkg/__init__.py": "def answer():\n    return 42\n",
    "localpkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: localpkg\nVersion: 0.1\n",
    "localpkg-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}}
record = []
with zipfile.ZipFile({path:?}, "w") as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{{name}},sha256={{digest}},{{len(data)}}")
    record.append("localpkg-0.1.dist-info/RECORD,,")
    z.writestr("localpkg-0.1.dist-info/RECORD", "\n".join(record) + "\n")
"#,
        path = path.display().to_string()
    );
    let ok = Command::new("python3")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(ok.success());
    path
}

#[tokio::test]
async fn pip_installs_into_a_virtualenv() {
    enforced();
    let venv_works = Command::new("python3")
        .args(["-c", "import venv, ensurepip"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        venv_works,
        "this test needs python3 with venv and ensurepip"
    );
    let p = Project::new();
    let whl = wheel(&p.root);
    let ctx = p.ctx(Mode::Auto);
    let r = work(
        &ctx,
        &format!(
            "python3 -m venv .venv && .venv/bin/pip install -q --no-index {} && \
             .venv/bin/python -c 'import localpkg; print(\"pip ok\", localpkg.answer())'",
            whl.display()
        ),
    )
    .await;
    assert!(r.content.contains("pip ok 42"), "{}", r.content);
}

#[tokio::test]
async fn make_builds() {
    enforced();
    assert!(have("make"), "this test needs make");
    let p = Project::new();
    p.write("in.txt", "hello\n");
    p.write(
        "Makefile",
        "out/result.txt: in.txt\n\tmkdir -p out\n\ttr a-z A-Z < in.txt > $@\n\nclean:\n\trm -rf out\n",
    );
    let ctx = p.ctx(Mode::Auto);
    work(&ctx, "make -s && make -s clean && make -s").await;
    assert_eq!(p.read("out/result.txt"), "HELLO\n");
}

#[tokio::test]
async fn git_adds_commits_branches_stashes_and_fetches_from_a_local_remote() {
    enforced();
    let p = Project::new();
    let remote = tempfile::tempdir().unwrap();
    let r = remote.path().canonicalize().unwrap();
    let git_env = [
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@t"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@t"),
    ];
    let git = |dir: &Path, args: &[&str]| {
        let o = Command::new("git")
            .args(args)
            .current_dir(dir)
            .envs(git_env)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    // A remote with one commit; the project cloned from it (outside: `git remote
    // add` writes the config, which the sandbox keeps read-only).
    git(&r, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
    let seed = r.join("seed");
    git(&r, &["clone", "-q", "origin.git", "seed"]);
    std::fs::write(seed.join("a.txt"), "a\n").unwrap();
    git(&seed, &["add", "a.txt"]);
    git(&seed, &["commit", "-qm", "one"]);
    git(&seed, &["push", "-q", "origin", "HEAD:main"]);
    std::fs::remove_dir(&p.root).unwrap();
    git(
        &r,
        &[
            "clone",
            "-q",
            r.join("origin.git").to_str().unwrap(),
            p.root.to_str().unwrap(),
        ],
    );
    // Meanwhile, the remote moves on.
    std::fs::write(seed.join("b.txt"), "b\n").unwrap();
    git(&seed, &["add", "b.txt"]);
    git(&seed, &["commit", "-qm", "two"]);
    git(&seed, &["push", "-q", "origin", "HEAD:main"]);

    let ctx = p.ctx(Mode::Auto);
    let id = "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t";
    let r = work(
        &ctx,
        &format!(
            "export {id}; echo c > c.txt && git add c.txt && git commit -qm three && \
             git branch feature && git branch --list | tr -d ' *' && \
             echo dirty >> a.txt && git stash -q && git stash list | wc -l && test \"$(cat a.txt)\" = a && \
             git stash pop -q && grep -q dirty a.txt && \
             git fetch -q origin && git log --oneline origin/main | wc -l && git log --oneline | wc -l"
        ),
    )
    .await;
    let lines: Vec<&str> = r.content.lines().collect();
    assert!(lines.contains(&"feature"), "{}", r.content);
    // One stash, the remote's two commits, and the project's two.
    assert_eq!(lines[lines.len() - 3..], ["1", "2", "2"], "{}", r.content);
}

#[tokio::test]
async fn a_formatter_rewrites_files_in_the_project() {
    enforced();
    assert!(have("rustfmt"), "this test needs rustfmt");
    let p = Project::new();
    p.write("src/main.rs", "fn main(){let x=1;println!(\"{}\",x);}\n");
    let ctx = p.ctx(Mode::Auto);
    work(&ctx, "rustfmt --edition 2021 src/main.rs").await;
    assert_eq!(
        p.read("src/main.rs"),
        "fn main() {\n    let x = 1;\n    println!(\"{}\", x);\n}\n"
    );
}

/// pnpm, uv and go, where the machine has them (Decode's CI machine has none of
/// them: say so rather than pretend).
#[tokio::test]
async fn pnpm_uv_and_go_where_installed() {
    enforced();
    let p = Project::new();
    let ctx = p.ctx(Mode::Auto);
    if have("go") {
        p.write("go.mod", "module example.com/hello\n\ngo 1.20\n");
        p.write(
            "main.go",
            "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"go ok\") }\n",
        );
        let r = work(
            &ctx,
            "GOFLAGS=-mod=mod GOPROXY=off go build -o hello . && ./hello",
        )
        .await;
        assert!(r.content.contains("go ok"), "{}", r.content);
    }
    if have("uv") {
        let whl = wheel(&p.root);
        let r = work(
            &ctx,
            &format!(
                "uv venv -q .uvenv && VIRTUAL_ENV=.uvenv uv pip install -q --offline --no-index {} && \
                 .uvenv/bin/python -c 'import localpkg; print(\"uv ok\")'",
                whl.display()
            ),
        )
        .await;
        assert!(r.content.contains("uv ok"), "{}", r.content);
    }
    if have("pnpm") {
        p.write(
            "pnpm/package.json",
            r#"{"name": "p", "version": "1.0.0", "scripts": {"test": "node -e \"console.log('pnpm ok')\""}}"#,
        );
        let r = work(&ctx, "cd pnpm && pnpm install --offline && pnpm test").await;
        assert!(r.content.contains("pnpm ok"), "{}", r.content);
    }
}
