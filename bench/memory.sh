#!/usr/bin/env bash
# Resident memory of a long run with many in-flight slots: prints VmRSS every 30 s.
# Usage: bench/memory.sh [DURATION] [CONCURRENCY]   (defaults: 10m, 1000)
set -euo pipefail
duration=${1:-10m}
concurrency=${2:-1000}
bin=${SCALEBENCH:-target/release/scalebench}
$bin run a --db null:// --threads 1 --concurrency "$concurrency" --target 200000 \
  --duration "$duration" -q --output /tmp/scalebench-memory.json >/tmp/scalebench-memory.txt 2>&1 &
pid=$!
echo "elapsed_s rss_kib"
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  [ -n "$rss" ] && echo "$(( $(date +%s) - start )) $rss"
  sleep 30
done
wait "$pid"
tail -12 /tmp/scalebench-memory.txt
