//! MCP servers through the real window: an untrusted folder's trust dialog lists its
//! MCP server with the command line that would run; once trusted, the person approves
//! that server in settings (it starts), the model calls one of its tools, the call asks
//! in the approval dialog like any other, and the server's answer shows in the card.
//! The server is the hostile test server of the engine's suite (it claims every tool
//! only reads, which must not lift the ask).

use std::path::PathBuf;

use anyhow::{ensure, Context};
use decode_tests::project::TempProject;
use decode_tests::window::App;

use super::{settle, wait_assistant, LONG, SHORT};

fn server_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/decode-engine/tests/data/hostile_mcp.py")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_mcp_server_is_listed_approved_and_called_through_the_window(
) -> anyhow::Result<()> {
    let project = TempProject::new()?;
    let marker = project.path().join("server-started");
    std::fs::write(
        project.path().join(".mcp.json"),
        serde_json::json!({"mcpServers": {"proj": {
            "command": "python3",
            "args": [server_script(), "--marker", marker],
        }}})
        .to_string(),
    )?;
    let script = project.home.join("script.json");
    std::fs::write(
        &script,
        serde_json::json!({"turns": [
            {"text": "Calling the server.",
             "tool_calls": [{"name": "mcp__proj__wipe", "input": {"target": "tmp"}}]},
            {"text": "The server answered."}
        ]})
        .to_string(),
    )?;
    let args = vec![
        project.path().display().to_string(),
        "--provider".into(),
        "script".into(),
        "--script".into(),
        script.display().to_string(),
    ];
    let app = App::start(&project, &args).await?;
    let result = flow(&app, &marker).await;
    if result.is_err() {
        let _ = app.shot("mcp-failure").await;
    }
    app.close().await;
    result
}

async fn flow(app: &App, marker: &std::path::Path) -> anyhow::Result<()> {
    // The trust dialog lists the server and what would run; trusting starts nothing.
    let dialog = app.wait("trust-dialog", LONG).await?;
    let listed = app
        .wait_text("trust-mcp-server", "hostile_mcp.py", SHORT)
        .await?;
    ensure!(
        listed.contains("python3") && listed.contains("still needs your approval"),
        "{listed}"
    );
    app.shot("40-trust-lists-mcp").await?;
    settle().await;
    app.click("trust-accept").await?;
    app.wait_gone("trust-dialog", SHORT).await?;
    drop(dialog);
    ensure!(!marker.exists(), "trusting the folder started its server");

    // Settings: the server waits for approval; approving starts it now.
    app.click("settings-open").await?;
    app.wait("settings-dialog", SHORT).await?;
    let status = || async {
        app.js("const s = document.querySelector('[data-testid=\"mcp-server\"][data-name=\"proj\"]'); return s ? s.dataset.status : null;")
            .await
            .map(|v| v.as_str().unwrap_or_default().to_string())
    };
    let start = std::time::Instant::now();
    while status().await? != "needs_approval" {
        ensure!(
            start.elapsed() < SHORT,
            "the server is not waiting for approval: {}",
            status().await?
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    app.shot("41-settings-mcp-approval").await?;
    settle().await;
    app.click("mcp-approve").await?;
    let start = std::time::Instant::now();
    while status().await? != "ready" {
        ensure!(
            start.elapsed() < LONG,
            "the approved server did not start: {}",
            status().await?
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    ensure!(marker.exists(), "the server did not start");
    let tools = app.texts("mcp-tool").await?.join("\n");
    ensure!(tools.contains("mcp__proj__wipe"), "{tools}");
    app.shot("42-settings-mcp-running").await?;
    app.click("settings-close").await?;
    app.wait_gone("settings-dialog", SHORT).await?;

    // The model calls its tool: it asks (the server's read-only claim is not trusted).
    app.send("wipe tmp through the server").await?;
    app.wait("approval-dialog", LONG).await?;
    let subject = app
        .js("return document.querySelector('[data-testid=\"approval-dialog\"]').textContent;")
        .await?;
    ensure!(
        subject
            .as_str()
            .unwrap_or_default()
            .contains("mcp__proj__wipe"),
        "{subject}"
    );
    app.shot("43-approval-mcp").await?;
    settle().await;
    app.click("approve-once").await?;
    wait_assistant(app, "The server answered.").await?;
    let cards = app
        .js("return [...document.querySelectorAll('[data-testid=\"tool-card\"]')].map(e => [e.dataset.status, e.textContent]);")
        .await?;
    let cards: Vec<(String, String)> = serde_json::from_value(cards).context("cards")?;
    ensure!(
        cards
            .iter()
            .any(|(s, t)| s == "done" && t.contains("mcp__proj__wipe")),
        "{cards:?}"
    );
    // The server's answer is in the card once it is opened.
    app.js("[...document.querySelectorAll('[data-testid=\"tool-card\"] button.head')].pop().click(); return true;")
        .await?;
    let output = app.wait_text("tool-output", "wiped tmp", SHORT).await?;
    eprintln!("e2e: the MCP card's output: {output}");
    app.shot("44-mcp-card").await?;
    Ok(())
}
