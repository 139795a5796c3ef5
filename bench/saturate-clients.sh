#!/usr/bin/env bash
# docs/benchmarks.md section 14: the saturation search from one and from two clients, each pinned to
# a core, against a simulated server of known capacity and against Redis pinned to core 0.
# Usage: bench/saturate-clients.sh [OUT_DIR]   (release build: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
B=target/release/scalebench
OUT=${1:-$(mktemp -d)}
P="--db null:// -p null.capacity_ops_s=5000000 --concurrency 64 --p99 50ms --start-rate 600000 --factor 2
   --duration 2s --warmup 300ms --interval 200ms --resolution 5 --max-repeats 2"
$B saturate $P --client-cpus 0 -o "$OUT/null-one.json"
$B saturate $P --clients 2 --client-cpus 0,1 -o "$OUT/null-two.json"

PORT=6399
DIR=$(mktemp -d)
taskset -c 0 redis-server --port $PORT --bind 127.0.0.1 --save "" --appendonly no --dir "$DIR" \
  --daemonize yes --logfile "$DIR/redis.log"
trap 'redis-cli -p $PORT shutdown nosave >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
sleep 1
$B load --db redis://127.0.0.1:$PORT -p recordcount=100000 --no-monitor
R="b --db redis://127.0.0.1:$PORT -p recordcount=100000 --concurrency 64 --p99 5ms --start-rate 10000
   --factor 2 --duration 5s --warmup 1s --interval 250ms --resolution 5"
$B saturate $R --client-cpus 1 -o "$OUT/redis-one.json"
$B saturate $R --clients 2 --client-cpus 1,0 -o "$OUT/redis-two.json"
echo "results in $OUT"
