#!/usr/bin/env bash
# What the bash sandbox adds per command: medians of `true` through the bash tool,
# in process — unsandboxed (an approved call), sandboxed (the sandbox kept warm: what
# Decode does) and sandboxed with bubblewrap building the sandbox for every command
# (what Decode did before) — interleaved, back to back and 50 ms apart, in a small
# project; then in a big tree (default: this repository, build output included): one
# walk of it, and a sandboxed command back to back and 400 ms apart. Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
big="${1:-$PWD}"
cargo run -q --release -p decode-engine --example sandbox_cost -- "$big"
