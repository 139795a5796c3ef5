#!/usr/bin/env bash
# scalebench's redis binding against redis-benchmark, same command shape and concurrency, server and
# client each pinned to one core; plus YCSB workload A. Prints throughput and client CPU per operation.
# Usage: bench/redis.sh [CONNECTIONS] [PIPELINE]   (default 50 1; PIPELINE N: redis-benchmark -P N
# against scalebench --concurrency CONNECTIONS*N --pipeline N, N requests in flight on each connection)
set -euo pipefail
cd "$(dirname "$0")/.."
conns=${1:-50}
pipe=${2:-1}
cargo build --release -q
cargo build --release -q -p scalebench-server-tests --example serve
. bench/lib.sh
start_server redis
url=$URL pid=$PID
taskset -p -c 0 "$pid" >/dev/null
port=${url##*:}
value=$(head -c 100 /dev/zero | tr '\0' 'x')
sb=(taskset -c 1 target/release/scalebench)
echo "== load 100,000 records (1 field of 100 bytes)"
"${sb[@]}" load --db "$url" -p recordcount=100000 -p fieldcount=1 -p fieldlength=100 --batch-size 100 --threads 1 -q >/dev/null
for shape in update read; do   # update first: it fills redis-benchmark's keys for the reads
  if [ $shape = read ]; then cmd=(HMGET "user:__rand_int__" field0); props=(-p readproportion=1 -p updateproportion=0);
  else cmd=(HSET "user:__rand_int__" field0 "$value"); props=(-p readproportion=0 -p updateproportion=1); fi
  echo "== $shape: redis-benchmark -c $conns -P $pipe ${cmd[0]}"
  /usr/bin/time -f "client cpu %U user %S sys" taskset -c 1 redis-benchmark -p "$port" -c "$conns" -P "$pipe" -n 1000000 -r 100000 -q "${cmd[@]}" 2>&1 | tr '\r' '\n' | grep -E "requests per second|client cpu" | tail -2
  echo "== $shape: scalebench --concurrency $((conns * pipe)) --pipeline $pipe (HMGET/HSET of one 100-byte field, uniform keys)"
  /usr/bin/time -f "client cpu %U user %S sys" "${sb[@]}" run --db "$url" -p recordcount=100000 -p fieldcount=1 -p fieldlength=100 \
      -p requestdistribution=uniform -p readallfields=true "${props[@]}" --threads 1 --concurrency $((conns * pipe)) --pipeline "$pipe" --operations 1000000 -q --format json 2>&1 \
    | python3 -c 'import json,sys; t=sys.stdin.read(); j=json.loads(t[:t.rindex("}")+1]); p=j["phases"][-1]; print("%.0f ops/s, errors %d" % (p["totals"]["throughput_ops_s"], p["totals"]["failed"])); print(t[t.rindex("}")+1:].strip())'
done
echo "== YCSB workload A (10 fields x 100 bytes, zipfian), scalebench --concurrency $conns"
"${sb[@]}" load --db "$url" -p recordcount=100000 --batch-size 100 -q --drop-schema >/dev/null
"${sb[@]}" run a --db "$url" -p recordcount=100000 --threads 1 --concurrency "$conns" --duration 20s -q | grep -E "READ|UPDATE|TOTAL"
