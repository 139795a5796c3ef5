#!/usr/bin/env bash
# docs/benchmarks.md section 19: workload files (issue 43).
# 1. YCSB workload A from its file (examples/workloads/workloada.toml) against the built-in `a`:
#    ops/s of a closed loop, 2 threads, 10 s (warm-up 1 s), on null:// and on SQLite (10,000 records
#    loaded once), runs alternated, 5 of each; the file's operations are the built-in's, so the
#    ratio is the cost of reading the file (once) and noise. Both with operationcount=0: the file
#    keeps YCSB's operationcount=1000 (a run of 1,000 operations, as YCSB's), while the built-in's
#    1,000 is not taken as a length (its runs last --duration).
# 2. CPU per generated row: a load of 1,000,000 records on null:// (stores nothing: the CPU is the
#    client's, generating and issuing), 1 thread, for YCSB's record (10 text fields of 100
#    characters), Lourenco's typed record (timeseries.toml) and the session store's (8 typed
#    columns: Zipfian, uuid, timestamps, a choice, words, a derived column); user + system time / rows.
# Usage: bench/workload-files.sh [OUT_DIR]   (release build: cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$PWD/target/release/scalebench
OUT=${1:-$(mktemp -d)}
W=examples/workloads
run() { # name workload db...
  local name=$1 workload=$2; shift 2
  "$B" run "$workload" "$@" -p operationcount=0 --threads 2 --duration 10s --warmup 1s --no-monitor -q -o "$OUT/$name.json" >/dev/null
}
"$B" load a --db "sqlite://$OUT/a.db" -p recordcount=10000 --threads 2 -q >/dev/null
for i in 1 2 3 4 5; do
  run "null-builtin-$i" a --db null://
  run "null-file-$i" "$W/workloada.toml" --db null://
  run "sqlite-builtin-$i" a --db "sqlite://$OUT/a.db" -p recordcount=10000
  run "sqlite-file-$i" "$W/workloada.toml" --db "sqlite://$OUT/a.db" -p recordcount=10000
done
for w in a "$W/timeseries.toml" "$W/session-store.toml"; do
  name=$(basename "$w" .toml)
  /usr/bin/time -f "%U %S" -o "$OUT/cpu-$name.time" \
    "$B" load "$w" --db null:// -p recordcount=1000000 -p batchsize=1 --threads 1 --no-monitor -q -o "$OUT/cpu-$name.json" >/dev/null
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
out = sys.argv[1]
def ops(name):
    return json.load(open(f"{out}/{name}.json"))["phases"][-1]["totals"]["throughput_ops_s"]
print(f"{'database':8} {'built-in a ops/s (median, min-max)':>36} {'file ops/s (median, min-max)':>32} {'file / built-in':>16}")
for db in ["null", "sqlite"]:
    b = [ops(f"{db}-builtin-{i}") for i in range(1, 6)]
    f = [ops(f"{db}-file-{i}") for i in range(1, 6)]
    mb, mf = statistics.median(b), statistics.median(f)
    print(f"{db:8} {mb:>14,.0f} ({min(b):,.0f}-{max(b):,.0f}) {mf:>12,.0f} ({min(f):,.0f}-{max(f):,.0f}) {mf / mb:>16.3f}")
print()
print(f"{'record':15} {'rows':>9} {'CPU s':>7} {'CPU us/row':>11} {'rows/s':>10}")
for name in ["a", "timeseries", "session-store"]:
    user, system = map(float, open(f"{out}/cpu-{name}.time").read().split())
    r = json.load(open(f"{out}/cpu-{name}.json"))["phases"][-1]
    rows = r["totals"]["records"]
    print(f"{name:15} {rows:>9,} {user + system:>7.2f} {(user + system) / rows * 1e6:>11.2f} {r['totals']['throughput_ops_s']:>10,.0f}")
PY
