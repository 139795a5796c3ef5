#!/usr/bin/env bash
# What pacing an open loop costs the client: CPU (user + system) of a run against the null binding at
# a low rate, where nearly all of it is the pacer waiting for the next start. On a machine shared with
# the servers under test (every local cluster), this CPU is taken from the database.
# Usage: bench/pacer-cpu.sh [RUNS]   (default 3; rates 1,000 and 10,000 ops/s, 2 threads, 10 s each)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
for rate in 1000 10000; do
  for run in $(seq "${1:-3}"); do
    /usr/bin/time -f "%U %S %e" -o /tmp/pacer-cpu.$$ \
      target/release/scalebench run a --db null:// --target "$rate" --threads 2 --duration 10s \
      --no-monitor -q --format json > /dev/null
    read -r user sys wall < /tmp/pacer-cpu.$$
    awk -v r="$rate" -v n="$run" -v u="$user" -v s="$sys" -v w="$wall" \
      'BEGIN { printf "%6d ops/s run %d: %.2f s cpu in %.2f s = %.3f cores\n", r, n, u + s, w, (u + s) / w }'
  done
done
rm -f /tmp/pacer-cpu.$$
