#!/usr/bin/env bash
# The window bench: streaming at (up to) 1,000 tokens/s, token-to-paint latency, and a
# 2,000-message session (load, scroll, typing), measured inside the real app's webview
# under Xvfb against a fake OpenAI-compatible server on 127.0.0.1. Prints figures (the
# medians of three runs last); asserts nothing. Also prints the machine's floor: the
# idle frame rate and a plain paragraph growing by a word a frame.
#
#   bench/window.sh             the debug build (what ./dev.sh test builds)
#   bench/window.sh --release   the release build, as shipped (a cold build takes minutes)
#
# Needs what ./dev.sh test installs (Xvfb, WebKitWebDriver, tauri-driver).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-$(pwd)/target}
(cd ui && npm run build >/dev/null)
if [ "${1:-}" = "--release" ]; then
  # The release build is the one that ships.
  cargo build --release --bin decode --bin decode-window
  export DECODE_BIN="$TARGET/release/decode"
else
  cargo build --bin decode --bin decode-window
fi
echo "binary: ${DECODE_BIN:-$TARGET/debug/decode}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" \
  cargo test -p decode-tests --test window-bench -- --nocapture --test-threads=1 2>&1 |
  grep -E '^(  script per batch|a plain paragraph|a word arriving|idle window|stream while|stream run|2,000-message|---|stream 1,000|token→paint|2,000-message session:|e2e: screenshot|test result)'
