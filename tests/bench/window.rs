#![allow(clippy::print_stdout, clippy::print_stderr)]
//! The window bench (run by `bench/window.sh`): figures measured *in the webview* of
//! the real app under Xvfb, printed, never asserted.
//!
//! 1. Streaming: a fake OpenAI-compatible server streams 3,000 tokens at 1,000
//!    tokens/s (Markdown with code blocks); the page records every animation frame's
//!    duration meanwhile. Reported: frames over 50 ms, the longest frame, p50/p95.
//! 2. Token to paint: for every batch of text deltas, the time from the backend handing
//!    the token over (its wall-clock stamp) to the paint that shows it.
//! 3. A 2,000-message session (`decode DIR --resume ID`): the time from the page's
//!    start to the history painted, then frame times while scrolling back through
//!    it a screen per frame (and whether content jumped: the entry at the top of the
//!    view must move exactly as far as the view did), and the delay from a key press
//!    to the frame that shows it.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use decode_tests::fake_openai::{FakeOpenAi, Script, Turn};
use decode_tests::project::TempProject;
use decode_tests::window::App;
use serde_json::{json, Value};

const RUNS: usize = 3;

fn stream_text() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 12_000 {
        i += 1;
        s.push_str(&format!(
            "## Step {i}\n\nWe **change** `parse_{i}()` so that it returns early; see the list:\n\n- first item {i}\n- second item\n\n```rust\nfn parse_{i}(x: &str) -> Option<u32> {{\n    x.trim().parse().ok()\n}}\n```\n\n"
        ));
    }
    s
}

const FRAME_RECORDER: &str = r#"
window.__frames = [];
window.__recording = true;
let last = performance.now();
const tick = (t) => {
  window.__frames.push(t - last);
  last = t;
  if (window.__recording) requestAnimationFrame(tick);
};
requestAnimationFrame((t) => { last = t; requestAnimationFrame(tick); });
return true;
"#;

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn sorted(v: &Value) -> Vec<f64> {
    let mut out: Vec<f64> = v
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    out.sort_by(|a, b| a.total_cmp(b));
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    pct(&v, 0.5)
}

struct StreamFigures {
    frames: usize,
    over_50: usize,
    longest: f64,
    p50: f64,
    p95: f64,
    paint_p50: f64,
    paint_p95: f64,
    paint_max: f64,
    tokens_per_s: f64,
    stolen_ms: u64,
}

async fn stream_once(app: &App, n: usize) -> anyhow::Result<StreamFigures> {
    app.js("window.__decodePerf.tokenToPaint.length = 0; window.__decodePerf.flushWork.length = 0; return true;")
        .await?;
    app.js(FRAME_RECORDER).await?;
    let started = Instant::now();
    let stolen = stolen_ms();
    app.send(&format!("bench-stream run {n}")).await?;
    // Done when the composer offers Send again.
    app.wait("stop", Duration::from_secs(10)).await?;
    app.wait("send", Duration::from_secs(60)).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let stolen = stolen_ms() - stolen;
    app.js("window.__recording = false; return true;").await?;
    let frames = sorted(&app.js("return window.__frames;").await?);
    let paint = sorted(&app.js("return window.__decodePerf.tokenToPaint;").await?);
    let work = sorted(&app.js("return window.__decodePerf.flushWork;").await?);
    println!(
        "  script per batch: {} batches, p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        work.len(),
        pct(&work, 0.5),
        pct(&work, 0.95),
        work.last().copied().unwrap_or(f64::NAN)
    );
    Ok(StreamFigures {
        frames: frames.len(),
        over_50: frames.iter().filter(|f| **f > 50.0).count(),
        longest: frames.last().copied().unwrap_or(f64::NAN),
        p50: pct(&frames, 0.5),
        p95: pct(&frames, 0.95),
        paint_p50: pct(&paint, 0.5),
        paint_p95: pct(&paint, 0.95),
        paint_max: paint.last().copied().unwrap_or(f64::NAN),
        tokens_per_s: 3000.0 / elapsed,
        stolen_ms: stolen,
    })
}

/// Opens the app on the (untrusted) project and answers the trust dialog "Not now", as a
/// person would before typing: a modal left open over the log would be painted over
/// every frame of the stream.
async fn open(project: &TempProject, args: &[String]) -> anyhow::Result<App> {
    let app = App::start(project, args).await?;
    // Asked once per project: a resumed session finds it answered.
    if app
        .wait("trust-later", Duration::from_secs(3))
        .await
        .is_ok()
    {
        app.click("trust-later").await?;
        app.wait_gone("trust-later", Duration::from_secs(5)).await?;
    }
    Ok(app)
}

/// Runs `script` in the page with `p`, a plain paragraph fixed over the window, and
/// `done`, the callback that ends the script with its figures (the floor measurements:
/// no Decode code involved).
async fn on_paragraph(app: &App, script: &str) -> anyhow::Result<Value> {
    let setup = r#"const done = arguments[arguments.length - 1];
        const p = document.createElement('p');
        p.style.cssText = 'position:fixed;left:10px;top:60px;width:600px;color:#fff;z-index:99';
        document.body.appendChild(p);
        "#;
    Ok(app
        .client
        .execute_async(&format!("{setup}{script}"), vec![])
        .await?)
}

/// CPU time the host took from this virtual machine so far (the `steal` column of
/// `/proc/stat`, in ms), to tell a slow run from a starved one; 0 where unknown.
fn stolen_ms() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: u64 = stat
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(8))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // USER_HZ is 100 on Linux.
    ticks * 10
}

/// Writes a session of `n` messages (alternating prompts and answers) for `--resume`.
fn long_session(project: &TempProject, n: usize) -> anyhow::Result<String> {
    let id = "20260101-120000-000-beef".to_string();
    let dir = project.home.join(".local/share/decode/sessions");
    std::fs::create_dir_all(&dir)?;
    let mut lines = vec![json!({
        "type": "session", "id": id, "version": 1, "project": project.path(),
        "created": 1_767_268_800_000u64, "agent": "build", "mode": "default", "model": "openai/gpt-e2e"
    })
    .to_string()];
    for i in 0..n / 2 {
        lines.push(json!({"type": "user_prompt", "text": format!("Question {i}: how does `parse` handle blanks?")}).to_string());
        lines.push(json!({"type": "assistant_message", "text": format!("Answer {i}: it **trims** them first.\n\n```rust\nlet x = s.trim();\n```\n\n- then parses\n- then returns"), "tool_calls": []}).to_string());
    }
    std::fs::write(dir.join(format!("{id}.jsonl")), lines.join("\n") + "\n")?;
    Ok(id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_bench() -> anyhow::Result<()> {
    let text = stream_text();
    let pieces = 3000;
    let piece_chars = text.chars().count().div_ceil(pieces);
    let script = Script::new().flow(
        "bench-stream",
        vec![Turn {
            text,
            token_delay: Some(Duration::from_millis(1)),
            piece_chars: Some(piece_chars),
            ..Turn::default()
        }],
    );
    let fake = FakeOpenAi::start(script).await?;
    let project = TempProject::new()?;
    let args = fake.app_args(project.path());

    // 1 + 2: streaming. First the frames of the idle window: this machine's floor.
    let app = open(&project, &args).await?;
    app.js(FRAME_RECORDER).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    app.js("window.__recording = false; return true;").await?;
    let idle = sorted(&app.js("return window.__frames;").await?);
    println!(
        "idle window: {} frames in 2 s, p50 {:.1} ms, longest {:.1} ms",
        idle.len(),
        pct(&idle, 0.5),
        idle.last().copied().unwrap_or(f64::NAN)
    );
    // The floor of a frame that changes something: one word appended to a plain
    // paragraph per frame, no Decode code involved.
    let floor = sorted(
        &on_paragraph(
            &app,
            r#"const frames = []; let last = performance.now(); let n = 0;
                   const step = (t) => {
                     frames.push(t - last); last = t; p.textContent += ' word' + n;
                     if (++n < 120) requestAnimationFrame(step); else { p.remove(); done(frames.slice(1)); }
                   };
                   requestAnimationFrame((t) => { last = t; requestAnimationFrame(step); });"#,
        )
        .await?,
    );
    println!(
        "a plain paragraph growing by a word a frame (this machine's floor): p50 {:.1} ms, p95 {:.1} ms, longest {:.1} ms",
        pct(&floor, 0.5),
        pct(&floor, 0.95),
        floor.last().copied().unwrap_or(f64::NAN)
    );
    // The floor of token→paint: a change that arrives at a random moment (as an event
    // from the backend does), is applied in the next frame and shows in its paint; no
    // Markdown, no scrolling.
    let arrival = sorted(
        &on_paragraph(
            &app,
            r#"const out = []; let n = 0;
                   const next = () => setTimeout(() => {
                     const at = performance.now();
                     requestAnimationFrame(() => {
                       p.textContent += ' word' + n;
                       setTimeout(() => {
                         out.push(performance.now() - at);
                         if (++n < 120) next(); else { p.remove(); done(out); }
                       }, 0);
                     });
                   }, Math.random() * 16);
                   next();"#,
        )
        .await?,
    );
    println!(
        "a word arriving at a random moment, to its paint (the floor of token→paint): p50 {:.1} ms, p95 {:.1} ms",
        pct(&arrival, 0.5),
        pct(&arrival, 0.95)
    );
    let mut runs = Vec::new();
    for n in 0..RUNS {
        let f = stream_once(&app, n).await?;
        println!(
            "stream run {}: {} frames, {} over 50 ms, longest {:.1} ms, p50 {:.1} ms, p95 {:.1} ms; \
             token→paint p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms; {:.0} tokens/s delivered; {} ms of CPU stolen by the host",
            n + 1,
            f.frames,
            f.over_50,
            f.longest,
            f.p50,
            f.p95,
            f.paint_p50,
            f.paint_p95,
            f.paint_max,
            f.tokens_per_s,
            f.stolen_ms
        );
        runs.push(f);
    }
    app.shot("bench-stream").await?;
    // The same stream while the person reads further up (the log does not follow).
    app.js("const l = document.querySelector('[role=\"log\"]'); l.scrollTop = 0; l.dispatchEvent(new Event('scroll')); return true;").await?;
    let f = stream_once(&app, RUNS).await?;
    println!(
        "stream while scrolled up: {} frames, {} over 50 ms, longest {:.1} ms, p50 {:.1} ms, p95 {:.1} ms; {} ms stolen",
        f.frames, f.over_50, f.longest, f.p50, f.p95, f.stolen_ms
    );
    app.close().await;

    // 3: a 2,000-message session.
    let id = long_session(&project, 2000)?;
    let mut loads = Vec::new();
    let mut scroll_longest = Vec::new();
    let mut scroll_p95 = Vec::new();
    let mut key_delays = Vec::new();
    for n in 0..RUNS {
        let mut resume = args.clone();
        resume.extend(["--resume".to_string(), id.clone()]);
        let app = open(&project, &resume).await?;
        let start = Instant::now();
        let painted = loop {
            let v = app
                .js("const m = performance.getEntriesByName('decode:history-painted')[0]; return m ? m.startTime : null;")
                .await?;
            if let Some(ms) = v.as_f64() {
                break ms;
            }
            ensure!(
                start.elapsed() < Duration::from_secs(30),
                "the history never painted"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let count = app
            .js("return document.querySelectorAll('[data-testid=\"message\"]').length;")
            .await?;
        // Scroll back through the whole session, a screen at a time.
        app.js(FRAME_RECORDER).await?;
        let _ = app
            .client
            .execute_async(
                r#"const done = arguments[arguments.length - 1];
                   const log = document.querySelector('[role="log"]');
                   // The entry at the top of the view before a step should be a step
                   // lower after it; anything else is content that jumped.
                   const topEntry = () => {
                     const top = log.getBoundingClientRect().top;
                     for (const e of log.querySelectorAll('[data-testid="message"]')) {
                       const r = e.getBoundingClientRect();
                       if (r.bottom > top + 1) return [e, r.top];
                     }
                     return null;
                   };
                   window.__jumps = 0;
                   let steps = 0;
                   let seen = null;
                   const step = () => {
                     if (seen && seen[0].isConnected && Math.abs(seen[0].getBoundingClientRect().top - seen[1]) > 1.5) window.__jumps++;
                     const before = log.scrollTop;
                     const at = topEntry();
                     log.scrollTop = Math.max(0, before - log.clientHeight);
                     seen = at && [at[0], at[1] + before - log.scrollTop];
                     if (++steps < 120) requestAnimationFrame(step); else done(true);
                   };
                   requestAnimationFrame(step);"#,
                vec![],
            )
            .await
            .context("scrolling")?;
        app.js("window.__recording = false; return true;").await?;
        let frames = sorted(&app.js("return window.__frames;").await?);
        let shown = app
            .js("return document.querySelectorAll('[data-testid=\"message\"]').length;")
            .await?;
        let jumps = app.js("return window.__jumps;").await?;
        // Typing: key press to the frame that shows it.
        app.js(
            r#"window.__keys = [];
               const input = document.querySelector('[data-testid="chat-input"]');
               input.addEventListener('keydown', (e) => {
                 const t0 = e.timeStamp;
                 requestAnimationFrame(() => setTimeout(() => window.__keys.push(performance.now() - t0), 0));
               });
               return true;"#,
        )
        .await?;
        // One key at a time, at a brisk typist's pace (10 keys/s).
        let input = app.wait("chat-input", Duration::from_secs(5)).await?;
        for c in "the quick brown fox".chars() {
            input.send_keys(&c.to_string()).await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let keys = sorted(&app.js("return window.__keys;").await?);
        println!(
            "2,000-message session run {}: painted {:.0} ms after the page started ({} entries rendered of 2,000 at first); \
             scrolling back: {} frames, p95 {:.1} ms, longest {:.1} ms, content jumped {} times, {} entries rendered after; \
             key→paint p50 {:.1} ms, max {:.1} ms",
            n + 1,
            painted,
            count,
            frames.len(),
            pct(&frames, 0.95),
            frames.last().copied().unwrap_or(f64::NAN),
            jumps,
            shown,
            pct(&keys, 0.5),
            keys.last().copied().unwrap_or(f64::NAN)
        );
        loads.push(painted);
        scroll_longest.push(frames.last().copied().unwrap_or(f64::NAN));
        scroll_p95.push(pct(&frames, 0.95));
        key_delays.push(pct(&keys, 0.5));
        if n == 0 {
            app.shot("bench-long-session").await?;
        }
        app.close().await;
    }

    println!("--- medians of {RUNS} runs ---");
    println!(
        "stream 1,000 tokens/s: frames over 50 ms {:.0}, longest frame {:.1} ms, frame p95 {:.1} ms",
        median(runs.iter().map(|r| r.over_50 as f64).collect()),
        median(runs.iter().map(|r| r.longest).collect()),
        median(runs.iter().map(|r| r.p95).collect())
    );
    println!(
        "token→paint: p50 {:.1} ms, p95 {:.1} ms",
        median(runs.iter().map(|r| r.paint_p50).collect()),
        median(runs.iter().map(|r| r.paint_p95).collect())
    );
    println!(
        "2,000-message session: painted {:.0} ms after page start; scrolling back a screen a frame: frame p95 {:.1} ms, longest {:.1} ms; key→paint {:.1} ms",
        median(loads),
        median(scroll_p95),
        median(scroll_longest),
        median(key_delays)
    );
    Ok(())
}
