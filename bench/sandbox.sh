#!/usr/bin/env bash
# What the bash sandbox adds per command: medians of `true` through the bash tool,
# unsandboxed (an approved call) and sandboxed, in a small project and in a big tree
# (default: this repository, build output included). Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
big="${1:-$PWD}"
cargo run -q --release -p decode-engine --example sandbox_cost -- "$big"
