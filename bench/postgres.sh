#!/usr/bin/env bash
# PostgreSQL: point reads by primary key against `pgbench -S` at equal client count (server and client
# pinned to one core each), and loading 1,000,000 YCSB records batched (COPY, multi-row) and unbatched.
# Usage: bench/postgres.sh [CLIENTS] [SECONDS]   (defaults: 8, 20)
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-8}
secs=${2:-20}
cargo build --release -q
cargo build --release -q -p scalebench-server-tests --example serve
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
. bench/lib.sh
start_server postgres
url=$URL pid=$PID
taskset -p -c 0 "$pid" >/dev/null   # backends forked later inherit the core
sb=(taskset -c 1 target/release/scalebench)
echo "== pgbench -S -c $clients -j 1 -M prepared, ${secs} s (scale 1: 100,000 rows)"
"$pgbin/pgbench" -q -i -s 1 "$url" >/dev/null 2>&1
taskset -c 1 "$pgbin/pgbench" -S -c "$clients" -j 1 -M prepared -T "$secs" "$url" 2>/dev/null | grep -E "^tps|latency average"
echo "== scalebench workload c (reads by key), 100,000 records of one 100-byte field, uniform, $clients connections"
props=(-p recordcount=100000 -p fieldcount=1 -p fieldlength=100 -p requestdistribution=uniform)
"${sb[@]}" load --db "$url" "${props[@]}" --create-schema --drop-schema --batch-size 1000 -p postgres.batch_mode=copy -q >/dev/null
"${sb[@]}" run c --db "$url" "${props[@]}" --threads 1 --concurrency "$clients" --duration "${secs}s" -q | grep -E "READ|TOTAL"
echo "== load 1,000,000 records (10 fields x 100 bytes), 1 thread x 8 connections"
for mode in "copy 1000" "multirow 100" "multirow 1"; do
  set -- $mode
  /usr/bin/time -f "   wall %e s" "${sb[@]}" load --db "$url" -p recordcount=1000000 --create-schema --drop-schema \
      -p postgres.batch_mode="$1" --batch-size "$2" --threads 1 --concurrency 8 -q 2>&1 | grep -E "records written|wall" | sed "s/^/ batch_mode=$1 batch=$2: /"
done
