#!/usr/bin/env bash
# docs/benchmarks.md section 19: named operations (issue 43). YCSB workload A from its file
# (examples/workloads/workloada.toml, a run.mix) against the same operations written as two named
# operations (bench/workloada-named.toml: each measured under its own name): ops/s of a closed
# loop on null://, 2 threads, 10 s (warm-up 1 s), runs alternated, 5 of each. null:// costs nothing,
# so the ratio is the whole cost of choosing and measuring a named operation.
# Usage: bench/named-operations.sh [OUT_DIR]   (release build: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$PWD/target/release/scalebench
OUT=${1:-$(mktemp -d)}
run() { # name workload
  "$B" run "$2" --db null:// -p operationcount=0 --threads 2 --duration 10s --warmup 1s --no-monitor -q -o "$OUT/$1.json" >/dev/null
}
for i in 1 2 3 4 5; do
  run "mix-$i" examples/workloads/workloada.toml
  run "named-$i" bench/workloada-named.toml
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
def ops(name):
    return json.load(open(f"{out}/{name}.json"))["phases"][-1]["totals"]["throughput_ops_s"]
m = [ops(f"mix-{i}") for i in range(1, 6)]
n = [ops(f"named-{i}") for i in range(1, 6)]
mm, mn = statistics.median(m), statistics.median(n)
print(f"mix   {mm:>12,.0f} ({min(m):,.0f}-{max(m):,.0f})")
print(f"named {mn:>12,.0f} ({min(n):,.0f}-{max(n):,.0f})")
print(f"named / mix {mn / mm:.3f}")
PY
