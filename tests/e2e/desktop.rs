//! The desktop around the window: the tray (under `trayer`, driven with real X
//! input), native approval dialogs while the window is hidden (first answer
//! wins, the other surface closes), and a second launch that lands in the
//! running window. Screenshots of the whole screen go to `target/e2e-artifacts/`.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use decode_tests::desktop::{
    choose_menu_item, click_dialog_button, open_tray_menu, screen_shot, session_bus, tray_host,
    tray_pixels, wait_until, windows_named,
};
use decode_tests::fake_openai::{FakeOpenAi, Script, Turn};
use decode_tests::project::{decode_bin, TempProject};
use decode_tests::window::App;

use super::{bash, trust, LONG, SHORT};

// The tray menu's selectable items, in order (separators and a disabled
// "No pending approvals" are skipped by the keyboard).
const MODE_DEFAULT: usize = 1;
const MODE_AUTO: usize = 4;
/// "Hide window" / "Show window" while an approval is pending (the pending
/// item is then enabled and counts).
const SHOW_HIDE_PENDING: usize = 8;
const SHOW_HIDE_NONE: usize = 7;

const NATIVE: &str = "allow bash";

fn script() -> Script {
    Script::new()
        .flow(
            "native-one",
            vec![bash("n-1", "touch native-one.txt"), Turn::text("one done")],
        )
        .flow(
            "native-two",
            vec![bash("n-2", "touch native-two.txt"), Turn::text("two done")],
        )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_lives_in_the_tray_asks_natively_and_keeps_one_instance() -> anyhow::Result<()> {
    let project = TempProject::new()?;
    project.write("README.md", "# desktop\n")?;
    trust(&project)?;
    let _bus = session_bus(&project)?;
    let _tray = tray_host()?;
    let fake = FakeOpenAi::start(script()).await?;
    let args = fake.app_args(project.path());
    let app = App::start(&project, &args).await?;
    let result = flows(&app, &project).await;
    if result.is_err() {
        let _ = screen_shot("desktop-failure");
    }
    app.close().await;
    result
}

async fn flows(app: &App, project: &TempProject) -> anyhow::Result<()> {
    tray_switches_the_mode(app)
        .await
        .context("step 1, the tray switches the mode")?;
    native_dialog_answers(app, project)
        .await
        .context("step 2, the native dialog answers while the window is hidden")?;
    first_answer_wins(app, project)
        .await
        .context("step 3, the window answers and the native dialog closes")?;
    second_launch_hands_over(app, project)
        .await
        .context("step 4, a second launch lands in the running window")
}

/// The tray switches the mode; the window's status bar and a confirmation
/// line follow.
async fn tray_switches_the_mode(app: &App) -> anyhow::Result<()> {
    open_tray_menu()?;
    screen_shot("desktop-tray-menu")?;
    choose_menu_item(MODE_AUTO)?;
    app.wait_text("status-mode", "auto", SHORT).await?;
    app.wait_text("confirm-line", "auto", SHORT).await?;
    screen_shot("desktop-tray-mode-auto")?;
    open_tray_menu()?;
    choose_menu_item(MODE_DEFAULT)?;
    app.wait_text("status-mode", "default", SHORT).await?;
    Ok(())
}

/// Waits until the tray's icon shows the pending badge, so the menu opened
/// next has its "N pending approvals" item enabled.
fn wait_for_badge(idle: &[u8]) -> anyhow::Result<()> {
    wait_until(SHORT, || tray_pixels().is_ok_and(|p| p != idle))
        .context("the tray icon shows no pending approval")
}

/// Hidden window: the ask pops a native dialog; answering there runs the call
/// and closes the window's modal.
async fn native_dialog_answers(app: &App, project: &TempProject) -> anyhow::Result<()> {
    let idle = tray_pixels()?;
    app.send("native-one").await?;
    app.wait("approval-dialog", LONG).await?;
    wait_for_badge(&idle)?;
    open_tray_menu()?;
    choose_menu_item(SHOW_HIDE_PENDING)?;
    wait_until(SHORT, || !windows_named(NATIVE).is_empty())
        .context("no native dialog while the window is hidden")?;
    screen_shot("desktop-native-dialog")?;
    let dialog = windows_named(NATIVE).remove(0);
    click_dialog_button(&dialog, 0, 3)?; // Allow once
    let made = project.path().join("native-one.txt");
    wait_until(SHORT, || made.exists())
        .context("Allow once in the native dialog did not run the call")?;
    wait_until(SHORT, || windows_named(NATIVE).is_empty()).context("the native dialog stayed")?;
    app.wait_gone("approval-dialog", SHORT).await?;
    app.wait_text("message", "one done", LONG).await?;
    wait_until(SHORT, || tray_pixels().is_ok_and(|p| p == idle))
        .context("the tray icon kept its badge after the answer")?;
    open_tray_menu()?;
    choose_menu_item(SHOW_HIDE_NONE)?;
    app.wait_text("message", "one done", SHORT).await?;
    Ok(())
}

/// Both surfaces at once: the modal answers first, the native dialog closes,
/// the call runs exactly once.
async fn first_answer_wins(app: &App, project: &TempProject) -> anyhow::Result<()> {
    let idle = tray_pixels()?;
    app.send("native-two").await?;
    app.wait("approval-dialog", LONG).await?;
    wait_for_badge(&idle)?;
    open_tray_menu()?;
    choose_menu_item(SHOW_HIDE_PENDING)?;
    wait_until(SHORT, || !windows_named(NATIVE).is_empty())
        .context("no native dialog for the second ask")?;
    open_tray_menu()?;
    choose_menu_item(SHOW_HIDE_PENDING)?;
    screen_shot("desktop-both-surfaces")?;
    app.click("approve-once").await?;
    wait_until(SHORT, || windows_named(NATIVE).is_empty())
        .context("the native dialog stayed open after the window answered")?;
    let made = project.path().join("native-two.txt");
    wait_until(SHORT, || made.exists()).context("the window's answer did not run the call")?;
    app.wait_text("message", "two done", LONG).await?;
    let cards = app.texts("tool-card").await?;
    // One card per ask, each answered once.
    ensure!(
        cards.len() == 2 && cards.iter().all(|c| c.contains("allowed it once")),
        "the calls did not run exactly once each: {cards:?}"
    );
    Ok(())
}

/// A second launch on another folder exits at once and the running window
/// moves to that folder.
async fn second_launch_hands_over(app: &App, project: &TempProject) -> anyhow::Result<()> {
    let other = project
        .home
        .parent()
        .context("temp root")?
        .join("other-proj");
    std::fs::create_dir_all(&other)?;
    let mut second = std::process::Command::new(decode_bin())
        .arg(&other)
        .envs(project.env())
        .stdin(std::process::Stdio::null())
        .spawn()?;
    let mut status = None;
    wait_until(LONG, || {
        status = second.try_wait().ok().flatten();
        status.is_some()
    })
    .or_else(|e| {
        let _ = second.kill();
        let _ = second.wait();
        Err(e).context("the second launch opened a window of its own instead of handing over")
    })?;
    ensure!(
        status.is_some_and(|s| s.success()),
        "the second launch failed: {status:?}"
    );
    wait_until(SHORT, || !windows_named("Decode — .*other-proj").is_empty())
        .context("the window did not move to the second launch's folder")?;
    let deadline = Instant::now() + SHORT;
    loop {
        let shown = app
            .js("return document.body.innerText.includes('other-proj');")
            .await
            .unwrap_or_default();
        if shown == serde_json::Value::Bool(true) {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "the window does not show other-proj"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    app.wait_text("status-mode", "default", SHORT).await?;
    screen_shot("desktop-second-launch")?;
    Ok(())
}
