#!/usr/bin/env bash
# The command line as another agent's hook would run it: whole-process time of
# `decode check bash 'git status'` and of `decode hook claude-code|gemini-cli` on a
# sample event (hyperfine, medians), peak RSS of the check (GNU time, median), and,
# with DECODE_BEFORE=path, the same for an older binary side by side. Then the grep
# and glob tools against rg and fd (bench/tools.sh). Prints figures; asserts nothing.
#
#   bench/cli.sh                              builds target/release/decode
#   DECODE_BEFORE=/path/to/old/decode bench/cli.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
RUNS=${RUNS:-200}
command -v hyperfine >/dev/null || { echo "bench: install hyperfine (apt-get install hyperfine)" >&2; exit 1; }
cargo build --release --bin decode
BIN=$TARGET/release/decode
echo "decode binary: $(du -h "$BIN" | cut -f1), $(ldd "$BIN" | wc -l) shared libraries"
[ -n "${DECODE_BEFORE:-}" ] && echo "before:        $(du -h "$DECODE_BEFORE" | cut -f1), $(ldd "$DECODE_BEFORE" | wc -l) shared libraries"

WORK=$(mktemp -d /tmp/decode-cli-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home" "$WORK/project/.git"
export HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config XDG_DATA_HOME=$WORK/home/.local/share \
    XDG_STATE_HOME=$WORK/home/.local/state XDG_CACHE_HOME=$WORK/home/.cache
cd "$WORK/project"
for f in claude-code/bash gemini-cli/run_shell_command; do
    sed "s#/home/user/my-project#$WORK/project#g" \
        "$ROOT/crates/decode-cli/tests/data/hooks/$f.json" >"$WORK/$(basename "$f").json"
done

cmds=(-n "check" "$BIN check bash 'git status'"
      -n "hook claude-code" "sh -c '$BIN hook claude-code < $WORK/bash.json'"
      -n "hook gemini-cli" "sh -c '$BIN hook gemini-cli < $WORK/run_shell_command.json'"
      -n "sh alone" "sh -c 'true < $WORK/bash.json'")
if [ -n "${DECODE_BEFORE:-}" ]; then
    cmds+=(-n "check (before)" "$DECODE_BEFORE check bash 'git status'")
fi
# No shell of hyperfine's own (-N): the hooks read their event through `sh -c … <`,
# whose own cost ("sh alone") is printed beside them and subtracted.
hyperfine -N --style none --warmup 20 --runs "$RUNS" --export-json "$WORK/t.json" "${cmds[@]}" >/dev/null

rss() { # median peak RSS (KB) of 21 runs
    for _ in $(seq 21); do /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; done | sort -n | sed -n 11p
}
RSS=$(rss "$BIN" check bash 'git status')
BEFORE_RSS=
[ -n "${DECODE_BEFORE:-}" ] && BEFORE_RSS=$(rss "$DECODE_BEFORE" check bash 'git status')

python3 - "$WORK/t.json" "$RSS" "$BEFORE_RSS" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
print()
sh = next(r["median"] for r in res if r["command"] == "sh alone")
print(f"{'whole process':24} {'median ms':>10} {'mean ms':>9} {'min ms':>8} {'minus sh':>9}")
for r in res:
    minus = f"{(r['median'] - sh)*1000:9.2f}" if r["command"].startswith("hook") else ""
    print(f"{r['command']:24} {r['median']*1000:10.2f} {r['mean']*1000:9.2f} {r['min']*1000:8.2f} {minus}")
print()
print(f"peak RSS of `decode check bash 'git status'`: {int(sys.argv[2]) / 1024:.1f} MB", end="")
if sys.argv[3]:
    print(f" (before: {int(sys.argv[3]) / 1024:.1f} MB)")
else:
    print()
print("goals: check and hook <= 5 ms median, check <= 10 MB RSS")
PY

if [ "${TOOLS:-1}" = 1 ]; then
    echo
    DECODE_BIN=$BIN INPROCESS=0 "$ROOT/bench/tools.sh"
fi
