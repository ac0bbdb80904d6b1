#!/usr/bin/env bash
# Throughput of `decode check --batch`: a trusted project with 1,000 rules, a
# mixed workload of JSON lines (bash commands from the agent-command corpus,
# compound commands, file calls, web fetches, several modes), one process.
# Prints decisions per second (median of RUNS) and checks that the output has
# one line per input line, in order. Never asserts on time: it reports.
#
#   bench/batch.sh                       # uses target/release/decode
#   DECODE_BIN=path LINES=100000 RUNS=5 bench/batch.sh
#   UNIQUE=1 bench/batch.sh              # every bash line distinct (a trailing
#                                        # comment), so none is answered twice
#
# Build the release binary first:
#   cargo build --release --bin decode
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${DECODE_BIN:-$ROOT/target/release/decode}
LINES=${LINES:-100000}
RUNS=${RUNS:-5}
[ -x "$BIN" ] || { echo "bench: no binary at $BIN (build it first)" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" XDG_DATA_HOME="$WORK/home/.local/share" XDG_STATE_HOME="$WORK/home/.local/state"
mkdir -p "$HOME" "$WORK/proj/.decode" "$WORK/proj/src"
echo 'fn main() {}' > "$WORK/proj/src/main.rs"

python3 - "$WORK" "$LINES" "$ROOT/crates/decode-policy/tests/data/agent_commands.jsonl" "${UNIQUE:-0}" <<'PY'
import json, random, sys
work, n, corpus, unique = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
random.seed(1)
tools = ["git", "npm", "cargo", "make", "docker", "kubectl", "python3", "node", "go", "rustc",
         "ls", "cat", "grep", "sed", "awk", "curl", "wget", "tar", "zip", "jq"]
allow, ask, deny = [], [], []
for i in range(1000):
    t = tools[i % len(tools)]
    r = [f"bash({t} sub{i} *)", f"bash({t} --flag-{i}*)", f"read(src/module{i}/**)",
         f"edit(docs/page{i}.md)", f"bash({t} run task{i}:*)", f"read(/opt/data{i}/*)",
         f"web_fetch(domain:host{i}.example.com)", f"bash(./scripts/tool{i}.sh *)",
         f"edit(gen/**/file{i}.rs)", f"bash({t} exact command {i})"][i % 10]
    [deny, ask, allow, allow, allow, allow, allow][i % 7].append(r)
allow += ["bash(git *)", "bash(cargo *)", "bash(ls *)"]
deny.append("bash(rm -rf *)")
json.dump({"permissions": {"allow": allow, "ask": ask, "deny": deny}},
          open(f"{work}/proj/.decode/settings.json", "w"))
cmds = [json.loads(l)["cmd"] for l in open(corpus) if l.strip()]
files = [("read", "src/main.rs"), ("read", "/etc/hosts"), ("write", "docs/page3.md"),
         ("edit", "src/lib.rs"), ("glob", ""), ("grep", "src"),
         ("web_fetch", "https://host16.example.com/a"), ("write", ".decode/settings.json")]
modes = ["default", "edit", "auto", None]
with open(f"{work}/in.jsonl", "w") as f:
    for i in range(n):
        if i % 3 == 2:
            tool, subject = files[i % len(files)]
        else:
            tool, subject = "bash", cmds[i % len(cmds)]
            if unique:
                subject += f"\n# {i}"
        line = {"tool": tool, "subject": subject}
        m = modes[i % len(modes)]
        if m:
            line["mode"] = m
        f.write(json.dumps(line) + "\n")
PY

"$BIN" trust "$WORK/proj" >/dev/null
cd "$WORK/proj"
rates=()
for r in $(seq "$RUNS"); do
    start=$(date +%s.%N)
    "$BIN" check --batch < "$WORK/in.jsonl" > "$WORK/out.jsonl"
    end=$(date +%s.%N)
    got=$(wc -l < "$WORK/out.jsonl")
    [ "$got" -eq "$LINES" ] || { echo "bench: $got output lines for $LINES input lines" >&2; exit 1; }
    rates+=("$(python3 -c "print(round($LINES / ($end - $start)))")")
done
errors=$(grep -c '"error"' "$WORK/out.jsonl" || true)
median=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "check --batch: $LINES lines$([ "${UNIQUE:-0}" = 1 ] && echo ' (all distinct)'), 1,000 rules, $(nproc) cores: median $median decisions/s (runs: ${rates[*]}); $errors error lines"
