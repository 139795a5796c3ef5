#!/usr/bin/env bash
# Resident memory of a long run with many in-flight slots: prints VmRSS every 30 s (the first line
# right after the warm-up), then the peak (VmHWM, reached while the result is assembled), the result
# file's size and the size of the recorded intervals' spool.
# Usage: bench/memory.sh [DURATION] [CONCURRENCY]   (defaults: 10m, 1000)
set -euo pipefail
duration=${1:-10m}
concurrency=${2:-1000}
bin=${SCALEBENCH:-target/release/scalebench}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
$bin run a --db null:// --threads 1 --concurrency "$concurrency" --target 200000 \
  --warmup 10s --duration "$duration" -q --output "$out/result.json" >"$out/summary.txt" 2>&1 &
pid=$!
echo "elapsed_s rss_kib open_files_kib"
start=$(date +%s)
sleep 11
hwm=
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  # The recorded intervals' spool: an unlinked temporary file among the open files.
  spool=$(ls -lL /proc/$pid/fd 2>/dev/null | awk '{s += $5} END {print int(s / 1024)}' || true)
  hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null || echo "$hwm")
  [ -n "$rss" ] && echo "$(( $(date +%s) - start )) $rss $spool"
  sleep 30
done
wait "$pid"
echo "peak_rss_kib (last seen) $hwm"
echo "result_bytes $(stat -c %s "$out/result.json") intervals $(grep -o '"start_s"' "$out/result.json" | wc -l)" \
  "$(grep -o '"recorded_interval_s": *[0-9.]*' "$out/result.json" | head -1)"
tail -12 "$out/summary.txt"
