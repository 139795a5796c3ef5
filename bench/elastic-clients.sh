#!/usr/bin/env bash
# docs/benchmarks.md section 16: Dory's elasticity benchmark (a Redis Cluster 3 -> 4 under request
# sets) from one and from two client processes, each from a fresh cluster.
# Usage: bench/elastic-clients.sh [OUT_DIR]   (release build: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$PWD/target/release/scalebench
OUT=${1:-$(mktemp -d)}
cd "$OUT"
printf 'name = "bench-elastic"\ndatabase = "redis-cluster"\nnodes = 3\nidle_timeout_s = 120\n' > d.toml
trap '$B cluster down d.toml --clusters-dir cl >/dev/null 2>&1 || true' EXIT
for n in 1 2; do
  $B cluster up d.toml --clusters-dir cl >/dev/null
  $B elastic documents --deployment d.toml --clusters-dir cl --action add:1 --request-set 1000 \
    --threads 4 -p recordcount=20000 --baseline 10s --after 5s --stable-sets 3 --stable-timeout 3m \
    --warmup 2s --clients $n -o "elastic-$n.json" > "elastic-$n.txt"
  $B cluster down d.toml --clusters-dir cl >/dev/null
done
echo "results in $OUT"
