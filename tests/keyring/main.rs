//! The API key's round trip through the real Secret Service: a session bus and
//! `gnome-keyring-daemon` of the test's own, `decode key set` stores the key,
//! `decode run` sends it to the (fake) Anthropic API without any key variable set,
//! `decode key delete` removes it and the next run says a key is missing.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use anyhow::{ensure, Context};
use decode_tests::desktop::{keyring_daemon, session_bus, wait_until};
use decode_tests::project::{decode_bin, TempProject};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-ring-4242";

fn decode(project: &TempProject, args: &[&str], stdin: &str) -> anyhow::Result<Output> {
    let mut child = Command::new(decode_bin())
        .args(args)
        .envs(project.env())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("DECODE_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting decode")?;
    child
        .stdin
        .take()
        .context("stdin")?
        .write_all(stdin.as_bytes())?;
    Ok(child.wait_with_output()?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_the_secret_service_reaches_the_provider_and_is_removed() -> anyhow::Result<()> {
    let project = TempProject::new()?;
    let _bus = session_bus(&project)?;
    keyring_daemon(&project)?;

    // A provider that needs a key (a local OpenAI-compatible server does
    // not, so Decode would not look for one): Anthropic's API, faked.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(500).set_body_string("{\"error\":\"fake\"}"))
        .mount(&server)
        .await;
    let base = format!("{}/v1", server.uri());
    let project_dir = project.path().display().to_string();
    let run = |_: ()| {
        decode(
            &project,
            &[
                "run",
                "--project",
                &project_dir,
                "--provider",
                "anthropic",
                "--base-url",
                &base,
                "--model",
                "m",
                "-p",
                "hello",
            ],
            "",
        )
    };
    let keys_sent = || async {
        server
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
            .collect::<Vec<String>>()
    };

    // The daemon may take a moment to own its bus name.
    let mut stored = None;
    wait_until(Duration::from_secs(10), || {
        stored = decode(&project, &["key", "set", "anthropic"], KEY).ok();
        stored.as_ref().is_some_and(|o| o.status.success())
    })
    .with_context(|| format!("decode key set failed: {stored:?}"))?;

    // A blocking wait is fine: the mock server runs on the other worker.
    let out = run(())?;
    let sent = keys_sent().await;
    ensure!(
        !sent.is_empty() && sent.iter().all(|k| k == KEY),
        "the stored key did not reach the provider: sent {sent:?}; {out:?}"
    );

    let deleted = decode(&project, &["key", "delete", "anthropic"], "")?;
    ensure!(
        deleted.status.success(),
        "decode key delete failed: {deleted:?}"
    );
    let before = keys_sent().await.len();
    let out = run(())?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(
        !out.status.success() && stderr.contains("ANTHROPIC_API_KEY"),
        "a run after the key was removed should say how to give one: {out:?}"
    );
    ensure!(
        keys_sent().await.len() == before,
        "a run without a key still reached the provider"
    );
    Ok(())
}
