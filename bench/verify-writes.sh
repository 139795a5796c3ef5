#!/usr/bin/env bash
# docs/benchmarks.md section 17: the cost of --verify-writes: the write record's memory per key
# (peak RSS with and without it, over the keys recorded) and the verify pass's time per million keys,
# against null:// (the pass's own cost) and a Redis server (reads over loopback).
# Usage: bench/verify-writes.sh [OUT_DIR]   (release build: cargo build --release --examples)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
B=$PWD/target/release/scalebench
OUT=${1:-$(mktemp -d)}
# 3 M updates of one field, uniform over 1 M records: about 950 000 keys written, 1 to 3 fields each.
common=(workloada -p recordcount=1000000 -p requestdistribution=uniform -p readproportion=0
        -p updateproportion=1 --operations 3000000 --threads 2 --warmup 0s)
for verify in "" --verify-writes; do
  /usr/bin/time -f "peak rss %M KiB" "$B" run "${common[@]}" --db null:// $verify \
    -o "$OUT/null$verify.json" 2>&1 | grep -E "peak rss|lost writes"
done
python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/null--verify-writes.json"))
print("null: keys checked", r["phases"][-1]["lost_writes"]["checked"], "verify_s", r["phases"][-1]["lost_writes"]["verify_s"])
PY
start_server redis
"$B" load workloada --db "$URL" -p recordcount=1000000 --threads 2 -q >/dev/null
/usr/bin/time -f "peak rss %M KiB" "$B" run "${common[@]}" --db "$URL" --verify-writes \
  -o "$OUT/redis.json" 2>&1 | grep -E "peak rss|lost writes"
echo "results in $OUT"
