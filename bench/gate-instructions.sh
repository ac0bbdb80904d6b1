#!/usr/bin/env bash
# What one decision of the gate bench's calls costs, counted rather than timed
# (docs/permissions.md, "Cost"): instructions (valgrind) and system calls
# (strace) per decision, as the difference between judging each call 25 and 5
# times, so that building the gate is left out. Counts do not depend on the
# machine's load: two builds compare exactly. Release build.
# `bench/gate-instructions.sh [TARGET_DIR]`.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-${CARGO_TARGET_DIR:-target}}"
CARGO_TARGET_DIR="$target" cargo build -q --release -p decode-policy --example decide_calls
bin="$target/release/examples/decide_calls"
instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
    awk '/Collected/ {print $4}'
}
syscalls() {
  local out
  out=$(mktemp)
  strace -f -c -o "$out" "$bin" "$1" "$2" >/dev/null 2>&1
  awk '/^ *[0-9]/ && $NF != "total" {s += $4} END {print s + 0}' "$out"
  rm -f "$out"
}
printf '%4s %12s %9s  %s\n' call instructions syscalls command
total=0
while IFS=$'\t' read -r i name; do
  ir=$(( ($(instructions 25 "$i") - $(instructions 5 "$i")) / 20 ))
  sc=$(( ($(syscalls 105 "$i") - $(syscalls 5 "$i")) / 100 ))
  total=$((total + ir))
  printf '%4s %12s %9s  %s\n' "$i" "$ir" "$sc" "$name"
done < <("$bin" list)
printf '%4s %12s\n' all "$total"
