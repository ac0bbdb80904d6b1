#!/usr/bin/env python3
"""Builds the verdict corpus (one JSON string per line) that `examples/verdicts.rs`
judges: the agent-command corpus, the oracle cases, and every string literal of
the gate's tests that could be a command. Usage: scripts/corpus.py > corpus.jsonl
(run from crates/decode-policy). Two builds' verdicts on it, diffed, show every
verdict a change moved."""
import glob
import json
import re
import sys

out = []
seen = set()


def add(s):
    if s and s not in seen and len(s) <= 20000:
        seen.add(s)
        out.append(s)


for line in open("tests/data/agent_commands.jsonl"):
    if line.strip():
        add(json.loads(line)["cmd"])

cases = open("tests/data/oracle_cases.txt").read().split("\n\n")
for c in cases:
    c = c.strip("\n")
    if c and not c.startswith("##"):
        add(c)

# Rust string literals: "…" with escapes, and r"…" / r#"…"# raw strings.
lit = re.compile(r'r(#*)"(.*?)"\1|"((?:[^"\\]|\\.)*)"', re.S)
esc = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0", "r": "\r"}


def unescape(s):
    res, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n in esc:
                res.append(esc[n]); i += 2; continue
            if n == "\n":  # line continuation: skip leading whitespace
                i += 2
                while i < len(s) and s[i] in " \t":
                    i += 1
                continue
            if n == "u":
                m = re.match(r"\\u\{([0-9a-fA-F]+)\}", s[i:])
                if m:
                    res.append(chr(int(m.group(1), 16))); i += len(m.group(0)); continue
            if n == "x":
                res.append(chr(int(s[i + 2:i + 4], 16))); i += 4; continue
        res.append(c); i += 1
    return "".join(res)


for path in sorted(glob.glob("tests/suite/*.rs")) + sorted(glob.glob("src/**/*.rs", recursive=True)):
    text = open(path).read()
    for m in lit.finditer(text):
        s = m.group(2) if m.group(2) is not None else unescape(m.group(3) or "")
        # Commands, not messages or format strings: a word, then anything.
        if not s or "{}" == s or s.startswith(("{:", "`")) or len(s) < 2:
            continue
        add(s)

for s in out:
    sys.stdout.write(json.dumps(s) + "\n")
