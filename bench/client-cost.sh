#!/usr/bin/env bash
# Issue 65 item 5: what the client costs per operation, scalebench beside the best peer for each
# database, in one run: the server pinned to core 0, every client to core 1, each client command
# under `perf stat` (CPU, context switches, system calls), a fixed number of operations each.
# Prints a markdown table: throughput (operations over the command's wall time, start-up
# included), client CPU, context switches and system calls per operation, and what bounded the
# row (the client when it used its whole core).
# Needs: perf; redis-benchmark; pgbench; memtier_benchmark (MEMTIER=path; docs/benchmarks.md
# section 25 says how it was built here); YCSB 0.17.0 (tools/ycsb-vectors/fetch.sh fetches it);
# latte (LATTE=path, `cargo install latte-cli --locked`) for the Cassandra rows.
# Usage: bench/client-cost.sh [ROW...]   rows: redis postgres overhead cassandra (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${*:-redis postgres overhead cassandra}
memtier=${MEMTIER:-$(command -v memtier_benchmark || echo /opt/memtier-src/memtier_benchmark)}
latte=${LATTE:-$(command -v latte || echo /opt/latte/bin/latte)}
cargo build --release -q
cargo build --release -q -p scalebench-server-tests --example serve
. bench/lib.sh
sb=("${SCALEBENCH_BIN:-target/release/scalebench}")

# measure NAME OPERATIONS COMMAND...: one row of the table, COMMAND run on core 1.
measure() {
  local name=$1 ops=$2 stats t0 t1
  shift 2
  stats=$(mktemp)
  t0=$(date +%s.%N)
  perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -o "$stats" -- taskset -c 1 "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  python3 - "$name" "$ops" "$t0" "$t1" "$stats" <<'PY'
import sys
name, ops, t0, t1, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
v = {}
for line in open(path):
    f = line.strip().split(",")
    if len(f) > 2 and f[0][:1].isdigit():
        v[f[2]] = float(f[0])
wall = t1 - t0
cores = v["task-clock"] / 1000 / wall
bound = "client (%.2f of its core)" % cores if cores > 0.9 else "not the client (%.2f of its core)" % cores
print("| %s | %.0f | %.2f us | %.4f | %.2f | %s |" % (name, ops / wall, v["task-clock"] * 1000 / ops,
      v["context-switches"] / ops, v["raw_syscalls:sys_enter"] / ops, bound))
PY
  rm -f "$stats"
}

header() {
  echo
  echo "### $1"
  echo
  echo "| client | ops/s | CPU per op | context switches per op | syscalls per op | bound by |"
  echo "|---|---|---|---|---|---|"
}

redis_rows() {
  start_server redis
  taskset -p -c 0 "$PID" >/dev/null
  local port=${URL##*:} props
  # Keys for the peers (user:0 .. user:99999) and for scalebench (its own key names), one 100-byte field.
  redis-benchmark -p "$port" -c 50 -P 50 -n 300000 -r 100000 -q HSET "user:__rand_int__" field0 "$(head -c 100 /dev/zero | tr '\0' x)" >/dev/null
  props=(-p recordcount=100000 -p fieldcount=1 -p fieldlength=100 -p requestdistribution=uniform -p readallfields=true
         -p readproportion=1 -p updateproportion=0)
  "${sb[@]}" load --db "$URL" "${props[@]}" --batch-size 100 -q >/dev/null 2>&1
  for pipe in 1 10; do
    header "Redis reads (HMGET of one 100-byte field), 50 connections, pipeline $pipe, 1,000,000 operations"
    measure "redis-benchmark -c 50 -P $pipe" 1000000 redis-benchmark -p "$port" -c 50 -P "$pipe" -n 1000000 -r 100000 -q HMGET "user:__rand_int__" field0
    measure "memtier_benchmark -t 1 -c 50 --pipeline $pipe" 1000000 "$memtier" -s 127.0.0.1 -p "$port" -t 1 -c 50 -n 20000 \
      --pipeline "$pipe" --command "HMGET __key__ field0" --command-key-pattern R --key-prefix user: --key-minimum 1 --key-maximum 99999 --hide-histogram
    measure "scalebench --concurrency $((50 * pipe)) --pipeline $pipe" 1000000 "${sb[@]}" run --db "$URL" "${props[@]}" --threads 1 \
      --concurrency $((50 * pipe)) --pipeline "$pipe" --operations 1000000 -q
  done
  stop_server
}

postgres_rows() {
  local pgbin
  pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  start_server postgres
  taskset -p -c 0 "$PID" >/dev/null
  "$pgbin/pgbench" -q -i -s 1 "$URL" >/dev/null 2>&1
  local props=(-p recordcount=100000 -p fieldcount=1 -p fieldlength=100 -p requestdistribution=uniform)
  "${sb[@]}" load --db "$URL" "${props[@]}" --create-schema --drop-schema --batch-size 1000 -p postgres.batch_mode=copy -q >/dev/null 2>&1
  header "PostgreSQL point reads by primary key, 8 connections, 200,000 operations"
  measure "pgbench -S -c 8 -j 1 -M prepared" 200000 "$pgbin/pgbench" -S -c 8 -j 1 -M prepared -t 25000 "$URL"
  measure "scalebench run c --concurrency 8" 200000 "${sb[@]}" run c --db "$URL" "${props[@]}" --threads 1 --concurrency 8 --operations 200000 -q
  measure "scalebench run c --concurrency 64 --pipeline 8" 200000 "${sb[@]}" run c --db "$URL" "${props[@]}" --threads 1 --concurrency 64 \
    --pipeline 8 --operations 200000 -q
  stop_server
}

overhead_rows() {
  local ycsb=tools/ycsb-vectors wl
  [ -f "$ycsb/lib/core-0.17.0.jar" ] || bash "$ycsb/fetch.sh" >/dev/null
  wl=$(mktemp)
  printf 'recordcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n' >"$wl"
  header "The tool's own overhead: workload A on a database that does nothing, 1 thread, 30,000,000 operations"
  measure "YCSB 0.17.0 BasicDB" 30000000 java -cp "$ycsb/lib/*" site.ycsb.Client -t -db site.ycsb.BasicDB -P "$wl" \
    -p basicdb.verbose=false -p operationcount=30000000 -threads 1
  measure "scalebench null://" 30000000 "${sb[@]}" run a --db null:// --operations 30000000 --threads 1 -q
  rm -f "$wl"
}

cassandra_rows() {
  if [ ! -x "$latte" ]; then
    echo; echo "(no latte at $latte: the Cassandra rows are left out)"; return
  fi
  start_server cassandra
  taskset -a -p -c 0 "$PID" >/dev/null
  local host=${URL#*://} script
  host=${host%%/*}
  script=$(mktemp --suffix .rn)
  cat >"$script" <<'RN'
use latte::*;
const INSERT = "insert";
pub async fn schema(ctx) {
  ctx.execute("CREATE KEYSPACE IF NOT EXISTS latte WITH REPLICATION = { 'class' : 'SimpleStrategy', 'replication_factor' : 1 }").await?;
  ctx.execute("CREATE TABLE IF NOT EXISTS latte.kv (id bigint PRIMARY KEY, v text)").await?;
}
pub async fn prepare(ctx) {
  ctx.prepare(INSERT, "INSERT INTO latte.kv (id, v) VALUES (:id, :v)").await?;
}
pub async fn run(ctx, i) {
  ctx.execute_prepared(INSERT, [i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]).await?;
}
RN
  "$latte" schema "$script" "$host" >/dev/null 2>&1
  header "Cassandra inserts of one 100-byte value, 1 thread, 32 in flight, 200,000 operations"
  measure "latte run -t 1 -p 32" 200000 "$latte" run "$script" -t 1 -p 32 -d 200000 -q -o "$script.json" "$host"
  measure "scalebench load --concurrency 32" 200000 "${sb[@]}" load --db "$URL" -p recordcount=200000 -p fieldcount=1 -p fieldlength=100 \
    --create-schema --threads 1 --concurrency 32 -q
  stop_server
  rm -f "$script" "$script.json"
}

stop_server() {
  exec 4>&-
  wait || true
  trap - EXIT
}

for r in $rows; do "${r}_rows"; done
