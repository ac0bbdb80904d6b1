#!/usr/bin/env bash
# The window bench: streaming at 1,000 tokens/s, token-to-paint latency, and a
# 2,000-message session (load, scroll, typing), measured inside the real app's webview
# under Xvfb against a fake OpenAI-compatible server on 127.0.0.1. Prints figures (the
# medians of three runs last); asserts nothing.
#
#   bench/window.sh            (needs what ./dev.sh test installs: Xvfb, tauri-driver)
set -euo pipefail
cd "$(dirname "$0")/.."
(cd ui && npm run build >/dev/null)
cargo build --bin decode
xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" \
  cargo test -p decode-tests --test window-bench -- --nocapture --test-threads=1 2>&1 |
  grep -E '^(  script per batch|a plain paragraph|idle window|stream while|stream run|2,000-message|---|stream 1,000|token→paint|2,000-message session:|e2e: screenshot|test result)'
