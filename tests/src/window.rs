//! The real window under test: starts `tauri-driver` (which starts WebKitWebDriver,
//! which starts the `decode` binary) on a free port, and opens a W3C WebDriver session
//! on the app with `fantoccini`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use fantoccini::{Client, ClientBuilder, Locator};

use crate::project::TempProject;

/// A running tauri-driver process; killed on drop.
pub struct Driver {
    child: Child,
    pub port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// Where tauri-driver lives: `TAURI_DRIVER`, else `~/.cargo/bin` of the real user, else PATH.
fn tauri_driver_bin() -> PathBuf {
    if let Ok(p) = std::env::var("TAURI_DRIVER") {
        return PathBuf::from(p);
    }
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        let p = Path::new(&home).join("bin/tauri-driver");
        if p.exists() {
            return p;
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        let p = Path::new(&home).join(".cargo/bin/tauri-driver");
        if p.exists() {
            return p;
        }
    }
    PathBuf::from("tauri-driver")
}

impl Driver {
    /// Starts tauri-driver with the project's isolated environment and waits until it
    /// answers `/status`.
    pub fn start(project: &TempProject) -> anyhow::Result<Self> {
        if std::env::var_os("DISPLAY").is_none() {
            bail!("the end-to-end suite needs a display: run it under xvfb-run (see the Makefile)");
        }
        let native = Path::new("/usr/bin/WebKitWebDriver");
        if !native.exists() {
            bail!("WebKitWebDriver is missing: install the Debian package webkit2gtk-driver");
        }
        let port = free_port()?;
        let native_port = free_port()?;
        let mut cmd = Command::new(tauri_driver_bin());
        cmd.arg("--port")
            .arg(port.to_string())
            .arg("--native-port")
            .arg(native_port.to_string())
            .arg("--native-driver")
            .arg(native)
            .envs(project.env())
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit());
        let child = cmd.spawn().context(
            "could not start tauri-driver (install it with `cargo install tauri-driver --locked`)",
        )?;
        let driver = Driver { child, port };
        driver.wait_ready(Duration::from_secs(30))?;
        Ok(driver)
    }

    fn wait_ready(&self, limit: Duration) -> anyhow::Result<()> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bail!(
            "tauri-driver did not listen on port {} within {limit:?}",
            self.port
        )
    }

    /// Opens a session: this launches `decode` with `args`.
    pub async fn session(&self, app: &Path, args: &[String]) -> anyhow::Result<Client> {
        let mut caps = serde_json::Map::new();
        // `tauri:options` is read from the top-level capabilities, which fantoccini
        // sends as `alwaysMatch`.
        caps.insert(
            "tauri:options".into(),
            serde_json::json!({ "application": app, "args": args }),
        );
        caps.insert("browserName".into(), serde_json::json!("wry"));
        let client = ClientBuilder::rustls()
            .context("TLS set-up for the WebDriver client")?
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .context("could not open a WebDriver session on the app")?;
        Ok(client)
    }
}

/// Waits for an element by `data-testid` and returns it once its text is not empty.
pub async fn text_of(client: &Client, testid: &str, limit: Duration) -> anyhow::Result<String> {
    let selector = format!("[data-testid=\"{testid}\"]");
    let start = Instant::now();
    loop {
        if let Ok(el) = client.find(Locator::Css(&selector)).await {
            let text = el.text().await.unwrap_or_default();
            if !text.trim().is_empty() {
                return Ok(text.trim().to_string());
            }
        }
        if start.elapsed() > limit {
            bail!("no text in [data-testid={testid}] after {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Saves a screenshot after two animation frames (so the frame is not stale).
pub async fn screenshot(client: &Client, path: &Path) -> anyhow::Result<()> {
    client
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
            vec![],
        )
        .await
        .context("waiting for two animation frames")?;
    let png = client.screenshot().await.context("taking a screenshot")?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, png)?;
    Ok(())
}

/// Waits until the element's text equals `want`.
pub async fn wait_for_text(
    client: &Client,
    testid: &str,
    want: &str,
    limit: Duration,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let mut last = String::new();
    while start.elapsed() < limit {
        if let Ok(text) = text_of(client, testid, Duration::from_millis(500)).await {
            if text == want {
                return Ok(());
            }
            last = text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("[data-testid={testid}] reads `{last}`, expected `{want}` within {limit:?}")
}
