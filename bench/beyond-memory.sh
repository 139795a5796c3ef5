#!/usr/bin/env bash
# Reads within memory and beyond it: two one-node clusters of DATABASE (postgres or cassandra), one
# with a memory limit (`memory` in its deployment file), one without (its heap or shared buffers set
# to what the limit gives the other). Both are loaded in steps to data from a fraction of the limit
# to several times it; after each step, workload C (reads by key, uniform keys) on each, alternately.
# Prints per step and cluster: records, data on disk (without WAL / commit log), the node's memory use
# after the run, reads/s, read latency, and what the node read from storage per read (the resource
# monitor's storage reads of the node's processes over the measured window).
# Usage: bench/beyond-memory.sh DATABASE [SECONDS]   (default 20; as root: memory cgroups)
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: bench/beyond-memory.sh postgres|cassandra [SECONDS]}
secs=${2:-20}
cargo build --release -q
sb=("${CARGO_TARGET_DIR:-target}/release/scalebench")
work=$(mktemp -d)
export SCALEBENCH_CLUSTERS_DIR=$work/clusters
case $db in
  postgres)
    limit=256MiB
    steps=(50000 100000 200000 400000 800000)
    same_sizes='[server]
shared_buffers = "64MB"'       # what 256MiB gives (a quarter)
    binding=''
    ;;
  cassandra)
    limit=1GiB
    steps=(100000 200000 400000 800000 1600000)
    same_sizes='[cassandra]
heap_mb = 512'                 # what 1GiB gives (half; also the default)
    binding='[binding]
replication_factor = 1'
    ;;
  *) echo "bench/beyond-memory.sh: no such database: $db (postgres or cassandra)" >&2; exit 2 ;;
esac
limited=$work/limited.toml
unlimited=$work/unlimited.toml
printf 'name = "beyond-memory-limited"\ndatabase = "%s"\nmemory = "%s"\n%s\n' "$db" "$limit" "$binding" >"$limited"
printf 'name = "beyond-memory-unlimited"\ndatabase = "%s"\n%s\n%s\n' "$db" "$same_sizes" "$binding" >"$unlimited"
cleanup() {
  for f in "$limited" "$unlimited"; do "${sb[@]}" cluster down "$f" --purge >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# row RESULT USED: the columns of one run from its result file and the node's memory use.
row() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))["phases"][-1]
space = p["space"]
data_mb = (space["total_bytes"] - space["parts"].get("log", 0)) / 1e6
reads = p["operations"]["READ"]
rate = reads["ok"] / p["duration_s"]
lat = reads["latency"]
# Storage reads of node1's process tree over the measured window, per read.
res = p["resources"]
start = (p["measurement_start_unix_ms"] - res["start_unix_ms"]) / 1000
window = [s for s in res["samples"] if start < s["t_s"] <= start + p["duration_s"]]
node = [q["read_s"] for s in window for q in s["processes"] if q["name"] == "node1"]
kb_per_read = (sum(node) / len(node)) / rate / 1024 if node and rate else float("nan")
print("%8.0f %8s %9.0f %7.2f / %-6.2f %9.1f" % (data_mb, sys.argv[2], rate, lat["p50_us"] / 1000, lat["p99_us"] / 1000, kb_per_read))
EOF
}

used_mib() {
  "${sb[@]}" cluster status "$1" --json |
    python3 -c "import json,sys; u=json.load(sys.stdin)['nodes'][0].get('memory_used_bytes'); print('-' if u is None else round(u/2**20))"
}

"${sb[@]}" cluster up "$limited" >/dev/null
"${sb[@]}" cluster up "$unlimited" >/dev/null
echo "== $db, one node with memory = \"$limit\" and one without; workload C, uniform keys, 1 thread x 16 connections, ${secs} s"
echo "  records  cluster     data MB  mem MiB   reads/s  p50 / p99 ms  disk KB/read"
prev=0
for n in "${steps[@]}"; do
  schema=()
  [ "$prev" = 0 ] && schema=(--create-schema --drop-schema)
  for f in "$limited" "$unlimited"; do
    "${sb[@]}" load --deployment "$f" "${schema[@]}" \
      -p recordcount="$n" -p insertstart="$prev" -p insertcount=$((n - prev)) \
      --batch-size 100 --threads 1 --concurrency 8 -q --output "$work/load.json" >/dev/null
  done
  for f in "$limited" "$unlimited"; do
    "${sb[@]}" run c --deployment "$f" -p recordcount="$n" -p requestdistribution=uniform \
      --threads 1 --concurrency 16 --warmup 10s --duration "${secs}s" -q --output "$work/run.json" >/dev/null
    printf '%9d  %-10s %s\n' "$n" "$(basename "$f" .toml)" "$(row "$work/run.json" "$(used_mib "$f")")"
  done
  prev=$n
done
