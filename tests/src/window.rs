//! The real window under test: starts `tauri-driver` (which starts WebKitWebDriver,
//! which starts the `decode` binary) on a free port, and opens a W3C WebDriver session
//! on the app with `fantoccini`.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use fantoccini::{Client, ClientBuilder, Locator};

use crate::project::TempProject;

/// A running tauri-driver process, in a process group of its own; the whole group
/// (WebKitWebDriver and the app it started) is killed on drop. Killing tauri-driver
/// alone left WebKitWebDriver running, holding the test's output pipe open.
pub struct Driver {
    child: Child,
    pub port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
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
        Self::start_with_env(project, &[])
    }

    /// [`Driver::start`] with `extra` added to the environment (the app under test
    /// inherits it).
    pub fn start_with_env(project: &TempProject, extra: &[(&str, &str)]) -> anyhow::Result<Self> {
        if std::env::var_os("DISPLAY").is_none() {
            bail!("the end-to-end suite needs a display: run it under xvfb-run (see dev.sh test)");
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
            .envs(extra.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .process_group(0);
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
        // tauri-driver listens before the WebKitWebDriver behind it does (on a
        // loaded machine by seconds): a refused session is tried again.
        let start = Instant::now();
        loop {
            let attempt = ClientBuilder::rustls()
                .context("TLS set-up for the WebDriver client")?
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{}", self.port))
                .await;
            match attempt {
                Ok(client) => return Ok(client),
                Err(e) if start.elapsed() < Duration::from_secs(30) => {
                    note_refused(&e);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => return Err(e).context("could not open a WebDriver session on the app"),
            }
        }
    }
}

/// Says on stderr that a session attempt failed and will be tried again.
fn note_refused(e: &fantoccini::error::NewSessionError) {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("e2e: the WebDriver session was refused ({e}); trying again");
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

/// Saves a screenshot of the app's window as it is on the X screen, after two
/// animation frames (so the frame is not stale). The capture is X's, not
/// WebDriver's: WebKitGTK answers a WebDriver screenshot only when it composites
/// in layers, and Decode paints plainly (docs/window.md, "Rendering"). A hidden
/// window (Decode in the tray) leaves the whole screen, which is what a person sees.
pub async fn screenshot(client: &Client, app_pid: Option<u32>, path: &Path) -> anyhow::Result<()> {
    // A page whose animation frames stopped would make this wait forever: a
    // stall is a failure with a reason, not a hung run.
    tokio::time::timeout(
        Duration::from_secs(20),
        client.execute_async(
            "const done = arguments[arguments.length - 1];\
             requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
            vec![],
        ),
    )
    .await
    .map_err(|_| anyhow::anyhow!("the page painted no animation frame for 20 s"))?
    .context("waiting for two animation frames")?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let window = app_pid.and_then(largest_visible_window);
    crate::desktop::capture(window.as_deref().unwrap_or("root"), path)
}

/// The largest window of the process `pid` that is on screen (the main window,
/// not a tray menu), as an X window id.
fn largest_visible_window(pid: u32) -> Option<String> {
    crate::desktop::xdotool(&["search", "--onlyvisible", "--pid", &pid.to_string()])
        .ok()?
        .lines()
        .filter_map(|id| {
            let g = crate::desktop::geometry(id).ok()?;
            Some((g.width * g.height, id.to_string()))
        })
        .max()
        .map(|(_, id)| id)
}

/// The running `decode-window` started under `root` (tauri-driver starts
/// WebKitWebDriver, which starts the app): the process that owns the main window
/// (native dialogs run in child processes of their own).
fn app_process(root: u32) -> Option<u32> {
    let children = |pid: u32| -> Vec<u32> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    };
    let mut todo = children(root);
    while let Some(pid) = todo.pop() {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() == "decode-window" {
            return Some(pid);
        }
        todo.extend(children(pid));
    }
    None
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

/// A CSS selector for a `data-testid`.
pub fn tid(testid: &str) -> String {
    format!("[data-testid=\"{testid}\"]")
}

/// The real app on a temp project, driven through WebDriver.
pub struct App {
    pub client: Client,
    driver: Driver,
}

impl App {
    /// Starts `decode` with `args` (the project folder first) in the project's isolated
    /// environment, and waits until the status bar shows the backend's state.
    pub async fn start(project: &TempProject, args: &[String]) -> anyhow::Result<App> {
        Self::start_with_env(project, args, &[]).await
    }

    /// [`App::start`] with `extra` added to the app's environment.
    pub async fn start_with_env(
        project: &TempProject,
        args: &[String],
        extra: &[(&str, &str)],
    ) -> anyhow::Result<App> {
        let bin = crate::project::decode_bin();
        anyhow::ensure!(
            bin.exists(),
            "build the app first: {} is missing",
            bin.display()
        );
        let driver = Driver::start_with_env(project, extra)?;
        let client = driver.session(&bin, args).await?;
        let app = App { client, driver };
        text_of(&app.client, "status-mode", Duration::from_secs(20)).await?;
        Ok(app)
    }

    pub async fn close(self) {
        let _ = self.client.close().await;
    }

    /// The `decode-window` process showing the app.
    pub fn app_pid(&self) -> Option<u32> {
        app_process(self.driver.child.id())
    }

    /// Raises the app's main window above every other window of the X screen, after
    /// waiting up to `limit` for a native dialog of Decode's (a window titled
    /// `Decode — PROJECT: …`) to open. Without a window manager (Xvfb) every window
    /// opens at the top left, and resizing the window through WebDriver unfocuses it,
    /// which pops the native dialog of the pending ask (docs/window.md, "Native
    /// dialogs") over the window's own dialog: a screenshot of the window's dialog
    /// would show the native one's corner instead.
    pub async fn raise_over_native_dialogs(&self, limit: Duration) -> anyhow::Result<()> {
        let pid = self.app_pid().context("the app's process")?;
        let main = largest_visible_window(pid).context("the app's window")?;
        let start = Instant::now();
        while start.elapsed() < limit
            && !crate::desktop::windows_named("^Decode — .*: ")
                .iter()
                .any(|w| *w != main)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        crate::desktop::xdotool(&["windowraise", &main])?;
        Ok(())
    }

    /// Runs a script in the page and returns its value.
    pub async fn js(&self, script: &str) -> anyhow::Result<serde_json::Value> {
        Ok(self.client.execute(script, vec![]).await?)
    }

    /// Waits until an element with this test id exists (and is displayed).
    pub async fn wait(
        &self,
        testid: &str,
        limit: Duration,
    ) -> anyhow::Result<fantoccini::elements::Element> {
        let selector = tid(testid);
        let start = Instant::now();
        loop {
            if let Ok(el) = self.client.find(Locator::Css(&selector)).await {
                if el.is_displayed().await.unwrap_or(false) {
                    return Ok(el);
                }
            }
            if start.elapsed() > limit {
                bail!("[data-testid={testid}] did not appear within {limit:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until no element with this test id exists.
    pub async fn wait_gone(&self, testid: &str, limit: Duration) -> anyhow::Result<()> {
        let selector = tid(testid);
        let start = Instant::now();
        while start.elapsed() < limit {
            if self
                .client
                .find_all(Locator::Css(&selector))
                .await?
                .is_empty()
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("[data-testid={testid}] still there after {limit:?}")
    }

    /// Clicks the element with this test id (waiting for it first).
    pub async fn click(&self, testid: &str) -> anyhow::Result<()> {
        let el = self.wait(testid, Duration::from_secs(10)).await?;
        el.click().await?;
        Ok(())
    }

    /// Replaces the value of a text field and fires `input`, as typing would.
    pub async fn fill(&self, testid: &str, text: &str) -> anyhow::Result<()> {
        let el = self.wait(testid, Duration::from_secs(10)).await?;
        el.clear().await?;
        el.send_keys(text).await?;
        Ok(())
    }

    /// Types a message into the composer and sends it with Enter.
    pub async fn send(&self, text: &str) -> anyhow::Result<()> {
        self.keys("chat-input", &format!("{text}\u{E007}")).await
    }

    /// Sends keys to the element with this test id.
    pub async fn keys(&self, testid: &str, keys: &str) -> anyhow::Result<()> {
        self.on_fresh(testid, |el| async move { el.send_keys(keys).await })
            .await
    }

    /// Empties a text field.
    pub async fn clear(&self, testid: &str) -> anyhow::Result<()> {
        self.on_fresh(testid, |el| async move { el.clear().await })
            .await
    }

    /// Does `act` on the element with this test id. The page may replace the
    /// element between finding it and acting (a re-render when a turn ends):
    /// a stale element is found again, a few times.
    async fn on_fresh<F, Fut>(&self, testid: &str, act: F) -> anyhow::Result<()>
    where
        F: Fn(fantoccini::elements::Element) -> Fut,
        Fut: std::future::Future<Output = Result<(), fantoccini::error::CmdError>>,
    {
        let mut tries = 0;
        loop {
            let el = self.wait(testid, Duration::from_secs(10)).await?;
            match act(el).await {
                Ok(()) => return Ok(()),
                Err(e) if tries < 4 && e.to_string().contains("tale element") => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The texts of every element with this test id, in document order.
    pub async fn texts(&self, testid: &str) -> anyhow::Result<Vec<String>> {
        let mut out = Vec::new();
        for el in self.client.find_all(Locator::Css(&tid(testid))).await? {
            out.push(el.text().await.unwrap_or_default().trim().to_string());
        }
        Ok(out)
    }

    /// Waits until some element with this test id has text containing `needle`.
    pub async fn wait_text(
        &self,
        testid: &str,
        needle: &str,
        limit: Duration,
    ) -> anyhow::Result<String> {
        let start = Instant::now();
        let mut last = Vec::new();
        while start.elapsed() < limit {
            last = self.texts(testid).await.unwrap_or_default();
            if let Some(t) = last.iter().find(|t| t.contains(needle)) {
                return Ok(t.clone());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("no [data-testid={testid}] contains `{needle}` within {limit:?}; seen: {last:?}")
    }

    /// The value of a form field.
    pub async fn value(&self, testid: &str) -> anyhow::Result<String> {
        let el = self.wait(testid, Duration::from_secs(10)).await?;
        Ok(el.prop("value").await?.unwrap_or_default())
    }

    /// Saves a screenshot under `target/e2e-artifacts/NAME.png`.
    pub async fn shot(&self, name: &str) -> anyhow::Result<()> {
        let path = crate::project::target_dir()
            .join("e2e-artifacts")
            .join(format!("{name}.png"));
        let pid = app_process(self.driver.child.id());
        screenshot(&self.client, pid, &path).await?;
        // The test log names every screenshot, so a person can go and look at it.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("e2e: screenshot {}", path.display());
        }
        Ok(())
    }
}
