#!/usr/bin/env bash
# The desktop bench: cold start to a visible and to an interactive window, idle memory
# (summed PSS of the app and its WebKit processes) beside a bare Tauri app built the
# same way in a temp dir (with WebKit's default compositing, and painting plainly as Decode
# does), and memory after loading a 2,000-message session. All under
# one Xvfb, side by side, medians of RUNS runs. Prints figures; asserts nothing.
#
#   bench/desktop.sh            release builds (the bare app is built once, reusing the
#                               workspace's compiled dependencies)
#
# Needs what ./dev.sh test installs (Xvfb, xdotool).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
RUNS=${RUNS:-5}
IDLE=${IDLE:-5}

(cd ui && npm run build >/dev/null)
cargo build --release --bin decode --bin decode-window
DECODE="$CARGO_TARGET_DIR/release/decode"
# DECODE_BEFORE=path: an older build, whose cold start is measured beside this one.
BEFORE=${DECODE_BEFORE:-}

# A bare Tauri app: one window on a one-line page, nothing else.
BARE_DIR=$(mktemp -d)
trap 'rm -rf "$BARE_DIR"' EXIT
mkdir -p "$BARE_DIR/src" "$BARE_DIR/dist"
cat >"$BARE_DIR/Cargo.toml" <<EOF
[package]
name = "bare-tauri"
version = "0.1.0"
edition = "2021"
[build-dependencies]
tauri-build = "2"
[dependencies]
tauri = { version = "2", features = ["custom-protocol"] }
[workspace]
EOF
cp Cargo.lock "$BARE_DIR/Cargo.lock"
echo 'fn main() { tauri_build::build() }' >"$BARE_DIR/build.rs"
cat >"$BARE_DIR/src/main.rs" <<'EOF'
fn main() {
    tauri::Builder::default()
        .setup(|app| {
            tauri::WebviewWindowBuilder::new(app, "main", tauri::WebviewUrl::App("index.html".into()))
                .title("Bare Tauri")
                .inner_size(1100.0, 760.0)
                .build()?;
            Ok(())
        })
        .run(tauri::generate_context!())
        .expect("bare app");
}
EOF
echo '<!doctype html><html><body><p>bare</p></body></html>' >"$BARE_DIR/dist/index.html"
cat >"$BARE_DIR/tauri.conf.json" <<'EOF'
{"productName": "bare", "version": "0.1.0", "identifier": "dev.decode.bare",
 "build": {"frontendDist": "dist"}, "app": {"windows": []},
 "bundle": {"active": false, "icon": []}}
EOF
mkdir -p "$BARE_DIR/icons"
cp icons/icon.png "$BARE_DIR/icons/icon.png"
(cd "$BARE_DIR" && cargo build --release --quiet)
BARE="$CARGO_TARGET_DIR/release/bare-tauri"

WORK=$(mktemp -d)
trap 'rm -rf "$BARE_DIR" "$WORK"' EXIT
mkdir -p "$WORK/project" "$WORK/home/.local/share/decode/sessions"
python3 - "$WORK" <<'EOF'
import json, sys
work = sys.argv[1]
sid = "20260101-120000-000-beef"
lines = [json.dumps({"type": "session", "id": sid, "version": 1, "project": f"{work}/project",
                     "created": 1767268800000, "agent": "build", "mode": "default", "model": "openai/m"})]
for i in range(1000):
    lines.append(json.dumps({"type": "user_prompt", "text": f"Question {i}: how does `parse` handle blanks?"}))
    lines.append(json.dumps({"type": "assistant_message", "text": f"Answer {i}: it **trims** them first.\n\n```rust\nlet x = s.trim();\n```\n\n- then parses\n- then returns", "tool_calls": []}))
open(f"{work}/home/.local/share/decode/sessions/{sid}.jsonl", "w").write("\n".join(lines) + "\n")
EOF

export WORK DECODE BARE RUNS IDLE BEFORE
xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" python3 - <<'EOF'
import os, re, statistics, subprocess, time

work, runs, idle = os.environ["WORK"], int(os.environ["RUNS"]), float(os.environ["IDLE"])
env = dict(os.environ, HOME=f"{work}/home", XDG_CONFIG_HOME=f"{work}/home/.config",
           XDG_DATA_HOME=f"{work}/home/.local/share", XDG_STATE_HOME=f"{work}/home/.local/state",
           XDG_RUNTIME_DIR=f"{work}/home", DBUS_SESSION_BUS_ADDRESS=f"unix:path={work}/home/no-bus",
           DECODE_NO_NATIVE_DIALOGS="1", RUST_LOG="info")

def tree(pid):
    """The process and its descendants (WebKit's web and network processes)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            kids = open(f"/proc/{p}/task/{p}/children").read().split()
        except OSError:
            kids = []
        todo += [int(k) for k in kids]
    return out

def pss_mb(pid):
    total = 0
    for p in tree(pid):
        try:
            for line in open(f"/proc/{p}/smaps_rollup"):
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024

def visible(title):
    r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title], capture_output=True)
    return r.returncode == 0 and r.stdout.strip() != b""

def start(cmd, title, log, waits_ready=True):
    t0 = time.monotonic()
    logf = open(log, "w")
    p = subprocess.Popen(cmd, env=env, stdout=logf, stderr=subprocess.STDOUT)
    shown = interactive = None
    while time.monotonic() - t0 < 30:
        if shown is None and visible(title):
            shown = time.monotonic() - t0
        if interactive is None and "window interactive" in open(log, errors="replace").read():
            interactive = time.monotonic() - t0
        if shown is not None and (interactive is not None or not waits_ready):
            break
        time.sleep(0.01)
    return p, shown, interactive

def stop(p):
    p.terminate()
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()

res = {k: [] for k in ["bare_shown", "bare_pss", "bare_plain_pss", "shown", "interactive", "pss", "long_interactive", "long_pss",
                       "before_shown", "before_interactive"]}
before = os.environ.get("BEFORE")
for i in range(runs):
    if before:
        p, shown, inter = start([before, f"{work}/project"], "^Decode — ", f"{work}/before.log")
        res["before_shown"].append(shown); res["before_interactive"].append(inter); stop(p)
    p, shown, _ = start([os.environ["BARE"]], "^Bare Tauri$", f"{work}/bare.log", waits_ready=False)
    time.sleep(idle)
    res["bare_shown"].append(shown); res["bare_pss"].append(pss_mb(p.pid)); stop(p)
    # The bare app again, painting plainly as Decode does by default (docs/window.md).
    saved = env.get("WEBKIT_DISABLE_COMPOSITING_MODE")
    env["WEBKIT_DISABLE_COMPOSITING_MODE"] = "1"
    p, _, _ = start([os.environ["BARE"]], "^Bare Tauri$", f"{work}/bare.log", waits_ready=False)
    time.sleep(idle)
    res["bare_plain_pss"].append(pss_mb(p.pid)); stop(p)
    env.pop("WEBKIT_DISABLE_COMPOSITING_MODE")
    if saved is not None:
        env["WEBKIT_DISABLE_COMPOSITING_MODE"] = saved
    p, shown, inter = start([os.environ["DECODE"], f"{work}/project"], "^Decode — ", f"{work}/decode.log")
    if shown is None:
        print("a Decode start showed no window; its log ends:", open(f"{work}/decode.log", errors="replace").read()[-600:])
    time.sleep(idle)
    res["shown"].append(shown); res["interactive"].append(inter); res["pss"].append(pss_mb(p.pid) if p.poll() is None else None); stop(p)
    p, _, inter = start([os.environ["DECODE"], f"{work}/project", "--resume", "20260101-120000-000-beef"],
                        "^Decode — ", f"{work}/long.log")
    time.sleep(idle + 3)
    res["long_interactive"].append(inter); res["long_pss"].append(pss_mb(p.pid)); stop(p)
    f = lambda v, unit: "n/a" if v is None else f"{v:.2f} {unit}"
    print(f"run {i + 1}: bare shown {f(res['bare_shown'][-1], 's')}, {res['bare_pss'][-1]:.0f} MB; "
          f"decode shown {f(res['shown'][-1], 's')}, interactive {f(res['interactive'][-1], 's')}, "
          f"{res['pss'][-1]:.0f} MB; 2,000 messages {res['long_pss'][-1]:.0f} MB", flush=True)

def median(vs):
    # A run whose window never showed (or that died) is left out, and said.
    ok = [v for v in vs if v]
    return statistics.median(ok) if ok else float("nan")

m = {k: median(vs) for k, vs in res.items()}
failed = sum(1 for v in res["shown"] if not v)
if failed:
    print(f"note: {failed} of {runs} Decode starts showed no window within 30 s (left out)")
print("---")
print(f"cold start to a visible window: decode {m['shown']:.2f} s, bare Tauri {m['bare_shown']:.2f} s")
print(f"cold start to an interactive window (first status served): decode {m['interactive']:.2f} s")
if before:
    print(f"  the older build ({before}): visible {m['before_shown']:.2f} s, interactive {m['before_interactive']:.2f} s")
print(f"idle memory (PSS, app + WebKit processes): decode {m['pss']:.0f} MB, bare Tauri {m['bare_pss']:.0f} MB, "
      f"ratio {m['pss'] / m['bare_pss']:.2f}")
print(f"  bare Tauri painting plainly too (WEBKIT_DISABLE_COMPOSITING_MODE=1): {m['bare_plain_pss']:.0f} MB, "
      f"ratio {m['pss'] / m['bare_plain_pss']:.2f}")
print(f"after a 2,000-message session: {m['long_pss']:.0f} MB, {m['long_pss'] / m['pss']:.2f}x idle")
EOF
