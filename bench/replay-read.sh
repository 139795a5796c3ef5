#!/usr/bin/env bash
# How fast each capture format is read (issue 66: at least 1,000,000 replayed operations per second
# from one client process, parsing included): 2,000,000 operations in each format, generated here,
# read by crates/replay/examples/read_rate.rs (release build) on one core. docs/benchmarks.md
# section 27 has the results.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cargo build -q --release -p scalebench-replay --example read_rate
python3 - "$dir" "$n" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
v = "x" * 100
with open(f"{d}/monitor.txt", "w") as f:
    f.write("OK\n")
    for i in range(n):
        t = 1733612345 + i / 100000
        if i % 2:
            f.write(f'{t:.6f} [0 127.0.0.1:{50000 + i % 64}] "GET" "user{i % 100000}"\n')
        else:
            f.write(f'{t:.6f} [0 127.0.0.1:{50000 + i % 64}] "SET" "user{i % 100000}" "{v}"\n')
with open(f"{d}/trace.csv", "w") as f:
    for i in range(n):
        f.write(f"{i // 100000},key{i % 100000},8,100,{i % 64},{'get' if i % 2 else 'set'},0\n")
with open(f"{d}/trace.jsonl", "w") as f:
    for i in range(n):
        f.write(f'{{"time": {i / 100000}, "session": {i % 64}, "op": "{"get" if i % 2 else "set"}", "key": "user{i % 100000}", "value_size": 100}}\n')
with open(f"{d}/general.log", "w") as f:
    f.write("Time                 Id Command    Argument\n")
    for i in range(n):
        s = i / 100000
        f.write(f"2026-12-07T21:{int(s // 60) % 60:02d}:{s % 60:09.6f}Z\t{i % 64 + 1:5d} Query\tSELECT * FROM usertable WHERE YCSB_KEY = 'user{i % 100000}'\n")
with open(f"{d}/capture.csv", "w") as f:
    for i in range(n):
        s = i / 100000
        t = f"2026-12-07 21:{int(s // 60) % 60:02d}:{s % 60:06.3f} UTC"
        f.write(f'{t},"bench","ycsb",{1000 + i % 64},"127.0.0.1:{50000 + i % 64}",6753a1b2.{i % 64:x},{i},"SELECT",2026-12-07 21:00:00 UTC,3/{i},0,LOG,00000,"execute P0_0: SELECT * FROM usertable WHERE ycsb_key = $1","parameters: $1 = \'user{i % 100000}\'",,,,,,,,"pgbench","client backend",,0\n')
PY
for f in monitor.txt trace.csv trace.jsonl general.log capture.csv; do
    taskset -c 1 target/release/examples/read_rate "$dir/$f"
done
