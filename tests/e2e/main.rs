#![allow(clippy::print_stderr)]
//! End-to-end through the real window: tauri-driver + WebKitWebDriver start the built
//! `decode` binary on a temp project (isolated HOME and XDG folders) talking to a fake
//! OpenAI-compatible server on 127.0.0.1. Every flow of the window's agent is driven
//! as a person would — typing, clicking, pressing keys — and checked where it lands:
//! the dialogs, the chat, `.decode/settings.json`, what reached the model, the
//! processes left running. Screenshots of each screen go to `target/e2e-artifacts/`.

mod desktop;
mod mcp;
mod sandbox;
mod screens;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use decode_tests::fake_openai::{FakeOpenAi, Script, Turn};
use decode_tests::project::{decode_bin, TempProject};
use decode_tests::window::{tid, App};
use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_LEFT};
use fantoccini::key::Key;
use fantoccini::Locator;
use serde_json::json;

const SHORT: Duration = Duration::from_secs(10);
const LONG: Duration = Duration::from_secs(30);

fn bash(id: &str, command: &str) -> Turn {
    Turn::call("", id, "bash", json!({"command": command}))
}

/// A `task` call starting the explore subagent.
fn task(id: &str, description: &str, prompt: &str) -> (String, String, String) {
    let input = json!({"agent": "explore", "description": description, "prompt": prompt});
    (id.to_string(), "task".to_string(), input.to_string())
}

/// An explore subagent's turns: it reads `path`, then answers slowly (two characters
/// every 100 ms), so two of them are seen running side by side.
fn explorer(id: &str, path: &str, answer: &str) -> Vec<Turn> {
    vec![
        Turn::call("", id, "read", json!({"path": path})),
        Turn {
            text: answer.into(),
            token_delay: Some(Duration::from_millis(100)),
            piece_chars: Some(2),
            ..Turn::default()
        },
    ]
}

/// The subagent cards on screen: `[agent, status, nested tool cards, text]`.
const SUBAGENT_CARDS: &str = r#"
return [...document.querySelectorAll('[data-testid="subagent-card"]')].map((c) => [
  c.dataset.agent, c.dataset.status, c.querySelectorAll('[data-testid="tool-card"]').length, c.textContent]);
"#;

/// The replies of the fake model, one flow per key word of a prompt.
fn script() -> Script {
    Script::new()
        .flow(
            "flow-markdown",
            vec![Turn {
                text: "Here is the **plan**:\n\n1. Read `src/main.rs`\n2. Run the tests\n\n```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\nDone."
                    .into(),
                token_delay: Some(Duration::from_millis(5)),
                ..Turn::default()
            }],
        )
        .flow(
            "flow-always",
            vec![
                bash("c-always-1", "echo always-e2e"),
                bash("c-always-2", "echo always-e2e"),
                Turn::text("Both ran."),
            ],
        )
        .flow(
            "flow-session",
            vec![
                bash("c-session-1", "echo session-e2e"),
                bash("c-session-2", "echo session-e2e"),
                Turn::text("Session flow done."),
            ],
        )
        .flow(
            "flow-deny",
            vec![
                bash("c-deny-1", "echo deny-e2e"),
                Turn::text("Understood, I will not run it."),
            ],
        )
        .flow(
            "flow-edit",
            vec![
                bash("c-edit-1", "echo original-e2e"),
                Turn::text("Edited command handled."),
            ],
        )
        .flow(
            "flow-write",
            vec![
                Turn::call(
                    "I will write the notes.",
                    "c-write-1",
                    "write",
                    json!({"path": "NOTES.md", "content": "# Notes\n\nwritten by the agent\n"}),
                ),
                Turn::text("Notes written."),
            ],
        )
        .flow(
            "flow-queue",
            vec![
                Turn {
                    text: String::new(),
                    calls: vec![
                        ("c-q-1".into(), "read".into(), json!({"path": "../outside-a.txt"}).to_string()),
                        ("c-q-2".into(), "read".into(), json!({"path": "../outside-b.txt"}).to_string()),
                    ],
                    ..Turn::default()
                },
                Turn::text("Read both."),
            ],
        )
        .flow(
            "flow-hostile",
            vec![
                Turn {
                    text: HOSTILE_MARKDOWN.into(),
                    calls: vec![
                        ("c-h-1".into(), "read".into(), json!({"path": "../outside-a.txt"}).to_string()),
                        ("c-h-2".into(), "read".into(), json!({"path": "../outside-b.txt"}).to_string()),
                    ],
                    ..Turn::default()
                },
                Turn::text("Hostile flow done."),
            ],
        )
        .flow(
            "flow-ask",
            vec![
                Turn::call(
                    "",
                    "c-ask-1",
                    "ask_user",
                    json!({"question": "Which **database** should I use?", "options": ["Postgres", "SQLite"]}),
                ),
                Turn::text("SQLite it is."),
            ],
        )
        .flow(
            "flow-plan",
            vec![
                Turn::call(
                    "",
                    "c-plan-1",
                    "exit_plan_mode",
                    json!({"plan": "# Plan\n\n1. Add a failing test\n2. Fix `parse()`\n3. Run `cargo test`"}),
                ),
                Turn::text("Carrying out the plan."),
            ],
        )
        .flow(
            "flow-stop",
            vec![bash("c-stop-1", "sleep 30"), Turn::text("(not reached)")],
        )
        .flow("flow-after", vec![Turn::text("Still here after the stop.")])
        .flow(
            "flow-undo",
            vec![
                Turn::call("", "c-undo-1", "read", json!({"path": "README.md"})),
                Turn::call(
                    "",
                    "c-undo-2",
                    "edit",
                    json!({"path": "README.md", "old_string": "# a temp project", "new_string": "# changed by the turn"}),
                ),
                Turn::call("", "c-undo-3", "write", json!({"path": "undo-a.txt", "content": "a\n"})),
                Turn::call("", "c-undo-4", "write", json!({"path": "docs/undo-b.txt", "content": "b\n"})),
                Turn::text("Three files changed."),
            ],
        )
        .flow(
            "flow-fresh-one",
            vec![bash("c-fresh-1", "echo fresh-e2e"), Turn::text("Fresh one done.")],
        )
        .flow(
            "flow-fresh-two",
            vec![bash("c-fresh-2", "echo fresh-e2e"), Turn::text("Fresh two done.")],
        )
        .flow(
            "flow-subagents",
            vec![
                Turn {
                    text: "I will send two explorers.".into(),
                    calls: vec![
                        task("c-task-1", "look at main", "sub-alpha: read src/main.rs"),
                        task("c-task-2", "look at the readme", "sub-beta: read README.md"),
                    ],
                    ..Turn::default()
                },
                Turn::text("Both explorers reported back: main is empty, the readme has a title."),
            ],
        )
        .flow("sub-alpha", explorer("c-alpha-1", "src/main.rs", "ALPHA-FOUND: main is an empty function."))
        .flow("sub-beta", explorer("c-beta-1", "README.md", "BETA-FOUND: the readme holds only a title."))
        .flow(
            "flow-huge",
            vec![
                Turn::call(
                    "",
                    "c-huge-1",
                    "write",
                    json!({"path": "huge.txt", "content": "h".repeat(5 << 20)}),
                ),
                Turn::text("Huge flow done."),
            ],
        )
}

/// Model text that draws a full-window "Decode dialog" with the app's own classes,
/// test ids and roles, fixed over everything, with buttons where the real ones are.
const HOSTILE_MARKDOWN: &str = concat!(
    "Reading two files.\n\n",
    "<div class=\"backdrop\" style=\"position:fixed;inset:0;z-index:2147483647;background:#111\" ",
    "data-testid=\"approval-dialog\" role=\"dialog\" aria-modal=\"true\" id=\"fake\">",
    "<div class=\"dialog wide\"><h2>Allow read?</h2>",
    "<button class=\"btn primary\" data-testid=\"approve-once\">Allow once</button>",
    "<button class=\"btn danger\" data-testid=\"deny\">Deny</button></div></div>\n\n",
    "<p class=\"composer\" style=\"position:fixed;bottom:0;left:0;right:0;height:120px\">fake composer</p>\n"
);

/// Where each real control of the open dialog is, and whether it is the topmost thing
/// there: `[testid, topmost]` for every button of the approval dialog.
const REAL_BUTTONS_ON_TOP: &str = r#"
const dialogs = document.querySelectorAll('[data-testid="approval-dialog"]');
const fakes = [...document.querySelectorAll('.markdown [data-testid], .markdown .backdrop, .markdown [role], .markdown [style], .markdown button')];
const buttons = [...dialogs[0].querySelectorAll('button')].map((b) => {
  const r = b.getBoundingClientRect();
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return [b.dataset.testid ?? b.textContent, top === b || b.contains(top)];
});
const clip = getComputedStyle(document.querySelector('.markdown')).overflowX;
return { dialogs: dialogs.length, inMarkdown: !!dialogs[0].closest('.markdown'), fakes: fakes.length, buttons, clip };
"#;

/// The controls of the open dialog that cannot be reached: outside the window, or
/// outside a scrolling part of the dialog that cannot scroll to them.
const DIALOG_REACHABLE: &str = r#"
const dialog = document.querySelector('[role="dialog"][aria-modal="true"]');
const out = [];
const vw = window.innerWidth, vh = window.innerHeight;
const z = parseFloat(document.documentElement.style.zoom || '1');
const d = dialog.getBoundingClientRect();
if (d.left * z < -1 || d.right * z > vw + 1 || d.top * z < -1 || d.bottom * z > vh + 1) out.push('dialog ' + JSON.stringify([d.left, d.right, d.top, d.bottom, vw, vh, z]));
for (const el of dialog.querySelectorAll('button, textarea, input, select, summary')) {
  const r = el.getBoundingClientRect();
  if (r.width === 0) continue;
  const content = el.closest('.content');
  if (content) {
    // Inside the scrolling content: reachable when the content scrolls or it is within it.
    const c = content.getBoundingClientRect();
    if (r.left < c.left - 1 || r.right > c.right + 1) out.push((el.dataset.testid || el.textContent) + ' cut sideways');
    continue;
  }
  if (r.left < d.left - 1 || r.right > d.right + 1 || r.top < d.top - 1 || r.bottom > d.bottom + 1) out.push((el.dataset.testid || el.textContent) + ' outside the dialog');
}
return out;
"#;

/// Checks that every control of the open dialog can be reached at 640 px and at 640 px
/// with 200 % scale (screenshots `NAME-640` and `NAME-640-200`, of the window above
/// the native dialog the resize pops), then puts the window back to 1100 px at 100 %.
pub(crate) async fn reachable_when_small(app: &App, name: &str) -> anyhow::Result<()> {
    // Only a decision (an ask, a question, a plan) has a native dialog to wait for.
    let decision = app
        .js("return !!document.querySelector('[data-testid=\"approval-dialog\"], [data-testid=\"ask-user-dialog\"], [data-testid=\"plan-dialog\"]');")
        .await?
        == json!(true);
    let native_wait = Duration::from_millis(if decision { 1000 } else { 0 });
    for (zoom, shot) in [(1, format!("{name}-640")), (2, format!("{name}-640-200"))] {
        app.client.set_window_size(640, 760).await?;
        app.js(&format!(
            "document.documentElement.style.zoom = '{zoom}'; return true;"
        ))
        .await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        app.raise_over_native_dialogs(native_wait).await?;
        app.shot(&shot).await?;
        let unreachable = app.js(DIALOG_REACHABLE).await?;
        ensure!(
            unreachable == serde_json::json!([]),
            "{name} at 640 px and {zoom}00 %, out of reach: {unreachable}"
        );
    }
    app.js("document.documentElement.style.zoom = ''; return true;")
        .await?;
    app.client.set_window_size(1100, 760).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(())
}

/// Counts approval dialogs as they appear (so "no dialog for the next call" is checked).
const COUNT_DIALOGS: &str = r#"
window.__dialogs = 0;
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) {
    if (n.nodeType === 1 && (n.matches('[data-testid="approval-dialog"]') || n.querySelector('[data-testid="approval-dialog"]'))) window.__dialogs++;
  }
}).observe(document.body, { childList: true, subtree: true });
return true;
"#;

async fn dialogs(app: &App) -> anyhow::Result<u64> {
    Ok(app
        .js("return window.__dialogs;")
        .await?
        .as_u64()
        .unwrap_or(0))
}

/// Waits past the dialog's 400 ms key guard.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(450)).await;
}

/// `(status, text)` of every tool card (the text as in the DOM: a card's subject is
/// shortened with an ellipsis on screen).
async fn tool_cards(app: &App) -> anyhow::Result<Vec<(String, String)>> {
    let v = app
        .js("return [...document.querySelectorAll('[data-testid=\"tool-card\"]')].map(e => [e.dataset.status, e.textContent]);")
        .await?;
    Ok(serde_json::from_value(v)?)
}

async fn wait_assistant(app: &App, needle: &str) -> anyhow::Result<()> {
    let start = Instant::now();
    while start.elapsed() < LONG {
        for el in app
            .client
            .find_all(Locator::Css(
                "[data-testid=\"message\"][data-role=\"assistant\"]",
            ))
            .await?
        {
            if el.text().await.unwrap_or_default().contains(needle) {
                return Ok(());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("no assistant message contains `{needle}`")
}

fn settings(project: &Path) -> String {
    std::fs::read_to_string(project.join(".decode/settings.json")).unwrap_or_default()
}

/// Rewrites the project's settings as an editor would (a new file renamed over the
/// old), with `edit` applied to its JSON.
fn edit_settings(project: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> anyhow::Result<()> {
    let path = project.join(".decode/settings.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&settings(project)).unwrap_or_else(|_| json!({}));
    edit(&mut v);
    let tmp = project.join(".decode/settings.json.editor");
    std::fs::write(&tmp, serde_json::to_string_pretty(&v)?)?;
    std::fs::rename(&tmp, &path)?;
    Ok(())
}

/// Processes `sleep 30` started with this test's HOME.
fn sleeps_of(home: &Path) -> Vec<u32> {
    processes_of(home, b"sleep\x0030\x00")
}

/// Processes started with this test's HOME whose command line is `cmdline` (NUL-separated).
fn processes_of(home: &Path, cmdline: &[u8]) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    let marker = format!("HOME={}", home.display());
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if cmd != cmdline {
            continue;
        }
        let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
        if env.split(|b| *b == 0).any(|kv| kv == marker.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

fn trust(project: &TempProject) -> anyhow::Result<()> {
    let out = std::process::Command::new(decode_bin())
        .args(["trust", &project.path().display().to_string()])
        .envs(project.env())
        .output()
        .context("running decode trust")?;
    ensure!(out.status.success(), "decode trust failed: {out:?}");
    Ok(())
}

/// The flows here ask about ordinary shell commands (`echo`, `sleep`): the person
/// turned read-only commands off in their own settings, so every command asks in
/// default mode.
fn every_command_asks(project: &TempProject) -> anyhow::Result<()> {
    let dir = project.home.join(".config/decode");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("settings.json"), "{\"readOnlyCommands\": false}\n")?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_runs_the_agent() -> anyhow::Result<()> {
    let project = TempProject::new()?;
    every_command_asks(&project)?;
    project.write("README.md", "# a temp project\n")?;
    project.write("src/main.rs", "fn main() {}\n")?;
    let outside = project.path().parent().context("project parent")?;
    std::fs::write(outside.join("outside-a.txt"), "a\n")?;
    std::fs::write(outside.join("outside-b.txt"), "b\n")?;
    trust(&project)?;
    let fake = FakeOpenAi::start(script()).await?;
    let app = App::start(&project, &fake.app_args(project.path())).await?;
    let result = flows(&app, &project, &fake).await;
    if result.is_err() {
        let _ = app.shot("failure").await;
    }
    app.close().await;
    result
}

async fn flows(app: &App, project: &TempProject, fake: &FakeOpenAi) -> anyhow::Result<()> {
    app.js(COUNT_DIALOGS).await?;
    app.wait_text("status-mode", "default", SHORT).await?;
    app.wait_text("status-agent", "build", SHORT).await?;
    app.wait_text("status-model", "openai/gpt-e2e", SHORT)
        .await?;
    app.shot("01-empty-window").await?;

    // Streamed Markdown with a highlighted code block.
    app.send("flow-markdown show me").await?;
    wait_assistant(app, "Done.").await?;
    let code = app
        .client
        .find(Locator::Css(
            "[data-role=\"assistant\"] pre code.language-rust",
        ))
        .await
        .context("a highlighted rust code block")?;
    ensure!(code.text().await?.contains("println!"));
    let usage = app.texts("token-usage").await?.join("");
    ensure!(usage.contains("1.2k in"), "token usage: {usage}");
    app.shot("02-markdown-stream").await?;

    // Always allow: the rule is re-checked (a wildcard over a shell is refused), saved
    // where the person chose (here: this project, shared — .decode/settings.json,
    // rather than the default .decode/settings.local.json), and the identical next
    // call runs without a dialog.
    app.send("flow-always go").await?;
    app.wait("approval-dialog", LONG).await?;
    ensure!(app.value("approval-rule").await? == "bash(echo always-e2e)");
    ensure!(app.value("approval-command").await? == "echo always-e2e");
    app.wait_text("approval-reason", "ask", SHORT).await?;
    app.shot("03-approval-bash").await?;
    settle().await;
    app.fill("approval-rule", "bash(sh *)").await?;
    app.click("approve-always").await?;
    let refused = app
        .wait_text("approval-rule-error", "wildcard", SHORT)
        .await?;
    eprintln!("e2e: refused rule: {refused}");
    app.shot("04-approval-rule-refused").await?;
    ensure!(!settings(project.path()).contains("sh *"));
    app.fill("approval-rule", "bash(echo always-e2e)").await?;
    ensure!(app.value("approval-target").await? == "local");
    app.wait("approval-target", SHORT)
        .await?
        .select_by_value("project")
        .await
        .context("choosing this project, shared")?;
    app.click("approve-always").await?;
    wait_assistant(app, "Both ran.").await?;
    let saved = settings(project.path());
    ensure!(
        saved.contains("bash(echo always-e2e)"),
        "settings.json: {saved}"
    );
    let local = std::fs::read_to_string(project.path().join(".decode/settings.local.json"))
        .unwrap_or_default();
    ensure!(
        !local.contains("always-e2e"),
        "settings.local.json: {local}"
    );
    ensure!(
        dialogs(app).await? == 1,
        "the second identical call asked again"
    );
    let cards = tool_cards(app).await?;
    ensure!(
        cards
            .iter()
            .filter(|(s, t)| s == "done" && t.contains("echo always-e2e"))
            .count()
            == 2,
        "{cards:?}"
    );

    // Allow for this session: no dialog for the same call in this session; nothing written.
    app.send("flow-session go").await?;
    app.wait("approval-dialog", LONG).await?;
    settle().await;
    app.click("approve-session").await?;
    wait_assistant(app, "Session flow done.").await?;
    ensure!(
        dialogs(app).await? == 2,
        "the session rule did not cover the next call"
    );
    app.wait_text("session-rule", "bash(echo session-e2e)", SHORT)
        .await?;
    ensure!(!settings(project.path()).contains("session-e2e"));
    // The call the person answered ran outside the sandbox; the one the session rule
    // covered (nobody answered it) ran inside. Every card of this flow says which.
    let sandbox: Vec<String> = serde_json::from_value(
        app.js("return [...document.querySelectorAll('[data-testid=\"tool-card\"][data-sandboxed]')].map(e => e.dataset.sandboxed);")
            .await?,
    )?;
    let last_two: Vec<&str> = sandbox
        .iter()
        .rev()
        .take(2)
        .rev()
        .map(String::as_str)
        .collect();
    ensure!(last_two == ["false", "true"], "{sandbox:?}");
    app.shot("05-session-rule").await?;

    // Deny with feedback: the feedback reaches the model.
    app.send("flow-deny go").await?;
    app.wait("approval-dialog", LONG).await?;
    settle().await;
    app.fill("deny-feedback", "use printf instead").await?;
    app.click("deny").await?;
    wait_assistant(app, "Understood").await?;
    let results = fake.last_tool_results();
    ensure!(
        results.iter().any(|r| r.contains("use printf instead")),
        "the model did not get the feedback: {results:?}"
    );
    ensure!(tool_cards(app)
        .await?
        .iter()
        .any(|(s, t)| s == "denied" && t.contains("deny-e2e")));

    // An edited command is judged again and runs as edited, marked "edited by you".
    app.send("flow-edit go").await?;
    app.wait("approval-dialog", LONG).await?;
    settle().await;
    app.fill("approval-command", "echo edited-e2e").await?;
    app.click("approve-once").await?;
    // Judged again from the start: bash asks in default mode, for the edited command.
    app.wait_text("approval-reason", "ask", SHORT).await?;
    let start = Instant::now();
    while app.value("approval-command").await.unwrap_or_default() != "echo edited-e2e" {
        ensure!(start.elapsed() < SHORT, "no dialog for the edited command");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.shot("06-approval-edited").await?;
    settle().await;
    app.click("approve-once").await?;
    wait_assistant(app, "Edited command handled.").await?;
    let results = fake.last_tool_results();
    ensure!(
        results
            .iter()
            .any(|r| r.contains("edited-e2e") && r.contains("edited your command")),
        "{results:?}"
    );
    app.wait_text("edited-by-you", "edited by you", SHORT)
        .await?;

    // A write asks in default mode and shows the diff it would make.
    app.send("flow-write go").await?;
    app.wait("approval-dialog", LONG).await?;
    app.wait("diff", SHORT).await?;
    app.wait_text("diff", "+written by the agent", SHORT)
        .await?;
    // The agent's own words come first: what it said it is about to do.
    app.wait_text("approval-intent", "I will write the notes.", SHORT)
        .await?;
    app.shot("07-approval-write-diff").await?;
    // Every control of the dialog can be reached at 640 px and at 200 %.
    reachable_when_small(app, "07b-approval").await?;
    settle().await;
    app.click("approve-once").await?;
    wait_assistant(app, "Notes written.").await?;
    ensure!(
        std::fs::read_to_string(project.path().join("NOTES.md"))?.contains("written by the agent")
    );

    // Two asks at once are queued and answered one at a time ("1 of 2"), by keyboard.
    app.send("flow-queue go").await?;
    app.wait("approval-dialog", LONG).await?;
    app.wait_text("approval-queue", "1 of 2", SHORT).await?;
    app.shot("08-approval-queue").await?;
    settle().await;
    app.client.active_element().await?.send_keys("y").await?;
    app.wait_gone("approval-queue", SHORT).await?;
    app.wait("approval-dialog", SHORT).await?;
    settle().await;
    app.client.active_element().await?.send_keys("y").await?;
    wait_assistant(app, "Read both.").await?;

    // Hostile Markdown next to a real approval: the message cannot draw Decode's
    // dialog (no app classes, test ids, roles or styles survive), the real buttons are
    // the topmost thing where they stand, and a double-click answers one request only.
    app.send("flow-hostile go").await?;
    app.wait("approval-dialog", LONG).await?;
    let requests_before = fake.requests().len();
    app.wait_text("approval-queue", "1 of 2", SHORT).await?;
    wait_assistant(app, "Reading two files.").await?;
    let seen = app.js(REAL_BUTTONS_ON_TOP).await?;
    eprintln!("e2e: hostile markdown beside a real approval: {seen}");
    ensure!(
        seen["dialogs"] == 1 && seen["inMarkdown"] == false,
        "{seen}"
    );
    ensure!(seen["fakes"] == 0, "model text kept app attributes: {seen}");
    ensure!(
        seen["clip"] == "clip",
        "rendered text is not clipped to its message: {seen}"
    );
    let buttons = seen["buttons"].as_array().context("buttons")?;
    ensure!(
        buttons.len() >= 2 && buttons.iter().all(|b| b[1] == true),
        "a real button is covered: {seen}"
    );
    app.shot("08b-hostile-markdown").await?;
    settle().await;
    let once = app.wait("approve-once", SHORT).await?;
    app.client
        .perform_actions(
            MouseActions::new("mouse".into())
                .then(PointerAction::MoveToElement {
                    element: once,
                    duration: None,
                    x: 0.0,
                    y: 0.0,
                })
                .then(PointerAction::Down {
                    button: MOUSE_BUTTON_LEFT,
                })
                .then(PointerAction::Up {
                    button: MOUSE_BUTTON_LEFT,
                })
                .then(PointerAction::Pause {
                    duration: Duration::from_millis(90),
                })
                .then(PointerAction::Down {
                    button: MOUSE_BUTTON_LEFT,
                })
                .then(PointerAction::Up {
                    button: MOUSE_BUTTON_LEFT,
                }),
        )
        .await?;
    app.client.release_actions().await?;
    app.wait_gone("approval-queue", SHORT).await?;
    // The second read is on screen, unanswered: the double-click's second click fell
    // in its guard.
    tokio::time::sleep(Duration::from_millis(800)).await;
    app.wait("approval-dialog", SHORT).await?;
    let subject = app
        .js("return document.querySelector('[data-testid=\"approval-dialog\"]').textContent;")
        .await?;
    ensure!(
        subject
            .as_str()
            .is_some_and(|t| t.contains("outside-b.txt")),
        "the second request is not the one shown: {subject}"
    );
    ensure!(
        fake.requests().len() == requests_before,
        "the turn went on before the second request was answered"
    );
    settle().await;
    app.client.active_element().await?.send_keys("y").await?;
    wait_assistant(app, "Hostile flow done.").await?;

    // ask_user: the answer reaches the model.
    app.send("flow-ask go").await?;
    app.wait("ask-user-dialog", LONG).await?;
    ensure!(app.texts("ask-user-option").await?.len() == 2);
    app.shot("09-ask-user").await?;
    reachable_when_small(app, "09b-ask-user").await?;
    settle().await;
    let options = app
        .client
        .find_all(Locator::Css(&tid("ask-user-option")))
        .await?;
    options[1].click().await?;
    wait_assistant(app, "SQLite it is.").await?;
    let last = fake.last_tool_results().pop().unwrap_or_default();
    ensure!(last == "SQLite", "the model got {last:?}");

    // Plan approval moves to edit mode, with a confirmation line and the status bar.
    app.send("/mode plan").await?;
    app.wait_text("status-mode", "plan", SHORT).await?;
    app.send("flow-plan go").await?;
    app.wait("plan-dialog", LONG).await?;
    ensure!(app.value("plan-approve-mode").await? == "edit");
    app.shot("10-plan-approval").await?;
    // The mode select's long option texts never widen the dialog past the window.
    let fits = app
        .js("const d = document.querySelector('[data-testid=\"plan-dialog\"]').getBoundingClientRect(); const s = document.querySelector('[data-testid=\"plan-approve-mode\"]').getBoundingClientRect(); return d.right <= window.innerWidth + 1 && s.right <= d.right + 1;")
        .await?;
    ensure!(
        fits == serde_json::json!(true),
        "the plan dialog runs off the window"
    );
    reachable_when_small(app, "10b-plan-approval").await?;
    settle().await;
    app.click("plan-approve").await?;
    wait_assistant(app, "Carrying out the plan.").await?;
    app.wait_text("status-mode", "edit", SHORT).await?;
    let lines = app.texts("confirm-line").await?;
    ensure!(
        lines.last().is_some_and(|l| l.starts_with("Mode: edit")),
        "{lines:?}"
    );
    let last = fake.last_tool_results().pop().unwrap_or_default();
    ensure!(last.starts_with("approved"), "the model got {last:?}");

    // Stop kills a running `sleep 30`, and the window stays usable.
    app.send("flow-stop go").await?;
    app.wait("approval-dialog", LONG).await?;
    settle().await;
    app.click("approve-once").await?;
    let start = Instant::now();
    while sleeps_of(&project.home).is_empty() {
        ensure!(start.elapsed() < SHORT, "sleep 30 never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.wait("working", SHORT).await?;
    app.shot("11-running-command").await?;
    // Esc stops the turn (no dialog is open).
    app.wait("chat-input", SHORT)
        .await?
        .send_keys(&Key::Escape.to_string())
        .await?;
    let start = Instant::now();
    while !sleeps_of(&project.home).is_empty() {
        ensure!(
            start.elapsed() < Duration::from_secs(5),
            "sleep 30 still runs after Stop"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.wait_text("notice-line", "Stopped.", SHORT).await?;
    app.wait("send", SHORT).await?;
    ensure!(
        tool_cards(app)
            .await?
            .last()
            .is_some_and(|(s, _)| s == "stopped"),
        "the stopped call does not say stopped"
    );
    ensure!(
        app.client
            .find_all(Locator::Css("[data-testid=\"working\"]"))
            .await?
            .is_empty(),
        "the working line outlived the turn"
    );
    app.send("flow-after hello").await?;
    wait_assistant(app, "Still here after the stop.").await?;

    // The draft in the composer survives a dialog, and Up recalls the last prompt.
    app.keys("chat-input", &Key::Up.to_string()).await?;
    ensure!(app.value("chat-input").await? == "flow-after hello");
    app.clear("chat-input").await?;

    // The rules on disk now decide: an allow rule written in an editor while the window
    // is open lets the next call run; turned into a deny, the call after is denied.
    let asked = dialogs(app).await?;
    edit_settings(project.path(), |v| {
        v["permissions"]["allow"] = json!(["bash(echo fresh-e2e)"]);
    })?;
    app.send("flow-fresh-one go").await?;
    wait_assistant(app, "Fresh one done.").await?;
    ensure!(
        dialogs(app).await? == asked,
        "a call the rule on disk allows asked"
    );
    edit_settings(project.path(), |v| {
        v["permissions"]["deny"] = json!(["bash(echo fresh-e2e)"]);
    })?;
    app.send("flow-fresh-two go").await?;
    wait_assistant(app, "Fresh two done.").await?;
    ensure!(
        dialogs(app).await? == asked,
        "a call the rule on disk denies asked"
    );
    let cards = tool_cards(app).await?;
    ensure!(
        cards
            .last()
            .is_some_and(|(status, text)| status == "denied" && text.contains("fresh-e2e")),
        "the call under the new deny rule: {cards:?}"
    );
    edit_settings(project.path(), |v| {
        v["permissions"]["deny"] = json!([]);
    })?;

    // A 5 MB argument: the page receives its head and its size, so the window stays
    // responsive (the figure is printed; the bound checked is what the page holds).
    app.send("/mode default").await?;
    app.wait_text("status-mode", "default", SHORT).await?;
    app.send("flow-huge go").await?;
    app.wait("approval-dialog", LONG).await?;
    let shown = app
        .js("return document.querySelector('[data-testid=\"approval-dialog\"]').textContent.length;")
        .await?;
    ensure!(
        shown.as_u64().is_some_and(|n| n < 200_000),
        "the dialog holds {shown} characters of a 5 MB argument"
    );
    let started = Instant::now();
    app.js("return document.querySelectorAll('[data-testid=\"tool-card\"]').length;")
        .await?;
    eprintln!(
        "e2e: page round trip with a 5 MB argument on screen: {:?}",
        started.elapsed()
    );
    settle().await;
    app.click("deny").await.context("denying the huge write")?;
    wait_assistant(app, "Huge flow done.")
        .await
        .context("after the huge write")?;
    let started = Instant::now();
    let composer = app
        .wait("chat-input", SHORT)
        .await
        .context("the composer")?;
    composer.click().await.context("clicking the composer")?;
    composer.send_keys("typed").await.context("typing")?;
    ensure!(
        app.value("chat-input")
            .await
            .context("reading the composer")?
            == "typed"
    );
    eprintln!(
        "e2e: a click and a word typed after the 5 MB card: {:?}",
        started.elapsed()
    );
    composer.clear().await?;
    let page = app.js("return document.body.textContent.length;").await?;
    ensure!(
        page.as_u64().is_some_and(|n| n < 1_000_000),
        "the page holds {page} characters after a 5 MB argument"
    );
    app.send("/mode edit").await?;
    app.wait_text("status-mode", "edit", SHORT).await?;

    // Shift+Tab cycles all five modes (from edit, after the plan).
    let mut seen = Vec::new();
    for _ in 0..5 {
        let before = app.texts("status-mode").await?.join("");
        app.client
            .active_element()
            .await?
            .send_keys(&format!("{}{}", Key::Shift, Key::Tab))
            .await?;
        let start = Instant::now();
        loop {
            let now = app.texts("status-mode").await?.join("");
            if now != before {
                seen.push(now);
                break;
            }
            ensure!(
                start.elapsed() < SHORT,
                "Shift+Tab did not change the mode from {before}"
            );
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    }
    ensure!(
        seen == ["plan", "auto", "bypass", "default", "edit"],
        "{seen:?}"
    );

    // The status bar holds at 640 px in auto mode.
    app.send("/mode auto").await?;
    app.wait_text("status-mode", "auto", SHORT).await?;
    // At 200 % too (the window's chrome, no dialog over it: top bar, chat, composer).
    for (zoom, shot) in [
        (1, "12-status-bar-640-auto"),
        (2, "12b-auto-window-640-200"),
    ] {
        app.client.set_window_size(640, 600).await?;
        app.js(&format!(
            "document.documentElement.style.zoom = '{zoom}'; return true;"
        ))
        .await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        app.shot(shot).await?;
        let overlap = app
            .js(
                r#"const bar = document.querySelector('footer.statusbar');
               const items = [...bar.children].filter(e => e.getBoundingClientRect().width > 0);
               const rects = items.map(e => e.getBoundingClientRect());
               for (let i = 1; i < rects.length; i++) if (rects[i].left < rects[i-1].right - 0.5) return 'overlap';
               const last = rects[rects.length - 1];
               if (last.right > bar.getBoundingClientRect().right + 0.5) return 'overflow';
               return 'ok';"#,
            )
            .await?;
        ensure!(
            overlap == "ok",
            "status bar at 640 px and {zoom}00 %: {overlap}"
        );
        // The top bar's controls: none overlaps another, none runs off the bar.
        let top = app
            .js(
                r#"const bar = document.querySelector('header.topbar').getBoundingClientRect();
               const els = [...document.querySelectorAll('header.topbar :is(button, select)')]
                 .filter(e => e.getBoundingClientRect().width > 0);
               const r = els.map(e => [e.dataset.testid || e.className, e.getBoundingClientRect()]);
               for (const [n, a] of r) if (a.left < bar.left - 0.5 || a.right > bar.right + 0.5) return 'off the bar: ' + n;
               for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++) {
                 const [n, a] = r[i], [m, b] = r[j];
                 if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) return n + ' overlaps ' + m;
               }
               return 'ok';"#,
            )
            .await?;
        ensure!(top == "ok", "top bar at 640 px and {zoom}00 %: {top}");
    }
    app.js("document.documentElement.style.zoom = ''; return true;")
        .await?;
    app.client.set_window_size(1100, 760).await?;

    // Undo this turn: a turn (in auto mode) changes three files (and makes a folder);
    // the undo dialog lists them, Undo puts every one back as it was, and the line
    // under the chat says so.
    let readme = std::fs::read_to_string(project.path().join("README.md"))?;
    app.send("flow-undo go").await?;
    wait_assistant(app, "Three files changed.").await?;
    ensure!(project.path().join("docs/undo-b.txt").exists());
    let turn = app
        .js("const b = [...document.querySelectorAll('[data-testid=\"undo-turn\"]')].pop(); return b ? b.dataset.turn : null;")
        .await?;
    let turn = turn
        .as_str()
        .context("no Undo this turn button")?
        .to_string();
    app.js(&format!(
        "document.querySelector('[data-testid=\"undo-turn\"][data-turn=\"{turn}\"]').click(); return true;"
    ))
    .await?;
    app.wait("undo-dialog", SHORT).await?;
    app.wait_text("undo-summary", "4 paths", SHORT).await?;
    let listed = app.texts("undo-file").await?.join("\n");
    for name in ["README.md", "undo-a.txt", "docs/undo-b.txt"] {
        ensure!(
            listed.contains(name),
            "the undo dialog does not list {name}: {listed}"
        );
    }
    app.shot("13-undo-dialog").await?;
    reachable_when_small(app, "13b-undo-dialog").await?;
    settle().await;
    app.click("undo-confirm").await?;
    let line = app
        .wait_text("confirm-line", &format!("Undid turn {turn}"), SHORT)
        .await?;
    ensure!(
        line.contains("restored README.md")
            && line.contains("removed")
            && line.contains("undo-a.txt"),
        "the confirm line: {line}"
    );
    ensure!(std::fs::read_to_string(project.path().join("README.md"))? == readme);
    ensure!(!project.path().join("undo-a.txt").exists());
    ensure!(!project.path().join("docs").exists());
    app.shot("14-undone").await?;

    // The transcript is decode run's JSONL, with the edited command marked.
    let sessions = project.home.join(".local/share/decode/sessions");
    let transcript = std::fs::read_dir(&sessions)?
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    ensure!(transcript.contains("\"edited_command\":\"echo edited-e2e\""));

    subagents(app, fake).await?;

    // New chat: the window starts over and the model sees nothing of the old one.
    app.click("new-chat").await?;
    let start = Instant::now();
    while !app
        .client
        .find_all(Locator::Css("[data-testid=\"message\"]"))
        .await?
        .is_empty()
    {
        ensure!(
            start.elapsed() < SHORT,
            "the old conversation stayed on screen"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.send("flow-after again").await?;
    wait_assistant(app, "Still here after the stop.").await?;
    let last = fake.requests().pop().unwrap_or_default();
    let sent = last["messages"].to_string();
    ensure!(
        !sent.contains("flow-write") && sent.contains("flow-after again"),
        "the new conversation carried the old one: {sent}"
    );
    eprintln!("e2e: every flow passed");
    Ok(())
}

/// Two explore subagents run side by side: each gets its own card nested in its `task`
/// call, filled live with its steps; the parent's answer is built on their results.
async fn subagents(app: &App, fake: &FakeOpenAi) -> anyhow::Result<()> {
    app.send("flow-subagents look around").await?;
    let start = Instant::now();
    loop {
        let cards = app.js(SUBAGENT_CARDS).await?;
        let cards = cards.as_array().cloned().unwrap_or_default();
        let running = cards
            .iter()
            .filter(|c| c[1] == "running" && c[2].as_u64().unwrap_or(0) >= 1)
            .count();
        if running == 2 {
            app.shot("14c-subagents-running").await?;
            break;
        }
        ensure!(
            start.elapsed() < LONG,
            "two subagents never ran side by side: {cards:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    wait_assistant(app, "Both explorers reported back").await?;
    let cards = app.js(SUBAGENT_CARDS).await?;
    let cards = cards.as_array().cloned().unwrap_or_default();
    ensure!(cards.len() == 2, "subagent cards: {cards:?}");
    for card in &cards {
        ensure!(
            card[0] == "explore" && card[1] == "done",
            "a subagent card: {card:?}"
        );
    }
    // Once ended, each is one line; opened, it shows what the subagent did and said.
    app.js(
        "document.querySelector('[data-testid=\"subagent-card\"] button').click(); return true;",
    )
    .await?;
    settle().await;
    let opened = app.js(SUBAGENT_CARDS).await?;
    let first = opened[0][3].as_str().unwrap_or("");
    ensure!(
        first.contains("ALPHA-FOUND") && first.contains("src/main.rs"),
        "the first subagent card, opened: {first}"
    );
    app.shot("14d-subagents-done").await?;
    // The parent read both answers as its `task` results.
    let results = fake.last_tool_results().join("\n");
    ensure!(
        results.contains("ALPHA-FOUND") && results.contains("BETA-FOUND"),
        "the parent's task results: {results}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_provider_the_window_says_how_to_set_one_up() -> anyhow::Result<()> {
    let project = TempProject::new()?;
    let app = App::start(&project, &[project.path().display().to_string()]).await?;
    let result = async {
        app.wait_text("notice-line", "No model provider is configured", SHORT)
            .await?;
        app.wait_text("status-model", "not set up", SHORT).await?;
        // The folder is untrusted but grants itself nothing: no trust question.
        app.wait_text("status-trust", "untrusted", SHORT).await?;
        settle().await;
        ensure!(
            app.client
                .find_all(Locator::Css("[data-testid=\"trust-dialog\"]"))
                .await?
                .is_empty(),
            "a trust question for a folder that grants nothing"
        );
        app.send("hello there").await?;
        app.wait_text("error-line", "no model provider is configured", SHORT)
            .await?;
        // Nothing is lost: the message is back in the composer.
        ensure!(app.value("chat-input").await? == "hello there");
        app.shot("13-no-provider").await?;
        // On the narrowest window (640 px at 200 %) the warning keeps its whole text.
        app.client.set_window_size(640, 760).await?;
        app.js("document.documentElement.style.zoom = '2'; return true;")
            .await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        app.shot("13b-no-provider-640-200").await?;
        let whole = app.js(STATUS_MODEL_WHOLE).await?;
        ensure!(
            whole == json!(true),
            "the status bar cuts \"not set up\": {whole}"
        );
        anyhow::Ok(())
    }
    .await;
    app.close().await;
    result
}

/// Whether the status bar's model item shows its whole text inside the bar.
const STATUS_MODEL_WHOLE: &str = r#"
const item = document.querySelector('[data-testid="status-model"]').closest('.item');
const r = item.getBoundingClientRect(), bar = item.parentElement.getBoundingClientRect();
return item.scrollWidth <= item.clientWidth + 1 && r.width > 0 && r.right <= bar.right + 1;
"#;

/// The window at a real 200 % device scale (GTK's `GDK_SCALE=2`; the suite's screen is
/// 2560×1600, a 1280×800 desktop at 200 %): the page lays out in CSS px on twice the
/// device pixels, and an approval, the settings and the sessions dialogs keep every
/// control in reach at the default size and at the smallest the window allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dialog_is_reachable_at_a_real_200_percent_scale() -> anyhow::Result<()> {
    let project = TempProject::new()?;
    every_command_asks(&project)?;
    trust(&project)?;
    let script = Script::new().flow(
        "flow-scale",
        vec![bash("c-scale-1", "echo scale-e2e"), Turn::text("Scaled.")],
    );
    let fake = FakeOpenAi::start(script).await?;
    let args = fake.app_args(project.path());
    let app = App::start_with_env(&project, &args, &[("GDK_SCALE", "2")]).await?;
    let result = async {
        let ratio = app.js("return window.devicePixelRatio;").await?;
        ensure!(ratio == json!(2), "device pixel ratio: {ratio}");
        app.send("flow-scale go").await?;
        app.wait("approval-dialog", LONG).await?;
        for (width, height) in [(1100, 760), (640, 480)] {
            app.client.set_window_size(width, height).await?;
            tokio::time::sleep(Duration::from_millis(300)).await;
            app.raise_over_native_dialogs(Duration::from_millis(1000))
                .await?;
            app.shot(&format!("31-approval-{width}-real-200")).await?;
            // The mode select says the mode's description where it fits, else its
            // name whole (never a sentence cut mid-word).
            let face = app
                .js("return document.querySelector('[data-testid=\"mode-select\"]').selectedOptions[0].textContent;")
                .await?;
            let face = face.as_str().unwrap_or_default();
            ensure!(
                if width > 720 { face.starts_with("default — ") } else { face == "default" },
                "the mode select at {width} px reads {face:?}"
            );
            let unreachable = app.js(DIALOG_REACHABLE).await?;
            ensure!(
                unreachable == json!([]),
                "the approval at {width} px and 200 %, out of reach: {unreachable}"
            );
        }
        settle().await;
        app.click("approve-once").await?;
        wait_assistant(&app, "Scaled.").await?;
        app.shot("31b-chat-640-real-200").await?;
        for (open, dialog) in [
            ("settings-open", "settings-dialog"),
            ("sessions-open", "sessions-dialog"),
        ] {
            app.click(open).await?;
            app.wait(dialog, SHORT).await?;
            settle().await;
            app.shot(&format!("31c-{dialog}-640-real-200")).await?;
            let unreachable = app.js(DIALOG_REACHABLE).await?;
            ensure!(
                unreachable == json!([]),
                "{dialog} at 640 px and 200 %, out of reach: {unreachable}"
            );
            app.client
                .active_element()
                .await?
                .send_keys(&Key::Escape.to_string())
                .await?;
            app.wait_gone(dialog, SHORT).await?;
        }
        anyhow::Ok(())
    }
    .await;
    if result.is_err() {
        let _ = app.shot("failure-real-200").await;
    }
    app.close().await;
    result
}

/// Processes started with this test's HOME whose command line holds `needle`.
fn processes_holding(home: &Path, needle: &[u8]) -> Vec<u32> {
    let marker = format!("HOME={}", home.display());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            cmd.windows(needle.len())
                .any(|w| w == needle)
                .then_some(())?;
            let env = std::fs::read(e.path().join("environ")).ok()?;
            env.split(|b| *b == 0)
                .any(|kv| kv == marker.as_bytes())
                .then_some(pid)
        })
        .collect()
}

async fn until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> anyhow::Result<()> {
    let start = Instant::now();
    while !done() {
        ensure!(start.elapsed() < limit, "{what} (after {limit:?})");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// Starts the app on `project` against `fake`, runs `sleep 30 & sleep 31` approved
/// once (so outside the sandbox) and returns once both sleeps run.
async fn approved_sleeps(project: &TempProject, fake: &FakeOpenAi) -> anyhow::Result<App> {
    let args = fake.app_args(project.path());
    let app = App::start(project, &args).await?;
    app.send("flow-orphan go").await?;
    app.wait("approval-dialog", LONG).await?;
    settle().await;
    app.click("approve-once").await?;
    until("the approved sleeps never started", SHORT, || {
        !sleeps_of(&project.home).is_empty()
            && !processes_of(&project.home, b"sleep\x0031\x00").is_empty()
    })
    .await?;
    Ok(app)
}

fn kill9(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status();
}

/// Nothing a call started outlives Decode: a command approved to run outside the
/// sandbox (where no namespace ties it to Decode) dies with a window killed with
/// `kill -9`, its background children too; and if even its watcher was killed first,
/// the next start of Decode kills what was left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_window_leaves_no_command_running() -> anyhow::Result<()> {
    let project = TempProject::new()?;
    every_command_asks(&project)?;
    trust(&project)?;
    let script = Script::new().flow(
        "flow-orphan",
        vec![
            bash("c-orphan-1", "sleep 30 & sleep 31; echo never"),
            Turn::text("(not reached)"),
        ],
    );
    let fake = FakeOpenAi::start(script).await?;
    let gone = |home: &Path| {
        sleeps_of(home).is_empty() && processes_of(home, b"sleep\x0031\x00").is_empty()
    };

    // The window is killed: its watcher kills the command's group at once.
    let app = approved_sleeps(&project, &fake).await?;
    let pid = app.app_pid().context("the app's process")?;
    ensure!(
        !processes_holding(&project.home, b"decode-watch").is_empty(),
        "no watcher for the approved command"
    );
    kill9(pid);
    until(
        "the approved command outlived the killed window",
        Duration::from_secs(5),
        || gone(&project.home),
    )
    .await?;
    drop(app);

    // The watcher is killed too: the command survives the window, and the next start
    // of Decode kills it.
    let app = approved_sleeps(&project, &fake).await?;
    let pid = app.app_pid().context("the app's process")?;
    for w in processes_holding(&project.home, b"decode-watch") {
        kill9(w);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    kill9(pid);
    tokio::time::sleep(Duration::from_millis(500)).await;
    ensure!(
        !gone(&project.home),
        "without its watcher the command should still run here (the test would prove nothing)"
    );
    drop(app);
    let out = std::process::Command::new(decode_bin())
        .args(["check", "bash", "true"])
        .current_dir(project.path())
        .envs(project.env())
        .output()?;
    ensure!(out.status.success(), "decode check failed: {out:?}");
    until(
        "the next start of Decode left the command running",
        Duration::from_secs(5),
        || gone(&project.home),
    )
    .await?;
    Ok(())
}
