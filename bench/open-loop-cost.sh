#!/usr/bin/env bash
# What pacing costs per operation (issue 65, item 1): the client's CPU and context switches per
# operation (the result's client_cost) of an open loop at each rate, beside a closed loop doing as
# many operations, on the null binding (so nearly all of it is the client's own work), one thread.
# Usage: bench/open-loop-cost.sh [RUNS]   (default 3; rates 1,000, 10,000 and 100,000 ops/s, 5 s each)
# SCALEBENCH_BIN=path/to/scalebench measures that binary instead of this tree's release build (a
# build before a change, beside one after it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SCALEBENCH_BIN:-target/release/scalebench}
[ -n "${SCALEBENCH_BIN:-}" ] || cargo build --release -q -p scalebench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf "%-22s %4s %14s %16s %12s %18s\n" "loop" "run" "CPU us per op" "switches per op" "cores busy" "start delay p99 us"
for rate in 1000 10000 100000; do
  ops=$((rate * 5))
  for run in $(seq "${1:-3}"); do
    for loop in open closed; do
      pace=()
      [ "$loop" = open ] && pace=(--target "$rate")
      SCALEBENCH_STATE_DIR="$out" "$bin" run a --db null:// --threads 1 \
        --operations "$ops" "${pace[@]}" --no-monitor -q -o "$out/r.json" > /dev/null
      python3 - "$out/r.json" "$loop" "$rate" "$run" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["phases"][-1]
c = p["client_cost"]
label = "%s %s ops/s" % (sys.argv[2], sys.argv[3]) if sys.argv[2] == "open" else "closed, as many ops"
# How late each start was against its schedule (an open loop's only).
delay = ((p.get("schedule") or {}).get("start_delay") or {}).get("p99_us")
print("%-22s %4s %14.2f %16.3f %12.3f %18s" % (label, sys.argv[4], c["cpu_us_per_op"], c["switches_per_op"], c["cores_used"], "-" if delay is None else "%.1f" % delay))
PY
    done
  done
done
