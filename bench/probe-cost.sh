#!/usr/bin/env bash
# The consistency probe's cost: Redis workload A, closed loop, with no probe, 10 and 100 probe writes/s,
# the three one after another in each of ROUNDS rounds. Prints ops/s and the client's CPU per workload
# operation (from the result's resource series). Usage: bench/probe-cost.sh [ROUNDS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
cargo build --release -q
cargo build --release -q -p scalebench-server-tests --example serve
. bench/lib.sh
start_server redis
url=$URL
sb=(target/release/scalebench)
out=$(mktemp)
"${sb[@]}" load --db "$url" -p recordcount=10000 --threads 2 -q >/dev/null
for round in $(seq "$rounds"); do
  for probe in none 10 100; do
    args=(); [ "$probe" = none ] || args=(--consistency-probe "$probe")
    "${sb[@]}" run a --db "$url" -p recordcount=10000 --threads 2 --concurrency 8 --duration 10s --warmup 2s \
        "${args[@]}" -q -o "$out" >/dev/null
    python3 - "$round" "$probe" "$out" <<'PY'
import json, sys
p = json.load(open(sys.argv[3]))["phases"][-1]
ops = p["totals"]["throughput_ops_s"]
cores = [q["cpu_cores"] for s in p["resources"]["samples"] for q in s.get("processes", [])
         if q["name"] == "client" and q.get("cpu_cores") is not None]
cpu = sum(cores) / len(cores)
print(f"round {sys.argv[1]} probe {sys.argv[2]:>4}: {ops:9.0f} ops/s, client {cpu:.3f} cores, {cpu * 1e6 / ops:.2f} us CPU per op")
PY
  done
done
rm -f "$out"
