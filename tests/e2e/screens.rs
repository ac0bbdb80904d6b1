//! The screens around the chat, through the real window: the trust dialog (listing
//! the folder's allow rules and hooks; Not now leaves the allow rules ignored, Trust
//! makes them count in `decode check`), rules added in settings landing in the file
//! of the level chosen (`.decode/settings.json`, `.decode/settings.local.json`, the
//! person's own) and changing the next verdict, each rule shown with its level, test
//! a call agreeing with `decode check`, the offline demo run to its end (its "always
//! allow" landing in `.decode/settings.local.json`), an always-allowed rule revoked in
//! settings, the API key stored in the
//! real Secret Service (and in no file under HOME), recent projects, and a saved
//! session continued in the window.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use decode_tests::desktop::{keyring_daemon, session_bus, wait_until, windows_named, xdotool};
use decode_tests::project::{decode_bin, TempProject};
use decode_tests::window::{tid, App};
use fantoccini::Locator;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::{reachable_when_small, settle, trust, wait_assistant, LONG, SHORT};

const KEY: &str = "sk-window-7311";

/// `decode check --json` in the project's environment: `(verdict, reason)`.
fn check(
    project: &TempProject,
    dir: &Path,
    tool: &str,
    subject: &str,
) -> anyhow::Result<(String, String)> {
    let out = std::process::Command::new(decode_bin())
        .args(["check", "--json", "--project"])
        .arg(dir)
        .args([tool, subject])
        .envs(project.env())
        .output()
        .context("running decode check")?;
    ensure!(out.status.success(), "decode check failed: {out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    Ok((
        v["verdict"].as_str().unwrap_or_default().to_string(),
        v["reason"].as_str().unwrap_or_default().to_string(),
    ))
}

async fn wait_file(path: &Path, what: impl Fn(&str) -> bool, why: &str) -> anyhow::Result<String> {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if what(&text) {
            return Ok(text);
        }
        if start.elapsed() > SHORT {
            bail!("{why}: {} reads {text:?}", path.display());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn project_path(app: &App) -> anyhow::Result<PathBuf> {
    let v = app
        .js("return document.querySelector('[data-testid=\"project-path\"]').textContent;")
        .await?;
    Ok(PathBuf::from(v.as_str().unwrap_or_default()))
}

async fn select(app: &App, testid: &str, value: &str) -> anyhow::Result<()> {
    let el = app.wait(testid, SHORT).await?;
    el.select_by_value(value)
        .await
        .with_context(|| format!("choosing {value} in {testid}"))?;
    Ok(())
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() {
                if let Ok(bytes) = std::fs::read(&p) {
                    if bytes.windows(needle.len()).any(|w| w == needle) {
                        found.push(p);
                    }
                }
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_settings_the_demo_and_the_key_from_the_window() -> anyhow::Result<()> {
    let project = TempProject::new()?;
    project.write(
        ".decode/settings.json",
        "{\"permissions\": {\"allow\": [\"bash(make lint)\"]}, \"keep\": \"me\",\n \
         \"hooks\": {\"preToolUse\": [{\"matcher\": \"Bash\", \"command\": \"echo guard-checked\"}]}}\n",
    )?;
    let _bus = session_bus(&project)?;
    keyring_daemon(&project)?;
    let app = App::start(&project, &[project.path().display().to_string()]).await?;
    let result = screens(&app, &project).await;
    if result.is_err() {
        let _ = app.shot("screens-failure").await;
    }
    app.close().await;
    result
}

async fn screens(app: &App, project: &TempProject) -> anyhow::Result<()> {
    let dir = project.path().to_path_buf();

    // First open of an untrusted folder: the trust dialog lists what it would grant.
    let dialog = app.wait("trust-dialog", SHORT).await?;
    ensure!(dialog.text().await?.contains("bash(make lint)"));
    // …and the hooks it would run, before the person trusts it.
    let hooks = app.wait("trust-hooks", SHORT).await?.text().await?;
    ensure!(
        hooks.contains("preToolUse")
            && hooks.contains("Bash")
            && hooks.contains("echo guard-checked")
            && hooks.contains(".decode/settings.json"),
        "{hooks:?}"
    );
    app.shot("20-trust-dialog").await?;
    reachable_when_small(app, "20b-trust-dialog").await?;
    settle().await;
    app.click("trust-later").await?;
    app.wait_gone("trust-dialog", SHORT).await?;
    app.wait_text("status-trust", "untrusted", SHORT).await?;
    ensure!(check(project, &dir, "bash", "make lint")?.0 == "ask");

    // Trusting it from the status bar: its allow rule counts at once.
    app.click("status-trust").await?;
    app.wait("trust-dialog", SHORT).await?;
    settle().await;
    app.click("trust-accept").await?;
    app.wait_gone("status-trust", SHORT).await?;
    ensure!(check(project, &dir, "bash", "make lint")?.0 == "allow");

    // A rule added in settings lands in the file (other keys kept) and changes the verdict.
    app.click("settings-open").await?;
    app.wait("settings-dialog", SHORT).await?;
    app.wait("settings-rule", SHORT).await?;
    settle().await;
    ensure!(check(project, &dir, "bash", "make clean")?.0 == "ask");
    select(app, "settings-rule-list", "deny").await?;
    app.fill("settings-rule-input", "bash(make clean)").await?;
    app.click("settings-rule-add").await?;
    let settings = dir.join(".decode/settings.json");
    let text = wait_file(
        &settings,
        |t| t.contains("make clean"),
        "the rule was not saved",
    )
    .await?;
    let v: serde_json::Value = serde_json::from_str(&text)?;
    ensure!(
        v["permissions"]["deny"] == serde_json::json!(["bash(make clean)"]),
        "{v}"
    );
    ensure!(v["keep"] == "me", "an unknown key was lost: {v}");
    ensure!(check(project, &dir, "bash", "make clean")?.0 == "deny");
    // The list follows the backend's answer, which may come after the file is written.
    let start = Instant::now();
    loop {
        let sources = app
            .js("return [...document.querySelectorAll('[data-testid=\"settings-rule\"]')].map(e => e.dataset.source + ':' + e.dataset.rule);")
            .await?;
        if sources.to_string().contains("project:bash(make clean)") {
            break;
        }
        ensure!(
            start.elapsed() < SHORT,
            "the rule list never showed the new rule: {sources}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The same at the other levels the person may write: this project, only me
    // (`.decode/settings.local.json`) and every project (their own file); each rule
    // is shown with its level.
    select(app, "settings-rule-list", "ask").await?;
    select(app, "settings-rule-level", "local").await?;
    app.fill("settings-rule-input", "bash(make dist)").await?;
    app.click("settings-rule-add").await?;
    let local = wait_file(
        &dir.join(".decode/settings.local.json"),
        |t| t.contains("make dist"),
        "the local rule was not saved",
    )
    .await?;
    let v: serde_json::Value = serde_json::from_str(&local)?;
    ensure!(
        v["permissions"]["ask"] == serde_json::json!(["bash(make dist)"]),
        "{v}"
    );
    ensure!(check(project, &dir, "bash", "make dist")?.0 == "ask");
    select(app, "settings-rule-list", "deny").await?;
    select(app, "settings-rule-level", "user").await?;
    app.fill("settings-rule-input", "bash(make nuke)").await?;
    app.click("settings-rule-add").await?;
    wait_file(
        &project.home.join(".config/decode/settings.json"),
        |t| t.contains("make nuke"),
        "the user rule was not saved",
    )
    .await?;
    ensure!(check(project, &dir, "bash", "make nuke")?.0 == "deny");
    ensure!(
        !std::fs::read_to_string(&settings)?.contains("make dist")
            && !std::fs::read_to_string(&settings)?.contains("make nuke"),
        "the team's file got a rule of another level"
    );
    let start = Instant::now();
    loop {
        let shown = app
            .js("return [...document.querySelectorAll('[data-testid=\"settings-rule\"]')].map(e => e.dataset.source + ':' + e.dataset.rule + ':' + e.textContent);")
            .await?;
        let shown: Vec<String> = serde_json::from_value(shown)?;
        let row = |prefix: &str| shown.iter().find(|r| r.starts_with(prefix)).cloned();
        if let (Some(p), Some(l), Some(u)) = (
            row("project:bash(make clean)"),
            row("local:bash(make dist)"),
            row("user:bash(make nuke)"),
        ) {
            // The level is written on each row, not only in the data.
            ensure!(
                p.contains("project (.decode/settings.json)")
                    && l.contains("local (.decode/settings.local.json)")
                    && u.contains("user (every project)"),
                "{p:?} {l:?} {u:?}"
            );
            break;
        }
        ensure!(
            start.elapsed() < SHORT,
            "the rule list never showed every level: {shown:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The rule rows themselves, small: each row one unit, "remove" on its line.
    app.js(
        "document.querySelector('[data-testid=\"settings-rule\"]').scrollIntoView(); return true;",
    )
    .await?;
    reachable_when_small(app, "21a-settings-rules").await?;
    app.js("document.querySelector('[data-testid=\"settings-rule-add\"]').scrollIntoView(); return true;")
        .await?;
    app.shot("21-settings-levels").await?;
    select(app, "settings-rule-level", "project").await?;

    // An invalid rule is refused with the reason, and nothing is written.
    app.fill("settings-rule-input", "bash(").await?;
    app.click("settings-rule-add").await?;
    app.wait("settings-rule-error", SHORT).await?;
    ensure!(std::fs::read_to_string(&settings)? == text);
    // An allow rule that lets any code run waits for a confirmation, which saves it.
    select(app, "settings-rule-list", "allow").await?;
    app.fill("settings-rule-input", "bash(python3 *)").await?;
    app.click("settings-rule-add").await?;
    let warning = app
        .wait_text("settings-rule-warning", "any code", SHORT)
        .await?;
    ensure!(warning.contains("python3"), "{warning}");
    ensure!(
        std::fs::read_to_string(&settings)? == text,
        "saved before the confirmation"
    );
    app.shot("20b-settings-risky-rule").await?;
    app.click("settings-rule-confirm").await?;
    wait_file(
        &settings,
        |t| t.contains("bash(python3 *)"),
        "the confirmed rule was not saved",
    )
    .await?;
    app.wait_gone("settings-rule-warning", SHORT).await?;

    // Test a call shows what `decode check` says.
    app.fill("settings-test-call", "bash git push origin main")
        .await?;
    app.click("settings-test-run").await?;
    let result = app.wait("settings-test-result", SHORT).await?;
    let (verdict, reason) = check(project, &dir, "bash", "git push origin main")?;
    ensure!(result.attr("data-verdict").await?.as_deref() == Some(verdict.as_str()));
    let shown = result.text().await?;
    ensure!(shown.contains(&reason), "{shown:?} lacks {reason:?}");
    app.js("document.querySelector('[data-testid=\"settings-test-result\"]').scrollIntoView(); return true;")
        .await?;
    app.shot("21-settings-test-call").await?;
    reachable_when_small(app, "21b-settings").await?;
    app.click("settings-close").await?;
    app.wait_gone("settings-dialog", SHORT).await?;

    // First run: the offline demo, to its end.
    app.wait("first-run", SHORT).await?;
    app.shot("22-first-run").await?;
    app.click("demo-start").await?;
    app.wait("approval-dialog", LONG).await?;
    let demo = project_path(app).await?;
    ensure!(
        demo != dir && demo.join("test.sh").is_file(),
        "{}",
        demo.display()
    );
    // "Always allow" saves for this project, only me, unless the person chooses.
    let target = app
        .js("return document.querySelector('[data-testid=\"approval-target\"]').value;")
        .await?;
    ensure!(target == "local", "{target}");
    app.shot("23-demo-ask").await?;
    settle().await;
    app.click("approve-always").await?;
    wait_assistant(app, "runs without asking").await?;
    // The next ask is the edit (the saved rule let the command through).
    app.wait("approval-dialog", LONG).await?;
    app.wait("diff", SHORT).await?;
    // An ordinary ask (the demo is not in one of Decode's protected folders).
    app.wait("approve-always", SHORT).await?;
    settle().await;
    // The feedback box sits below the "always allow saves it for" choice: in view first.
    app.js("document.querySelector('[data-testid=\"deny-feedback\"]').scrollIntoView({block: 'center'}); return true;")
        .await?;
    app.fill("deny-feedback", "keep the greeting as it is")
        .await?;
    app.click("deny").await?;
    app.wait("plan-dialog", LONG).await?;
    app.shot("24-demo-plan").await?;
    settle().await;
    app.click("plan-approve").await?;
    wait_assistant(app, "That was the tour").await?;
    app.shot("25-demo-done").await?;
    let demo_local = std::fs::read_to_string(demo.join(".decode/settings.local.json"))?;
    ensure!(demo_local.contains("bash(./test.sh)"), "{demo_local}");
    let demo_shared =
        std::fs::read_to_string(demo.join(".decode/settings.json")).unwrap_or_default();
    ensure!(!demo_shared.contains("test.sh"), "{demo_shared}");
    ensure!(std::fs::read_to_string(demo.join("greet.sh"))?.contains("Hello,"));
    let sessions = project.home.join(".local/share/decode/sessions");
    let feedback_reached = files_containing(&sessions, b"keep the greeting as it is");
    ensure!(
        !feedback_reached.is_empty(),
        "the denial's feedback is in no transcript"
    );

    // The always-allowed rule is marked in settings; revoking it makes the call ask again.
    ensure!(check(project, &demo, "bash", "./test.sh")?.0 == "allow");
    app.click("settings-open").await?;
    app.wait("settings-rule-always", SHORT).await?;
    settle().await;
    let revoke = app
        .client
        .find(Locator::Css(
            "[data-testid=\"settings-rule\"][data-source=\"local\"][data-rule=\"bash(./test.sh)\"] [data-testid=\"settings-rule-remove\"]",
        ))
        .await
        .context("the always-allowed rule is not shown at the local level with a revoke button")?;
    revoke.click().await?;
    wait_file(
        &demo.join(".decode/settings.local.json"),
        |t| !t.contains("test.sh"),
        "the rule was not revoked",
    )
    .await?;
    ensure!(check(project, &demo, "bash", "./test.sh")?.0 == "ask");

    // The key: typed once, stored in the Secret Service, shown only as "set".
    select(app, "settings-provider", "anthropic").await?;
    app.wait_text("settings-key-status", "not set", SHORT)
        .await?;
    app.fill("settings-key-input", KEY).await?;
    app.click("settings-key-save").await?;
    app.wait_text("settings-key-status", "set", SHORT).await?;
    let html = app.js("return document.documentElement.outerHTML;").await?;
    ensure!(!html.to_string().contains(KEY), "the key is in the page");
    app.shot("26-settings-key").await?;
    app.click("settings-close").await?;
    app.wait_gone("first-run", SHORT).await?;
    key_reaches_the_provider(project).await?;
    let leaked = files_containing(&project.home, KEY.as_bytes());
    ensure!(leaked.is_empty(), "the key is written in {leaked:?}");

    // Recent projects: both folders, most recent first; back to the first one.
    app.click("project-menu").await?;
    app.wait("recent-project", SHORT).await?;
    let listed = app
        .js("return [...document.querySelectorAll('[data-testid=\"recent-project\"]')].map(e => e.dataset.path);")
        .await?;
    let listed: Vec<String> = serde_json::from_value(listed)?;
    ensure!(
        listed == vec![demo.display().to_string(), dir.display().to_string()],
        "{listed:?}"
    );
    app.shot("27-recent-projects").await?;
    let back = app
        .client
        .find(Locator::Css(&format!(
            "{}[data-path=\"{}\"]",
            tid("recent-project"),
            dir.display()
        )))
        .await?;
    back.click().await?;
    let start = Instant::now();
    while project_path(app).await.ok().as_deref() != Some(dir.as_path()) {
        ensure!(start.elapsed() < LONG, "the window did not move back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    app.wait_text("status-mode", "default", SHORT).await?;

    // Another folder through the native folder picker (GTK, driven with real keys).
    let other = project.home.join("picked-project");
    std::fs::create_dir_all(&other)?;
    let other = other.canonicalize()?;
    app.click("open-project").await?;
    // GTK's file chooser has been seen to crash under Xvfb while the path is typed;
    // Decode then shows it again once, and the keys are typed again into that one.
    let mut moved = false;
    for _attempt in 0..2 {
        let mut picker = Vec::new();
        if wait_until(LONG, || {
            picker = windows_named("Open a project folder");
            !picker.is_empty()
        })
        .is_err()
        {
            break;
        }
        xdotool(&["windowfocus", "--sync", &picker[0]])?;
        xdotool(&["key", "ctrl+l"])?;
        xdotool(&["type", "--delay", "20", &other.display().to_string()])?;
        xdotool(&["key", "Return"])?;
        let start = Instant::now();
        while start.elapsed() < SHORT {
            if project_path(app).await.ok().as_deref() == Some(other.as_path()) {
                moved = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if moved {
            break;
        }
    }
    ensure!(moved, "the window did not open the picked folder");
    // A new untrusted folder that grants itself nothing: no trust question, the
    // status bar says it is untrusted.
    app.wait_text("status-trust", "untrusted", SHORT).await?;
    app.shot("28-picked-folder").await?;
    Ok(())
}

/// `decode run` with no key variable sends the key the window stored.
async fn key_reaches_the_provider(project: &TempProject) -> anyhow::Result<()> {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(500).set_body_string("{\"error\":\"fake\"}"))
        .mount(&server)
        .await;
    let out = std::process::Command::new(decode_bin())
        .args(["run", "--project"])
        .arg(project.path())
        .args(["--provider", "anthropic", "--base-url"])
        .arg(format!("{}/v1", server.uri()))
        .args(["--model", "m", "-p", "hello"])
        .envs(project.env())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("DECODE_API_KEY")
        .stdin(std::process::Stdio::null())
        .output()?;
    let sent: Vec<String> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| {
            r.headers
                .get("x-api-key")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        })
        .collect();
    ensure!(
        !sent.is_empty() && sent.iter().all(|k| k == KEY),
        "the key stored in the window did not reach the provider: {sent:?}; {out:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_session_continues_in_the_window() -> anyhow::Result<()> {
    let project = TempProject::new()?;
    trust(&project)?;
    let script = project.home.join("script.json");
    std::fs::write(
        &script,
        serde_json::json!({"turns": [
            {"text": "The first answer."},
            {"text": "The second answer, with the first in view."}
        ]})
        .to_string(),
    )?;
    let out = std::process::Command::new(decode_bin())
        .args(["run", "--project"])
        .arg(project.path())
        .args(["--provider", "script", "--script"])
        .arg(&script)
        .args(["-p", "the first question"])
        .envs(project.env())
        .stdin(std::process::Stdio::null())
        .output()?;
    ensure!(out.status.success(), "decode run failed: {out:?}");
    let args = vec![
        project.path().display().to_string(),
        "--provider".into(),
        "script".into(),
        "--script".into(),
        script.display().to_string(),
    ];
    let app = App::start(&project, &args).await?;
    let result = sessions(&app, &project).await;
    if result.is_err() {
        let _ = app.shot("sessions-failure").await;
    }
    app.close().await;
    result
}

async fn sessions(app: &App, project: &TempProject) -> anyhow::Result<()> {
    app.click("sessions-open").await?;
    app.wait("session-item", SHORT).await?;
    let title = app
        .js("return document.querySelector('[data-testid=\"session-item\"]').textContent;")
        .await?;
    ensure!(
        title
            .as_str()
            .unwrap_or_default()
            .contains("the first question"),
        "{title}"
    );
    app.shot("29a-sessions-list").await?;
    reachable_when_small(app, "29a-sessions-list").await?;
    // Every dialog ignores pointer input for its first 400 ms, as a person's would wait.
    tokio::time::sleep(Duration::from_millis(450)).await;
    let item = app.wait("session-item", SHORT).await?;
    item.click().await?;
    app.wait("session-transcript", SHORT).await?;
    wait_assistant(app, "The first answer.").await?;
    app.shot("29-session-view").await?;
    reachable_when_small(app, "29b-session-view").await?;
    settle().await;
    app.click("session-continue").await?;
    app.wait_gone("sessions-dialog", SHORT).await?;
    // The page starts over on the resumed session: its history, then the next turn.
    wait_assistant(app, "The first answer.").await?;
    app.send("the second question").await?;
    wait_assistant(app, "with the first in view").await?;
    app.shot("30-session-continued").await?;
    let dir = project.home.join(".local/share/decode/sessions");
    let files: Vec<_> = std::fs::read_dir(&dir)?.flatten().collect();
    ensure!(files.len() == 1, "one transcript, continued: {files:?}");
    let text = std::fs::read_to_string(files[0].path())?;
    ensure!(text.contains("the first question") && text.contains("the second question"));
    Ok(())
}
