#![allow(clippy::print_stderr)]
//! End-to-end smoke through the real window: tauri-driver + WebKitWebDriver start the
//! built `decode` binary on a temp project; the status bar must read the backend's mode
//! and agent, and a screenshot is kept under `target/e2e-artifacts/`.

use std::time::Duration;

use decode_tests::project::{decode_bin, target_dir, TempProject};
use decode_tests::window::{screenshot, text_of, wait_for_text, Driver};
use fantoccini::Locator;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_shows_mode_and_agent_from_the_backend() -> anyhow::Result<()> {
    let project = TempProject::new()?;
    project.write("README.md", "# a temp project\n")?;
    let bin = decode_bin();
    anyhow::ensure!(
        bin.exists(),
        "build the app first: {} is missing",
        bin.display()
    );

    let driver = Driver::start(&project)?;
    let client = driver
        .session(&bin, &[project.path().display().to_string()])
        .await?;

    let result = async {
        let mode = text_of(&client, "status-mode", Duration::from_secs(20)).await?;
        let agent = text_of(&client, "status-agent", Duration::from_secs(5)).await?;
        assert_eq!(mode, "default", "status-mode");
        assert_eq!(agent, "build", "status-agent");
        let shot = target_dir().join("e2e-artifacts/main-window.png");
        screenshot(&client, &shot).await?;
        eprintln!(
            "e2e: status bar reads mode={mode} agent={agent}; screenshot at {}",
            shot.display()
        );

        // A slash command goes through the backend and comes back in the status bar
        // with a one-line confirmation in the chat.
        let input = client
            .find(Locator::Css("[data-testid=\"chat-input\"]"))
            .await?;
        input.send_keys("/mode edit\u{E007}").await?;
        wait_for_text(&client, "status-mode", "edit", Duration::from_secs(5)).await?;
        let confirm = text_of(&client, "confirm-line", Duration::from_secs(5)).await?;
        assert!(confirm.starts_with("Mode: edit"), "confirm-line: {confirm}");

        // Selecting an agent resets the mode to the agent's default (plan → plan).
        let input = client
            .find(Locator::Css("[data-testid=\"chat-input\"]"))
            .await?;
        input.send_keys("/agent plan\u{E007}").await?;
        wait_for_text(&client, "status-agent", "plan", Duration::from_secs(5)).await?;
        wait_for_text(&client, "status-mode", "plan", Duration::from_secs(5)).await?;
        let shot = target_dir().join("e2e-artifacts/after-switches.png");
        screenshot(&client, &shot).await?;
        eprintln!(
            "e2e: /mode and /agent switched through the backend; screenshot at {}",
            shot.display()
        );
        anyhow::Ok(())
    }
    .await;
    let _ = client.close().await;
    result
}
