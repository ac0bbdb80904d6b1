//! The sandbox's own asks through the real window, in auto mode (the gate lets every
//! command through, so what stops one is the sandbox): a command that writes outside
//! the places commands may write asks whether to run it again outside the sandbox
//! (the approval dialog with `data-kind="sandbox"`). The dialog is checked for what
//! it says, at 640 px and at 200 % scale, and for what each answer does: on disk and
//! in the result the model gets.

use std::time::Instant;

use anyhow::ensure;
use decode_tests::fake_openai::{FakeOpenAi, Script, Turn};
use decode_tests::project::TempProject;
use decode_tests::window::App;

use super::{bash, reachable_when_small, settle, tool_cards, trust, wait_assistant, LONG, SHORT};

/// The arguments that start the window on `project` in auto mode against `fake`.
fn auto_args(project: &TempProject, fake: &FakeOpenAi) -> Vec<String> {
    vec![
        project.path().display().to_string(),
        "--mode".into(),
        "auto".into(),
        "--provider".into(),
        "openai".into(),
        "--base-url".into(),
        fake.base_url.clone(),
        "--model".into(),
        "gpt-e2e".into(),
    ]
}

/// What `data-kind` the open approval dialog has.
async fn dialog_kind(app: &App) -> anyhow::Result<String> {
    let kind = app
        .js("const d = document.querySelector('[data-testid=\"approval-dialog\"]'); return d ? d.dataset.kind : null;")
        .await?;
    Ok(kind.as_str().unwrap_or_default().to_string())
}

/// The `data-sandboxed` of the last tool card.
async fn last_card_sandboxed(app: &App) -> anyhow::Result<String> {
    let v = app
        .js("const c = [...document.querySelectorAll('[data-testid=\"tool-card\"]')].pop(); return c ? c.dataset.sandboxed : null;")
        .await?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

/// The file the command below tries to make, in the (temp) home folder: read-only
/// in the sandbox, even though the temp home lies in the writable `/tmp`.
const OUTSIDE_FILE: &str = "e2e-outside.txt";
const TOUCH: &str = "touch ~/e2e-outside.txt && echo touched-e2e";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_stopped_by_the_sandbox_asks_to_run_outside() -> anyhow::Result<()> {
    let started = Instant::now();
    let project = TempProject::new()?;
    trust(&project)?;
    let script = Script::new()
        .flow(
            "flow-outside-deny",
            vec![bash("c-out-1", TOUCH), Turn::text("Not run outside.")],
        )
        .flow(
            "flow-outside-once",
            vec![bash("c-out-2", TOUCH), Turn::text("Ran outside.")],
        );
    let fake = FakeOpenAi::start(script).await?;
    let app = App::start(&project, &auto_args(&project, &fake)).await?;
    let result = run_outside_flows(&app, &project, &fake).await;
    if result.is_err() {
        let _ = app.shot("sandbox-failure").await;
    }
    app.close().await;
    eprintln!("e2e: the sandbox ask flows took {:?}", started.elapsed());
    result
}

async fn run_outside_flows(
    app: &App,
    project: &TempProject,
    fake: &FakeOpenAi,
) -> anyhow::Result<()> {
    app.wait_text("status-mode", "auto", SHORT).await?;
    let target = project.home.join(OUTSIDE_FILE);

    // Auto mode lets the command through; the sandbox refuses the write in the home
    // folder, and Decode asks whether to run it again outside: which bound, which
    // path, the command, what it printed.
    app.send("flow-outside-deny go").await?;
    app.wait("run-outside", LONG).await?;
    ensure!(
        dialog_kind(app).await? == "sandbox",
        "the ask is not the sandbox's"
    );
    let path = app.texts("run-outside-path").await?.join("");
    ensure!(
        path == target.display().to_string(),
        "the dialog names the path {path:?}, not {}",
        target.display()
    );
    let reason = app.texts("approval-reason").await?.join("");
    ensure!(
        reason.contains("a write outside the places commands may write"),
        "the dialog's reason: {reason}"
    );
    let command = app.texts("approval-command").await?.join("");
    ensure!(command == TOUCH, "the dialog shows the command {command:?}");
    // Only "run outside, once" or no: no rule can lift the sandbox.
    for absent in ["approve-session", "approve-always", "approval-rule"] {
        ensure!(
            app.texts(absent).await?.is_empty(),
            "the sandbox ask offers {absent}"
        );
    }
    app.shot("15-sandbox-ask").await?;
    reachable_when_small(app, "15b-sandbox-ask").await?;
    settle().await;
    app.fill("deny-feedback", "write it in the project").await?;
    app.click("deny").await?;
    wait_assistant(app, "Not run outside.").await?;
    ensure!(
        !target.exists(),
        "a denied run outside made {}",
        target.display()
    );
    let results = fake.last_tool_results().join("\n");
    ensure!(
        results.contains("Read-only file system")
            && results.contains(
                "the person chose not to run it outside the sandbox; their feedback: write it in the project"
            ),
        "the model got: {results}"
    );
    ensure!(
        last_card_sandboxed(app).await? == "true",
        "the denied command's card does not say it ran sandboxed"
    );

    // The same command, allowed once: it runs again outside, the file is made, and
    // the model reads both runs' story.
    app.send("flow-outside-once go").await?;
    app.wait("run-outside", LONG).await?;
    ensure!(dialog_kind(app).await? == "sandbox");
    settle().await;
    app.click("approve-once").await?;
    wait_assistant(app, "Ran outside.").await?;
    ensure!(
        target.exists(),
        "run outside, once did not make {}",
        target.display()
    );
    let results = fake.last_tool_results().join("\n");
    ensure!(
        results.contains("the person allowed it to run again outside the sandbox, once")
            && results.contains("touched-e2e"),
        "the model got: {results}"
    );
    ensure!(
        last_card_sandboxed(app).await? == "false",
        "the card of the command run outside says it ran sandboxed"
    );
    let cards = tool_cards(app).await?;
    ensure!(
        cards.last().is_some_and(|(s, _)| s == "done"),
        "the card of the command run outside: {cards:?}"
    );
    app.shot("15c-sandbox-ran-outside").await?;
    Ok(())
}
