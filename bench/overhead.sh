#!/usr/bin/env bash
# Tool overhead: scalebench's null binding against YCSB 0.17.0's BasicDB (a no-op database) on workload A,
# same machine, alternating runs, 1 and 2 threads. Prints ops/s as each tool reports it.
# Needs: maven + JDK 17 (YCSB is fetched from Maven Central by tools/ycsb-vectors/fetch.sh).
# Usage: bench/overhead.sh [ROUNDS]     (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
ycsb=tools/ycsb-vectors
[ -f "$ycsb/lib/core-0.17.0.jar" ] || bash "$ycsb/fetch.sh" >/dev/null
cargo build --release -q
wl=$(mktemp)
printf 'recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n' >"$wl"
ops=30000000
echo "tool threads round ops_per_s"
for threads in 1 2; do
  for round in $(seq "$rounds"); do
    y=$(java -cp "$ycsb/lib/*" site.ycsb.Client -t -db site.ycsb.BasicDB -P "$wl" -p basicdb.verbose=false \
          -p operationcount=$ops -threads "$threads" 2>/dev/null | awk -F', ' '/Throughput/ {print $3}')
    echo "ycsb-0.17.0-basicdb $threads $round $y"
    s=$(target/release/scalebench run a --db null:// --operations $ops --threads "$threads" -q --format json \
          | python3 -c 'import json,sys; print(json.load(sys.stdin)["phases"][-1]["totals"]["throughput_ops_s"])')
    echo "scalebench-null $threads $round $s"
  done
done
rm -f "$wl"
