//! The native approval dialog shows the exact text of the call (docs/window.md,
//! "Native dialogs"): the real `decode-window native-dialog` child builds its GTK
//! message box for thousands of generated texts — printf directives, markup, mnemonics,
//! long and multi-line text, every kind of character — and reports what its widgets
//! hold. Nothing may crash and every text must come back exactly as given.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An X display for the test: the one the test runs under, or an Xvfb of its own.
struct Display {
    name: String,
    server: Option<Child>,
}

impl Drop for Display {
    fn drop(&mut self) {
        if let Some(mut s) = self.server.take() {
            let _ = s.kill();
            let _ = s.wait();
        }
    }
}

fn display() -> Display {
    if let Some(d) = std::env::var_os("DISPLAY").filter(|d| !d.is_empty()) {
        return Display {
            name: d.to_string_lossy().into_owned(),
            server: None,
        };
    }
    for n in 180..260 {
        if Path::new(&format!("/tmp/.X{n}-lock")).exists()
            || Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
        {
            continue;
        }
        let mut server = Command::new("Xvfb")
            .arg(format!(":{n}"))
            .args(["-screen", "0", "1024x768x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "Xvfb is needed for this test (Debian package xvfb; ./dev.sh test installs it)",
            );
        let socket = format!("/tmp/.X11-unix/X{n}");
        let started = Instant::now();
        while !Path::new(&socket).exists() && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if Path::new(&socket).exists() {
            return Display {
                name: format!(":{n}"),
                server: Some(server),
            };
        }
        let _ = server.kill();
        let _ = server.wait();
    }
    panic!("could not start an Xvfb display");
}

const PIECES: &[&str] = &[
    "%s",
    "%n",
    "%p",
    "%x",
    "%d",
    "%%",
    "%1$s",
    "%*d",
    "%.9999s",
    "%ls",
    "%c",
    "%-20s",
    "%",
    "%%n",
    "<b>bold</b>",
    "<span foreground='red'>",
    "&amp;",
    "&#x41;",
    "</markup>",
    "_Allow",
    "__",
    "\\",
    "\\x1b[31m",
    "\\u{202e}",
    "date +%Y-%m-%d %p",
    "rm -rf ~",
    "git push",
    "'quoted'",
    "\"dq\"",
    "\n",
    "\n\n",
    "\t",
    " ",
    "é",
    "中文",
    "🙂",
    "עברית",
    "\u{2010}",
    "{}",
    "$(id)",
    "`id`",
];

fn text(rng: &mut fastrand::Rng) -> String {
    let mut s = String::new();
    for _ in 0..rng.usize(0..24) {
        match rng.u8(0..10) {
            0 => {
                // A long run: GTK lays out long text without trouble.
                let piece = PIECES[rng.usize(0..PIECES.len())];
                s.push_str(&piece.repeat(rng.usize(1..200)));
            }
            1 => s.push(char::from_u32(rng.u32(0x20..0x2FFF)).unwrap_or('?')),
            _ => s.push_str(PIECES[rng.usize(0..PIECES.len())]),
        }
    }
    s
}

#[test]
fn the_message_box_shows_exactly_the_text_it_is_given() {
    let display = display();
    let mut rng = fastrand::Rng::with_seed(0x5eed_d1a1);
    let mut specs = vec![
        serde_json::json!({
            "title": "Decode — proj: allow bash?",
            "body": "bash: date +%Y-%m-%d %p %n %s\n\ndefault mode asks before running shell commands",
            "buttons": ["Allow once", "Always allow", "Deny"],
        }),
        serde_json::json!({"title": "%s%n%s%n", "body": "%n%n%n%n%n%n%n%n", "buttons": ["Open Decode", "Later"]}),
    ];
    for _ in 0..400 {
        let buttons: Vec<&str> = match rng.u8(0..3) {
            0 => vec!["Allow once", "Deny"],
            1 => vec!["Open Decode", "Later"],
            _ => vec!["Allow once", "Always allow", "Deny"],
        };
        specs.push(serde_json::json!({"title": text(&mut rng), "body": text(&mut rng), "buttons": buttons}));
    }
    let input: String = specs.iter().map(|s| format!("{s}\n")).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_decode-window"))
        .arg("native-dialog")
        .env("DISPLAY", &display.name)
        .env("DECODE_DIALOG_CHECK", "1")
        .env("NO_AT_BRIDGE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the dialog process failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(lines.len(), specs.len(), "one report per dialog");
    for (spec, line) in specs.iter().zip(lines) {
        let shown: serde_json::Value = serde_json::from_str(line).unwrap();
        let title = spec["title"].as_str().unwrap();
        let body = spec["body"].as_str().unwrap();
        assert_eq!(shown["window_title"], title);
        assert_eq!(
            shown["labels"],
            serde_json::json!([title, body]),
            "GTK shows another text than it was given"
        );
        assert_eq!(shown["buttons"], spec["buttons"]);
    }
}
