#!/usr/bin/env bash
# The saturation search against simulated servers of known capacity (null://, docs/benchmarks.md
# section 21): for each capacity, objective, step length and client count, the answer, the
# bracket and whether the answer is within 1% above the capacity. Usage:
#   scripts/saturate-known-capacity.sh BINARY OUTDIR "CAPACITIES" "P99S" "STEPS" "CLIENTS"
# e.g. scripts/saturate-known-capacity.sh target/release/scalebench /tmp/sat "2000" "50ms 200ms 1s" "2s 5s 10s" "1 2"
set -euo pipefail
bin=$1 out=$2
mkdir -p "$out"
printf '%-8s %-6s %-5s %-7s %-9s %-22s %-8s %s\n' capacity p99 step clients answer bracket within steps
for c in $3; do for p in $4; do for d in $5; do for n in $6; do
  f="$out/c$c-$p-$d-$n.json"
  "$bin" saturate --db null:// -p "null.capacity_ops_s=$c" --concurrency 64 --p99 "$p" \
    --duration "$d" --warmup 500ms --clients "$n" --no-monitor -o "$f" >/dev/null 2>"$f.log" || true
  python3 - "$f" "$c" "$p" "$d" "$n" <<'PY'
import json, sys
f, c, p, d, n = sys.argv[1:]
s = json.load(open(f)); a = s["answer"]; c = float(c)
r, lo, hi = a.get("rate_ops_s"), a.get("bracket_low_ops_s"), a.get("bracket_high_ops_s")
ok = r is not None and r <= 1.01 * c and (hi is None or hi >= c or hi < c)
print(f"{c:<8.0f} {p:<6} {d:<5} {n:<7} {r or 0:<9.0f} [{lo or 0:.0f}, {hi if hi is not None else '-'}]".ljust(62)
      + f" {'yes' if ok else 'NO':<8} {len(s['steps'])}")
PY
done; done; done; done
