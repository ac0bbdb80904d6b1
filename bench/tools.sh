#!/usr/bin/env bash
# Times Decode's grep and glob tools (`decode tool …`, one process per call, exactly as
# a script would run them) against ripgrep and fd on the same generated tree, and
# prints the medians and the ratios. Never asserts: it reports.
#
#   bench/tools.sh                 # uses target/release/decode
#   DECODE_BIN=path RUNS=20 bench/tools.sh
#
# Build the release binary first: cargo build --release --bin decode
#
# The tree (≥ 100 MB, ≥ 20,000 files, a .gitignore that hides a big part of it) is
# generated once under /tmp (BENCH_TREE) — never inside the repository. rg and fd
# honour .gitignore only inside a git repository, so the tree is `git init`-ed; the
# tool honours it either way. Hidden files are searched by the tool, so rg and fd get
# --hidden for the same work.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${DECODE_BIN:-$ROOT/target/release/decode}
TREE=${BENCH_TREE:-/tmp/decode-bench-tree}
RUNS=${RUNS:-15}
WARMUP=${WARMUP:-3}

if [ ! -x "$BIN" ]; then
    echo "bench: no binary at $BIN" >&2
    echo "bench: build it with: cargo build --release --bin decode" >&2
    exit 1
fi

need_apt=()
command -v rg >/dev/null || need_apt+=(ripgrep)
command -v fdfind >/dev/null || command -v fd >/dev/null || need_apt+=(fd-find)
command -v hyperfine >/dev/null || need_apt+=(hyperfine)
command -v git >/dev/null || need_apt+=(git)
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "bench: installing ${need_apt[*]}" >&2
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need_apt[@]}" >/dev/null
    else
        echo "bench: missing ${need_apt[*]} (install them, as root: apt-get install ${need_apt[*]})" >&2
        exit 1
    fi
fi
FD=$(command -v fdfind || command -v fd)

# ---------------------------------------------------------------- the tree
if [ ! -f "$TREE/.bench-done" ]; then
    echo "bench: generating the tree in $TREE …" >&2
    rm -rf "$TREE"
    mkdir -p "$TREE"
    python3 - "$TREE" <<'PY'
import os, random, sys
root = sys.argv[1]
rng = random.Random(42)
words = ("fn let mut struct impl trait pub use mod match if else for while loop return "
         "self Self async await move ref where type const static enum unsafe crate super "
         "string vector option result error value index count buffer reader writer config "
         "request response client server handler router session token parser lexer node "
         "tree graph cache queue stack map set list item entry key path file folder line "
         "byte char number float integer boolean print debug trace warn info render draw "
         "update create delete insert select filter reduce fold collect iter next peek").split()
def line():
    n = rng.randint(3, 14)
    return "    " * rng.randint(0, 3) + " ".join(rng.choice(words) for _ in range(n))
pool = [line() for _ in range(20000)]
def text(lines, needle_p=0.0, todo_p=0.0):
    out = []
    for _ in range(lines):
        l = rng.choice(pool)
        r = rng.random()
        if r < todo_p:
            l += "  // TODO(bench): " + rng.choice(words)
        out.append(l)
    if rng.random() < needle_p:
        out.insert(rng.randrange(len(out)), "    let marker = 0xdeadbeef; // needle")
    return "\n".join(out) + "\n"
def write(rel, data):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(data)
exts = ["rs", "py", "js", "ts", "md", "go", "c"]
files = 0
# Tracked sources: 50 × 10 × 28 = 14,000 files of ~5 KB.
for a in range(50):
    for b in range(10):
        for c in range(28):
            ext = exts[(a + b + c) % len(exts)]
            write(f"src/mod{a:02}/sub{b}/file{c:02}.{ext}", text(rng.randint(70, 110), 0.02, 0.003))
            files += 1
# Ignored: node_modules (8,000 × ~6 KB), generated sources in target/ (200 × 100 KB), logs.
for a in range(400):
    for c in range(20):
        write(f"node_modules/pkg{a:03}/lib/f{c:02}.js", text(rng.randint(100, 140), 0.02, 0.003))
        files += 1
for c in range(200):
    write(f"target/debug/deps/gen{c:03}.rs", text(2000, 0.5, 0.003))
    files += 1
for c in range(100):
    write(f"logs/build{c:03}.log", text(900, 0.3, 0.003))
    files += 1
write(".gitignore", "node_modules/\ntarget/\n*.log\n")
write("README.md", "# bench tree\n")
print(files, "files", file=sys.stderr)
PY
    (cd "$TREE" && git init -q . && git config user.email b@b && git config user.name bench)
    touch "$TREE/.bench-done"
fi
SIZE=$(du -sm --exclude=.git "$TREE" | cut -f1)
FILES=$(find "$TREE" -path "$TREE/.git" -prune -o -type f -print | wc -l)
echo "tree: $TREE — ${SIZE} MB, ${FILES} files ($(cd "$TREE" && rg --hidden --files | wc -l) not ignored)"

# ---------------------------------------------------------------- the runs
# decode runs with its own HOME / XDG folders, so nothing of the user's is read.
ORIG_HOME=$HOME
BHOME=$(mktemp -d /tmp/decode-bench-home.XXXXXX)
trap 'rm -rf "$BHOME"' EXIT
export HOME=$BHOME XDG_CONFIG_HOME=$BHOME/.config XDG_DATA_HOME=$BHOME/.local/share \
    XDG_STATE_HOME=$BHOME/.local/state XDG_CACHE_HOME=$BHOME/.cache
cd "$TREE"
OUT=$(mktemp -d /tmp/decode-bench-out.XXXXXX)

D="$BIN tool --project $TREE --mode bypass"
bench() { # name, decode command, reference command
    hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" \
        --export-json "$OUT/$1.json" -n decode "$2" -n reference "$3" >/dev/null
}
echo "running (hyperfine, $RUNS runs each, $WARMUP warm-ups, warm cache) …" >&2
hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$OUT/startup.json" \
    -n decode "$BIN tool --project $TREE read '{\"path\":\"README.md\"}'" -n reference "rg --version" >/dev/null
# hyperfine -N splits the command like a shell: single quotes keep the JSON whole.
bench grep-files "$D grep '{\"pattern\":\"deadbeef\",\"output_mode\":\"files\"}'" "rg --hidden -l deadbeef"
bench grep-content "$D grep '{\"pattern\":\"TODO\\\\(bench\\\\)\",\"output_mode\":\"content\"}'" "rg --hidden -n 'TODO\\(bench\\)'"
bench glob "$D glob '{\"pattern\":\"**/*.rs\"}'" "$FD --hidden -g '*.rs'"

# Same answers? (counts only; the tool caps its lists and adds a notice line.)
echo
echo "sanity: files with deadbeef: rg $(rg --hidden -l deadbeef | wc -l); .rs files: fd $($FD --hidden -g '*.rs' | wc -l); TODO lines: rg $(rg --hidden -n 'TODO\(bench\)' | wc -l)"
echo "        decode grep count: $($D grep '{"pattern":"deadbeef","output_mode":"count"}' | tail -1)"

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def medians(key):
    data = json.load(open(os.path.join(out, key + ".json")))["results"]
    return {r["command"]: r["median"] * 1000 for r in data}
start = medians("startup")
print()
print(f"start-up of the decode binary (`tool read` of a one-line file): {start['decode']:.1f} ms "
      f"(rg --version: {start['reference']:.1f} ms)")
print()
print(f"{'benchmark':30} {'decode ms':>10} {'ref ms':>8} {'ratio':>6} {'minus start-up':>15} {'ratio':>6}")
for label, key in [("grep files   vs rg -l", "grep-files"),
                   ("grep content vs rg -n", "grep-content"),
                   ("glob **/*.rs vs fd -g '*.rs'", "glob")]:
    m = medians(key)
    d, r = m["decode"], m["reference"]
    tool = d - start["decode"]
    print(f"{label:30} {d:10.1f} {r:8.1f} {d / r:6.2f} {tool:15.1f} {tool / r:6.2f}")
print()
print("ratio = decode median / reference median (goal <= 1.2). 'minus start-up' subtracts the")
print("binary's fixed start-up (the process, the settings and the gate).")
PY
rm -rf "$OUT"

# The tools in-process (no binary start-up), next to rg / fd: a cargo bench target.
if [ "${INPROCESS:-1}" = 1 ] && command -v cargo >/dev/null; then
    echo >&2
    echo "bench: in-process timings (cargo bench -p decode-engine --bench tools) …" >&2
    (cd "$ROOT" && HOME=$ORIG_HOME BENCH_TREE=$TREE RUNS=$RUNS cargo bench -q -p decode-engine --bench tools 2>/dev/null)
fi
