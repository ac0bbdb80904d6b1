//! What the desktop tests drive besides the webview: a session bus of the test's
//! own, a tray host (`trayer`), and real X input through `xdotool` — the tray
//! menu, native dialogs and window titles live outside the webview, where
//! WebDriver cannot reach.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};

use crate::project::TempProject;

/// A child process killed when dropped.
pub struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A D-Bus session bus at the address the project's environment names
/// (`$XDG_RUNTIME_DIR/bus`): single instance and notifications use it.
pub fn session_bus(project: &TempProject) -> anyhow::Result<Killed> {
    let path = project.home.join("run/bus");
    let child = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--nopidfile"])
        .arg(format!("--address=unix:path={}", path.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("could not start dbus-daemon (install the Debian package dbus)")?;
    let guard = Killed(child);
    wait_until(Duration::from_secs(10), || path.exists())
        .context("the session bus did not start")?;
    Ok(guard)
}

/// `trayer`, a system tray host, docked at the top right of the screen.
pub fn tray_host() -> anyhow::Result<Killed> {
    let child = Command::new("trayer")
        .args([
            "--edge",
            "top",
            "--align",
            "right",
            "--widthtype",
            "request",
            "--height",
            "24",
            "--transparent",
            "false",
            "--tint",
            "0x333333",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("could not start trayer (install the Debian package trayer)")?;
    Ok(Killed(child))
}

/// Runs `xdotool ARGS` and returns what it printed.
pub fn xdotool(args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("xdotool")
        .args(args)
        .output()
        .context("could not run xdotool (install the Debian package xdotool)")?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Polls `ready` every 100 ms until it holds or `limit` passes.
pub fn wait_until(limit: Duration, mut ready: impl FnMut() -> bool) -> anyhow::Result<()> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if ready() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bail!("not ready after {limit:?}")
}

/// The X windows whose name matches the regular expression `name`.
pub fn windows_named(name: &str) -> Vec<String> {
    xdotool(&["search", "--onlyvisible", "--name", name])
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A window's position and size.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
}

pub fn geometry(window: &str) -> anyhow::Result<Geometry> {
    let out = xdotool(&["getwindowgeometry", "--shell", window])?;
    let get = |k: &str| -> anyhow::Result<i64> {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .with_context(|| format!("no {k} in {out:?}"))?
            .trim()
            .parse()
            .context("a number")
    };
    Ok(Geometry {
        x: get("X")?,
        y: get("Y")?,
        width: get("WIDTH")?,
        height: get("HEIGHT")?,
    })
}

pub fn click_at(x: i64, y: i64) -> anyhow::Result<()> {
    xdotool(&["mousemove", &x.to_string(), &y.to_string(), "click", "1"])?;
    Ok(())
}

/// The tray host's window (the one holding an icon), waiting for it to appear.
fn tray_window() -> anyhow::Result<(String, Geometry)> {
    let mut found = None;
    wait_until(Duration::from_secs(15), || {
        found = xdotool(&["search", "--class", "trayer"])
            .unwrap_or_default()
            .lines()
            .filter_map(|w| geometry(w).ok().map(|g| (w.to_string(), g)))
            .find(|(_, g)| g.width >= 16 && g.height >= 16);
        found.is_some()
    })
    .context("the tray host has no icon")?;
    found.context("tray geometry")
}

/// The pixels the tray shows now (Decode's icon, with or without its badge).
pub fn tray_pixels() -> anyhow::Result<Vec<u8>> {
    let (window, _) = tray_window()?;
    let out = Command::new("import")
        .args(["-window", &window, "rgb:-"])
        .output()
        .context("could not run import (install the Debian package imagemagick)")?;
    ensure!(
        out.status.success() && !out.stdout.is_empty(),
        "import could not read the tray"
    );
    Ok(out.stdout)
}

/// The visible top-level windows, by id.
fn visible_windows() -> Vec<String> {
    let out = Command::new("xwininfo")
        .args(["-root", "-children"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|id| id.starts_with("0x"))
        .filter(|id| {
            Command::new("xwininfo")
                .args(["-id", id])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("IsViewable"))
        })
        .map(str::to_string)
        .collect()
}

/// Opens the tray menu by clicking Decode's icon in trayer, and waits until a
/// new window (the menu) is on screen, so keys typed next reach the menu.
pub fn open_tray_menu() -> anyhow::Result<()> {
    let (_, g) = tray_window()?;
    let before = visible_windows();
    // One icon, at the right end of the dock.
    click_at(g.x + g.width - 12, g.y + g.height / 2)?;
    wait_until(Duration::from_secs(10), || {
        visible_windows().iter().any(|w| !before.contains(w))
    })
    .context("clicking the tray icon opened no menu")?;
    // The menu takes the keyboard once it is drawn.
    std::thread::sleep(Duration::from_millis(300));
    Ok(())
}

/// Chooses the `n`th selectable item (1-based) of the open menu with the
/// keyboard, as a person without a mouse would.
pub fn choose_menu_item(n: usize) -> anyhow::Result<()> {
    for _ in 0..n {
        xdotool(&["key", "Down"])?;
        std::thread::sleep(Duration::from_millis(60));
    }
    xdotool(&["key", "Return"])?;
    std::thread::sleep(Duration::from_millis(500));
    Ok(())
}

/// Clicks button `index` (0-based) of `count` buttons laid across the bottom
/// of a GTK message dialog.
pub fn click_dialog_button(window: &str, index: i64, count: i64) -> anyhow::Result<()> {
    let g = geometry(window)?;
    ensure!(g.width > 0 && g.height > 0, "the dialog has no size: {g:?}");
    let slot = g.width / count;
    click_at(g.x + slot * index + slot / 2, g.y + g.height - 16)
}

/// Saves what the X window `window` (an id, or `root` for the whole screen) shows
/// as a PNG at `path`.
pub fn capture(window: &str, path: &std::path::Path) -> anyhow::Result<()> {
    let status = Command::new("import")
        .args(["-window", window])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .context("could not run import (install the Debian package imagemagick)")?;
    ensure!(
        status.success(),
        "import could not capture the window {window}"
    );
    Ok(())
}

/// Saves a screenshot of the whole X screen (tray and native dialogs
/// included) under `target/e2e-artifacts/NAME.png`.
pub fn screen_shot(name: &str) -> anyhow::Result<()> {
    let path = crate::project::target_dir()
        .join("e2e-artifacts")
        .join(format!("{name}.png"));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    capture("root", &path)?;
    #[allow(clippy::print_stderr)]
    {
        eprintln!("e2e: screenshot {}", path.display());
    }
    Ok(())
}

/// `gnome-keyring-daemon` with an unlocked login keyring, on the project's bus.
pub fn keyring_daemon(project: &TempProject) -> anyhow::Result<()> {
    let mut child = Command::new("gnome-keyring-daemon")
        .args(["--unlock", "--components=secrets", "--daemonize"])
        .envs(project.env())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context(
            "could not start gnome-keyring-daemon (install the Debian package gnome-keyring)",
        )?;
    child
        .stdin
        .take()
        .context("stdin")?
        .write_all(b"test-password")?;
    let status = child.wait()?;
    ensure!(status.success(), "gnome-keyring-daemon failed: {status}");
    Ok(())
}
