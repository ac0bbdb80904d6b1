#!/usr/bin/env bash
# What the network proxy costs (docs/network.md): a 200 MB download from a server on
# 127.0.0.1 directly and through the proxy's CONNECT tunnel (median throughput of
# each and the ratio), and the time to open a connection directly and through the
# proxy; then what a sandboxed command that opens no connection pays for its own
# network and the proxy's listeners (median, interleaved with and without).
# Release build. `bench/network.sh [MB]`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -q --release -p decode-engine --example net_proxy_cost -- "${1:-200}"
cargo run -q --release -p decode-engine --example net_command_cost
